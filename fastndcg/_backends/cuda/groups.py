r"""CUDA kernels: the lists of one chunk, found on the device and scored several per block.

Lists of ``SMALL + 1`` to ``CAP`` rows (on a GPU, 65 to 1,024) are the bulk of most data. They
are handled without any per-query work on the host:

1. :func:`classify` (one thread per query) files each list longer than ``SMALL`` under its
   width class: the smallest of :data:`common.WIDTHS` holding it, or :data:`common.LONG` for
   lists longer than ``CAP`` (which the merge sort of :mod:`fastndcg._backends.cuda.sort`
   scores). A block counts its queries per class in shared memory and reserves room for them
   with one global atomic per class, so the order of queries within a class varies from run
   to run; every list is scored on its own, so the results do not.
2. :func:`score_groups` (one launch per width) sorts ``CAP // width`` lists per block at once:
   each list is padded to ``width`` and sorted by a bitonic network in shared memory (all
   lists of the block go through the same steps, so every thread has work). Then one thread
   per list walks its ranking as the Numba kernel does: the running sum
   :math:`\sum_{r < k} \bar g_r d_r` (a tie group's mean gain :math:`\bar g` with
   ``ties="average"``: the group is contiguous in the sorted list, so no second pass is needed),
   the ``ideal="local"`` gains, and the ideal of the list from its grade levels, counted while
   the rows were loaded.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from fastndcg._backends.cuda.common import (
    CAP,
    FIRST_WIDTH,
    LONG,
    MAX_GROUPS,
    MODE_RANK,
    SMALL,
    THREADS,
    Keys,
    depth,
    gain,
    resident,
    sort_key,
)
from fastndcg._backends.cuda.score import levels_total
from fastndcg._backends.cuda.sort import sort_in_shared
from fastndcg._contract.codes import IDEAL_LOCAL, MAX_HISTOGRAM_LEVELS, TIE_AVERAGE

_NAN = np.nan
_INF = np.inf
_MAX_KEY = np.uint64(0xFFFFFFFFFFFFFFFF)
_CLASSES = LONG + 1
_HISTOGRAMS = MAX_GROUPS * MAX_HISTOGRAM_LEVELS  # a shape in device code must be a constant


@cuda.jit
def classify(offsets, counts, members):
    """``members[c, :counts[c]]``: the queries of width class ``c`` (lists over ``SMALL`` rows).

    ``counts`` (``LONG + 1`` zeros on entry) ends with the number of queries of each class.
    """
    local = cuda.shared.array(_CLASSES, np.int64)
    start = cuda.shared.array(_CLASSES, np.int64)
    tid = cuda.threadIdx.x
    n_queries = offsets.size - 1
    for first in range(cuda.blockIdx.x * THREADS, n_queries, cuda.gridDim.x * THREADS):
        if tid < _CLASSES:
            local[tid] = 0
        cuda.syncthreads()
        q = first + tid
        c = -1
        slot = 0
        if q < n_queries:
            n = offsets[q + 1] - offsets[q]
            if n > CAP:
                c = LONG
            elif n > SMALL:
                c = 0
                width = FIRST_WIDTH
                while width < n:
                    width *= 2
                    c += 1
            if c >= 0:
                slot = cuda.atomic.add(local, c, 1)
        cuda.syncthreads()
        if tid < _CLASSES and local[tid] > 0:
            start[tid] = cuda.atomic.add(counts, tid, local[tid])
        cuda.syncthreads()
        if c >= 0:
            members[c, start[c] + slot] = q
        cuda.syncthreads()


@cuda.jit(device=True)
def _tie_group(k1, base, t, n, s, pos, grades, average, rules):
    """``(stop, gain)``: the tie group starting at rank ``t`` ends before ``stop``; its gain.

    With ``average`` the group is every rank holding the same score (contiguous once sorted) and
    the gain their mean, summed in rank order (that is, row order); otherwise the group is rank
    ``t`` alone.
    """
    stop = t + 1
    if not average:
        return stop, gain(grades[s + pos[base + t]], rules)
    level = k1[base + t]
    while stop < n and k1[base + stop] == level:
        stop += 1
    total = 0.0
    for u in range(t, stop):
        total += gain(grades[s + pos[base + u]], rules)
    members = stop - t
    return stop, (total / members if members > 1 else total)


@cuda.jit(**resident(4))  # 156 registers uncapped: one block per multiprocessor
def score_groups(width, queries, lists, rules, cuts, ideal_mode, counted_ideal, levels, out):
    """DCG of ``queries`` (lists of at most ``width`` rows), ``CAP // width`` lists per block.

    The grid strides over the blocks' sets of lists. Also IDCG for ``ideal="local"``, and from
    the list's grade levels when ``counted_ideal``. A query holding a NaN score gets NaN; NaN
    and infinite scores are counted in ``out.nonfinite[0]``.
    """
    k1 = cuda.shared.array(CAP, np.float64)
    k2f = cuda.shared.array(CAP, np.float64)  # also the scratch of the local ideal
    k2u = cuda.shared.array(CAP, np.uint64)
    pos = cuda.shared.array(CAP, np.int32)  # a row's place in its list (padding: >= n)
    hist = cuda.shared.array(_HISTOGRAMS, np.int32)
    nan_in = cuda.shared.array(MAX_GROUPS, np.int32)
    list_query = cuda.shared.array(MAX_GROUPS, np.int64)  # -1: no list in this slot
    list_start = cuda.shared.array(MAX_GROUPS, np.int64)
    list_length = cuda.shared.array(MAX_GROUPS, np.int64)
    tid = cuda.threadIdx.x
    offsets, grades, ranked = lists.offsets, lists.grades, lists.ranked
    cutoffs, discount, dcg, idcg = cuts.cutoffs, cuts.discount, out.dcg, out.idcg
    keys = Keys(MODE_RANK, lists.scores, grades, lists.scores)
    groups = CAP // width
    n_cut = cutoffs.size
    n_levels = levels.count
    average = rules.tie_mode == TIE_AVERAGE and not ranked
    n_queries = queries.size
    for block in range(cuda.blockIdx.x, (n_queries + groups - 1) // groups, cuda.gridDim.x):
        if counted_ideal:  # one histogram of n_levels counts per list
            for h in range(tid, groups * n_levels, THREADS):
                hist[h] = 0
        for grp in range(tid, groups, THREADS):
            nan_in[grp] = 0
            member = block * groups + grp
            q = queries[member] if member < n_queries else -1
            list_query[grp] = q
            list_start[grp] = offsets[q] if q >= 0 else 0
            list_length[grp] = offsets[q + 1] - offsets[q] if q >= 0 else 0
        cuda.syncthreads()
        bad = 0
        for e in range(tid, CAP, THREADS):
            grp = e // width
            local = e - grp * width
            s = list_start[grp]
            n = list_length[grp]
            pos[e] = local
            if local < n:
                a1 = 0.0
                a2f = 0.0
                a2u = np.uint64(0)
                if not ranked:
                    a1, a2f, a2u = sort_key(keys, s + local, rules)
                    if a1 - a1 != 0.0:
                        bad += 1
                        if a1 != a1:
                            nan_in[grp] = 1
                k1[e] = a1
                k2f[e] = a2f
                k2u[e] = a2u
                if counted_ideal:
                    level = grp * n_levels + np.int64(grades[s + local])
                    cuda.atomic.add(hist, level, 1)
            else:  # padding goes after every row
                k1[e] = -_INF
                k2f[e] = _INF
                k2u[e] = _MAX_KEY
        if bad > 0:
            cuda.atomic.add(out.nonfinite, 0, bad)
        cuda.syncthreads()
        if not ranked:
            sort_in_shared(k1, k2f, k2u, pos, CAP, width, tid)
        for grp in range(tid, groups, THREADS):
            q = list_query[grp]
            if q < 0:
                continue
            s = list_start[grp]
            n = list_length[grp]
            base = grp * width
            if counted_ideal:
                for j in range(n_cut):
                    cut = depth(cutoffs[j], n)
                    idcg[j, q] = levels_total(hist, grp * n_levels, levels, cuts, cut)
            if nan_in[grp] != 0:  # not ranked (the caller raises or reports it)
                for j in range(n_cut):
                    dcg[j, q] = _NAN
                    if ideal_mode == IDEAL_LOCAL:
                        idcg[j, q] = _NAN
                continue
            count = n if cuts.whole else min(cuts.k_max, n)
            running = 0.0
            t = 0
            while t < count:
                stop, g = _tie_group(k1, base, t, n, s, pos, grades, average, rules)
                for u in range(t, min(stop, count)):
                    running += g * discount[u]
                    for j in range(n_cut):
                        if depth(cutoffs[j], n) == u + 1:
                            dcg[j, q] = running
                t = stop
            if ideal_mode != IDEAL_LOCAL:
                continue
            for j in range(n_cut):  # the top `cut` ranks' gains, sorted again into k2f
                cut = depth(cutoffs[j], n)
                filled = 0
                t = 0
                while t < cut:
                    stop, mean = _tie_group(k1, base, t, n, s, pos, grades, average, rules)
                    for u in range(t, min(stop, cut)):
                        g = mean
                        if not (average and stop > cut):
                            g = gain(grades[s + pos[base + u]], rules)
                        p = filled
                        filled += 1
                        while p > 0 and k2f[base + p - 1] < g:
                            k2f[base + p] = k2f[base + p - 1]
                            p -= 1
                        k2f[base + p] = g
                    t = stop
                total = 0.0
                for u in range(cut):
                    total += k2f[base + u] * discount[u]
                idcg[j, q] = total
        cuda.syncthreads()


__all__ = ["classify", "score_groups"]
