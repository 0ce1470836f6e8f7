"""One pass over a numeric column: the facts validation and planning need.

With the Numba backend the pass runs in parallel in a kernel; otherwise NumPy scans the column in
blocks, so temporary memory stays bounded whatever the column length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_BLOCK = 1 << 20  # rows per NumPy block
_SCAN_CHUNKS = 64
_SMALL = 1 << 15  # shorter columns are scanned by NumPy: no thread wake-up

# dtypes the kernels read without a copy, in the slot order of the kernels' view tuples
GRADE_DTYPES = tuple(
    np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.int16, np.int8, np.uint8)
)
SCORE_DTYPES = GRADE_DTYPES[:2]


@dataclass(frozen=True)
class ColumnStats:
    """What one pass over a column found.

    ``first_nonfinite``/``first_nonintegral`` are row numbers, -1 when there is none. ``low``
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


def views(values: np.ndarray, dtypes: tuple[np.dtype, ...]) -> tuple[tuple[np.ndarray, ...], int]:
    """A tuple with one read-only array per dtype slot (``values`` in its slot), and the slot."""
    code = dtypes.index(values.dtype)
    if values.flags.writeable:
        values = values.view()
        values.flags.writeable = False
    slots = tuple(
        values if slot == code else _EMPTY_SLOTS[dtype] for slot, dtype in enumerate(dtypes)
    )
    return slots, code


def column_stats(values: np.ndarray, use_numba: bool) -> ColumnStats:
    """Scan ``values`` (1-D, one of :data:`GRADE_DTYPES`) once."""
    is_float = values.dtype.kind == "f"
    if values.size == 0:
        return ColumnStats(np.inf, -np.inf, -1, -1)
    if use_numba and values.size >= _SMALL:
        from fastndcg._kernels import scan_values

        as_grades = values if values.dtype in GRADE_DTYPES else values.astype(np.float64)
        slots, code = views(as_grades, GRADE_DTYPES)
        low, high, bad, frac = scan_values(slots, code, is_float, _SCAN_CHUNKS)
        return ColumnStats(float(low), float(high), int(bad), int(frac))
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
        if frac < 0:
            whole = block == np.floor(block)
            if not whole.all():
                frac = start + int(np.argmin(whole))
    return ColumnStats(low, high, -1, frac)
