"""Vectorised NumPy twin of the measures kernel (``numba/measures.py``).

Queries are bucketed by length and padded into dense blocks, ranked by the scoring twin's
``_rank_order``, and every measure is a few array operations over the block's ranked labels
(NaN: no judgment, and padding). Sums are prefix sums along the ranks (``np.cumsum`` adds left
to right, as the kernel's loops do), and repeated products are cumulative products, so both
backends give the same bits. Under ``ties="average"`` the block's tie groups are found once and
the measures take the kernel's formulas (a group's mean, the part of a group above a cut, the
first group holding a relevant row, AP's expected precisions).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from fastndcg._backends.numpy.score import _rank_order
from fastndcg._backends.tuning import NUMPY_CELLS
from fastndcg._contract import MeasurePlan, MeasureValues
from fastndcg._contract import codes as C


class _Counts(NamedTuple):
    """Per query and counts column: ``R`` and bpref's ``N``; per query: the largest grade."""

    relevant: np.ndarray
    nonrelevant: np.ndarray
    top_grade: np.ndarray


def measure_queries(plan: MeasurePlan) -> MeasureValues:
    """Every measure of every query (shape (n_queries, n_measures)), and the checks' findings."""
    out = np.full((plan.n_queries, plan.measures.shape[0]), np.nan)
    counts = _counts(plan)
    nonfinite = 0 if plan.scores is None else int(np.count_nonzero(~np.isfinite(plan.scores)))
    bad = _bad_err_label(plan)
    if bad >= 0 or (nonfinite and np.isnan(plan.scores).any()):  # the core raises: the
        return MeasureValues(out, counts.relevant, nonfinite, bad)  # ranking takes no NaN
    lengths = np.diff(plan.offsets)
    with np.errstate(divide="ignore", invalid="ignore"):  # the divisions where() discards
        for queries, width in _blocks(lengths):
            _measure_block(plan, counts, queries, width, lengths[queries], out)
    return MeasureValues(out, counts.relevant, nonfinite, -1)


def _counts(plan: MeasurePlan) -> _Counts:
    """``R`` and bpref's ``N`` per query and level, and each query's largest grade."""
    offsets, grades = plan.judged_offsets, plan.judged_grades
    n_queries = offsets.size - 1
    filled = np.flatnonzero(np.diff(offsets) > 0)  # reduceat's segments: queries with rows

    def per_query(mask: np.ndarray) -> np.ndarray:  # the rows of each query where mask holds
        counts = np.zeros(n_queries, dtype=np.int64)
        if filled.size:
            counts[filled] = np.add.reduceat(mask, offsets[filled], dtype=np.int64)
        return counts

    relevant = np.zeros((n_queries, plan.levels.size), dtype=np.int64)
    nonrelevant = np.zeros_like(relevant)
    for column, level in enumerate(plan.levels):
        relevant[:, column] = per_query(grades >= level)
        below = grades < level
        if plan.skip_negative:
            below &= grades >= 0
        nonrelevant[:, column] = per_query(below)
    top_grade = np.zeros(n_queries)
    if filled.size:
        top_grade[filled] = np.maximum.reduceat(np.maximum(grades, 0.0), offsets[filled])
    return _Counts(relevant, nonrelevant, top_grade)


def _bad_err_label(plan: MeasurePlan) -> int:
    """The first label above 0 that is not one of ERR's integer grades (-1: none, or no ERR)."""
    if plan.err_stop.size == 0:
        return -1
    labels = plan.labels
    top = plan.err_stop.size - 1
    bad = (labels > 0) & ((labels > top) | (labels != np.floor(labels)))
    return int(np.argmax(bad)) if bad.any() else -1


