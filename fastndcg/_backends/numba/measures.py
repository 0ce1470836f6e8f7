"""Numba kernel: the measures beside NDCG (P, R, AP, RR, bpref, RBP, ERR, ...) of every query.

One ranking per query serves every measure of the call. Where nDCG's scoring kernel ranked the
query's best rows on its short path (``best_rows``: no tie among them, so every tie rule's
ranking), they are read from there; otherwise the query's rows are ranked here (score
descending, ties by the plan's rule), and each measure reads the ranked labels. A label is the
row's judgment grade, NaN when the document has no judgment; a measure that divides by the
number of relevant judgments ``R`` (recall, AP, R-Prec, bpref, IPrec, F1) gives NaN when
``R = 0``, and the core applies the definition's rule for such queries. ``R`` (and bpref's
``N``, the largest grade) come from one pass over the query's judgments, in the same loop.

A query is ranked whole when a measure reads the whole ranking (by counting each row's rank when
the list is short and ties go by input order or a key, else by a merge sort of insertion-sorted
runs), else only its top ``depth`` rows (an insertion buffer: most rows cost one comparison).
Under ``ties="average"`` the tie groups of the ranking are found, and the measures linear in
what each rank holds give each rank of a group the group's mean (see :func:`_expected`).

The kernel takes one record of its inputs (``MeasureArgs``), no Python objects, and never
raises; it names the record's fields on entry, and its helpers take plain values and small
tuples: a helper called per comparison with the whole record copied it at each call (15x
slower). Every helper lives in this file (Numba's cache notices changes to this file only).
Sums run left to right over the ranks, as the NumPy twin's prefix sums do, so both backends
give the same bits; each query is computed by the same serial code whatever chunk it falls in,
so results do not depend on the thread count.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from fastndcg._contract.codes import (
    M_AP,
    M_BPREF,
    M_CHOICE,
    M_CHOICE2,
    M_COUNTS,
    M_CUTOFF,
    M_ERR,
    M_F1,
    M_IPREC,
    M_JUDGED,
    M_KIND,
    M_NUM_Q,
    M_NUM_REL,
    M_NUM_REL_RET,
    M_NUM_RET,
    M_P,
    M_R,
    M_RBP,
    M_RBP_RESID,
    M_RPREC,
    M_RR,
    M_SUCCESS,
    M_UNJUDGED,
    SPLITMIX_GOLDEN,
    SPLITMIX_MIX1,
    SPLITMIX_MIX2,
    TIE_AVERAGE,
    TIE_KEY,
    TIE_OPTIMISTIC,
    TIE_PESSIMISTIC,
    TIE_RANDOM,
    TIE_STABLE,
)

_RUN = 16  # rows ordered by insertion before the merges
_COUNT_RANKS = 256  # whole rankings up to this many rows: ranked by counting (see _count_ranks)
# what _count counts (see _counts), and the first rank: int64 constants, not literals (a literal
# argument has Numba compile the callee once more for its literal type)
_RELEVANT = np.int64(0)
_NONNEGATIVE = np.int64(1)
_JUDGED = np.int64(2)
_TOP = np.int64(0)
_GOLDEN = np.uint64(SPLITMIX_GOLDEN)
_MIX1 = np.uint64(SPLITMIX_MIX1)
_MIX2 = np.uint64(SPLITMIX_MIX2)


class MeasureArgs(NamedTuple):
    """The kernel's inputs (see :class:`fastndcg._contract.MeasurePlan`), in one plain tuple."""

    offsets: np.ndarray
    scores: np.ndarray  # float64; empty when rows come ranked
    ranked: bool
    labels: np.ndarray
    tie_mode: int
    tie_key: np.ndarray
    seed: np.uint64
    measures: np.ndarray
    params: np.ndarray
    judged_offsets: np.ndarray
    judged_grades: np.ndarray
    levels: np.ndarray
    skip_negative: bool
    err_stop: np.ndarray
    depth: int  # the most ranks a measure reads (-1: every rank)
    best_rows: np.ndarray  # (n_queries, >= depth) int32; no rows: none given (see level_counts)
    best_grades: np.ndarray  # their labels (int8) where the query's levels are counted
    # (n_queries, levels) int16, column 0: -1 nothing, -2 rows given; no columns: the rows say
    # (-1 in column 0: none)
    level_counts: np.ndarray


