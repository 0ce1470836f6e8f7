"""Turn what callers pass into the 1-D columns the backends read, and check them.

dtype policy: grades stay in their own dtype when it is one the kernels read directly (float64,
float32, int64, int32, int16, int8, uint8; bool is viewed as uint8), scores when float64 or
float32; anything else is converted once here. Offsets are int64. Arrays that need no conversion
are not copied, and nothing the caller passed is ever written to. A CPU torch tensor is read in
place as well (detached when it requires grad); a bfloat16 one is widened to float32.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from fastndcg._contract import GRADE_SLOTS, SCORE_SLOTS, Backend, ColumnStats, input_row
from fastndcg._errors import (
    InputError,
    InputTypeError,
    inexact_error,
    nonfinite_error,
    not_numeric_error,
)


def reject_masked(values: Any, name: str) -> None:
    """A numpy masked array is an error: its mask would be lost on the way to the kernels."""
    if isinstance(values, np.ma.MaskedArray):
        raise InputTypeError(
            f"{name} is a numpy masked array, whose mask would be ignored",
            fix=f"drop the masked rows first ({name}.compressed()), or pass dense 2-D input "
            "with `mask=`",
        )


# tables, which fastndcg.ndcg would read as a matrix of grades, one query per row
_TABLES = {("pyarrow", "Table"), ("pyarrow", "RecordBatch"), ("pandas", "DataFrame")}


def reject_table(values: Any, name: str) -> None:
    """A table passed as grades is an error: its rows would be taken as queries."""
    kind = (type(values).__module__.split(".")[0], type(values).__name__)
    if kind in _TABLES:
        raise InputTypeError(
            f"{name} is a {'.'.join(kind)}, whose rows would be read as queries (a matrix of "
            "grades)",
            value=".".join(kind),
            fix="Score a table of (query, grade, score) rows with "
            "fastndcg.ndcg_table(table, qid=..., grade=..., score=...); pass a matrix of "
            "grades as a numpy array",
            joiner=". ",
        )


def from_torch(values: Any, name: str) -> Any:
    """A torch tensor as NumPy can read it; any other value unchanged (torch is not imported).

    NDCG has no gradient and never writes to its inputs, so a tensor that requires grad is
    detached (a view, not a copy), and bfloat16, which NumPy lacks, is widened to float32
    (exactly). A tensor outside CPU memory is an error naming ``name`` and the fix.
    """
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(values, torch.Tensor):
        return values
    if values.device.type != "cpu":
        gpu = " or `backend='cuda'`" if values.device.type == "cuda" else ""
        raise InputTypeError(
            f"{name} is a torch tensor on {values.device}, which NumPy cannot read",
            value=str(values.device),
            fix=f"pass {name}.cpu(){gpu}",
        )
    values = values.detach()
    return values.float() if values.dtype == torch.bfloat16 else values


def as_array(values: Any, name: str) -> np.ndarray:
    """``np.asarray(values)``; lists of different lengths are an error naming the fix.

    Torch tensors are read as :func:`from_torch` says.
    """
    try:
        return np.asarray(from_torch(values, name))
    except ValueError as exc:
        if "inhomogeneous" not in str(exc):
            raise
        raise InputError(
            f"{name} holds lists of different lengths, which make no array",
            fix="pass them flat (1-D) with `qid=` or `offsets=`, or padded to a 2-D array with "
            "`mask=`",
        ) from exc


def numeric_vector(values: Any, name: str, where: Callable[[int], str] = input_row) -> np.ndarray:
    """``values`` as a 1-D array of bool, int or float; a clear error otherwise.

    A None among them is named as ``where(r)``, for entry ``r``.
    """
    array = as_array(values, name)
    if array.dtype == object and array.ndim == 1:
        missing = next((row for row, value in enumerate(array) if value is None), None)
        if missing is not None:
            raise InputError(
                f"{name} has a missing value (None) at {where(missing)}",
                value=None,
                where=where(missing),
                fix="drop or fill it first",
            )
    if array.dtype.kind not in "biuf":
        raise not_numeric_error(name, array.dtype)
    if array.ndim != 1:
        raise InputError(
            f"{name} must be one-dimensional here",
            value=array.shape,
            fix=f"got shape {array.shape}",
        )
    return array


def as_grade_vector(values: Any, name: str, where: Callable[[int], str] = input_row) -> np.ndarray:
    """1-D contiguous grades in a kernel dtype, converting (copying) only when needed.

    Errors name entry ``r`` of ``values`` as ``where(r)``.
    """
    array = numeric_vector(values, name, where)
    if array.dtype == np.bool_:
        array = np.ascontiguousarray(array).view(np.uint8)
    elif array.dtype not in GRADE_SLOTS:
        target = {"u": np.int64, "i": np.int64}.get(array.dtype.kind, np.float64)
        if array.dtype == np.uint64 or array.dtype.itemsize > 8:
            target = np.float64
            if array.size:
                _check_exact_in_float64(array, name, where, "gains are computed in")
        array = array.astype(target)
    return np.ascontiguousarray(array)


def as_score_vector(values: Any, name: str, where: Callable[[int], str] = input_row) -> np.ndarray:
    """1-D contiguous scores as float64 or float32, converting (copying) only when needed.

    Errors name entry ``r`` of ``values`` as ``where(r)``.
    """
    array = numeric_vector(values, name, where)
    if (array.dtype.kind in "iu" or array.dtype.itemsize > 8) and array.size:
        _check_exact_in_float64(array, name, where, "scores are ranked in", ties=True)
    if array.dtype not in SCORE_SLOTS:
        array = array.astype(np.float32 if array.dtype == np.float16 else np.float64)
    return np.ascontiguousarray(array)


def _check_exact_in_float64(
    array: np.ndarray, name: str, where: Callable[[int], str], use: str, ties: bool = False
) -> None:
    """Integer and long double values must be exact in float64, the precision ``use`` names."""
    if array.dtype.kind == "f":
        with np.errstate(over="ignore"):
            inexact = array.astype(np.float64) != array  # NaN too: the scores' check names it
        inexact &= ~np.isnan(array)
        beyond = "a long double that float64 cannot hold"
    else:
        inexact = (array > 2**53) | (array < -(2**53))
        beyond = "beyond 2**53"
    if inexact.any():
        row = int(np.argmax(inexact))
        raise inexact_error(name, array[row], where(row), beyond, use, ties)


def checked_stats(
    values: np.ndarray, name: str, where: Any, backend: Backend, integral: bool = True
) -> ColumnStats:
    """Scan ``values`` once; raise an InputError naming the first entry that cannot be scored.

    That is a NaN or infinite value, or an integer that float64 cannot hold (beyond 2**53).

    ``integral=False``: do not look for non-integral values.
    """
    stats = backend.column_stats(values, integral)
    bad = stats.first_nonfinite
    if bad >= 0:
        raise nonfinite_error(name, values[bad], where(bad))
    if values.dtype.kind in "iu" and max(-stats.low, stats.high) >= 2**53:  # (rounded) extremes
        _check_exact_in_float64(values, name, where, "gains are computed in")
    return stats


def cell_words(width: int) -> Callable[[int], str]:
    """Words for entry ``cell`` of a flattened 2-D input ``width`` items wide."""

    def where(cell: int) -> str:
        q, item = divmod(cell, width)
        return f"query row {q}, item {item}"

    return where


def dense_mask(mask: Any, shape: tuple[int, ...]) -> np.ndarray:
    """The padding ``mask`` of dense input as a boolean array of ``shape`` (True = keep)."""
    if isinstance(mask, np.ma.MaskedArray):
        raise InputTypeError("mask must be a plain array, not a numpy masked array")
    keep = np.asarray(from_torch(mask, "mask"))
    if keep.shape != shape:
        raise InputError(
            "mask must have the same shape as grades",
            value=keep.shape,
            fix=f"grades {shape}, mask {keep.shape}",
            joiner=": ",
        )
    if keep.dtype != np.bool_:
        if keep.dtype.kind not in "iu" or not np.isin(keep, (0, 1)).all():
            raise InputTypeError(
                "mask must be boolean (True = keep the item)",
                value=keep.dtype,
                fix=f"got dtype {keep.dtype}",
            )
        keep = keep.astype(bool)
    return keep


def check_offsets(offsets: Any, n_rows: int, name: str) -> np.ndarray:
    """Check that ``offsets`` is a valid CSR index over ``n_rows`` rows; return it as int64."""
    offs = np.asarray(from_torch(offsets, name))
    if offs.ndim != 1 or offs.size == 0:
        raise InputError(
            f"{name} must be a 1-D array of n_queries + 1 row positions",
            value=offs.shape,
            fix=f"got shape {offs.shape}",
        )
    if offs.dtype.kind not in "iu":
        raise InputTypeError(
            f"{name} must hold integer row positions",
            value=offs.dtype,
            fix=f"got dtype {offs.dtype}",
        )
    if offs.dtype == np.uint64 and offs.max() > n_rows:  # beyond int64 too, maybe
        bad = int(np.argmax(offs > n_rows))
        raise InputError(
            f"{name}[{bad}]={offs[bad]} is beyond the {n_rows} rows",
            value=offs[bad].item(),
            where=f"{name}[{bad}]",
        )
    offs = np.ascontiguousarray(offs, dtype=np.int64)
    if offs[0] != 0:
        raise InputError(
            f"{name} must start at 0", value=int(offs[0]), where=f"{name}[0]", fix=f"got {offs[0]}"
        )
    if offs[-1] != n_rows:
        raise InputError(
            f"{name} must end at the number of rows ({n_rows}) so that every row belongs to a "
            "query",
            value=int(offs[-1]),
            where=f"{name}[{offs.size - 1}]",
            fix=f"got {offs[-1]}",
        )
    steps = np.diff(offs)
    if steps.size and steps.min() < 0:
        bad = int(np.argmin(steps >= 0))
        raise InputError(
            f"{name} must be non-decreasing",
            value=int(offs[bad + 1]),
            where=f"{name}[{bad + 1}]",
            fix=f"{name}[{bad}]={offs[bad]} > {name}[{bad + 1}]={offs[bad + 1]}",
        )
    return offs


class HostColumns:
    """Columns in host memory: the :class:`~fastndcg._contract.Columns` of NumPy arrays.

    Values are converted and checked as this module says; ``backend`` runs the scans.
    """

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    def array(self, values: np.ndarray, name: str) -> np.ndarray:
        """Host arrays are read as they are (the core converted them with :func:`as_array`)."""
        return values

    def numeric(self, values: np.ndarray, name: str, where: Callable[[int], str]) -> None:
        """Raise unless the values are bool, int or float (a None among them named)."""
        numeric_vector(values.reshape(-1), name, where)

    def flatten(self, matrix: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
        """The cells of a 2-D array row after row (those ``keep`` marks)."""
        return matrix.reshape(-1) if keep is None else matrix[keep]

    def grades(self, values: Any, name: str, where: Callable[[int], str]) -> np.ndarray:
        """See :func:`as_grade_vector`."""
        return as_grade_vector(values, name, where)

    def scores(self, values: Any, name: str, where: Callable[[int], str]) -> np.ndarray:
        """See :func:`as_score_vector`."""
        return as_score_vector(values, name, where)

    def checked(
        self, values: np.ndarray, name: str, where: Callable[[int], str], integral: bool = True
    ) -> ColumnStats:
        """See :func:`checked_stats`."""
        return checked_stats(values, name, where, self._backend, integral)

    def take(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``values[rows]``."""
        return values[rows]

    def host(self, values: Any) -> Any:
        """Host values as they are."""
        return values

    def first_where(
        self, values: np.ndarray, test: str, mask: Callable[[np.ndarray], np.ndarray], **bounds: Any
    ) -> int:
        """First row where ``mask(values)`` holds (-1: none)."""
        hits = mask(values)
        return int(np.argmax(hits)) if hits.any() else -1

    def as_float32(self, values: np.ndarray) -> np.ndarray:
        """``values`` as float32 (beyond its range: +-inf, as tools storing float32 get)."""
        with np.errstate(over="ignore"):
            return values.astype(np.float32, copy=False)

    def kernel_offsets(self, offsets: Any) -> None:
        """The kernels read the host copy of the offsets."""
        return None
