"""Numba kernels of the column scans that validation and grouping use.

Each kernel is compiled per dtype on first use and releases the GIL, so the backend runs long
columns in chunks on its thread pool. They take arrays and integers only and never raise.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_LANES = 32  # independent accumulators of the column scans


@njit(cache=True, nogil=True)
def scan_integers(values, a, b):
    """Smallest and largest of the integer ``values[a:b]`` (inf and -inf when it is empty).

    Compiled per dtype on first use; releases the GIL, so threads scan chunks in parallel.
    Each row updates one of :data:`_LANES` independent accumulators, in the column's dtype, so
    the loop vectorises.
    """
    if b <= a:
        return np.inf, -np.inf
    rows = values[a:b]
    n = np.uint64(b - a)
    lanes = np.uint64(_LANES)
    full = n - n % lanes
    low = np.empty(_LANES, dtype=values.dtype)
    high = np.empty(_LANES, dtype=values.dtype)
    low[:] = rows[0]
    high[:] = rows[0]
    for i in range(np.uint64(0), full, lanes):
        for j in range(lanes):
            x = rows[i + j]
            low[j] = x if x < low[j] else low[j]
            high[j] = x if x > high[j] else high[j]
    for i in range(full, n):
        x = rows[i]
        low[0] = x if x < low[0] else low[0]
        high[0] = x if x > high[0] else high[0]
    return np.float64(low.min()), np.float64(high.max())


@njit(cache=True, nogil=True)
def scan_floats(values, a, b, integral):
    """min, max, number of non-finite and of non-integral values of the float ``values[a:b]``.

    Compiled per dtype on first use; releases the GIL, so threads scan chunks in parallel.
    Without ``integral`` non-integral values are not counted (scores: only finiteness matters).

    Each row updates one of :data:`_LANES` independent accumulators, element-wise, so the loop
    vectorises without reordering any floating-point operation. A NaN leaves min and max
    alone; it is counted as non-finite, and the caller rejects the column then.
    """
    if b <= a:
        return np.inf, -np.inf, 0, 0
    rows = values[a:b]
    n = np.uint64(b - a)
    lanes = np.uint64(_LANES)
    full = n - n % lanes
    lo = np.full(_LANES, np.inf)
    hi = np.full(_LANES, -np.inf)
    bad = np.zeros(_LANES, dtype=np.int64)
    frac = np.zeros(_LANES, dtype=np.int64)
    for i in range(np.uint64(0), full, lanes):
        for j in range(lanes):
            x = np.float64(rows[i + j])
            lo[j] = x if x < lo[j] else lo[j]
            hi[j] = x if x > hi[j] else hi[j]
            bad[j] += (x - x) != 0.0  # NaN for inf and NaN, 0 otherwise
            if integral:
                frac[j] += x != np.floor(x)
    for i in range(full, n):
        x = np.float64(rows[i])
        lo[0] = x if x < lo[0] else lo[0]
        hi[0] = x if x > hi[0] else hi[0]
        bad[0] += (x - x) != 0.0
        if integral:
            frac[0] += x != np.floor(x)
    return lo.min(), hi.max(), bad.sum(), frac.sum()


@njit(cache=True, nogil=True)
def first_row(values, a, b, want_nonfinite):
    """First row of ``values[a:b]`` that is non-finite (or, if not asked, non-integral)."""
    for i in range(a, b):
        x = np.float64(values[i])
        finite = abs(x) < np.inf
        if (want_nonfinite and not finite) or (not want_nonfinite and finite and x != np.floor(x)):
            return i
    return -1


@njit(cache=True, nogil=True)
def run_starts(ids):
    """Start row of every run of equal consecutive ids, plus ``ids.size`` at the end."""
    n = ids.size
    runs = 1 if n else 0
    for i in range(1, n):
        if ids[i] != ids[i - 1]:
            runs += 1
    out = np.empty(runs + 1, dtype=np.int64)
    out[0] = 0
    out[runs] = n
    r = 1
    for i in range(1, n):
        if ids[i] != ids[i - 1]:
            out[r] = i
            r += 1
    return out