@njit(cache=True, inline="always")
def _random_key(seed, row):
    z = seed + np.uint64(row) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _grade(label):
    return label if label > 0.0 else 0.0  # NaN (no judgment) too: 0


@njit(cache=True, _nrt=False)
def _before(a, b, s, rules):
    """Whether row ``s + a`` ranks before row ``s + b``.

    Score descending, then the tie rule's key ascending, then input order: a total order, the
    one the NumPy twin's stable sorts make. (Compiled once, not inlined by Numba into its four
    call sites: the copies cost 3 s of the measure kernel's cold compile, 9.8 s -> 7.0 s
    without them, at the same speed.)
    """
    scores, mode, keys, seed, labels = rules
    score_a = scores[s + a]
    score_b = scores[s + b]
    if score_a != score_b:
        return score_a > score_b
    if mode == TIE_KEY:
        key_a = keys[s + a]
        key_b = keys[s + b]
        if key_a != key_b:
            return key_a < key_b
    elif mode == TIE_RANDOM:
        random_a = _random_key(seed, s + a)
        random_b = _random_key(seed, s + b)
        if random_a != random_b:
            return random_a < random_b
    elif mode == TIE_PESSIMISTIC or mode == TIE_OPTIMISTIC:
        grade_a = _grade(labels[s + a])
        grade_b = _grade(labels[s + b])
        if grade_a != grade_b:
            return (grade_a < grade_b) == (mode == TIE_PESSIMISTIC)
    return a < b


@njit(cache=True, _nrt=False)
def _sort(order, spare, s, n, rules):
    """``order[:n]`` = the query's rows in rank order, for rankings read whole.

    A bottom-up merge sort (``spare`` is its second buffer) of runs first ordered by insertion
    (short runs cost fewer comparisons that way than merging them).
    """
    for i in range(n):
        order[i] = i
    for left in range(0, n, _RUN):
        for i in range(left + 1, min(left + _RUN, n)):
            row = order[i]
            at = i
            while at > left and _before(row, order[at - 1], s, rules):
                order[at] = order[at - 1]
                at -= 1
            order[at] = row
    width = _RUN
    source, target = order, spare
    swapped = False
    while width < n:
        for left in range(0, n, 2 * width):
            middle = min(left + width, n)
            right = min(left + 2 * width, n)
            i, j = left, middle
            for t in range(left, right):
                if i < middle and (j >= right or not _before(source[j], source[i], s, rules)):
                    target[t] = source[i]
                    i += 1
                else:
                    target[t] = source[j]
                    j += 1
        source, target = target, source
        swapped = not swapped
        width *= 2
    if swapped:
        for i in range(n):  # (a loop: a slice copy needs Numba's runtime, off here)
            order[i] = spare[i]


@njit(cache=True, _nrt=False)
def _select(order, s, n, count, rules):
    """``order[:count]`` = the ``count`` best rows in rank order, by an insertion buffer.

    When every measure reads the top ``count`` ranks only (cutoffs): most rows then cost one
    comparison with the buffer's last, instead of a place in a whole sort.
    """
    held = 0
    for row in range(n):
        if held == count:
            if not _before(row, order[count - 1], s, rules):
                continue
            held -= 1
        at = held
        while at > 0 and _before(row, order[at - 1], s, rules):
            order[at] = order[at - 1]
            at -= 1
        order[at] = row
        held += 1