def _blocks(lengths: np.ndarray) -> Iterator[tuple[np.ndarray, int]]:
    """Queries of similar length (empty ones too), and the padded width of each group."""
    if lengths.size == 0:
        return
    size_class = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    order = np.argsort(size_class, kind="stable")
    bounds = np.flatnonzero(np.diff(size_class[order])) + 1
    for group in np.split(order, bounds):
        width = max(1, int(lengths[group].max()))
        per_block = max(1, NUMPY_CELLS // width)
        for start in range(0, group.size, per_block):
            yield group[start : start + per_block], width


def _prefix(values: np.ndarray) -> np.ndarray:
    """Left-to-right prefix sums along the ranks, with a leading zero column."""
    out = np.zeros((values.shape[0], values.shape[1] + 1), dtype=values.dtype)
    np.cumsum(values, axis=1, out=out[:, 1:])
    return out


def _at(prefix: np.ndarray, depth: np.ndarray) -> np.ndarray:
    return np.take_along_axis(prefix, depth[:, None], axis=1)[:, 0]


def _measure_block(plan, counts, queries, width, lengths, out) -> None:
    cols = np.arange(width)
    valid = cols[None, :] < lengths[:, None]
    rows = np.where(valid, plan.offsets[queries][:, None] + cols[None, :], 0)
    if plan.labels.size == 0:  # no row at all: every query is empty
        return _measure_block(_with_a_row(plan), counts, queries, width, lengths, out)
    labels = np.where(valid, plan.labels[rows], np.nan)
    ties = None
    if plan.scores is not None:
        scores = np.where(valid, plan.scores[rows], -np.inf)
        grades = np.where(labels > 0.0, labels, 0.0)
        order = _rank_order(plan, scores, grades, rows, valid)
        labels = np.take_along_axis(labels, order, axis=1)
        if plan.tie_mode == C.TIE_AVERAGE:
            ties = _tie_groups(np.take_along_axis(scores, order, axis=1), valid)
    n = lengths
    ranks = cols + 1
    for j in range(plan.measures.shape[0]):
        kind, cutoff, column, choice, choice2 = (int(v) for v in plan.measures[j])
        level, param = plan.params[j, 1], plan.params[j, 0]
        depth = n if cutoff < 0 else np.minimum(cutoff, n)
        slots_k = n if cutoff < 0 else np.full_like(n, cutoff)  # k, or n for no cutoff
        big_r = counts.relevant[queries, column]
        relevant = labels >= level
        hit_prefix = _prefix(relevant.astype(np.int64))
        hits = _at(hit_prefix, depth)
        expected = _expected(hit_prefix, depth, ties)  # hits, or their mean over tie orders
        if kind == C.M_NUM_Q:
            value = np.ones(n.size)
        elif kind == C.M_NUM_RET:
            value = depth.astype(np.float64)
        elif kind == C.M_NUM_REL:
            value = big_r.astype(np.float64)
        elif kind == C.M_NUM_REL_RET:
            value = expected
        elif kind == C.M_P:
            slots = slots_k if choice == 0 else depth
            value = np.where(slots > 0, expected / np.maximum(slots, 1), 0.0)
        elif kind in (C.M_RR, C.M_SUCCESS) and ties is not None:
            value = _first_relevant_group(relevant, depth, ties, kind == C.M_RR)
        elif kind == C.M_RR:
            first = np.argmax(relevant, axis=1)
            found = relevant.any(axis=1) & (first < depth)
            value = np.where(found, 1.0 / (first + 1), 0.0)
        elif kind == C.M_SUCCESS:
            value = np.where(hits > 0, 1.0, 0.0)
        elif kind == C.M_RBP:
            top = counts.top_grade[queries]
            value = _rbp(top, labels, depth, level, param, choice, ties)
        elif kind == C.M_RBP_RESID:
            value = _rbp_residual(labels, valid, n, param, ties)
        elif kind == C.M_ERR:
            value = _err(plan, labels, depth, ranks)
        elif kind == C.M_JUDGED:
            judged = _expected(_prefix(_judged(labels, choice2 == 1)), depth, ties)
            slots = depth if choice == 0 else slots_k
            value = np.where(slots > 0, judged / np.maximum(slots, 1), 0.0)
        elif kind == C.M_UNJUDGED:
            unjudged = depth - _expected(_prefix(_judged(labels, True)), depth, ties)
            value = np.where(slots_k > 0, unjudged / np.maximum(slots_k, 1), 0.0)
        else:
            big_n = counts.nonrelevant[queries, column]
            value = _dividing_by_r(
                plan,
                queries,
                kind,
                labels,
                hit_prefix,
                hits,
                depth,
                slots_k,
                big_r,
                big_n,
                ranks,
                j,
                ties,
            )
        out[queries, j] = value


def _tie_groups(ranked_scores: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the tie group of each rank starts and ends (exclusive).

    Padding ranks are groups of their own (``valid``: the real ranks).
    """
    n_rows, width = ranked_scores.shape
    cols = np.broadcast_to(np.arange(width), (n_rows, width))
    first = np.ones((n_rows, width), dtype=bool)
    first[:, 1:] = (ranked_scores[:, 1:] != ranked_scores[:, :-1]) | ~valid[:, 1:]
    starts = np.maximum.accumulate(np.where(first, cols, 0), axis=1)
    last = np.ones((n_rows, width), dtype=bool)
    last[:, :-1] = first[:, 1:]
    ends = np.minimum.accumulate(np.where(last, cols + 1, width)[:, ::-1], axis=1)[:, ::-1]
    return starts, ends


def _expected(prefix: np.ndarray, depth: np.ndarray, ties) -> np.ndarray:
    """How many of the top ``depth`` count (``prefix``: their prefix counts).

    Under ``ties="average"`` the mean over every order of the tied rows, as the kernel's
    ``_expected``.
    """
    plain = _at(prefix, depth).astype(np.float64)
    if ties is None:
        return plain
    starts, ends = ties
    last = np.maximum(depth - 1, 0)[:, None]
    start = np.take_along_axis(starts, last, axis=1)[:, 0]
    end = np.take_along_axis(ends, last, axis=1)[:, 0]
    full = _at(prefix, start)
    group = _at(prefix, end) - full
    cut = (depth > 0) & (end > depth)
    return np.where(cut, full + (group * (depth - start)) / np.maximum(end - start, 1), plain)


def _first_relevant_group(relevant, depth, ties, reciprocal) -> np.ndarray:
    """RR@k (``reciprocal``) or Success@k under ``ties="average"``.

    As the kernel's ``_expected_rr`` and ``_expected_success``: from the first tie group above
    the cut that holds a relevant row.
    """
    starts, ends = ties
    n_rows, width = relevant.shape
    group = (starts + (np.arange(n_rows) * width)[:, None]).ravel()
    found_in = np.bincount(group, weights=relevant.ravel(), minlength=n_rows * width)
    found_at = found_in[group].reshape(n_rows, width).astype(np.int64)
    cols = np.arange(width)
    candidate = (found_at > 0) & (cols[None, :] < depth[:, None])
    exists = candidate.any(axis=1)
    start = np.argmax(candidate, axis=1)  # the group's first rank
    at = start[:, None]
    end = np.take_along_axis(ends, at, axis=1)[:, 0]
    found = np.take_along_axis(found_at, at, axis=1)[:, 0]
    size = (end - start)[:, None]
    j = cols[None, :] + 1  # the j-th rank of the group
    if reciprocal:
        reach = np.ones((n_rows, width))
        reach[:, 1:] = ((size - found[:, None] - j + 1) / (size - j + 1))[:, :-1]
        terms = np.cumprod(reach, axis=1) * (found[:, None] / (size - j + 1)) / (start[:, None] + j)
        last = np.minimum(size[:, 0] - found + 1, depth - start)
        value = _at(_prefix(terms), np.maximum(last, 0))
    else:
        factors = (size - found[:, None] - cols[None, :]) / (size - cols[None, :])
        none = np.cumprod(factors, axis=1)
        taken = np.maximum(np.minimum(depth - start, size[:, 0]) - 1, 0)[:, None]
        value = np.where(end <= depth, 1.0, 1.0 - np.take_along_axis(none, taken, axis=1)[:, 0])
    return np.where(exists, value, 0.0)


def _expected_precisions(relevant, hit_prefix, ties, ranks) -> np.ndarray:
    """Each rank's term of AP's sum under ``ties="average"``.

    As the kernel's ``_expected_precisions``: (found / size) * (before + 1 + (j - 1)(found -
    1)/(size - 1)) / rank.
    """
    starts, ends = ties
    n_rows, width = relevant.shape
    group = (starts + (np.arange(n_rows) * width)[:, None]).ravel()
    found_in = np.bincount(group, weights=relevant.ravel(), minlength=n_rows * width)
    found = found_in[group].reshape(n_rows, width).astype(np.int64)
    size = ends - starts
    before = np.take_along_axis(hit_prefix, starts, axis=1)
    j = np.arange(width)[None, :] - starts + 1
    inner = np.where(size == 1, 0.0, (j - 1) * (found - 1) / np.maximum(size - 1, 1))
    terms = (found / size) * (before + 1 + inner) / ranks
    return np.where(found > 0, terms, 0.0)


def _group_means(values: np.ndarray, ties) -> np.ndarray:
    """``values``, or under ``ties="average"`` each rank's tie-group mean.

    A group's values are summed in rank order, as the kernel adds them.
    """
    if ties is None:
        return values
    starts, ends = ties
    n_rows, width = values.shape
    group = (starts + (np.arange(n_rows) * width)[:, None]).ravel()
    totals = np.bincount(group, weights=values.ravel(), minlength=n_rows * width)
    return (totals[group] / (ends - starts).ravel()).reshape(n_rows, width)


def _with_a_row(plan: MeasurePlan) -> MeasurePlan:
    """``plan`` with one row that no query owns (what padding reads when there is no row)."""
    scores = None if plan.scores is None else np.zeros(1)
    return replace(plan, labels=np.full(1, np.nan), scores=scores, tie_key=np.zeros(1, np.int64))


def _judged(labels: np.ndarray, nonnegative: bool) -> np.ndarray:
    judged = labels >= 0.0
    if not nonnegative:
        judged |= ~np.isnan(labels)
    return judged.astype(np.int64)


def _powers(p: float, width: int) -> np.ndarray:
    """``p ** i`` for i in 0..width, as the kernel's repeated products."""
    factors = np.full(width + 1, p)
    factors[0] = 1.0
    return np.cumprod(factors)


