"""Numba kernels: DCG and IDCG of every query of a CSR layout, for every cutoff, in one pass.

Kernels take flat arrays and integer codes only; they do no validation (the API has checked
everything before calling them) and never raise. All helpers a cached kernel calls live in this
file, so Numba's per-file cache invalidation sees every change.

Work is split into chunks of consecutive queries holding about the same number of rows, and
``prange`` runs over chunks. Each query's values are computed by the same serial code whatever
chunk it falls in, so results are bit-identical for every thread count.

Per query (rows ``s:e``, ``n = e - s``, ``K`` = the largest cutoff, or ``n`` for the whole list):

1. select the ``min(K, n)`` best rows in rank order: an insertion buffer when few are needed,
   otherwise a stable merge sort of the whole list;
2. turn them into a prefix sum ``P[r] = sum_{t<r} g_t d_t`` of discounted gains, where with
   ``ties="average"`` every row of a tie group carries the group's mean gain (the group at the
   selection boundary is completed by a second pass over the query);
3. ``DCG@k = P[min(k, n)]``;
4. the ideal prefix sum comes from a histogram of integer grade levels (counting, no sort) when
   grades are small integers, otherwise from a selection on the gains.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from fastndcg._codes import (
    GAIN_EXP2,
    GAIN_LINEAR,
    IDEAL_LOCAL,
    IDEAL_MAX,
    SMALL_SELECT,
    TIE_AVERAGE,
    TIE_KEY,
    TIE_OPTIMISTIC,
    TIE_PESSIMISTIC,
    TIE_RANDOM,
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def random_key(seed, row):
    """SplitMix64 hash of (seed, row): the random tie-breaking key of a row."""
    z = seed + np.uint64(row) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _gain(grade, gain_mode, gain_table):
    if gain_mode == GAIN_EXP2:
        return np.exp2(grade) - 1.0
    if gain_mode == GAIN_LINEAR:
        return grade
    return gain_table[np.int64(grade)]


@njit(cache=True, inline="always")
def _ahead(i, j, scores, grades, tie_mode, tie_key, seed, gain_mode, gain_table):
    """True when row ``i`` ranks strictly before row ``j``."""
    si = scores[i]
    sj = scores[j]
    if si != sj:
        return si > sj
    if tie_mode == TIE_PESSIMISTIC or tie_mode == TIE_OPTIMISTIC:
        gi = _gain(grades[i], gain_mode, gain_table)
        gj = _gain(grades[j], gain_mode, gain_table)
        if gi != gj:
            return (gi < gj) if tie_mode == TIE_PESSIMISTIC else (gi > gj)
    elif tie_mode == TIE_RANDOM:
        ki = random_key(seed, i)
        kj = random_key(seed, j)
        if ki != kj:
            return ki < kj
    elif tie_mode == TIE_KEY:
        if tie_key[i] != tie_key[j]:
            return tie_key[i] < tie_key[j]
    return i < j


@njit(cache=True)
def _select_top(buf, s, e, count, scores, grades, tie_mode, tie_key, seed, gain_mode, gain_table):
    """Write the ``count`` best rows of ``s:e`` into ``buf[:count]``, best first."""
    filled = 0
    for i in range(s, e):
        if filled < count:
            p = filled
            filled += 1
        elif _ahead(
            i, buf[count - 1], scores, grades, tie_mode, tie_key, seed, gain_mode, gain_table
        ):
            p = count - 1
        else:
            continue
        while p > 0 and _ahead(
            i, buf[p - 1], scores, grades, tie_mode, tie_key, seed, gain_mode, gain_table
        ):
            buf[p] = buf[p - 1]
            p -= 1
        buf[p] = i


@njit(cache=True)
def _sort_rows(idx, tmp, n, scores, grades, tie_mode, tie_key, seed, gain_mode, gain_table):
    """Stable sort of ``idx[:n]`` (row numbers) into rank order; ``tmp`` is scratch space."""
    run = 16
    for a in range(0, n, run):
        b = min(a + run, n)
        for t in range(a + 1, b):
            x = idx[t]
            p = t
            while p > a and _ahead(
                x, idx[p - 1], scores, grades, tie_mode, tie_key, seed, gain_mode, gain_table
            ):
                idx[p] = idx[p - 1]
                p -= 1
            idx[p] = x
    src = idx
    dst = tmp
    width = run
    passes = 0
    while width < n:
        for a in range(0, n, 2 * width):
            m = min(a + width, n)
            b = min(a + 2 * width, n)
            i = a
            j = m
            o = a
            while i < m and j < b:
                if _ahead(
                    src[j], src[i], scores, grades, tie_mode, tie_key, seed, gain_mode, gain_table
                ):
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < m:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < b:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        width *= 2
        passes += 1
    if passes % 2 == 1:  # the last merge pass wrote into tmp
        idx[:n] = tmp[:n]


@njit(cache=True)
def _sort_desc(values, n):
    """Sort ``values[:n]`` in descending order, in place."""
    if n <= SMALL_SELECT:
        for t in range(1, n):
            x = values[t]
            p = t
            while p > 0 and values[p - 1] < x:
                values[p] = values[p - 1]
                p -= 1
            values[p] = x
    else:
        head = values[:n]
        head.sort()
        for t in range(n // 2):
            x = head[t]
            head[t] = head[n - 1 - t]
            head[n - 1 - t] = x


@njit(cache=True)
def _top_gains(vals, s, e, count, grades, gain_mode, gain_table):
    """Write the ``count`` largest gains of rows ``s:e`` into ``vals[:count]``, largest first."""
    n = e - s
    if count > SMALL_SELECT or count == n:
        for t in range(n):
            vals[t] = _gain(grades[s + t], gain_mode, gain_table)
        _sort_desc(vals, n)
        return
    filled = 0
    for i in range(s, e):
        g = _gain(grades[i], gain_mode, gain_table)
        if filled < count:
            p = filled
            filled += 1
        elif g > vals[count - 1]:
            p = count - 1
        else:
            continue
        while p > 0 and vals[p - 1] < g:
            vals[p] = vals[p - 1]
            p -= 1
        vals[p] = g


@njit(cache=True)
def _ideal_prefix(
    prefix,
    vals,
    hist,
    s,
    e,
    count,
    grades,
    gain_mode,
    gain_table,
    n_levels,
    level_order,
    level_gain,
    discount,
):
    """``prefix[r]`` = ideal DCG of the first ``r`` ranks, for ``r <= count``."""
    prefix[0] = 0.0
    if n_levels > 0:
        for i in range(s, e):
            hist[np.int64(grades[i])] += 1
        pos = 0
        for lv in range(n_levels):
            level = level_order[lv]
            filled = hist[level]
            if filled == 0 or pos >= count:
                continue
            g = level_gain[level]
            stop = min(pos + filled, count)
            for t in range(pos, stop):
                prefix[t + 1] = prefix[t] + g * discount[t]
            pos += filled
        for level in range(n_levels):
            hist[level] = 0
        return
    _top_gains(vals, s, e, count, grades, gain_mode, gain_table)
    for t in range(count):
        prefix[t + 1] = prefix[t] + vals[t] * discount[t]


@njit(cache=True)
def _local_ideal(
    vals, buf, mean_gain, group_end, cut, average, grades, gain_mode, gain_table, discount
):
    """Ideal DCG of the top ``cut`` rows re-sorted by gain.

    With tie averaging, the rows of a tie group that straddles ``cut`` each carry the group's
    mean gain (the expected gain of whichever of its rows land above the cutoff).
    """
    for t in range(cut):
        if average and group_end[t] > cut:
            vals[t] = mean_gain[t]
        else:
            vals[t] = _gain(grades[buf[t]], gain_mode, gain_table)
    _sort_desc(vals, cut)
    total = 0.0
    for t in range(cut):
        total += vals[t] * discount[t]
    return total


@njit(cache=True)
def _score_chunk(
    q0,
    q1,
    offsets,
    grades,
    scores,
    ranked,
    tie_mode,
    tie_key,
    seed,
    gain_mode,
    gain_table,
    n_levels,
    level_order,
    level_gain,
    discount,
    discount_prefix,
    cutoffs,
    k_max,
    ideal_mode,
    ideal_offsets,
    ideal_grades,
    max_gain,
    dcg_out,
    idcg_out,
):
    n_cut = cutoffs.size
    whole = False
    for j in range(n_cut):
        if cutoffs[j] < 0:
            whole = True
    longest = 0
    longest_ideal = 0
    for q in range(q0, q1):
        longest = max(longest, offsets[q + 1] - offsets[q])
        longest_ideal = max(longest_ideal, ideal_offsets[q + 1] - ideal_offsets[q])
    cap = longest if whole else min(k_max, longest)
    buf = np.empty(max(longest, 1), dtype=np.int64)
    tmp = np.empty(max(longest, 1), dtype=np.int64)
    prefix = np.empty(cap + 1, dtype=np.float64)
    mean_gain = np.empty(max(cap, 1), dtype=np.float64)
    group_end = np.empty(max(cap, 1), dtype=np.int64)
    ideal_prefix = np.empty(max(longest_ideal, cap) + 1, dtype=np.float64)
    vals = np.empty(max(longest_ideal, cap, 1), dtype=np.float64)
    hist = np.zeros(max(n_levels, 1), dtype=np.int64)
    average = tie_mode == TIE_AVERAGE and not ranked

    for q in range(q0, q1):
        s = offsets[q]
        e = offsets[q + 1]
        n = e - s
        count = n if whole else min(k_max, n)

        # 1. the best `count` rows, in rank order
        if ranked:
            for t in range(count):
                buf[t] = s + t
        elif count <= SMALL_SELECT and count < n:
            _select_top(
                buf, s, e, count, scores, grades, tie_mode, tie_key, seed, gain_mode, gain_table
            )
        else:
            for t in range(n):
                buf[t] = s + t
            _sort_rows(buf, tmp, n, scores, grades, tie_mode, tie_key, seed, gain_mode, gain_table)

        # 2. prefix sums of discounted gains (tie groups carry their mean gain)
        prefix[0] = 0.0
        if average:
            t = 0
            while t < count:
                level = scores[buf[t]]
                stop = t + 1
                while stop < count and scores[buf[stop]] == level:
                    stop += 1
                size = stop - t
                total = 0.0
                if stop == count and count < n:
                    # boundary group: rows with this score may lie beyond the selection
                    size = 0
                    for i in range(s, e):
                        if scores[i] == level:
                            total += _gain(grades[i], gain_mode, gain_table)
                            size += 1
                else:
                    for u in range(t, stop):
                        total += _gain(grades[buf[u]], gain_mode, gain_table)
                mean = total / size
                for u in range(t, stop):
                    mean_gain[u] = mean
                    group_end[u] = t + size
                    prefix[u + 1] = prefix[u] + mean * discount[u]
                t = stop
        else:
            for t in range(count):
                prefix[t + 1] = (
                    prefix[t] + _gain(grades[buf[t]], gain_mode, gain_table) * discount[t]
                )

        # 3. DCG per cutoff
        for j in range(n_cut):
            cut = n if cutoffs[j] < 0 else min(cutoffs[j], n)
            dcg_out[q, j] = prefix[cut]

        # 4. IDCG per cutoff
        if ideal_mode == IDEAL_MAX:
            for j in range(n_cut):
                slots = n if cutoffs[j] < 0 else cutoffs[j]
                idcg_out[q, j] = max_gain * discount_prefix[slots]
        elif ideal_mode == IDEAL_LOCAL:
            for j in range(n_cut):
                cut = n if cutoffs[j] < 0 else min(cutoffs[j], n)
                idcg_out[q, j] = _local_ideal(
                    vals,
                    buf,
                    mean_gain,
                    group_end,
                    cut,
                    average,
                    grades,
                    gain_mode,
                    gain_table,
                    discount,
                )
        else:
            si = ideal_offsets[q]
            ei = ideal_offsets[q + 1]
            m = ei - si
            ideal_count = m if whole else min(k_max, m)
            _ideal_prefix(
                ideal_prefix,
                vals,
                hist,
                si,
                ei,
                ideal_count,
                ideal_grades,
                gain_mode,
                gain_table,
                n_levels,
                level_order,
                level_gain,
                discount,
            )
            for j in range(n_cut):
                cut = m if cutoffs[j] < 0 else min(cutoffs[j], m)
                idcg_out[q, j] = ideal_prefix[cut]


@njit(cache=True, parallel=True)
def score_queries(
    chunk_bounds,
    offsets,
    grades,
    scores,
    ranked,
    tie_mode,
    tie_key,
    seed,
    gain_mode,
    gain_table,
    n_levels,
    level_order,
    level_gain,
    discount,
    discount_prefix,
    cutoffs,
    k_max,
    ideal_mode,
    ideal_offsets,
    ideal_grades,
    max_gain,
    dcg_out,
    idcg_out,
):
    """Fill ``dcg_out[q, j]`` and ``idcg_out[q, j]`` for every query ``q`` and cutoff ``j``.

    ``chunk_bounds`` splits the queries into chunks of similar row counts; chunks run in
    parallel. ``cutoffs[j] < 0`` means the whole list; ``k_max`` is the largest finite cutoff.
    """
    for c in prange(chunk_bounds.size - 1):
        _score_chunk(
            chunk_bounds[c],
            chunk_bounds[c + 1],
            offsets,
            grades,
            scores,
            ranked,
            tie_mode,
            tie_key,
            seed,
            gain_mode,
            gain_table,
            n_levels,
            level_order,
            level_gain,
            discount,
            discount_prefix,
            cutoffs,
            k_max,
            ideal_mode,
            ideal_offsets,
            ideal_grades,
            max_gain,
            dcg_out,
            idcg_out,
        )