@njit(cache=True, _nrt=False)
def _count_ranks(order, scores, keys, n):
    """``order[:n]`` = the rows in rank order: score descending, then key ascending.

    Each row's rank is the number of rows before it, counted by ``n * n`` comparisons without
    a branch, instead of a merge sort's mispredicted branches (measured: AP, RR and R@100 of
    300,000 lists of median 60 rows 1.34x faster up to 256 rows; a higher bound no faster).
    ``keys`` are distinct, so the ranks are.
    """
    for i in range(n):
        score, key = scores[i], keys[i]
        before = 0
        for j in range(n):
            other = scores[j]
            before += np.int64((other > score) | ((other == score) & (keys[j] < key)))
        order[before] = i


@njit(cache=True, _nrt=False)
def _rank(order, spare, keys, s, n, depth, ranked, finite, rules):
    """Rank the query's rows into ``order``; returns how many ranks are read.

    ``depth``: the most ranks any measure reads (-1: the whole ranking). ``finite``: no score
    of the query is NaN or infinite. ``keys``: scratch for the tie keys. ``rules``: the plain
    tuple (scores, tie mode, tie key, seed, labels) the comparisons read: passed field by
    field, a record of every input would be copied at each of the comparisons (15x slower).
    """
    if ranked:
        for i in range(n):
            order[i] = i
        return n
    if 0 <= depth < n:
        _select(order, s, n, depth, rules)
        return depth
    scores, mode, tie_key = rules[0], rules[1], rules[2]
    in_order = mode == TIE_STABLE or mode == TIE_AVERAGE  # ties in input order
    if finite and n <= _COUNT_RANKS and (in_order or mode == TIE_KEY):
        for i in range(n):
            keys[i] = i if in_order else tie_key[s + i]
        _count_ranks(order, scores[s : s + n], keys, n)
        return n
    _sort(order, spare, s, n, rules)
    return n


@njit(cache=True, inline="always")
def _depth(cutoff, n):
    return n if cutoff < 0 or cutoff > n else cutoff


@njit(cache=True, inline="always")
def _counts(label, what, level):
    """Whether a label counts: 0, relevant; 1, judged >= 0; 2, judged at all (not NaN)."""
    if what == 0:
        return label >= level
    if what == 1:
        return label >= 0.0
    return label == label


@njit(cache=True, _nrt=False)
def _count(ranked, lo, hi, level, what):
    count = 0
    for i in range(lo, hi):
        if _counts(ranked[i], what, level):
            count += 1
    return count


@njit(cache=True, _nrt=False)
def _expected(ranked, depth, level, what, ties):
    """How many of the top ``depth`` count (see :func:`_counts` for ``what``).

    Under ``ties="average"`` (``ties[0]``) the mean over every order of the tied rows: a tie
    group cut by ``depth`` adds its count times the fraction of its ranks above the cut.
    ``ties[1]``, ``ties[2]``: where the group of each rank starts and ends.
    """
    average, starts, ends = ties
    if average and depth > 0:
        start, end = starts[depth - 1], ends[depth - 1]
        if end > depth:
            full = _count(ranked, _TOP, start, level, what)
            group = _count(ranked, start, end, level, what)
            return full + (group * (depth - start)) / (end - start)
    return float(_count(ranked, _TOP, depth, level, what))


@njit(cache=True, _nrt=False)
def _first_group(ranked, depth, level, ends):
    """The first tie group starting above ``depth`` that holds a relevant row.

    Its start, its end and its relevant rows; (-1, -1, 0) when there is none.
    """
    i = 0
    while i < depth:
        end = ends[i]
        found = _count(ranked, i, end, level, _RELEVANT)
        if found > 0:
            return i, end, found
        i = end
    return -1, -1, 0


@njit(cache=True, _nrt=False)
def _expected_success(ranked, depth, level, ends):
    """Success@k's mean over every order of tied rows.

    1 - P(none of the first relevant group's ranks above the cut is relevant): a
    hypergeometric product.
    """
    start, end, found = _first_group(ranked, depth, level, ends)
    if found == 0:
        return 0.0
    if end <= depth:
        return 1.0
    size = end - start
    none = 1.0
    for i in range(depth - start):
        none *= (size - found - i) / (size - i)
    return 1.0 - none