def _rbp(top, labels, depth, level, p, rule, ties) -> np.ndarray:
    judged = labels >= 0.0
    if rule == 0:  # the grade over the query's largest judgment grade, when above 1
        scale = np.where(top > 1.0, top, 1.0)[:, None]
        gains = np.where(judged, labels / scale, 0.0)
    elif rule == 1:
        gains = np.where(judged & (labels >= level), labels, 0.0)
    else:
        gains = np.where(judged & (labels >= level), 1.0, 0.0)
    weights = _powers(p, labels.shape[1])[:-1]
    return (1.0 - p) * _at(_prefix(_group_means(gains, ties) * weights), depth)


def _rbp_residual(labels, valid, n, p, ties) -> np.ndarray:
    unjudged = valid & ~(labels >= 0.0)
    powers = _powers(p, labels.shape[1])
    gains = _group_means(np.where(unjudged, 1.0, 0.0), ties)
    within = _at(_prefix(gains * powers[:-1]), n)
    return np.where(unjudged.any(axis=1), powers[n] + (1.0 - p) * within, 0.0)


def _err(plan, labels, depth, ranks) -> np.ndarray:
    positive = labels > 0.0
    grades = np.where(positive, labels, 0.0).astype(np.int64)
    stop = np.where(positive, plan.err_stop[grades], 0.0)
    reach = np.ones_like(stop)
    reach[:, 1:] = 1.0 - stop[:, :-1]
    looking = np.cumprod(reach, axis=1)
    return _at(_prefix(looking * stop / ranks), depth)


