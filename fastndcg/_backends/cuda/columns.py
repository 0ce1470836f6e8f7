"""Columns in GPU memory, read and checked where they are: the CUDA backend's ``Columns``.

A torch CUDA tensor, a CuPy array, a numba device array, or anything with
``__cuda_array_interface__`` or DLPack on a CUDA device is read in place (converted or gathered
on the device only when its dtype or row order asks for it) and validated by reductions on the
device that bring back a few numbers (extremes, the first offending row), with the errors and
row words of host input. The core plans the query structure on the host, as for every input:
offsets, query ids and masks in device memory are copied there (:meth:`CudaColumns.host`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fastndcg._backends.cuda.memory import on_cuda_device
from fastndcg._contract import GRADE_SLOTS, SCORE_SLOTS, ColumnStats
from fastndcg._errors import inexact_error, nonfinite_error, not_numeric_error

_EXACT = 2**53  # integers beyond it are rounded by float64


class CudaColumns:
    """The :class:`~fastndcg._contract.Columns` of the CUDA backend ``backend``."""

    def __init__(self, backend: Any, launch: Any) -> None:
        self._backend = backend  # its column_stats scans device and host columns alike
        self._launch = launch  # the device operations (``launch.Launcher``)

    def array(self, values: Any, name: str) -> Any:
        """A device column (host arrays, already converted by the core, are copied once)."""
        return self._launch.device_column(values)

    def numeric(self, values: Any, name: str, where: Callable[[int], str]) -> None:
        """Raise unless the column holds bool, int or float."""
        if values.dtype.kind not in "biuf":
            raise not_numeric_error(name, values.dtype)

    def flatten(self, matrix: Any, keep: np.ndarray | None) -> Any:
        """The cells of a 2-D device array row after row (those ``keep`` marks)."""
        flat = self._launch.flatten(matrix)
        return flat if keep is None else self._launch.take(flat, np.flatnonzero(keep.ravel()))

    def grades(self, values: Any, name: str, where: Callable[[int], str]) -> Any:
        """Grades in a kernel dtype, converted on the device where needed (as on the host)."""
        self.numeric(values, name, where)
        if values.dtype == np.bool_:
            return values.view(np.uint8)
        if values.dtype in GRADE_SLOTS:
            return values
        if values.dtype == np.uint64:
            self._exact(values, name, where, "gains are computed in", ties=False)
            return self._launch.convert(values, np.dtype(np.float64))
        return self._launch.convert(
            values, np.dtype(np.int64 if values.dtype.kind in "iu" else np.float64)
        )

    def scores(self, values: Any, name: str, where: Callable[[int], str]) -> Any:
        """Scores as float64 or float32, converted on the device where needed."""
        self.numeric(values, name, where)
        self._exact(values, name, where, "scores are ranked in", ties=True)
        if values.dtype in SCORE_SLOTS:
            return values
        target = np.float32 if values.dtype == np.float16 else np.float64
        return self._launch.convert(values, np.dtype(target))

    def checked(
        self, values: Any, name: str, where: Callable[[int], str], integral: bool = True
    ) -> ColumnStats:
        """Block reductions on the device; the first bad value is named as on the host."""
        stats = self._backend.column_stats(values, integral)
        if stats.first_nonfinite >= 0:
            row = stats.first_nonfinite
            raise nonfinite_error(name, values[row], where(row))
        if values.dtype.kind in "iu" and max(-stats.low, stats.high) >= _EXACT:
            self._exact(values, name, where, "gains are computed in", ties=False)
        return stats

    def take(self, values: Any, rows: np.ndarray) -> Any:
        """``values[rows]`` gathered on the device."""
        return self._launch.take(values, rows)

    def host(self, values: Any) -> Any:
        """A device object copied to the host; anything else unchanged."""
        return self._launch.to_host(values) if on_cuda_device(values) else values

    def first_where(
        self, values: Any, test: str, mask: Callable[[np.ndarray], np.ndarray], **bounds: Any
    ) -> int:
        """First row passing ``test``: a reduction on the device (host arrays: ``mask``)."""
        if isinstance(values, np.ndarray):
            hits = mask(values)
            return int(np.argmax(hits)) if hits.any() else -1
        return self._launch.first_where(
            values, test, bounds.get("low", 0.0), bounds.get("high", 0.0), bounds.get("table")
        )

    def as_float32(self, values: Any) -> Any:
        """Scores rounded to float32 on the device."""
        return (
            values if values.dtype == np.float32 else self._launch.convert(values, np.dtype("f4"))
        )

    def kernel_offsets(self, offsets: Any) -> Any:
        """Offsets given on the device as contiguous int64: the kernels read them in place."""
        if not on_cuda_device(offsets):
            return None
        column = self._launch.device_column(offsets)
        if column.dtype != np.int64 or column.ndim != 1 or not column.is_c_contiguous():
            return None
        return column

    def _exact(
        self, values: Any, name: str, where: Callable[[int], str], use: str, ties: bool
    ) -> None:
        """Integers beyond 2**53 (which float64 rounds) are an error naming the first."""
        if values.dtype.kind in "iu" and values.dtype.itemsize == 8 and values.size:
            row = self._launch.first_where(values, "beyond_exact", 0.0, 0.0, None)
            if row >= 0:
                raise inexact_error(name, values[row], where(row), "beyond 2**53", use, ties)
