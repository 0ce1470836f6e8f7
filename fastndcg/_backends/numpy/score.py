"""Vectorised NumPy twin of the Numba scoring kernel (``numba/score.py``).

No Python loop runs per query. Queries are bucketed by list length (powers of two), each bucket
is padded into a dense ``(n_queries, width)`` block, and every step (ranking with the tie rule,
tie-group means, discounted prefix sums, ideal sorting) is one array operation over the block.
Blocks are capped at a fixed number of cells, which bounds the temporary memory.

The arithmetic follows the kernels step by step (same discount table, same left-to-right prefix
sums, tie groups' gains summed in the same order), so both backends agree to a few ulps.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from fastndcg._backends.tuning import NUMPY_CELLS, NUMPY_PARTIAL_RATIO
from fastndcg._contract import Plan
from fastndcg._contract import codes as C

_EXACT_SUM = 2.0**53  # integer gains whose magnitudes sum below this add exactly, in any order

_GOLDEN = np.uint64(C.SPLITMIX_GOLDEN)
_MIX1 = np.uint64(C.SPLITMIX_MIX1)
_MIX2 = np.uint64(C.SPLITMIX_MIX2)


def random_keys(seed: int, rows: np.ndarray) -> np.ndarray:
    """SplitMix64 hash of (seed, row) for every row: the random tie-breaking keys."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + rows.astype(np.uint64) * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        return z ^ (z >> np.uint64(31))


def gains_of(grades: np.ndarray, plan: Plan) -> np.ndarray:
    """Gain of every grade under the plan's gain mode."""
    if plan.gain_mode == C.GAIN_EXP2:
        return np.exp2(grades.astype(np.float64)) - 1.0
    if plan.gain_mode == C.GAIN_LINEAR:
        return grades.astype(np.float64, copy=False)
    return plan.gain_table[grades.astype(np.int64)]