@njit(cache=True, _nrt=False)
def _expected_rr(ranked, depth, level, ends):
    """RR@k's mean over every order of tied rows.

    The first relevant row is in the first group that holds one, at its j-th rank with
    probability P(none before) * found / (size - j + 1).
    """
    start, end, found = _first_group(ranked, depth, level, ends)
    if found == 0:
        return 0.0
    size = end - start
    total = 0.0
    none = 1.0  # P(no relevant row at the group's first j - 1 ranks)
    for j in range(1, min(size - found + 1, depth - start) + 1):
        total += none * (found / (size - j + 1)) / (start + j)
        none *= (size - found - j + 1) / (size - j + 1)
    return total


@njit(cache=True, _nrt=False)
def _expected_precisions(ranked, depth, level, ends):
    """AP@k's sum of precisions under ``ties="average"``, its mean over every order of tied rows.

    Each rank ``j`` of a tie group of ``size`` rows, ``found`` relevant, holds a relevant row
    with probability found / size, and then the group's other relevant rows above it number
    (j - 1)(found - 1)/(size - 1) on average (McSherry and Najork, ECIR 2008).
    """
    total = 0.0
    before = 0  # relevant rows of the groups above
    i = 0
    while i < depth:
        end = ends[i]
        size = end - i
        found = _count(ranked, i, end, level, _RELEVANT)
        if found > 0:
            for j in range(1, min(size, depth - i) + 1):
                inner = 0.0 if size == 1 else (j - 1) * (found - 1) / (size - 1)
                total += (found / size) * (before + 1 + inner) / (i + j)
        before += found
        i = end
    return total


@njit(cache=True, _nrt=False)
def _bpref(ranked, n, level, big_r, big_n, skip_negative, nan_without_nonrelevant):
    total = 0.0
    above = 0  # judged non-relevant documents ranked above
    for i in range(n):
        label = ranked[i]
        if label != label or (label < 0.0 and skip_negative):
            continue
        if label < level:
            above += 1
        elif nan_without_nonrelevant and big_n == 0:
            total += math.nan
        elif above == 0:
            total += 1.0
        else:
            total += 1.0 - _share_above(above, big_r, big_n)
    return total


@njit(cache=True, inline="always")
def _share_above(above, big_r, big_n):
    """The penalty of bpref's term, ``min(above, R) / min(N, R)``, capped at 1.

    It is at most 1 where the judgment lists hold the rows (``above <= N``); a list lacking
    some of the rows' non-relevant judgments (``N = 0`` included, a division by zero) counts
    as all of its ``min(N, R)`` ranked above.
    """
    bound = min(big_n, big_r)
    return min(min(above, big_r) / bound, 1.0) if bound > 0 else 1.0


@njit(cache=True, inline="always")
def _rbp_gain(label, level, gain_rule, scale):
    """RBP's gain of a label (-1 for ``gain_rule``: 1 where unjudged, RBP's residual)."""
    if gain_rule < 0:
        return 0.0 if label >= 0.0 else 1.0
    if label >= 0.0:
        if gain_rule == 0:
            return label / scale
        if label >= level:
            return label if gain_rule == 1 else 1.0
    return 0.0


@njit(cache=True, _nrt=False)
def _weighted_gains(ranked, depth, level, p, gain_rule, scale, ties):
    """The sum of the top ``depth`` gains times ``p ** rank``.

    ``p ** rank`` by repeated products (the twin's cumulative product); under
    ``ties="average"`` each rank of a tie group has the group's mean gain (its gains added in
    rank order).
    """
    average, _, ends = ties
    total = 0.0
    weight = 1.0
    i = 0
    while i < depth:
        end = ends[i] if average else i + 1
        gain = 0.0
        for t in range(i, end):
            gain += _rbp_gain(ranked[t], level, gain_rule, scale)
        if average:
            gain = gain / (end - i)
        for _ in range(i, min(end, depth)):
            total += gain * weight
            weight *= p
        i = end
    return total


