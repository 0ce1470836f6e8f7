"""NumPy twins of the TREC kernels of ``numba/trec.py``: the run x judgments join, the scan."""

from __future__ import annotations

import numpy as np


def match_judgments(offsets, documents, judged_offsets, judged_documents, judged_labels):
    """Twin of ``numba.trec.match_judgments``, on integer document codes instead of id bytes.

    Run rows and judgments come grouped by query (CSR ``offsets``/``judged_offsets``). Returns
    the labels of the run rows (NaN when unjudged) and the first run row whose document repeats
    within its query (-1 when none).
    """
    n_queries = offsets.size - 1
    width = int(max(documents.max(initial=-1), judged_documents.max(initial=-1))) + 1
    run_keys = np.repeat(np.arange(n_queries), np.diff(offsets)) * width + documents
    judged_keys = (
        np.repeat(np.arange(n_queries), np.diff(judged_offsets)) * width + judged_documents
    )
    labels = np.full(run_keys.size, np.nan)
    if judged_keys.size:
        order = np.argsort(judged_keys, kind="stable")
        sorted_keys = judged_keys[order]
        where = np.minimum(np.searchsorted(sorted_keys, run_keys), sorted_keys.size - 1)
        found = sorted_keys[where] == run_keys
        labels[found] = judged_labels[order][where[found]]
    by_key = np.argsort(run_keys, kind="stable")
    repeats = np.flatnonzero(run_keys[by_key][1:] == run_keys[by_key][:-1])
    duplicate = int(by_key[repeats + 1].min()) if repeats.size else -1
    return labels, duplicate


def stray_whitespace(data: np.ndarray, separator: int, other: int) -> bool:
    """Twin of ``numba.trec.stray_whitespace``, on the bytes ``data`` (in slices of 16 MiB)."""
    stray = np.zeros(256, dtype=bool)
    stray[[other, 11, 12]] = True
    step = 1 << 24
    for start in range(0, data.size, step):
        piece = data[start : start + step + 1]  # one byte more: the pair across the slices
        if stray[piece].any() or ((piece[:-1] == separator) & (piece[1:] == separator)).any():
            return True
    return False
