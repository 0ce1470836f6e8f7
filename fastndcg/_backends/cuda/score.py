r"""CUDA kernels: DCG and IDCG of every query of a CSR layout, for every cutoff.

Kernels take device arrays and integer codes only; they validate nothing and never raise. The
outputs are ``(n_cutoffs, n_queries)`` float64 arrays, as the Numba kernel's.

For a query with rows ranked :math:`r = 0, 1, \ldots` (score descending, then the tie rule),

.. math::

    \mathrm{DCG@k} = \sum_{r < \min(k, n)} \bar g_r\, d_r, \qquad
    \mathrm{IDCG@k} = \sum_{r < \min(k, m)} g^\ast_r\, d_r

where :math:`d_r` is the discount of rank :math:`r`, :math:`\bar g_r` the gain of the row at
rank :math:`r` (with ``ties="average"``, the mean gain of its tie group, taken over the whole
list when the group straddles the deepest cutoff) and :math:`g^\ast` the ideal gains in
descending order.

Size classes (:mod:`fastndcg._backends.cuda.common`):

- lists of at most ``SMALL`` rows: :func:`dcg_small` and :func:`idcg_small`, one thread per
  list, run the Numba kernel's serial algorithm (insertion selection of the ``count`` best rows,
  left-to-right prefix sums, grade levels counted for the ideal), so their values equal the
  Numba backend's bit for bit in most cases;
- longer lists: the rows are sorted by :mod:`fastndcg._backends.cuda.sort` (one block per chunk
  of ``CAP`` rows, then merge passes over the whole grid), and :func:`dcg_finish` (one block per
  query) turns the ranking into DCG: every thread takes ranks ``tid, tid + THREADS, ...``, the
  first rank of a tie group sums its gains, a group straddling the cutoff is completed by a
  block reduction over the whole list, and each cutoff's sum is a block reduction in a fixed
  tree order (no floating-point atomics: the same bits on every run);
- the ideal of long lists counts their grade levels, one block per list (:func:`idcg_levels`),
  when grades are small integers, else sorts their gains the same way (:func:`sum_sorted` adds
  them up); ``ideal="local"`` sorts each cutoff's top gains (:func:`local_values`).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from fastndcg._backends.cuda.common import (
    MODE_GAIN,
    MODE_RANK,
    SMALL,
    THREADS,
    Keys,
    block_sum,
    depth,
    gain,
    row_before,
)
from fastndcg._contract.codes import IDEAL_LOCAL, IDEAL_MAX, MAX_HISTOGRAM_LEVELS, TIE_AVERAGE

_NAN = np.nan
_PREFIX = SMALL + 1  # a shape must be a constant in device code, not an expression
_SHORT_RUN = 64  # ranks of one grade level added term by term (longer: by prefix differences)


@cuda.jit
def fill(values, x):
    """``values[:] = x`` for a 2-D array."""
    i, j = cuda.grid(2)
    if i < values.shape[0] and j < values.shape[1]:
        values[i, j] = x


@cuda.jit(device=True)
def levels_total(hist, h0, levels, cuts, cut):
    """IDCG at ``cut`` from counts of integer grade levels (``hist[h0 + level]``).

    The levels are taken in descending gain order (``levels.order``): a level filling ranks
    ``a:b`` adds ``g * d[a] + ... + g * d[b - 1]`` term by term when the run is short (as the
    serial kernels add), else ``g * (D[b] - D[a])`` with ``D`` the discounts' prefix sums.
    """
    discount, discount_prefix = cuts.discount, cuts.discount_prefix
    total = 0.0
    pos = 0
    for lv in range(levels.count):
        if pos >= cut:
            break
        level = levels.order[lv]
        value = levels.gain[level]
        stop = min(pos + hist[h0 + level], cut)
        if stop - pos <= _SHORT_RUN:
            for t in range(pos, stop):
                total += value * discount[t]
        else:
            total += value * (discount_prefix[stop] - discount_prefix[pos])
        pos += hist[h0 + level]
    return total


@cuda.jit
def dcg_small(lists, rules, cuts, ideal_mode, max_gain, out):
    """DCG of every query of at most ``SMALL`` rows, one thread per query (serial).

    Also IDCG for ``ideal="max"`` (every query) and ``ideal="local"`` (these queries). A query
    holding a NaN score gets NaN; NaN and infinite scores are counted in ``out.nonfinite[0]``.
    """
    offsets, grades, scores = lists.offsets, lists.grades, lists.scores
    cutoffs, discount, dcg, idcg = cuts.cutoffs, cuts.discount, out.dcg, out.idcg
    q = cuda.grid(1)
    if q >= offsets.size - 1:
        return
    s = offsets[q]
    n = offsets[q + 1] - s
    n_cut = cutoffs.size
    if ideal_mode == IDEAL_MAX:
        for j in range(n_cut):
            slots = n if cutoffs[j] < 0 else cutoffs[j]
            idcg[j, q] = max_gain * cuts.discount_prefix[slots]
    if n > SMALL:
        return
    buf = cuda.local.array(SMALL, np.int64)
    mean_gain = cuda.local.array(SMALL, np.float64)
    group_end = cuda.local.array(SMALL, np.int64)
    prefix = cuda.local.array(_PREFIX, np.float64)
    vals = cuda.local.array(SMALL, np.float64)
    count = n if cuts.whole else min(cuts.k_max, n)
    average = rules.tie_mode == TIE_AVERAGE and not lists.ranked
    if lists.ranked:
        for t in range(count):
            buf[t] = s + t
    else:
        bad = 0
        nan = False
        for i in range(n):
            x = np.float64(scores[s + i])
            if x - x != 0.0:
                bad += 1
                if x != x:
                    nan = True
        if bad > 0:
            cuda.atomic.add(out.nonfinite, 0, bad)
        if nan:
            for j in range(n_cut):
                dcg[j, q] = _NAN
                if ideal_mode == IDEAL_LOCAL:
                    idcg[j, q] = _NAN
            return
        keys = Keys(MODE_RANK, scores, grades, scores)
        filled = 0
        for i in range(n):  # insertion of row s + i among the `count` best so far
            row = s + i
            if filled < count:
                p = filled
                filled += 1
            elif row_before(keys, row, buf[count - 1], rules):
                p = count - 1
            else:
                continue
            while p > 0 and row_before(keys, row, buf[p - 1], rules):
                buf[p] = buf[p - 1]
                p -= 1
            buf[p] = row
    prefix[0] = 0.0
    if average:
        t = 0
        while t < count:
            level = scores[buf[t]]
            stop = t + 1
            while stop < count and scores[buf[stop]] == level:
                stop += 1
            total = 0.0
            members = stop - t
            if stop == count and count < n:  # the group may go on beyond the selection
                members = 0
                for i in range(n):
                    if scores[s + i] == level:
                        total += gain(grades[s + i], rules)
                        members += 1
            else:
                for u in range(t, stop):
                    total += gain(grades[buf[u]], rules)
            mean = total / members if members > 1 else total
            for u in range(t, stop):
                mean_gain[u] = mean
                group_end[u] = t + members
                prefix[u + 1] = prefix[u] + mean * discount[u]
            t = stop
    else:
        for t in range(count):
            prefix[t + 1] = prefix[t] + gain(grades[buf[t]], rules) * discount[t]
    for j in range(n_cut):
        dcg[j, q] = prefix[depth(cutoffs[j], n)]
    if ideal_mode != IDEAL_LOCAL:
        return
    for j in range(n_cut):  # the top `cut` rows re-sorted by gain
        cut = depth(cutoffs[j], n)
        for t in range(cut):
            if average and group_end[t] > cut:
                g = mean_gain[t]
            else:
                g = gain(grades[buf[t]], rules)
            p = t
            while p > 0 and vals[p - 1] < g:
                vals[p] = vals[p - 1]
                p -= 1
            vals[p] = g
        total = 0.0
        for t in range(cut):
            total += vals[t] * discount[t]
        idcg[j, q] = total


@cuda.jit
def idcg_small(ideal_offsets, ideal_grades, rules, levels, cuts, idcg):
    """IDCG of every judgment list of at most ``SMALL`` rows, one thread per list (serial).

    With integer grade levels (``levels.count`` of them) the levels are counted and taken in
    descending gain order; otherwise the ``count`` largest gains are selected by insertion.
    Each cutoff's sum runs left to right over the ranks, as the Numba kernel's prefix sums.
    """
    q = cuda.grid(1)
    if q >= ideal_offsets.size - 1:
        return
    s = ideal_offsets[q]
    m = ideal_offsets[q + 1] - s
    if m > SMALL:
        return
    cutoffs = cuts.cutoffs
    n_cut = cutoffs.size
    count = m if cuts.whole else min(cuts.k_max, m)
    hist = cuda.local.array(MAX_HISTOGRAM_LEVELS, np.int64)
    vals = cuda.local.array(SMALL, np.float64)
    if levels.count > 0:
        for lv in range(levels.count):
            hist[lv] = 0
        for i in range(m):
            hist[np.int64(ideal_grades[s + i])] += 1
        for j in range(n_cut):
            idcg[j, q] = levels_total(hist, 0, levels, cuts, depth(cutoffs[j], m))
        return
    filled = 0
    for i in range(m):
        g = gain(ideal_grades[s + i], rules)
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
    for j in range(n_cut):
        cut = depth(cutoffs[j], m)
        total = 0.0
        for t in range(cut):
            total += vals[t] * cuts.discount[t]
        idcg[j, q] = total


@cuda.jit
def idcg_levels(lists, ideal_offsets, ideal_grades, levels, cuts, idcg):
    """IDCG of long judgment lists with integer grade levels: one block per list (grid-stride).

    The block counts the list's rows per level in shared memory (integer atomics: the counts do
    not depend on their order); each cutoff's sum is :func:`levels_total`.
    """
    hist = cuda.shared.array(MAX_HISTOGRAM_LEVELS, np.int64)
    tid = cuda.threadIdx.x
    cutoffs = cuts.cutoffs
    for g in range(cuda.blockIdx.x, lists.size, cuda.gridDim.x):
        q = lists[g]
        s = ideal_offsets[q]
        m = ideal_offsets[q + 1] - s
        for lv in range(tid, levels.count, THREADS):
            hist[lv] = 0
        cuda.syncthreads()
        for i in range(tid, m, THREADS):
            cuda.atomic.add(hist, np.int64(ideal_grades[s + i]), 1)
        cuda.syncthreads()
        for j in range(tid, cutoffs.size, THREADS):
            idcg[j, q] = levels_total(hist, 0, levels, cuts, depth(cutoffs[j], m))
        cuda.syncthreads()


@cuda.jit
def dcg_finish(segments, ranking, lists, rules, cuts, effective, group_end, dcg):
    """DCG of the queries whose rows were sorted (one block per query, grid-stride).

    The ranking of segment ``g`` (query ``segments.query[g]``) is its ``segments.count[g]``
    rows as ``ranking`` (:class:`~fastndcg._backends.cuda.common.Sorted`) holds them, or the
    rows in order when ``lists.ranked``. Writes each rank's effective gain (the tie group's mean
    with ``ties="average"``) to ``effective`` and where its tie group ends to ``group_end`` (at
    the same positions), for ``ideal="local"``.
    """
    red = cuda.shared.array(THREADS, np.float64)
    tid = cuda.threadIdx.x
    scores, grades, ranked = lists.scores, lists.grades, lists.ranked
    cutoffs, discount = cuts.cutoffs, cuts.discount
    n_cut = cutoffs.size
    average = rules.tie_mode == TIE_AVERAGE and not ranked
    for g in range(cuda.blockIdx.x, segments.query.size, cuda.gridDim.x):
        q = segments.query[g]
        s = segments.start[g]
        n = segments.n[g]
        count = segments.count[g]
        base = ranking.base[g]
        if ranking.bad[g] != 0:  # a NaN score: not ranked (the caller raises)
            if tid == 0:
                for j in range(n_cut):
                    dcg[j, q] = _NAN
            continue
        rows = ranking.buf1 if ranking.parity[g] != 0 else ranking.buf0
        # a tie group reaching the last selected rank may go on beyond it: its whole size and
        # gain come from one pass over the list
        tail_total = 0.0
        tail_members = 0.0
        if average and count < n:
            level = scores[rows[base + count - 1]]
            part = 0.0
            members = 0.0
            for i in range(tid, n, THREADS):
                if scores[s + i] == level:
                    part += gain(grades[s + i], rules)
                    members += 1.0
            tail_total = block_sum(red, tid, part)
            tail_members = block_sum(red, tid, members)
        for t in range(tid, count, THREADS):
            row = s + t if ranked else rows[base + t]
            if not average:
                effective[base + t] = gain(grades[row], rules)
                continue
            level = scores[row]
            if t > 0 and scores[rows[base + t - 1]] == level:
                continue  # the first rank of the group writes the group
            stop = t + 1
            while stop < count and scores[rows[base + stop]] == level:
                stop += 1
            if stop == count and count < n:
                total = tail_total
                members = np.int64(tail_members)
            else:
                total = 0.0
                for u in range(t, stop):
                    total += gain(grades[rows[base + u]], rules)
                members = stop - t
            mean = total / members if members > 1 else total
            for u in range(t, stop):
                effective[base + u] = mean
                group_end[base + u] = t + members
        cuda.syncthreads()
        for j in range(n_cut):
            cut = depth(cutoffs[j], n)
            part = 0.0
            for t in range(tid, cut, THREADS):
                part += effective[base + t] * discount[t]
            total = block_sum(red, tid, part)
            if tid == 0:
                dcg[j, q] = total


@cuda.jit
def local_values(items, starts, ranking, ranked, grades, rules, effective, group_end, values):
    """The gains ``ideal="local"`` sorts: the top ``cut`` ranks of a query, for one cutoff.

    ``items`` holds each item's segment, cut and base: item ``g`` (one per query and cutoff)
    writes ``values[base[g]:][:cut[g]]``, the gain of each rank of its segment (first row
    ``starts[segment]``, ranked as ``ranking`` holds it, or in row order when ``ranked``), or
    its tie group's mean when the group straddles the cutoff.
    """
    item_segment, item_cut, item_base = items
    tid = cuda.threadIdx.x
    average = rules.tie_mode == TIE_AVERAGE and not ranked
    for g in range(cuda.blockIdx.x, item_segment.size, cuda.gridDim.x):
        seg = item_segment[g]
        cut = item_cut[g]
        base = ranking.base[seg]
        rows = ranking.buf1 if ranking.parity[seg] != 0 else ranking.buf0
        for t in range(tid, cut, THREADS):
            if average and group_end[base + t] > cut:
                x = effective[base + t]
            else:
                row = starts[seg] + t if ranked else rows[base + t]
                x = gain(grades[row], rules)
            values[item_base[g] + t] = x


@cuda.jit
def sum_sorted(keys, segments, cutoff_of, ranking, rules, cuts, idcg):
    """IDCG from sorted segments: ``sum(x_r * d_r for r < cut)`` by block reduction.

    ``keys.mode`` ``MODE_GAIN``: segment ``g`` is query ``segments.query[g]``'s judgment list
    of ``segments.n[g]`` rows sorted by gain, summed for every cutoff. ``MODE_VALUE``: the
    sorted ``keys.values`` of one cutoff ``cutoff_of[g]`` (all ``segments.n[g]`` of them are
    summed).
    """
    red = cuda.shared.array(THREADS, np.float64)
    tid = cuda.threadIdx.x
    by_gain = keys.mode == MODE_GAIN
    cutoffs = cuts.cutoffs
    for g in range(cuda.blockIdx.x, segments.query.size, cuda.gridDim.x):
        q = segments.query[g]
        m = segments.n[g]
        base = ranking.base[g]
        rows = ranking.buf1 if ranking.parity[g] != 0 else ranking.buf0
        first = 0
        last = cutoffs.size
        if not by_gain:
            first = cutoff_of[g]
            last = first + 1
        for j in range(first, last):
            cut = m
            if by_gain and cutoffs[j] >= 0:
                cut = min(cutoffs[j], m)
            part = 0.0
            for t in range(tid, cut, THREADS):
                row = rows[base + t]
                if by_gain:
                    x = gain(keys.grades[row], rules)
                else:
                    x = keys.values[row]
                part += x * cuts.discount[t]
            total = block_sum(red, tid, part)
            if tid == 0:
                idcg[j, q] = total