@njit(cache=True, _nrt=False)
def _rbp(ranked, depth, level, p, gain_rule, top_grade, ties):
    scale = top_grade if top_grade > 1.0 else 1.0
    return (1.0 - p) * _weighted_gains(ranked, depth, level, p, gain_rule, scale, ties)


@njit(cache=True, _nrt=False)
def _rbp_residual(ranked, n, p, ties):
    if _count(ranked, _TOP, n, 0.0, _NONNEGATIVE) == n:
        return 0.0  # trec_eval sets it only when a retrieved document is unjudged
    tail = 1.0
    for _ in range(n):
        tail *= p
    return tail + (1.0 - p) * _weighted_gains(ranked, n, 0.0, p, -1, 1.0, ties)


@njit(cache=True, _nrt=False)
def _err(ranked, depth, stop_of):
    """ERR of the top ``depth`` labels; ``stop_of[g]``: grade ``g``'s stopping probability.

    Labels above 0 are integers up to ``stop_of.size - 1`` (checked before); the others stop
    no one: ``stop_of[0]`` is 0.0, read without a branch (a label's relevance is a coin flip
    to the branch predictor).
    """
    total = 0.0
    looking = 1.0  # the probability that the user reaches this rank
    for i in range(depth):
        stop = stop_of[max(np.int64(ranked[i]), 0)]
        total += looking * stop / (i + 1)
        looking *= 1.0 - stop
    return total


@njit(cache=True, _nrt=False)
def _iprec(ranked, n, level, big_r, recall, rounding):
    if rounding == 0:
        needed = math.floor(recall * big_r + 0.5)
    else:
        needed = int(recall * big_r + 0.9)
    if n == 0 or needed > _count(ranked, _TOP, n, level, _RELEVANT):
        return 0.0
    best = 0.0
    found = 0
    for i in range(n):
        if ranked[i] >= level:
            found += 1
        if found >= needed:
            precision = found / (i + 1)
            if precision > best:
                best = precision
    return best