def score_queries(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """DCG and IDCG of every query at every cutoff: arrays of shape (n_queries, n_cutoffs)."""
    n_queries = plan.n_queries
    dcg = np.zeros((plan.cutoffs.size, n_queries)).T  # columns contiguous, as from the kernels
    idcg = np.zeros((plan.cutoffs.size, n_queries)).T
    lengths = np.diff(plan.offsets)
    for queries, width in _blocks(lengths):
        _score_block(plan, queries, width, lengths[queries], dcg, idcg)
    if plan.ideal_mode == C.IDEAL_MAX:
        slots = np.where(plan.cutoffs[None, :] < 0, lengths[:, None], plan.cutoffs[None, :])
        idcg[:] = plan.max_gain * plan.discount_prefix[slots]
    elif plan.ideal_mode != C.IDEAL_LOCAL:
        ideal_lengths = np.diff(plan.ideal_offsets)
        for queries, width in _blocks(ideal_lengths):
            _ideal_block(plan, queries, width, ideal_lengths[queries], idcg)
    return dcg, idcg


def rank_query(plan: Plan, query: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions of one query's rows in rank order, their gains, and its ideal list's gains.

    The ranking :func:`score_queries` makes, for a block of this one query.
    """
    start, end = int(plan.offsets[query]), int(plan.offsets[query + 1])
    i0, i1 = int(plan.ideal_offsets[query]), int(plan.ideal_offsets[query + 1])
    gains = gains_of(plan.grades[start:end], plan)
    ideal_gains = gains_of(plan.ideal_grades[i0:i1], plan)
    if plan.scores is None:
        return np.arange(end - start), gains, ideal_gains
    rows = np.arange(start, end)[None, :]
    scores = plan.scores[start:end].astype(np.float64)[None, :]
    order = _rank_order(plan, scores, gains[None, :], rows, np.ones(rows.shape, dtype=bool))
    return order[0], gains, ideal_gains


def _blocks(lengths: np.ndarray) -> Iterator[tuple[np.ndarray, int]]:
    """Groups of non-empty queries of similar length, and the padded width of each group."""
    nonempty = np.flatnonzero(lengths > 0)
    if nonempty.size == 0:
        return
    size_class = np.ceil(np.log2(lengths[nonempty])).astype(np.int64)
    order = np.argsort(size_class, kind="stable")
    sorted_class = size_class[order]
    bounds = np.flatnonzero(np.diff(sorted_class)) + 1
    for group in np.split(nonempty[order], bounds):
        width = int(lengths[group].max())
        per_block = max(1, NUMPY_CELLS // width)
        for start in range(0, group.size, per_block):
            yield group[start : start + per_block], width


def _gather(offsets: np.ndarray, queries: np.ndarray, width: int, lengths: np.ndarray):
    """Row numbers of each query padded to ``width`` columns, and the mask of real rows."""
    cols = np.arange(width)
    valid = cols[None, :] < lengths[:, None]
    rows = np.where(valid, offsets[queries][:, None] + cols[None, :], 0)
    return rows, valid


def _cut_columns(plan: Plan, lengths: np.ndarray) -> np.ndarray:
    """For each query and cutoff: how many ranks count (``min(k, n)``, or ``n`` for no cutoff)."""
    cut = np.minimum(plan.cutoffs[None, :], lengths[:, None])
    return np.where(plan.cutoffs[None, :] < 0, lengths[:, None], cut)


def _prefix(values: np.ndarray, discount: np.ndarray) -> np.ndarray:
    """Left-to-right prefix sums of ``values * discount`` with a leading zero column."""
    out = np.zeros((values.shape[0], values.shape[1] + 1))
    np.cumsum(values * discount[: values.shape[1]], axis=1, out=out[:, 1:])
    return out


def _rank_order(
    plan: Plan, scores: np.ndarray, gains: np.ndarray, rows: np.ndarray, valid: np.ndarray
) -> np.ndarray:
    """Column order of each padded row: score descending, then the tie rule, then position.

    Padding (-inf, like a real -inf score from float32 overflow) comes after every real row.
    """
    mode = plan.tie_mode
    if mode in (C.TIE_AVERAGE, C.TIE_STABLE):
        return np.argsort(-scores, axis=1, kind="stable")  # padding is in the last columns
    if mode == C.TIE_PESSIMISTIC:
        key = np.where(valid, gains, np.inf)
    elif mode == C.TIE_OPTIMISTIC:
        key = np.where(valid, -gains, np.inf)
    elif mode == C.TIE_RANDOM:
        key = np.where(valid, random_keys(plan.seed, rows), np.iinfo(np.uint64).max)
    else:
        key = np.where(valid, plan.tie_key[rows], np.iinfo(np.int64).max)
    first = np.argsort(key, axis=1, kind="stable")
    then = np.argsort(-np.take_along_axis(scores, first, axis=1), axis=1, kind="stable")
    return np.take_along_axis(first, then, axis=1)


def _score_block(plan, queries, width, lengths, dcg, idcg) -> None:
    rows, valid = _gather(plan.offsets, queries, width, lengths)
    gains = np.where(valid, gains_of(plan.grades[rows], plan), 0.0)
    depth = width if (plan.cutoffs < 0).any() else min(plan.k_max, width)
    average = plan.scores is not None and plan.tie_mode == C.TIE_AVERAGE
    # a partial selection pays when few of many columns are needed and ties keep input order
    partial = (
        plan.scores is not None
        and plan.tie_mode in (C.TIE_AVERAGE, C.TIE_STABLE)
        and depth * NUMPY_PARTIAL_RATIO <= width
    )
    if plan.scores is None:
        ranked_gains = gains
    else:
        scores = np.where(valid, plan.scores[rows].astype(np.float64), -np.inf)
        if partial:
            order, equal = _top_columns(scores, depth)
            equal &= valid  # padding is -inf, like a real -inf score: it is not in the group
        else:
            order = _rank_order(plan, scores, gains, rows, valid)
        ranked_gains = np.take_along_axis(gains, order, axis=1)
    if average:
        ranked_scores = np.take_along_axis(scores, order, axis=1)
        mean_gain, group_end = _tie_groups(ranked_scores, ranked_gains, lengths)
        if partial:
            _complete_last_group(mean_gain, group_end, equal, gains)
        effective = mean_gain[:, :depth]
    else:
        effective = ranked_gains[:, :depth]
    prefix = _prefix(effective, plan.discount)
    cut = _cut_columns(plan, lengths)
    dcg[queries] = np.take_along_axis(prefix, cut, axis=1)
    if plan.ideal_mode != C.IDEAL_LOCAL:
        return
    cols = np.arange(depth)[None, :]
    for j in range(plan.cutoffs.size):
        limit = cut[:, j : j + 1]
        values = ranked_gains[:, :depth]
        if average:
            straddles = group_end[:, :depth] > limit
            values = np.where(straddles, mean_gain[:, :depth], values)
        values = np.where(cols < limit, values, -np.inf)
        values = -np.sort(-values, axis=1)
        values[np.isinf(values)] = 0.0
        idcg[queries, j] = _prefix(values, plan.discount)[:, -1]


def _top_columns(scores: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns of the ``depth`` best scores of each row, in rank order (ties by column).

    A partition finds each row's ``depth``-th best score ``t``; every column above ``t`` is
    taken, and of the columns equal to ``t`` the leftmost ones fill the remaining places.
    Returns those columns and the mask of columns equal to ``t`` (the tie group at the cut).
    """
    threshold = -np.partition(-scores, depth - 1, axis=1)[:, depth - 1 : depth]
    above = scores > threshold
    equal = scores == threshold
    room = depth - above.sum(axis=1, keepdims=True)
    take = above | (equal & (np.cumsum(equal, axis=1) <= room))
    columns = np.nonzero(take)[1].reshape(scores.shape[0], depth)
    best = np.argsort(-np.take_along_axis(scores, columns, axis=1), axis=1, kind="stable")
    return np.take_along_axis(columns, best, axis=1), equal


def _group_totals(
    groups: np.ndarray, gains: np.ndarray, n_groups: int, counts: np.ndarray | None = None
) -> np.ndarray:
    """Total gain of each group (``groups`` numbers the group of each of the flat ``gains``).

    As in the kernels (``_tie_total``): the total of a group's gains in descending order, added
    one by one from 0.0, so that it depends neither on the order of the rows nor on the path
    that found the group. ``np.bincount`` adds in array order: two gains add alike in either
    order, and integer gains whose magnitudes sum below 2**53 add exactly in any order; the
    other groups of more than two gains are summed again, sorted. ``counts`` are the groups'
    sizes, when known.
    """
    if counts is None:
        counts = np.bincount(groups, minlength=n_groups)
    totals = np.bincount(groups, weights=gains, minlength=n_groups)
    several = counts[groups] > 2
    if several.any():
        groups, gains = groups[several], gains[several]
        if not (np.array_equal(gains, np.floor(gains)) and np.abs(gains).sum() < _EXACT_SUM):
            order = np.lexsort((-gains, groups))
            again = np.bincount(groups[order], weights=gains[order], minlength=n_groups)
            totals = np.where(counts > 2, again, totals)
    return totals


def _complete_last_group(mean_gain, group_end, equal, gains) -> None:
    """Give the last tie group of a partial selection the mean gain and end of the whole group.

    Its rows equal to the cut score may lie beyond the selection (``equal`` marks them all).
    """
    size = equal.sum(axis=1)
    rows, cols = np.nonzero(equal)
    total = _group_totals(rows, gains[rows, cols], equal.shape[0], size)
    depth = mean_gain.shape[1]
    last = group_end == depth  # positions of the selection's last group
    start = depth - np.sum(last, axis=1)
    whole = np.where(size > 0, total / np.maximum(size, 1), 0.0)[:, None]
    mean_gain[:] = np.where(last, whole, mean_gain)
    group_end[:] = np.where(last, (start + size)[:, None], group_end)


def _tie_groups(ranked_scores: np.ndarray, ranked_gains: np.ndarray, lengths: np.ndarray):
    """Mean gain of each position's tie group, and where (exclusive) that group ends.

    Padding (ranks past a query's ``lengths``) scores -inf; each padding cell is a group of its
    own, so that real -inf scores (float32 overflow) do not tie with it.
    """
    n_rows, width = ranked_scores.shape
    starts = np.ones((n_rows, width), dtype=bool)
    starts[:, 1:] = ranked_scores[:, 1:] != ranked_scores[:, :-1]
    starts |= np.arange(width)[None, :] >= lengths[:, None]
    group = np.cumsum(starts, axis=1) - 1 + (np.arange(n_rows) * width)[:, None]
    flat = group.ravel()
    counts = np.bincount(flat, minlength=n_rows * width)
    if (~starts[:, 1:-1] & ~starts[:, 2:]).any():  # a group of more than two
        sums = _group_totals(flat, ranked_gains.ravel(), n_rows * width, counts)
    else:  # two gains add alike in either order
        sums = np.bincount(flat, weights=ranked_gains.ravel(), minlength=n_rows * width)
    mean_gain = (sums[flat] / counts[flat]).reshape(n_rows, width)
    ends = np.full((n_rows, width), width, dtype=np.int64)
    last = np.ones((n_rows, width), dtype=bool)
    last[:, :-1] = starts[:, 1:]
    cols = np.broadcast_to(np.arange(1, width + 1), (n_rows, width))
    ends[last] = cols[last]
    group_end = np.minimum.accumulate(ends[:, ::-1], axis=1)[:, ::-1]
    return mean_gain, group_end


def _ideal_block(plan, queries, width, lengths, idcg) -> None:
    rows, valid = _gather(plan.ideal_offsets, queries, width, lengths)
    gains = np.where(valid, gains_of(plan.ideal_grades[rows], plan), -np.inf)
    depth = width if (plan.cutoffs < 0).any() else min(plan.k_max, width)
    if depth * NUMPY_PARTIAL_RATIO <= width:
        gains = np.partition(gains, width - depth, axis=1)[:, width - depth :]
    best = -np.sort(-gains, axis=1)[:, :depth]
    best[np.isinf(best)] = 0.0
    prefix = _prefix(best, plan.discount)
    idcg[queries] = np.take_along_axis(prefix, _cut_columns(plan, lengths), axis=1)