def _dividing_by_r(
    plan, queries, kind, labels, hit_prefix, hits, depth, slots_k, big_r, big_n, ranks, j, ties
) -> np.ndarray:
    """The measures dividing by R; NaN where R = 0 (the core applies the no-relevant rule)."""
    _, cutoff, _, choice, choice2 = (int(v) for v in plan.measures[j])
    level, param = plan.params[j, 1], plan.params[j, 0]
    n = np.diff(plan.offsets)[queries]
    r = np.maximum(big_r, 1)
    expected = _expected(hit_prefix, depth, ties)
    if kind == C.M_R:
        value = expected / (r if choice == 0 or cutoff < 0 else np.minimum(r, cutoff))
    elif kind == C.M_F1:
        p_slots = slots_k if choice == 0 else depth
        precision = np.where(p_slots > 0, expected / np.maximum(p_slots, 1), 0.0)
        recall = expected / (r if choice2 == 0 or cutoff < 0 else np.minimum(r, cutoff))
        both = precision + recall
        value = np.where(both == 0.0, 0.0, 2.0 * precision * recall / both)
    elif kind == C.M_AP:
        relevant = labels >= level
        if ties is None:
            terms = np.where(relevant, hit_prefix[:, 1:] / ranks, 0.0)
        else:
            terms = _expected_precisions(relevant, hit_prefix, ties, ranks)
        total = _at(_prefix(terms), depth)
        value = total / (r if choice == 0 or cutoff < 0 else np.minimum(r, cutoff))
    elif kind == C.M_RPREC:
        value = _expected(hit_prefix, np.minimum(r, n), ties) / r
    elif kind == C.M_BPREF:
        considered = ~np.isnan(labels)
        if choice2 == 0:  # negative grades skipped
            considered &= labels >= 0.0
        nonrelevant = considered & (labels < level)
        above = np.cumsum(nonrelevant, axis=1)
        # the penalty capped at 1: a judgment list lacking the rows' non-relevant judgments
        # (N = 0 included) counts as all of its min(N, R) above (see numba's _share_above)
        bound = np.minimum(big_n, r)[:, None]
        share = np.ones(above.shape)
        np.divide(np.minimum(above, r[:, None]), bound, out=share, where=bound > 0)
        term = np.where(above == 0, 1.0, 1.0 - np.minimum(share, 1.0))
        if choice == 1:
            term = np.where((big_n == 0)[:, None], np.nan, term)
        term = np.where(considered & (labels >= level), term, 0.0)
        value = _at(_prefix(term), n) / r
    else:  # IPrec
        if choice == 0:
            needed = np.floor(param * r + 0.5).astype(np.int64)
        else:
            needed = (param * r + 0.9).astype(np.int64)
        found = hit_prefix[:, 1:]
        counted = (found >= needed[:, None]) & (ranks[None, :] <= n[:, None])
        best = np.where(counted, found / ranks, 0.0).max(axis=1)
        value = np.where((n == 0) | (needed > hits), 0.0, best)
    return np.where(big_r == 0, np.nan, value)