@njit(cache=True, _nrt=False)
def _measure(ranked, n, codes, param, level, big_r, big_n, top_grade, ties):
    """The measure of ``codes`` (kind, cutoff, two choices) for a query ranked ``ranked``.

    ``n``: the query's rows; ``param``, ``level``: its parameter and relevance level;
    ``big_r``, ``big_n``: the query's R and bpref's N at that level; ``top_grade``: its largest
    grade; ``ties``: (average, the start and the end of each rank's tie group), see
    :func:`_expected`. Under average ties the core asks only for the measures linear in what
    each rank holds, and RR, Success and AP; without tie groups, those five come from
    :func:`_hits` instead, and ERR from :func:`_err`.
    """
    kind, cutoff, choice, choice2 = codes
    depth = _depth(cutoff, n)
    if kind == M_NUM_Q:
        return 1.0
    if kind == M_NUM_RET:
        return float(depth)
    if kind == M_NUM_REL:
        return float(big_r)
    if kind == M_NUM_REL_RET:
        return _expected(ranked, depth, level, _RELEVANT, ties)
    if kind == M_P:
        slots = (n if cutoff < 0 else cutoff) if choice == 0 else depth
        return _expected(ranked, depth, level, _RELEVANT, ties) / slots if slots > 0 else 0.0
    if kind == M_RR:  # (without tie groups: from _hits)
        return _expected_rr(ranked, depth, level, ties[2])
    if kind == M_SUCCESS:
        return _expected_success(ranked, depth, level, ties[2])
    if kind == M_RBP:
        return _rbp(ranked, depth, level, param, choice, top_grade, ties)
    if kind == M_RBP_RESID:
        return _rbp_residual(ranked, n, param, ties)
    if kind == M_JUDGED:
        slots = depth if choice == 0 else (n if cutoff < 0 else cutoff)
        what = _NONNEGATIVE if choice2 == 1 else _JUDGED
        return _expected(ranked, depth, 0.0, what, ties) / slots if slots > 0 else 0.0
    if kind == M_UNJUDGED:
        slots = n if cutoff < 0 else cutoff
        unjudged = depth - _expected(ranked, depth, 0.0, _NONNEGATIVE, ties)
        return unjudged / slots if slots > 0 else 0.0
    # the measures dividing by R: NaN for the core's no-relevant rule when R = 0
    if big_r == 0:
        return math.nan
    if kind == M_R:
        return _expected(ranked, depth, level, _RELEVANT, ties) / (
            big_r if choice == 0 or cutoff < 0 else min(big_r, cutoff)
        )
    if kind == M_F1:
        p_slots = (n if cutoff < 0 else cutoff) if choice == 0 else depth
        hits = _expected(ranked, depth, level, _RELEVANT, ties)
        precision = hits / p_slots if p_slots > 0 else 0.0
        recall = hits / (big_r if choice2 == 0 or cutoff < 0 else min(big_r, cutoff))
        if precision + recall == 0.0:
            return 0.0
        return 2.0 * precision * recall / (precision + recall)
    if kind == M_AP:
        total = _expected_precisions(ranked, depth, level, ties[2])
        return total / (big_r if choice == 0 or cutoff < 0 else min(big_r, cutoff))
    if kind == M_RPREC:
        return _expected(ranked, min(big_r, n), level, _RELEVANT, ties) / big_r
    if kind == M_BPREF:
        total = _bpref(ranked, n, level, big_r, big_n, choice2 == 0, choice == 1)
        return total / big_r
    if kind == M_IPREC:
        return _iprec(ranked, n, level, big_r, param, choice)
    return math.nan


@njit(cache=True, _nrt=False, inline="always")
def _hits(ranked, depth, level):
    """One pass over the top ``depth`` labels of a ranking without tie groups.

    The relevant rows, the first one's rank (0: none) and AP's sum of precisions.
    """
    found = 0
    first = 0
    precisions = 0.0
    for i in range(depth):
        if ranked[i] >= level:
            found += 1
            precisions += found / (i + 1)
            first = i + 1 if first == 0 else first
    return found, first, precisions


@njit(cache=True, _nrt=False, inline="always")
def _from_hits(kind, hits, n, cutoff, choice, big_r):
    """P, R, RR, AP or Success from :func:`_hits` of its depth and level.

    The numbers :func:`_measure` gives (the same operations in the same order), without its
    call: a call passes each of its arrays field by field, and these are the measures most
    calls ask for, often several at one cutoff and level (then from one pass).
    """
    found, first, precisions = hits
    depth = _depth(cutoff, n)
    if kind == M_P:
        slots = (n if cutoff < 0 else cutoff) if choice == 0 else depth
        return float(found) / slots if slots > 0 else 0.0
    if kind == M_RR:
        return 1.0 / first if first > 0 else 0.0
    if kind == M_SUCCESS:
        return 1.0 if found > 0 else 0.0
    if big_r == 0:
        return math.nan
    denominator = big_r if choice == 0 or cutoff < 0 else min(big_r, cutoff)
    return (float(found) if kind == M_R else precisions) / denominator


@njit(cache=True, _nrt=False)
def _tie_groups(starts, ends, order, s, n, scores):
    """Where the tie group of each rank starts and ends (exclusive), ranks ``order[:n]``."""
    start = 0
    for i in range(1, n + 1):
        if i == n or scores[s + order[i]] != scores[s + order[i - 1]]:
            for t in range(start, i):
                starts[t] = start
                ends[t] = i
            start = i


# the passes over a query's rows below loop over a slice: the same loop over a range of indices
# into the whole array was not vectorised (measured: 4x slower)


