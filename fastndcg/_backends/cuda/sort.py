"""CUDA kernels: the best rows of many segments of any length, in order (segmented top-k sort).

A segment is ``n`` consecutive items of a key source (a query's rows, a judgment list's rows,
or a run of plain values) of which the first ``count`` in :func:`common.sort_key` order are
wanted. Every segment is cut into chunks of :data:`common.CAP` items:

1. :func:`sort_chunks`: one thread block per chunk loads the chunk's keys into shared memory,
   sorts them with a bitonic network (``log2(P) * (log2(P) + 1) / 2`` steps of ``P / 2``
   compare-exchanges for ``P`` = the chunk length rounded up to a power of two) and writes the
   first ``S0 = min(count, CAP)`` rows. A segment of one chunk is finished here.
2. :func:`merge_level`: the sorted runs of a longer segment are merged pairwise, level after
   level, one thread per kept item of the whole grid: an item's place in the merged run is its
   place in its own run plus the number of items of the partner run that go before it (a binary
   search), and items placed at ``count`` or beyond are dropped. A run of ``R`` items keeps
   ``S = min(count, R)``; the ``count`` best of two runs are among the ``count`` best of each,
   so a top-10 of ten million rows merges runs of 10 items.

Runs of level ``L`` are stored at ``base + r * S_L`` in one of two ping-pong buffers; every
level fits in the room of level 0 (``chunks * S0`` items). Every item goes through the same
network whatever the grid, so the result is the same on every GPU and under the simulator.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from fastndcg._backends.cuda.common import CAP, MODE_RANK, THREADS, key_before, row_before, sort_key

_INF = np.inf
_MAX_KEY = np.uint64(0xFFFFFFFFFFFFFFFF)
_PAD_ROW = np.int64(1) << np.int64(62)


@cuda.jit(device=True)
def sort_in_shared(k1, k2f, k2u, rows, items, width, tid):
    """Sort each run of ``width`` entries of the first ``items`` of the shared key arrays.

    Every run ends in :func:`common.key_before` order (``rows`` breaks ties), by a bitonic
    network of ``log2(width) * (log2(width) + 1) / 2`` steps of ``items / 2`` compare-exchanges.
    ``items`` and ``width`` are powers of two; every thread of the block must call it.
    """
    size = 2
    while size <= width:
        stride = size // 2
        while stride > 0:
            for c in range(tid, items // 2, THREADS):
                i = 2 * stride * (c // stride) + c % stride
                j = i + stride
                j_first = key_before(k1[j], k2f[j], k2u[j], rows[j], k1[i], k2f[i], k2u[i], rows[i])
                # each run ascends; within it, the halves of a bitonic merge alternate
                if ((i & size) == 0 or size == width) == j_first:
                    k1[i], k1[j] = k1[j], k1[i]
                    k2f[i], k2f[j] = k2f[j], k2f[i]
                    k2u[i], k2u[j] = k2u[j], k2u[i]
                    rows[i], rows[j] = rows[j], rows[i]
            cuda.syncthreads()
            stride //= 2
        size *= 2


@cuda.jit
def sort_chunks(keys, rules, segments, base, chunks, out, bad, nonfinite):
    """Sort each chunk in shared memory and keep its first rows in ``out``.

    Block ``b`` (grid-stride) sorts chunk ``number[b]`` of segment ``segment[b]`` (``chunks``
    holds both) by :func:`common.sort_key` of ``keys`` and ``rules``, and writes its first
    ``min(segments.count, CAP)`` rows to ``out[base + chunk * that ...]``. In ``MODE_RANK`` a
    NaN or infinite score adds one to ``nonfinite[0]``, and a NaN marks its segment in ``bad``
    (its order is then meaningless; the caller reports it).
    """
    chunk_segment, chunk_number = chunks
    k1 = cuda.shared.array(CAP, np.float64)
    k2f = cuda.shared.array(CAP, np.float64)
    k2u = cuda.shared.array(CAP, np.uint64)
    rows = cuda.shared.array(CAP, np.int64)
    tid = cuda.threadIdx.x
    for block in range(cuda.blockIdx.x, chunk_segment.size, cuda.gridDim.x):
        seg = chunk_segment[block]
        first = chunk_number[block] * CAP
        length = min(CAP, segments.n[seg] - first)
        start = segments.start[seg] + first
        width = 1
        while width < length:
            width *= 2
        n_bad = 0
        nan = 0
        for e in range(tid, width, THREADS):
            if e < length:
                row = start + e
                a1, a2f, a2u = sort_key(keys, row, rules)
                if keys.mode == MODE_RANK and a1 - a1 != 0.0:
                    n_bad += 1
                    if a1 != a1:
                        nan = 1
                k1[e] = a1
                k2f[e] = a2f
                k2u[e] = a2u
                rows[e] = row
            else:  # padding goes after every item
                k1[e] = -_INF
                k2f[e] = _INF
                k2u[e] = _MAX_KEY
                rows[e] = _PAD_ROW + e
        if n_bad > 0:
            cuda.atomic.add(nonfinite, 0, n_bad)
        if nan > 0:
            bad[seg] = 1
        cuda.syncthreads()
        sort_in_shared(k1, k2f, k2u, rows, width, width, tid)
        kept = min(segments.count[seg], CAP)
        target = base[seg] + chunk_number[block] * kept
        for e in range(tid, min(kept, length), THREADS):
            out[target + e] = rows[e]
        cuda.syncthreads()


@cuda.jit
def merge_level(keys, rules, segments, base, level, slots, src, dst):
    """Merge the runs of level ``level`` pairwise into ``dst`` (one thread per kept item).

    ``slots`` holds ``slot_prefix`` and ``multi_segment``: ``slot_prefix`` numbers the kept
    items of the merging segments ``multi_segment`` in turn, and thread ``t`` takes item
    ``t - slot_prefix[m]`` of segment ``multi_segment[m]``.
    """
    slot_prefix, multi_segment = slots
    t = cuda.grid(1)
    total = slot_prefix[slot_prefix.size - 1]
    step = cuda.gridsize(1)
    while t < total:
        lo = 0
        hi = slot_prefix.size - 1
        while hi - lo > 1:  # the segment whose slots hold t
            mid = (lo + hi) // 2
            if slot_prefix[mid] <= t:
                lo = mid
            else:
                hi = mid
        seg = multi_segment[lo]
        local = t - slot_prefix[lo]
        n = segments.n[seg]
        count = segments.count[seg]
        run_size = np.int64(CAP) << np.int64(level)
        kept = min(count, run_size)
        r = local // kept
        i = local - r * kept
        natural = min(run_size, n - r * run_size)
        if i < min(kept, natural):
            first = base[seg]
            me = src[first + r * kept + i]
            next_kept = min(count, 2 * run_size)
            out = first + (r // 2) * next_kept
            partner = r ^ 1
            if partner * run_size >= n:  # a run without partner moves up unchanged
                dst[out + i] = me
            else:
                p_kept = min(kept, min(run_size, n - partner * run_size))
                p_base = first + partner * kept
                m1, m2f, m2u = sort_key(keys, me, rules)
                a = 0
                b = p_kept
                while a < b:  # partner items going before me form a prefix of its run
                    mid = (a + b) // 2
                    other = src[p_base + mid]
                    o1, o2f, o2u = sort_key(keys, other, rules)
                    if key_before(o1, o2f, o2u, other, m1, m2f, m2u, me):
                        a = mid + 1
                    else:
                        b = mid
                place = i + a
                if place < next_kept:
                    dst[out + place] = me
        t += step


__all__ = ["merge_level", "row_before", "sort_chunks", "sort_in_shared"]
