"""CUDA kernels for the validation of device columns, and element-wise copies.

:func:`column_stats` and :func:`first_where` reduce a column to a few numbers per block (the
extremes, the first offending row), which the host combines: only those numbers leave the
device. Minima, maxima and first rows do not depend on the order of the reduction, so the
result is the same on every run.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from fastndcg._backends.cuda.common import THREADS

# what first_where looks for
NEGATIVE = 0  # v < 0
OUTSIDE = 1  # v < low or v >= high
NONINTEGRAL = 2  # v != floor(v)
BEYOND_EXACT = 3  # |v| > 2**53 (integers float64 cannot hold)
UNMAPPED = 4  # table[int(v)] is NaN (a grade a gain dict lacks)
NONFINITE = 5
BEYOND_UNSIGNED = 6  # uint64 viewed as int64: above 2**53, or at least 2**63 (negative)

_NONE = np.int64(-1)
_BIG = np.int64(1) << np.int64(62)
_EXACT = np.int64(1) << np.int64(53)


@cuda.jit(device=True)
def _block_min_int(red, tid, value):
    red[tid] = value
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride and red[tid + stride] < red[tid]:
            red[tid] = red[tid + stride]
        cuda.syncthreads()
        stride //= 2
    out = red[0]
    cuda.syncthreads()
    return out


@cuda.jit
def column_stats(values, integral, is_float, low, high, first_bad, first_frac):
    """Per block: min and max, first non-finite row, first non-integral row (-1: none).

    Block ``b`` writes entry ``b`` of each output; the host combines them.
    """
    lo_red = cuda.shared.array(THREADS, np.float64)
    hi_red = cuda.shared.array(THREADS, np.float64)
    bad_red = cuda.shared.array(THREADS, np.int64)
    frac_red = cuda.shared.array(THREADS, np.int64)
    tid = cuda.threadIdx.x
    lo = np.inf
    hi = -np.inf
    bad = _BIG
    frac = _BIG
    start = cuda.blockIdx.x * THREADS + tid
    for i in range(start, values.size, cuda.gridDim.x * THREADS):
        x = np.float64(values[i])
        if is_float:
            if x - x != 0.0:
                bad = min(bad, i)
                continue
            if integral and x != math.floor(x):
                frac = min(frac, i)
        lo = min(lo, x)
        hi = max(hi, x)
    lo_red[tid] = lo
    hi_red[tid] = hi
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            lo_red[tid] = min(lo_red[tid], lo_red[tid + stride])
            hi_red[tid] = max(hi_red[tid], hi_red[tid + stride])
        cuda.syncthreads()
        stride //= 2
    bad = _block_min_int(bad_red, tid, bad)
    frac = _block_min_int(frac_red, tid, frac)
    if tid == 0:
        b = cuda.blockIdx.x
        low[b] = lo_red[0]
        high[b] = hi_red[0]
        first_bad[b] = bad if bad < _BIG else _NONE
        first_frac[b] = frac if frac < _BIG else _NONE


@cuda.jit
def first_where(values, test, low, high, table, first):
    """Per block: the first row whose value passes ``test`` (see the codes above), or -1."""
    red = cuda.shared.array(THREADS, np.int64)
    tid = cuda.threadIdx.x
    found = _BIG
    start = cuda.blockIdx.x * THREADS + tid
    for i in range(start, values.size, cuda.gridDim.x * THREADS):
        if i >= found:
            break
        v = values[i]
        x = np.float64(v)
        hit = False
        if test == NEGATIVE:
            hit = x < 0.0
        elif test == OUTSIDE:
            hit = x < low or x >= high
        elif test == NONINTEGRAL:
            hit = x != math.floor(x)
        elif test == BEYOND_EXACT:
            hit = v > _EXACT or v < -_EXACT
        elif test == BEYOND_UNSIGNED:
            hit = v > _EXACT or v < 0
        elif test == UNMAPPED:
            hit = math.isnan(table[np.int64(x)])
        else:
            hit = x - x != 0.0
        if hit:
            found = i
    found = _block_min_int(red, tid, found)
    if tid == 0:
        first[cuda.blockIdx.x] = found if found < _BIG else _NONE


@cuda.jit
def take(values, rows, out):
    """``out[i] = values[rows[i]]``."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = values[rows[i]]


@cuda.jit
def convert(values, out):
    """``out[i] = values[i]`` in ``out``'s dtype (float32: rounded, overflow to +-inf)."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = values[i]


@cuda.jit
def flatten(values, out):
    """``out[i * width + j] = values[i, j]`` (a strided 2-D array made contiguous)."""
    i, j = cuda.grid(2)
    if i < values.shape[0] and j < values.shape[1]:
        out[i * values.shape[1] + j] = values[i, j]