@njit(cache=True, _nrt=False)
def _count_relevant(grades, level):
    """How many ``grades`` are at or above ``level`` (``R``)."""
    count = 0
    for grade in grades:
        count += np.int64(grade >= level)
    return count


@njit(cache=True, _nrt=False)
def _count_nonrelevant(grades, level, skip_negative):
    """How many ``grades`` are below ``level`` (bpref's ``N``)."""
    count = 0
    for grade in grades:
        count += np.int64((grade < level) & ((grade >= 0.0) | (not skip_negative)))
    return count


@njit(cache=True, _nrt=False)
def _largest_grade(grades):
    """The largest of ``grades``, or 0."""
    top = 0.0
    for grade in grades:
        top = max(top, grade)
    return top


@njit(cache=True, _nrt=False)
def _err_takes(labels, top):
    """Whether every label above 0 is an integer up to ``top`` (ERR's stopping grades).

    (``np.floor``, not ``math.floor``: Numba's returns an integer, a conversion per label.)
    """
    bad = False
    for label in labels:
        bad |= (label > 0.0) & ((label > top) | (label != np.floor(label)))
    return not bad


@njit(cache=True, _nrt=False, inline="always")
def _counted_levels(counts, q, levels, relevant):
    """``relevant[q, c]``: query ``q``'s ``R`` at each relevance level, from its grade levels.

    ``counts[q, g]``: the query's rows (its judgments) of grade ``g = 0, 1, ...``. Returns the
    largest grade held, -1.0 for none. (Rows indexed here, not passed as views: a view of a
    row takes and drops a reference, two atomic operations a query.)
    """
    highest = -1.0
    for g in range(counts.shape[1]):
        highest = np.float64(g) if counts[q, g] > 0 else highest
    for c in range(levels.size):  # summed in a register (not in `relevant`: a store a level)
        total = np.int64(0)
        for g in range(counts.shape[1]):
            total += np.int64(counts[q, g]) if np.float64(g) >= levels[c] else 0
        relevant[q, c] = total
    return highest


@njit(cache=True, _nrt=False)
def _count_nonfinite(scores):
    count = 0
    for score in scores:
        count += np.int64(not math.isfinite(score))
    return count


