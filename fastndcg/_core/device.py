"""Inputs in GPU memory: how device columns become a layout, checked as host columns are.

A torch CUDA tensor, a CuPy array, a numba device array, or anything with
``__cuda_array_interface__`` or DLPack on a CUDA device is *on the device*
(:func:`on_device`). ``backend="auto"`` then resolves to ``"cuda"`` (:func:`backend_for`), and
:func:`device_layout` builds the layout with the backend's device operations: grades and scores
stay where they are (read in place, converted or gathered on the device only when their dtype
or row order asks for it), validated by reductions on the device that bring back a few numbers
(extremes, the first offending row), with the errors and row words of host input.

Query structure is planned on the host, as for every input: ``offsets``, ``qid`` and ``mask``
in device memory are copied to the host (``n_queries + 1`` offsets; one id or flag per row).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fastndcg._backends import Backend
from fastndcg._backends.abi import GRADE_SLOTS, SCORE_SLOTS, on_cuda_device, readonly
from fastndcg._core.coerce import (
    cell_words,
    check_offsets,
    dense_mask,
    inexact_error,
    input_row,
    nonfinite_error,
)
from fastndcg._core.grouping import group_rows
from fastndcg._errors import InputError, InputTypeError

__all__ = ["backend_for", "device_layout", "on_device", "reads_device"]


def on_device(values: Any) -> bool:
    """Whether ``values`` lives in CUDA device memory."""
    return values is not None and on_cuda_device(values)


def reads_device(backend: Backend) -> bool:
    """Whether ``backend`` reads device columns (the device operations below)."""
    return bool(getattr(backend, "reads_device", False))


def backend_for(requested: str, backend: Backend, *inputs: Any) -> Backend:
    """The backend for these inputs: ``"auto"`` becomes ``"cuda"`` for inputs on the device.

    ``requested`` is the ``backend=`` value; ``"auto"`` follows ``FASTNDCG_BACKEND`` first (a
    backend it names is kept), and never picks cuda for host inputs.
    """
    if requested != "auto" or reads_device(backend) or not any(on_device(x) for x in inputs):
        return backend
    import os

    from fastndcg._backends import ENV_BACKEND, resolve_backend

    if (os.environ.get(ENV_BACKEND) or "auto") != "auto":
        return backend  # the environment named a backend: device inputs meet its error
    return resolve_backend("cuda")


def _host(values: Any, backend: Backend) -> Any:
    """``values`` on the host: device objects copied (``backend.to_host``), others unchanged."""
    return backend.to_host(values) if on_device(values) else values


def _kernel_offsets(offsets: Any, backend: Backend) -> Any:
    """Offsets given on the device, when the kernels can read them there (contiguous int64)."""
    if not on_device(offsets):
        return None
    column = backend.device_column(offsets)
    if column.dtype != np.int64 or column.ndim != 1 or not column.is_c_contiguous():
        return None
    return column


def _column(values: Any, name: str, backend: Backend) -> Any:
    """A device column (host values are converted as on the host, then copied once)."""
    if values is not None and not on_device(values):
        from fastndcg._core.coerce import as_array

        values = np.ascontiguousarray(as_array(values, name))
    return backend.device_column(values)


def _numeric(column: Any, name: str) -> None:
    if column.dtype.kind not in "biuf":
        raise InputTypeError(
            f"{name} must be numeric (bool, int or float); got dtype {column.dtype}",
            value=column.dtype,
            fix=f"Convert it first, e.g. {name}.astype(float)",
            joiner=". ",
        )


def _exact(column: Any, name: str, where: Any, backend: Backend, use: str, ties: bool) -> None:
    """Integers beyond 2**53 (which float64 rounds) are an error naming the first."""
    if column.dtype.kind in "iu" and column.dtype.itemsize == 8 and column.size:
        row = backend.first_where(column, "beyond_exact")
        if row >= 0:
            raise inexact_error(name, column[row], where(row), "beyond 2**53", use, ties)


def _grade_column(column: Any, name: str, where: Any, backend: Backend) -> Any:
    """Grades in a kernel dtype (as :func:`fastndcg._core.coerce.as_grade_vector`)."""
    _numeric(column, name)
    if column.dtype == np.bool_:
        return column.view(np.uint8)
    if column.dtype in GRADE_SLOTS:
        return column
    if column.dtype == np.uint64:
        _exact(column, name, where, backend, "gains are computed in", False)
        return backend.convert(column, np.float64)
    return backend.convert(column, np.int64 if column.dtype.kind in "iu" else np.float64)


def _score_column(column: Any, name: str, where: Any, backend: Backend) -> Any:
    """Scores as float64 or float32 (as :func:`fastndcg._core.coerce.as_score_vector`)."""
    _numeric(column, name)
    _exact(column, name, where, backend, "scores are ranked in", True)
    if column.dtype in SCORE_SLOTS:
        return column
    return backend.convert(column, np.float32 if column.dtype == np.float16 else np.float64)


def device_layout(
    grades: Any,
    scores: Any = None,
    *,
    qid: Any = None,
    offsets: Any = None,
    mask: Any = None,
    backend: Backend,
) -> Any:
    """The layout of inputs some of which are on the device (see :func:`build_layout`)."""
    from fastndcg._core.layout import Layout

    grades_d = _column(grades, "grades", backend)
    scores_d = None if scores is None else _column(scores, "scores", backend)
    where = input_row
    row_order = None
    device_offsets = None
    if grades_d.ndim == 2:
        if qid is not None or offsets is not None:
            raise InputError(
                "qid and offsets describe flat 1-D input",
                fix="dense 2-D input has one query per row (use `mask=` for padding)",
            )
        n_queries, width = grades_d.shape
        cell = cell_words(width)
        if scores_d is not None and tuple(scores_d.shape) != tuple(grades_d.shape):
            raise InputError(
                "scores must have the same shape as grades",
                value=tuple(scores_d.shape),
                fix=f"grades {tuple(grades_d.shape)}, scores {tuple(scores_d.shape)}",
                joiner=": ",
            )
        _numeric(grades_d, "grades")
        if scores_d is not None:
            _numeric(scores_d, "scores")
        grades_d = backend.flatten(grades_d)
        scores_d = None if scores_d is None else backend.flatten(scores_d)
        if mask is None:
            offs = np.arange(n_queries + 1, dtype=np.int64) * width
            where = cell
        else:
            keep = dense_mask(_host(mask, backend), (n_queries, width))
            offs = np.zeros(n_queries + 1, dtype=np.int64)
            np.cumsum(keep.sum(axis=1), out=offs[1:])
            kept = np.flatnonzero(keep.reshape(-1))
            grades_d = backend.take(grades_d, kept)
            scores_d = None if scores_d is None else backend.take(scores_d, kept)

            def where(row: int) -> str:
                return cell(int(kept[row]))

        query_ids = np.arange(n_queries, dtype=np.int64)
    else:
        if mask is not None:
            raise InputError(
                "mask is for dense 2-D input",
                fix="flat 1-D input is split with `qid=` or `offsets=`",
            )
        if grades_d.ndim != 1:
            raise InputError(
                "grades must be 1-D (flat, with `qid=` or `offsets=`) or 2-D (one query per row)",
                value=tuple(grades_d.shape),
                fix=f"got shape {tuple(grades_d.shape)}",
            )
        n = grades_d.size
        if scores_d is not None and (scores_d.ndim != 1 or scores_d.size != n):
            raise InputError(
                "grades and scores must have the same length",
                fix=f"got {n} grades and {scores_d.size} scores",
            )
        if qid is not None and offsets is not None:
            raise InputError("pass `qid=` or `offsets=`, not both")
        if offsets is not None:
            offs = check_offsets(_host(offsets, backend), n, "offsets")
            query_ids = np.arange(offs.size - 1, dtype=np.int64)
            device_offsets = _kernel_offsets(offsets, backend)
        elif qid is not None:
            offs, query_ids, row_order = group_rows(_host(qid, backend), n, "qid", backend)
        else:
            offs = np.array([0, n] if n else [0], dtype=np.int64)
            query_ids = np.arange(offs.size - 1, dtype=np.int64)
    grades_d = _grade_column(grades_d, "grades", where, backend)
    if scores_d is not None:
        scores_d = _score_column(scores_d, "scores", where, backend)
    stats = backend.column_stats(grades_d, True)
    if stats.first_nonfinite >= 0:
        bad = stats.first_nonfinite
        raise nonfinite_error("grades", grades_d[bad], where(bad))
    if grades_d.dtype.kind in "iu" and max(-stats.low, stats.high) >= 2**53:  # (rounded) extremes
        _exact(grades_d, "grades", where, backend, "gains are computed in", False)
    if row_order is not None:
        grades_d = backend.take(grades_d, row_order)
        scores_d = None if scores_d is None else backend.take(scores_d, row_order)
    return Layout(
        readonly(offs),
        grades_d,
        scores_d,
        query_ids,
        stats,
        row_order,
        scores_checked=False,
        where=where,
        device_offsets=device_offsets,
    )
