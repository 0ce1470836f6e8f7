"""The NumPy backend: vectorised twins of the Numba kernels, on one thread.

Used where numba cannot be imported, or on request (``backend="numpy"``). No Python loop runs
per query (see ``score.py``); the TREC join compares integer codes of the document ids.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from fastndcg._backends.numpy import measures, resample, scan, score, trec
from fastndcg._contract import ColumnStats, DocumentIds, MeasurePlan, MeasureValues, Plan
from fastndcg._errors import OptionError


class NumpyBackend:
    """Vectorised NumPy (see :mod:`fastndcg._backends`)."""

    name = "numpy"
    checks_scores = False
    shares_rankings = False  # each call ranks its own blocks

    def thread_count(self) -> int:
        """Always one thread."""
        return 1

    def thread_ceiling(self) -> None:
        """Any ``n_threads`` is accepted (and one thread used)."""
        return None

    @contextlib.contextmanager
    def threads(self, n_threads: int | None) -> Iterator[None]:
        """The NumPy backend runs on one thread; ``n_threads`` is checked, not used."""
        if n_threads is not None and n_threads < 1:
            raise OptionError(
                "`n_threads` must be a positive int or None",
                option="n_threads",
                value=n_threads,
                fix=f"got {n_threads}",
            )
        yield

    def score(self, plan: Plan) -> tuple[np.ndarray, np.ndarray, int]:
        """DCG and IDCG of ``plan``; the scores were checked before (no count)."""
        return (*score.score_queries(plan), 0)

    def measures(self, plan: MeasurePlan) -> MeasureValues:
        """The measures beside NDCG of ``plan`` (the twin of the Numba kernel)."""
        return measures.measure_queries(plan)

    def rank_query(self, plan: Plan, query: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ranking :meth:`score` makes of one query, its rows' gains and its ideal's."""
        return score.rank_query(plan, query)

    def column_stats(self, values: np.ndarray, integral: bool = True) -> ColumnStats:
        """One scan of ``values`` in blocks of rows."""
        return scan.column_stats(values, integral)

    def run_bounds(self, ids: np.ndarray) -> np.ndarray:
        """Start row of every run of equal consecutive ids, and the row count at the end."""
        return scan.run_bounds(ids)

    def stray_whitespace(self, data: np.ndarray, separator: int, other: int) -> bool:
        """Whether the bytes ``data`` hold whitespace besides single ``separator`` bytes."""
        return trec.stray_whitespace(data, separator, other)

    def document_ids(self, judged: Any, run: Any, ordered: bool) -> tuple[DocumentIds, DocumentIds]:
        """Integer codes shared by both sides, made by hashing every id once.

        ``ordered`` numbers them in descending byte order of the ids (trec_eval's ties), which
        sorts the distinct ids (seconds for millions).
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        both = pa.chunked_array([*judged.chunks, *run.chunks], type=pa.string())
        encoded = pc.dictionary_encode(both)  # every chunk refers to the one dictionary of all ids
        codes = pa.chunked_array([c.indices for c in encoded.chunks], type=pa.int32()).to_numpy()
        codes = codes.astype(np.int64)
        if ordered and codes.size:
            distinct = encoded.chunk(0).dictionary.cast(pa.binary())
            descending = pc.array_sort_indices(distinct, order="descending").to_numpy()
            rank = np.empty(len(distinct), dtype=np.int64)
            rank[descending] = np.arange(len(distinct), dtype=np.int64)
            codes = rank[codes]
        return (
            DocumentIds(judged, codes=codes[: len(judged)]),
            DocumentIds(run, codes=codes[len(judged) :]),
        )

    def match_judgments(
        self,
        offsets: np.ndarray,
        order: np.ndarray | None,
        ids: DocumentIds,
        judged_offsets: np.ndarray,
        judged_rows: np.ndarray,
        judged_ids: DocumentIds,
        judged_labels: np.ndarray,
    ) -> tuple[np.ndarray, int]:
        """Join on the integer codes (see the protocol)."""
        labels = np.asarray(judged_labels, dtype=np.float64)
        documents = ids.codes if order is None else ids.codes[order]
        judged = judged_ids.codes[judged_rows]
        return trec.match_judgments(offsets, documents, judged_offsets, judged, labels[judged_rows])

    def docid_ranks(
        self, offsets: np.ndarray, order: np.ndarray | None, ids: DocumentIds, scores: np.ndarray
    ) -> np.ndarray:
        """The codes already number every id in descending byte order."""
        return ids.codes

    def first_ranked(
        self,
        offsets: np.ndarray,
        order: np.ndarray | None,
        scores: np.ndarray,
        tie_key: np.ndarray | None,
        max_docs: int,
    ) -> np.ndarray:
        """One sort of the whole run by (query, score descending, tie key)."""
        n = scores.size
        query = np.empty(n, dtype=np.int64)
        rows = np.arange(n) if order is None else order
        query[rows] = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        tie = np.arange(n) if tie_key is None else tie_key
        ranking = np.lexsort((tie, -scores, query))
        grouped = query[ranking]
        starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
        rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
        keep = np.zeros(n, dtype=bool)
        keep[ranking[rank < max_docs]] = True
        return keep

    # -- resampling (fastndcg.compare) -----------------------------------------------------

    def signflip_sums(
        self,
        diffs: np.ndarray,
        key: int,
        exact: bool,
        n_resamples: int,
        n_chunks: int | None = None,
        first: int = 0,
    ) -> np.ndarray:
        """Sign-flipped sums of every row of ``diffs``, all resamples in one call.

        ``n_chunks`` is accepted for the protocol's sake: the result does not depend on it.
        """
        out = np.empty((n_resamples, diffs.shape[0]))
        stop = first + n_resamples
        resample.signflip_sums(diffs, np.uint64(key), exact, first, stop, first, out)
        return out

    def bootstrap_sums(
        self,
        values: np.ndarray,
        key: int,
        thresholds: np.ndarray,
        n_resamples: int,
        n_chunks: int | None = None,
        first: int = 0,
    ) -> np.ndarray:
        """Bootstrap sums of every row of ``values``, all resamples in one call."""
        rows = np.ascontiguousarray(values.T)
        out = np.empty((n_resamples, values.shape[0]))
        stop = first + n_resamples
        resample.bootstrap_sums(values, rows, np.uint64(key), thresholds, first, stop, first, out)
        return out