@njit(cache=True, nogil=True)
def measure_queries(q0, q1, args, out, relevant):
    """Every measure of queries ``q0:q1`` into ``out[j, q]`` (one ranking per query).

    ``relevant[q, c]`` gets the query's ``R`` at the level of counts column ``c``. Per query:
    its judgments counted (``R``, and bpref's ``N`` and the largest grade where a measure reads
    them) and its labels checked for ERR, or both taken from the grade levels the scoring
    kernel counted; its best rows (or their labels) taken from what that kernel ranked (else
    ranked here); then every measure read from the ranked labels.
    Returns the NaN or infinite scores met in the queries ranked here, and the first row whose
    label ERR cannot take (-1: none; the chunk stops there, and the caller raises).
    """
    offsets = args.offsets
    longest = np.int64(0)
    for q in range(q0, q1):
        longest = max(longest, offsets[q + 1] - offsets[q])
    order = np.empty(longest, dtype=np.int64)
    spare = np.empty(longest, dtype=np.int64)
    keys = np.empty(min(longest, _COUNT_RANKS), dtype=np.int64)
    average = args.tie_mode == TIE_AVERAGE and not args.ranked
    starts = np.zeros(longest if average else 0, dtype=np.int64)
    ends = np.zeros(longest if average else 0, dtype=np.int64)
    ties = (average, starts, ends)
    ranked = np.empty(longest)
    measures, params, err_stop = args.measures, args.params, args.err_stop
    judged_offsets, judged_grades, levels = args.judged_offsets, args.judged_grades, args.levels
    n_measures = measures.shape[0]
    n_levels = levels.size
    nonrelevant = np.zeros(max(n_levels, 1), dtype=np.int64)
    needs_n = False
    needs_top = False
    for j in range(n_measures):
        needs_n |= measures[j, M_KIND] == M_BPREF
        needs_top |= measures[j, M_KIND] == M_RBP
    err_top = err_stop.size - 1  # -1: no ERR asked
    best_rows, best_grades, level_counts = args.best_rows, args.best_grades, args.level_counts
    given = best_rows.shape[0] > 0
    labels = args.labels
    rules = (args.scores, args.tie_mode, args.tie_key, args.seed, labels)
    nonfinite = 0
    for q in range(q0, q1):
        s = offsets[q]
        n = offsets[q + 1] - s
        # what the scoring kernel shared: the query's grade levels and its best rows' labels,
        # or its best rows (-2 in the counts where they are given, else row 0 >= 0), or nothing
        counted = False
        ranked_there = False
        if level_counts.shape[1]:
            counted = level_counts[q, 0] >= 0
            ranked_there = level_counts[q, 0] == -2
        elif given:
            ranked_there = best_rows[q, 0] >= 0
        if counted and not needs_n:
            highest = _counted_levels(level_counts, q, levels, relevant)
            top_grade = max(highest, 0.0)
            takes = highest <= err_top
        else:
            judgments = judged_grades[judged_offsets[q] : judged_offsets[q + 1]]
            for c in range(n_levels):
                relevant[q, c] = _count_relevant(judgments, levels[c])
                if needs_n:
                    nonrelevant[c] = _count_nonrelevant(judgments, levels[c], args.skip_negative)
            top_grade = _largest_grade(judgments) if needs_top else 0.0
            takes = err_top < 0 or _err_takes(labels[s : s + n], err_top)
        if err_top >= 0 and not takes:
            for i in range(s, s + n):  # the first row it does not take
                if not _err_takes(labels[i : i + 1], err_top):
                    return nonfinite, i
        if counted:  # ranked by the scoring kernel (no tie), which read the labels too
            count = _depth(args.depth, n)
            for i in range(count):
                ranked[i] = best_grades[q, i]
        elif ranked_there:
            count = _depth(args.depth, n)
            for i in range(count):
                ranked[i] = labels[s + best_rows[q, i]]
        else:
            bad = 0 if args.ranked else _count_nonfinite(args.scores[s : s + n])
            nonfinite += bad
            count = _rank(order, spare, keys, s, n, args.depth, args.ranked, bad == 0, rules)
            for i in range(count):
                ranked[i] = labels[s + order[i]]
        if average:  # the tie groups of the ranking (it is whole: see the core's depth)
            _tie_groups(starts, ends, order, s, n, args.scores)
        hits_at = (-1, 0.0)  # the depth and level of `hits`
        hits = (0, 0, 0.0)
        for j in range(n_measures):  # (codes as scalars: a row of `measures` is a counted view)
            kind = measures[j, M_KIND]
            column = measures[j, M_COUNTS]
            cutoff, level = measures[j, M_CUTOFF], params[j, 1]
            depth = _depth(cutoff, n)
            if not average and (
                kind == M_P or kind == M_R or kind == M_RR or kind == M_AP or kind == M_SUCCESS
            ):
                if hits_at != (depth, level):
                    hits_at = (depth, level)
                    hits = _hits(ranked, depth, level)
                choice = measures[j, M_CHOICE]
                out[j, q] = _from_hits(kind, hits, n, cutoff, choice, relevant[q, column])
                continue
            if kind == M_ERR:  # (never under average ties: the core refuses them)
                out[j, q] = _err(ranked, depth, err_stop)
                continue
            codes = (kind, cutoff, measures[j, M_CHOICE], measures[j, M_CHOICE2])
            out[j, q] = _measure(
                ranked,
                n,
                codes,
                params[j, 0],
                params[j, 1],
                relevant[q, column],
                nonrelevant[column],
                top_grade,
                ties,
            )
    return nonfinite, -1
