"""Vectorised NumPy twin of the measures kernel (``numba/measures.py``).

Queries are bucketed by length and padded into dense blocks, ranked by the scoring twin's
``_rank_order``, and every measure is a few array operations over the block's ranked labels
(NaN: no judgment, and padding). Sums are prefix sums along the ranks (``np.cumsum`` adds left
to right, as the kernel's loops do), and repeated products are cumulative products, so both
backends give the same bits.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from fastndcg._backends.numpy.score import _rank_order
from fastndcg._backends.tuning import NUMPY_CELLS
from fastndcg._contract import MeasurePlan
from fastndcg._contract import codes as C


def measure_queries(plan: MeasurePlan) -> np.ndarray:
    """Every measure of every query: shape (n_queries, n_measures)."""
    out = np.empty((plan.n_queries, plan.measures.shape[0]))
    lengths = np.diff(plan.offsets)
    with np.errstate(divide="ignore", invalid="ignore"):  # the divisions where() discards
        for queries, width in _blocks(lengths):
            _measure_block(plan, queries, width, lengths[queries], out)
    return out


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


def _measure_block(plan, queries, width, lengths, out) -> None:
    cols = np.arange(width)
    valid = cols[None, :] < lengths[:, None]
    rows = np.where(valid, plan.offsets[queries][:, None] + cols[None, :], 0)
    if plan.labels.size == 0:  # no row at all: every query is empty
        return _measure_block(_with_a_row(plan), queries, width, lengths, out)
    labels = np.where(valid, plan.labels[rows], np.nan)
    if plan.scores is not None:
        scores = np.where(valid, plan.scores[rows], -np.inf)
        grades = np.where(labels > 0.0, labels, 0.0)
        order = _rank_order(plan, scores, grades, rows, valid)
        labels = np.take_along_axis(labels, order, axis=1)
    n = lengths
    ranks = cols + 1
    for j in range(plan.measures.shape[0]):
        kind, cutoff, counts, choice, choice2 = (int(v) for v in plan.measures[j])
        level, param = plan.params[j, 1], plan.params[j, 0]
        depth = n if cutoff < 0 else np.minimum(cutoff, n)
        slots_k = n if cutoff < 0 else np.full_like(n, cutoff)  # k, or n for no cutoff
        big_r = plan.relevant[queries, counts]
        relevant = labels >= level
        hit_prefix = _prefix(relevant.astype(np.int64))
        hits = _at(hit_prefix, depth)
        if kind == C.M_NUM_Q:
            value = np.ones(n.size)
        elif kind == C.M_NUM_RET:
            value = depth.astype(np.float64)
        elif kind == C.M_NUM_REL:
            value = big_r.astype(np.float64)
        elif kind == C.M_NUM_REL_RET:
            value = hits.astype(np.float64)
        elif kind == C.M_P:
            slots = slots_k if choice == 0 else depth
            value = np.where(slots > 0, hits / np.maximum(slots, 1), 0.0)
        elif kind == C.M_RR:
            first = np.argmax(relevant, axis=1)
            found = relevant.any(axis=1) & (first < depth)
            value = np.where(found, 1.0 / (first + 1), 0.0)
        elif kind == C.M_SUCCESS:
            value = np.where(hits > 0, 1.0, 0.0)
        elif kind == C.M_RBP:
            value = _rbp(plan, queries, labels, depth, level, param, choice)
        elif kind == C.M_RBP_RESID:
            value = _rbp_residual(labels, valid, n, param)
        elif kind == C.M_ERR:
            value = _err(plan, labels, depth, ranks)
        elif kind == C.M_JUDGED:
            judged = _judged(labels, choice2 == 1)
            slots = depth if choice == 0 else slots_k
            value = np.where(slots > 0, _at(_prefix(judged), depth) / np.maximum(slots, 1), 0.0)
        elif kind == C.M_UNJUDGED:
            unjudged = depth - _at(_prefix(_judged(labels, True)), depth)
            value = np.where(slots_k > 0, unjudged / np.maximum(slots_k, 1), 0.0)
        else:
            value = _dividing_by_r(
                plan, queries, kind, labels, hit_prefix, hits, depth, slots_k, big_r, ranks, j
            )
        out[queries, j] = value


def _with_a_row(plan: MeasurePlan) -> MeasurePlan:
    """``plan`` with one row that no query owns (what padding reads when there is no row)."""
    scores = None if plan.scores is None else np.zeros(1)
    return replace(plan, labels=np.full(1, np.nan), scores=scores)


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


def _rbp(plan, queries, labels, depth, level, p, rule) -> np.ndarray:
    judged = labels >= 0.0
    if rule == 0:  # the grade over the query's largest judgment grade, when above 1
        top = plan.top_grade[queries]
        scale = np.where(top > 1.0, top, 1.0)[:, None]
        gains = np.where(judged, labels / scale, 0.0)
    elif rule == 1:
        gains = np.where(judged & (labels >= level), labels, 0.0)
    else:
        gains = np.where(judged & (labels >= level), 1.0, 0.0)
    weights = _powers(p, labels.shape[1])[:-1]
    return (1.0 - p) * _at(_prefix(gains * weights), depth)


def _rbp_residual(labels, valid, n, p) -> np.ndarray:
    unjudged = valid & ~(labels >= 0.0)
    powers = _powers(p, labels.shape[1])
    within = _at(_prefix(np.where(unjudged, powers[:-1], 0.0)), n)
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
    plan, queries, kind, labels, hit_prefix, hits, depth, slots_k, big_r, ranks, j
) -> np.ndarray:
    """The measures dividing by R; NaN where R = 0 (the core applies the no-relevant rule)."""
    _, cutoff, counts, choice, choice2 = (int(v) for v in plan.measures[j])
    level, param = plan.params[j, 1], plan.params[j, 0]
    n = np.diff(plan.offsets)[queries]
    r = np.maximum(big_r, 1)
    if kind == C.M_R:
        value = hits / (r if choice == 0 or cutoff < 0 else np.minimum(r, cutoff))
    elif kind == C.M_F1:
        p_slots = slots_k if choice == 0 else depth
        precision = np.where(p_slots > 0, hits / np.maximum(p_slots, 1), 0.0)
        recall = hits / (r if choice2 == 0 or cutoff < 0 else np.minimum(r, cutoff))
        both = precision + recall
        value = np.where(both == 0.0, 0.0, 2.0 * precision * recall / both)
    elif kind == C.M_AP:
        relevant = labels >= level
        terms = np.where(relevant, hit_prefix[:, 1:] / ranks, 0.0)
        total = _at(_prefix(terms), depth)
        value = total / (r if choice == 0 or cutoff < 0 else np.minimum(r, cutoff))
    elif kind == C.M_RPREC:
        value = _at(hit_prefix, np.minimum(r, n)) / r
    elif kind == C.M_BPREF:
        big_n = plan.nonrelevant[queries, counts]
        considered = ~np.isnan(labels)
        if choice2 == 0:  # negative grades skipped
            considered &= labels >= 0.0
        nonrelevant = considered & (labels < level)
        above = np.cumsum(nonrelevant, axis=1)
        term = np.where(
            above == 0,
            1.0,
            1.0 - np.minimum(above, r[:, None]) / np.minimum(big_n, r)[:, None],
        )
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
