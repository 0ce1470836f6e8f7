"""NumPy twins of the column scans of ``numba/scan.py``, in blocks of rows (bounded memory)."""

from __future__ import annotations

import numpy as np

from fastndcg._backends.tuning import NUMPY_BLOCK_ROWS
from fastndcg._contract import ColumnStats


def column_stats(values: np.ndarray, integral: bool = True) -> ColumnStats:
    """Range, first non-finite and (with ``integral``) first non-integral row of ``values``."""
    if values.size == 0:
        return ColumnStats(np.inf, -np.inf, -1, -1)
    if values.dtype.kind != "f":
        return ColumnStats(float(values.min()), float(values.max()), -1, -1)
    low, high, frac = np.inf, -np.inf, -1
    for start in range(0, values.size, NUMPY_BLOCK_ROWS):
        block = values[start : start + NUMPY_BLOCK_ROWS]
        finite = np.isfinite(block)
        if not finite.all():  # the caller raises on this; the other facts are not needed
            return ColumnStats(np.nan, np.nan, start + int(np.argmin(finite)), -1)
        low = min(low, float(block.min()))
        high = max(high, float(block.max()))
        if integral and frac < 0:
            whole = block == np.floor(block)
            if not whole.all():
                frac = start + int(np.argmin(whole))
    return ColumnStats(low, high, -1, frac)


def run_bounds(ids: np.ndarray) -> np.ndarray:
    """Start row of every run of equal consecutive ids, and the row count at the end."""
    pieces = [np.zeros(1, dtype=np.int64)]
    for start in range(1, ids.size, NUMPY_BLOCK_ROWS):
        stop = min(start + NUMPY_BLOCK_ROWS, ids.size)
        changed = ids[start:stop] != ids[start - 1 : stop - 1]
        pieces.append(np.flatnonzero(changed) + start)
    pieces.append(np.array([ids.size], dtype=np.int64))
    return np.concatenate(pieces).astype(np.int64)
