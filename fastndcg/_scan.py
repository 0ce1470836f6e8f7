"""One pass over a numeric column: the facts validation and planning need.

With the Numba backend a small kernel scans long columns, the longest in chunks on worker
threads (it releases the GIL); otherwise NumPy scans them in blocks, so temporary memory stays
bounded.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

_BLOCK = 1 << 20  # rows per NumPy block
# shorter columns are scanned by NumPy: no kernel signature per dtype to compile or load
_SMALL = 1 << 15
# shorter columns are scanned in one call: waking threads would cost more than it saves
_PARALLEL_SCAN = 1 << 20

# dtypes the kernels read without a copy, in the slot order of the kernels' view tuples
GRADE_DTYPES = tuple(
    np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.int16, np.int8, np.uint8)
)
SCORE_DTYPES = GRADE_DTYPES[:2]

T = TypeVar("T")


@dataclass(frozen=True)
class ColumnStats:
    """What one pass over a column found.

    ``first_nonfinite``/``first_nonintegral`` are row numbers, -1 when there is none (or, for
    ``first_nonintegral``, when the scan was told not to look: see :func:`column_stats`). ``low``
    and ``high`` (the extreme values; inf/-inf for an empty column) are only meaningful when every
    value is finite.
    """

    low: float
    high: float
    first_nonfinite: int
    first_nonintegral: int

    @property
    def integral(self) -> bool:
        """True when every value is a whole number."""
        return self.first_nonintegral < 0


def _empty_readonly(dtype: np.dtype) -> np.ndarray:
    array = np.empty(0, dtype=dtype)
    array.flags.writeable = False
    return array


# one shared empty read-only array per dtype fills the unused slots of every views tuple
_EMPTY_SLOTS = {dtype: _empty_readonly(dtype) for dtype in GRADE_DTYPES}


def readonly(values: np.ndarray) -> np.ndarray:
    """``values``, or a read-only view of it.

    Numba compiles a kernel once per array type, and writeability is part of the type: passing
    every column read-only (as Arrow hands them over) halves the signatures to compile.
    """
    if values.flags.writeable:
        values = values.view()
        values.flags.writeable = False
    return values


def views(values: np.ndarray, dtypes: tuple[np.dtype, ...]) -> tuple[tuple[np.ndarray, ...], int]:
    """A tuple with one read-only array per dtype slot (``values`` in its slot), and the slot."""
    code = dtypes.index(values.dtype)
    empty = _EMPTY_TUPLES[dtypes]
    return (*empty[:code], readonly(values), *empty[code + 1 :]), code


_EMPTY_TUPLES = {
    dtypes: tuple(_EMPTY_SLOTS[dtype] for dtype in dtypes)
    for dtypes in (GRADE_DTYPES, SCORE_DTYPES)
}


def scan_chunk(values: np.ndarray, a: int, b: int, integral: bool) -> tuple[float, float, int, int]:
    """min, max, non-finite and non-integral count of ``values[a:b]`` by a Numba kernel.

    ``values`` must be read-only (:func:`readonly`), so each dtype compiles one signature.
    Integer columns are finite and integral: only their range is scanned.
    """
    from fastndcg import _kernels

    if values.dtype.kind == "f":
        return _kernels.scan_floats(values, a, b, integral)
    low, high = _kernels.scan_integers(values, a, b)
    return low, high, 0, 0


def _numba_stats(values: np.ndarray, integral: bool) -> ColumnStats:
    """The scan as a small kernel (one compile per dtype), long columns in chunks on threads."""
    import numba

    from fastndcg._kernels import first_row

    values = readonly(values)
    threads = numba.get_num_threads()
    if threads == 1 or values.size < _PARALLEL_SCAN:
        parts = [scan_chunk(values, 0, values.size, integral)]
    else:
        bounds = np.linspace(0, values.size, 2 * threads + 1).astype(np.int64)
        scan = lambda c: scan_chunk(values, bounds[c], bounds[c + 1], integral)  # noqa: E731
        parts = run_chunks(scan, bounds.size - 1, threads)
    low = min(p[0] for p in parts)
    high = max(p[1] for p in parts)
    bad = -1
    frac = -1
    if sum(p[2] for p in parts):  # rare: locate the first offending row
        bad = int(first_row(values, 0, values.size, True))
    elif sum(p[3] for p in parts):
        frac = int(first_row(values, 0, values.size, False))
    return ColumnStats(float(low), float(high), bad, frac)


_POOLS: dict[int, ThreadPoolExecutor] = {}


def run_chunks(work: Callable[[int], T], n_chunks: int, threads: int) -> list[T]:
    """``[work(0), ..., work(n_chunks - 1)]``, worked off by this thread and pool threads.

    ``threads`` threads in all (this one included) take the next chunk until none is left, so a
    slow chunk does not hold the others; ``work`` must release the GIL to run in parallel.
    """
    results: list = [None] * n_chunks
    tickets = itertools.count()

    def drain() -> None:
        while (c := next(tickets)) < n_chunks:
            results[c] = work(c)

    helpers = min(threads, n_chunks) - 1
    if helpers > 0 and threads not in _POOLS:
        _POOLS[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="fastndcg")
    running = [_POOLS[threads].submit(drain) for _ in range(helpers)]
    drain()
    for helper in running:
        helper.result()
    return results


def column_stats(values: np.ndarray, use_numba: bool, integral: bool = True) -> ColumnStats:
    """Scan ``values`` (1-D, one of :data:`GRADE_DTYPES`) once.

    ``integral=False`` skips looking for non-integral values (``first_nonintegral`` is -1).
    """
    is_float = values.dtype.kind == "f"
    if values.size == 0:
        return ColumnStats(np.inf, -np.inf, -1, -1)
    if use_numba and values.size >= _SMALL:
        return _numba_stats(values, integral)
    if not is_float:
        return ColumnStats(float(values.min()), float(values.max()), -1, -1)
    low, high, frac = np.inf, -np.inf, -1
    for start in range(0, values.size, _BLOCK):
        block = values[start : start + _BLOCK]
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
