"""Numba kernels of the paired resampling tests (:func:`fastndcg.compare`).

``numpy/resample.py`` is their NumPy twin: both files define the same functions with the same
signatures and give bit-identical results. The random numbers are the counter-based streams
documented in :mod:`fastndcg._compare.rng` (keys and Poisson tables are computed there and
passed in as integers and arrays; the constants come from :mod:`fastndcg._contract.codes`);
every sum runs over the
queries in order (each resample's sum is a sequential left-to-right sum, never a pairwise or
reassociated one) and the kernels compile without ``fastmath``, so each product and sum is one
IEEE rounding. Sign-flip products are exact (a value times +-1).

The kernels release the GIL (``nogil=True``): callers run chunks of resamples on a thread pool.
A chunk is any range ``[start, stop)`` of resample indices, written to ``out[start - first:
stop - first]`` (``first``: the first resample of ``out``); resample ``i`` depends only on the
seed and ``i``, so the split into chunks and threads never changes a result.

Vectorisation runs across resamples: :data:`LANES` resamples advance together, query by query,
each lane keeping its own sequential sum. The helpers that hold the vector loops take their lane
count from array shapes, so LLVM vectorises them rather than unrolling them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fastndcg._contract.codes import (
    POISSON_DOMAIN,
    POISSON_WIDTH,
    RESAMPLE_LANES,
    SPLITMIX_GOLDEN,
    SPLITMIX_MIX1,
    SPLITMIX_MIX2,
    TOPUP_DOMAIN,
)

LANES = RESAMPLE_LANES  # resamples advanced together
# query-column products of one chunk of resamples (a fraction of a second): callers split
# their resamples into chunks of about this much work, so that Ctrl-C is honoured promptly
CHUNK_WORK = 1 << 28
_TILE = 64  # queries per tile: one 64-bit sign word, or 32 Poisson words

_GOLDEN = np.uint64(SPLITMIX_GOLDEN)
_MIX1 = np.uint64(SPLITMIX_MIX1)
_MIX2 = np.uint64(SPLITMIX_MIX2)
_POISSON_DOMAIN = np.uint64(POISSON_DOMAIN)
_TOPUP_DOMAIN = np.uint64(TOPUP_DOMAIN)
_LOW32 = np.uint64(0xFFFFFFFF)
_WIDTH = POISSON_WIDTH  # entries of a Poisson threshold table
_ONE32 = np.float32(1.0)
_ZERO32 = np.float32(0.0)


@njit(cache=True, inline="always")
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _stream(key, i):
    return _mix(key + np.uint64(i + 1) * _GOLDEN)


@njit(cache=True, inline="always")
def _below(word, n):
    """floor(word * n / 2**64) for n < 2**32, without 128-bit arithmetic."""
    hi = word >> np.uint64(32)
    lo = word & _LOW32
    return (hi * n + ((lo * n) >> np.uint64(32))) >> np.uint64(32)


@njit(cache=True, nogil=True)
def _sign_table(words, signs):
    """signs[b, l] = -1.0 where bit b of words[l] is set, else +1.0."""
    lanes = words.shape[0]
    for bit in range(64):
        shift = np.uint64(bit)
        for lane in range(lanes):
            signs[bit, lane] = 1.0 - 2.0 * np.float64(np.int64((words[lane] >> shift) & 1))


@njit(cache=True, nogil=True)
def _multiply_add(column, j0, m, table, acc):
    """acc[l] += column[j0 + t] * table[t, l] for t = 0..m-1, in that order."""
    lanes = acc.shape[0]
    for t in range(m):
        value = column[j0 + t]
        for lane in range(lanes):
            acc[lane] += value * np.float64(table[t, lane])


@njit(cache=True, nogil=True)
def _multiply_add4(columns, c, j0, m, table, acc):
    """:func:`_multiply_add` of columns ``c..c+3`` in one pass (the table is read once)."""
    lanes = acc.shape[1]
    a0, a1, a2, a3 = acc[c], acc[c + 1], acc[c + 2], acc[c + 3]
    x0, x1, x2, x3 = columns[c], columns[c + 1], columns[c + 2], columns[c + 3]
    for t in range(m):
        v0, v1, v2, v3 = x0[j0 + t], x1[j0 + t], x2[j0 + t], x3[j0 + t]
        for lane in range(lanes):
            s = np.float64(table[t, lane])
            a0[lane] += v0 * s
            a1[lane] += v1 * s
            a2[lane] += v2 * s
            a3[lane] += v3 * s


@njit(cache=True, nogil=True)
def _multiply_add_all(columns, j0, m, table, acc):
    """acc[c, l] += columns[c, j0 + t] * table[t, l] for every column, t in order."""
    n_cols = columns.shape[0]
    c = 0
    while c + 4 <= n_cols:
        _multiply_add4(columns, c, j0, m, table, acc)
        c += 4
    while c < n_cols:
        _multiply_add(columns[c], j0, m, table, acc[c])
        c += 1


@njit(cache=True, nogil=True)
def signflip_sums(diffs, key, exact, start, stop, first, out):
    """Sign-flipped sums of every column for resamples ``start..stop-1``.

    Parameters
    ----------
    diffs : ndarray of float64, shape (n_columns, n)
        The per-query differences, one comparison per row (C-contiguous).
    key : uint64
        :func:`fastndcg._compare.rng.sign_key` of the seed.
    exact : bool
        Enumerate sign vectors: resample ``m`` negates query ``j`` when bit ``j`` of ``m`` is
        set (``n <= 63``); otherwise signs come from the random streams.
    start, stop : int
        The resamples to compute.
    first : int
        The resample of ``out``'s first row.
    out : ndarray of float64, shape (n_resamples, n_columns)
        Receives ``out[i - first, c] = sum_j s_ij * diffs[c, j]`` for ``start <= i < stop``.
    """
    n_cols, n = diffs.shape
    acc = np.zeros((n_cols, LANES))
    signs = np.empty((_TILE, LANES))
    keys = np.empty(LANES, dtype=np.uint64)
    words = np.empty(LANES, dtype=np.uint64)
    for base in range(start, stop, LANES):
        for lane in range(LANES):
            keys[lane] = _stream(key, base + lane)
        acc[:] = 0.0
        for w in range((n + _TILE - 1) // _TILE):
            j0 = w * _TILE
            m = min(_TILE, n - j0)
            if exact:
                for lane in range(LANES):
                    words[lane] = np.uint64(base + lane)
            else:
                offset = np.uint64(w + 1) * _GOLDEN
                for lane in range(LANES):
                    words[lane] = _mix(keys[lane] + offset)
            _sign_table(words, signs)
            _multiply_add_all(diffs, j0, m, signs, acc)
        for lane in range(min(LANES, stop - base)):
            for c in range(n_cols):
                out[base + lane - first, c] = acc[c, lane]


@njit(cache=True, nogil=True)
def _poisson_tile(keys, j0, m, thresholds, uniforms, counts, totals):
    """Poisson counts of queries ``j0..j0+m-1`` (``j0`` even) for every lane.

    ``thresholds`` has :data:`_WIDTH` entries (strict bounds: a count is the number of bounds
    below the uniform); the fixed width lets the compare loop unroll and vectorise, eight
    lanes to a vector with float32 counts (exact: at most 12). ``totals`` (float64, exact)
    accumulates them per lane.
    """
    lanes = keys.shape[0]
    n_words = (m + 1) // 2
    for ww in range(n_words):
        offset = np.uint64(j0 // 2 + ww + 1) * _GOLDEN
        for lane in range(lanes):
            z = _mix(keys[lane] + offset)
            uniforms[2 * ww, lane] = np.uint32(z & _LOW32)
            uniforms[2 * ww + 1, lane] = np.uint32(z >> np.uint64(32))
    flat_u = uniforms.reshape(-1)
    flat_c = counts.reshape(-1)
    for e in range(m * lanes):
        u = flat_u[e]
        count = _ZERO32
        for k in range(_WIDTH):
            count += _ONE32 if u > thresholds[k] else _ZERO32
        flat_c[e] = count
    for t in range(m):
        for lane in range(lanes):
            totals[lane] += np.float64(counts[t, lane])


@njit(cache=True, nogil=True)
def _poisson_lane(cols, key, i, thresholds, acc, lane):
    """One lane's Poisson pass, sequentially (a rejected attempt drawn again)."""
    n_cols, n = cols.shape
    k = _stream(key, i)
    for c in range(n_cols):
        acc[c, lane] = 0.0
    total = 0
    for j in range(n):
        z = _mix(k + np.uint64(j // 2 + 1) * _GOLDEN)
        u = np.uint32(z & _LOW32) if j % 2 == 0 else np.uint32(z >> np.uint64(32))
        count = 0
        for t in range(_WIDTH):
            if u > thresholds[t]:
                count += 1
        total += count
        x = np.float64(count)
        for c in range(n_cols):
            acc[c, lane] += cols[c, j] * x
    return total


@njit(cache=True, nogil=True)
def bootstrap_sums(cols, rows, key, thresholds, start, stop, first, out):
    """Bootstrap sums of every column for resamples ``start..stop-1``.

    Parameters
    ----------
    cols : ndarray of float64, shape (n_columns, n)
        The values, one column per row (C-contiguous).
    rows : ndarray of float64, shape (n, n_columns)
        The same values query-major (``cols.T``, C-contiguous), for the top-up draws.
    key : uint64
        :func:`fastndcg._compare.rng.bootstrap_key` of the seed.
    thresholds : ndarray of uint32, shape (12,) or (0,)
        :func:`fastndcg._compare.rng.poisson_bounds` of ``n`` (empty: direct draws only).
    start, stop : int
        The resamples to compute.
    first : int
        The resample of ``out``'s first row.
    out : ndarray of float64, shape (n_resamples, n_columns)
        Receives ``out[i - first, c]``: the sum of column ``c`` over the ``n`` queries drawn with
        replacement by resample ``i`` (see :mod:`fastndcg._compare.rng` for the order).
    """
    n_cols, n = cols.shape
    un = np.uint64(n)
    acc = np.zeros((n_cols, LANES))
    counts = np.zeros((_TILE, LANES), dtype=np.float32)
    uniforms = np.zeros((_TILE, LANES), dtype=np.uint32)
    totals = np.zeros(LANES)  # float64: exact counts up to 2**53
    keys = np.empty(LANES, dtype=np.uint64)
    first_key = _mix(key ^ (_POISSON_DOMAIN + np.uint64(0)))
    top_key = _mix(key ^ _TOPUP_DOMAIN)
    poisson = thresholds.shape[0] > 0
    for base in range(start, stop, LANES):
        acc[:] = 0.0
        totals[:] = 0
        if poisson:
            for lane in range(LANES):
                keys[lane] = _stream(first_key, base + lane)
            for j0 in range(0, n, _TILE):
                m = min(_TILE, n - j0)
                _poisson_tile(keys, j0, m, thresholds, uniforms, counts, totals)
                _multiply_add_all(cols, j0, m, counts, acc)
        for lane in range(min(LANES, stop - base)):
            i = base + lane
            attempt = 0
            total = np.int64(totals[lane])
            while total > n:
                attempt += 1
                retry_key = _mix(key ^ (_POISSON_DOMAIN + np.uint64(attempt)))
                total = _poisson_lane(cols, retry_key, i, thresholds, acc, lane)
            k = _stream(top_key, i)
            for r in range(n - total):
                e = _below(_mix(k + np.uint64(r + 1) * _GOLDEN), un)
                for c in range(n_cols):
                    acc[c, lane] += rows[e, c]
            for c in range(n_cols):
                out[i - first, c] = acc[c, lane]
