"""The main entry point, :func:`ndcg`: NDCG of arrays (flat with query ids or offsets, or dense)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fastndcg._core.aggregate import query_weights
from fastndcg._core.definition import Definition
from fastndcg._core.layout import build_layout
from fastndcg._presets import accepts_preset
from fastndcg._result import NDCGResult

Cutoffs = int | Sequence[int | None] | None
GainSpec = str | Sequence[float] | Mapping[float, float] | Callable[[np.ndarray], Any]
DiscountSpec = str | Sequence[float] | np.ndarray | Callable[[np.ndarray], Any]


@accepts_preset("ndcg")
def ndcg(
    grades: Any,
    scores: Any = None,
    *,
    qid: Any = None,
    offsets: Any = None,
    mask: Any = None,
    k: Cutoffs = None,
    gain: GainSpec = "exp2",
    discount: DiscountSpec = "log2",
    ideal: str = "recall",
    ideal_grades: Any = None,
    ideal_qid: Any = None,
    ideal_offsets: Any = None,
    max_grade: float | None = None,
    ties: str = "average",
    seed: int | None = None,
    zero_idcg: str = "skip",
    aggregate: str = "mean",
    weights: Any = None,
    backend: str = "auto",
    n_threads: int | None = None,
    score_dtype: str = "float64",
    preset: Any = None,
    decimals: int | None = None,
) -> NDCGResult:
    r"""Normalised discounted cumulative gain of many ranked lists at once.

    For a query whose items, ranked by descending score, have grades
    :math:`g_1, g_2, \ldots, g_n`:

    .. math::

        \mathrm{DCG@k} = \sum_{r=1}^{\min(k, n)} G(g_r)\, D(r), \qquad
        \mathrm{NDCG@k} = \frac{\mathrm{DCG@k}}{\mathrm{IDCG@k}}

    with gain :math:`G`, discount :math:`D` and ideal :math:`\mathrm{IDCG}` chosen below.

    Parameters
    ----------
    grades : array-like
        Relevance grades. Flat 1-D (one entry per item; split into queries with ``qid`` or
        ``offsets``, otherwise a single query), or dense 2-D ``(n_queries, list_len)``. Arrays
        in GPU memory (torch CUDA tensors, CuPy arrays, numba device arrays, anything with
        ``__cuda_array_interface__`` or DLPack on a CUDA device) are read in place by
        ``backend="cuda"``.
    scores : array-like or None, default=None
        Model scores, same shape as ``grades``; higher ranks first. None means the items are
        already in ranked order (then ``ties`` does not apply).
    qid : array-like, optional
        Query id of every item (any dtype). Rows of a query need not be contiguous; they are
        grouped stably and queries keep their order of first appearance.
    offsets : array-like of int, optional
        CSR offsets: query ``q`` owns items ``offsets[q]:offsets[q+1]``.
    mask : array-like of bool, optional
        For 2-D input: True for real items, False for padding.
    k : int, list of (int or None), or None, default=None
        Cutoff(s). Several cutoffs are computed in one pass. None: the whole list.
    gain : {"exp2", "linear"}, sequence, dict or callable, default="exp2"
        ``"exp2"``: :math:`2^g - 1` (grades >= 0); ``"linear"``: :math:`g`; a sequence is a
        table indexed by integer grade; a dict maps grade -> gain; a callable maps an array of
        grades to an array of gains. Gains times the summed discounts must stay within float64
        (with ``"exp2"``, grades well below 1024), else a ValueError says so.
    discount : {"log2", "jarvelin", "reciprocal"}, array or callable, default="log2"
        ``"log2"``: :math:`1/\log_2(r+1)`; ``"jarvelin"``: 1 for :math:`r = 1`, else
        :math:`1/\log_2 r`; ``"reciprocal"``: :math:`1/r`; an array gives the discount of ranks
        1, 2, ...; a callable maps an array of 1-based ranks to discounts.
    ideal : {"recall", "local", "global", "max"}, default="recall"
        ``"recall"``: the list's own grades sorted by gain; ``"local"``: the returned top k
        re-sorted by gain (with ``ties="average"``, each slot a tie group straddling k fills
        carries the group's mean gain); ``"global"``: the judgment list given by
        ``ideal_grades`` with ``ideal_qid`` or ``ideal_offsets``, sorted by gain; ``"max"``:
        every one of the k slots (all n when k is None) holds ``max_grade``.
    ideal_grades, ideal_qid, ideal_offsets : array-like, optional
        Judgment lists for ``ideal="global"``.
    max_grade : float, optional
        Grade filling every slot for ``ideal="max"``; default the largest grade in the data.
    ties : {"average", "stable", "pessimistic", "optimistic", "random"}, default="average"
        Order of items with equal scores. ``"average"``: the expected DCG over every order of
        the tied items (each item of a tie group gets the group's mean gain), bit-identical
        under any permutation of a query's rows, and at each cutoff whichever other cutoffs
        are asked with it; ``"stable"``: input order; ``"pessimistic"`` / ``"optimistic"``:
        lower / higher gain first; ``"random"``: a uniformly random order drawn from ``seed``.
        Results are bit-identical for any ``n_threads``.
    seed : int, optional
        Seed for ``ties="random"`` (reproducible); None draws a fresh one.
    zero_idcg : {"skip", "zero", "one", "error"}, default="skip"
        NDCG of a query whose IDCG@k is not positive (no relevant item): NaN and left out of the
        aggregate (``"skip"``, counted in ``n_skipped``), 0, 1, or a ValueError.
    aggregate : {"mean", "ratio", "lightgbm", "xgboost", "keras_rs"}, default="mean"
        ``"mean"``: :math:`\sum_q w_q \mathrm{NDCG}_q / \sum_q w_q`; ``"ratio"``:
        :math:`\sum_q w_q \mathrm{DCG}_q / \sum_q w_q \mathrm{IDCG}_q`, over the queries not
        skipped; the others are those tools' own rules (see :mod:`fastndcg._presets`).
    weights : array-like, optional
        Non-negative weight per query for the aggregate (default 1), in result order: the
        order of ``query_ids`` (first appearance of each ``qid``; rows of 2-D input; queries
        of ``offsets``).
    backend : str, default="auto"
        ``"auto"`` or a registered backend's name (:func:`fastndcg.available_backends` lists
        those that run here). The built-in ones: ``"numba"`` (parallel kernels), ``"numpy"``
        (their vectorised twin) and ``"cuda"`` (an NVIDIA GPU, with numba-cuda: ``pip install
        'fastndcg[cuda]'``; host arrays are copied to the device once, results come back as
        on the CPU). ``"auto"`` uses numba when importable unless ``FASTNDCG_BACKEND`` says
        otherwise, and the backend whose memory holds the grades or scores (cuda for GPU
        memory).
    n_threads : int, optional
        Numba threads for this call (restored afterwards); default: numba's current setting.
    score_dtype : {"float64", "float32"}, default="float64"
        Precision the scores are held in before ranking. ``"float32"`` rounds them as tools that
        store float32 scores do, so scores closer than float32 resolution become ties.
    preset : str, optional
        A tool's definition by name (``"trec_eval"``, ``"sklearn"``, ``"lightgbm"``, ... see
        :func:`fastndcg.presets`): its settings replace the defaults of the options not given.
    decimals : int, optional
        Round per-query values to this many decimals before aggregating, as a tool that prints
        them does.

    Returns
    -------
    NDCGResult
        Per-query NDCG, DCG and IDCG, the aggregate per cutoff, query ids and skip counts.

    Examples
    --------
    >>> import fastndcg
    >>> result = fastndcg.ndcg([3, 2, 3, 0, 1, 2], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4], k=6)
    >>> round(float(result), 4)
    0.9488
    """
    definition = Definition.create(
        k=k,
        gain=gain,
        discount=discount,
        ideal=ideal,
        max_grade=max_grade,
        ties=ties,
        seed=seed,
        zero_idcg=zero_idcg,
        aggregate=aggregate,
        backend=backend,
        n_threads=n_threads,
        score_dtype=score_dtype,
    )
    definition = definition.for_inputs(grades, scores)
    definition.check_ideal_inputs(ideal_grades, ideal_qid, ideal_offsets)
    with definition.threads():
        layout = build_layout(
            grades, scores, qid=qid, offsets=offsets, mask=mask, backend=definition.backend
        )
        if weights is not None:  # applied on the host, with the aggregate
            weights = layout.columns.host(weights)
        query_weights(weights, layout.n_queries)
        dcg, idcg = definition.score(
            layout, ideal_grades=ideal_grades, ideal_qid=ideal_qid, ideal_offsets=ideal_offsets
        )
    return definition.finish(
        layout.query_ids, dcg, idcg, weights=weights, ranked=layout.scores is None
    )
