"""The CSR layout every backend works on, and how flat or dense inputs become one.

All queries live in one layout: ``offsets`` (int64, ``n_queries + 1`` entries, starting at 0 and
ending at the number of rows) over flat ``grades`` and ``scores``. Query ``q`` owns rows
``offsets[q]:offsets[q+1]``. Builders accept flat arrays with ``qid`` or ``offsets``, or dense
2-D arrays with an optional padding ``mask`` (see :mod:`fastndcg._core.coerce` for how values
are read and checked).

The query structure (offsets, grouping by query id, padding masks) is planned on the host for
every input. Grades and scores are read where they are: in host memory, or in the memory of a
backend that holds them (a :class:`~fastndcg._contract.DeviceBackend`), through the
:class:`~fastndcg._contract.Columns` of that memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from fastndcg._contract import (
    PRESUMED_GRADES,
    Backend,
    Columns,
    ColumnStats,
    DeviceBackend,
    GradeCheckingBackend,
    Layout,
    capable,
    readonly,
)
from fastndcg._core.coerce import (
    HostColumns,
    as_array,
    as_grade_vector,
    cell_words,
    check_offsets,
    checked_stats,
    dense_mask,
    input_row,
    reject_masked,
    reject_table,
)
from fastndcg._core.grouping import Judgments, group_rows
from fastndcg._errors import InputError, OptionError, nonfinite_error

__all__ = [
    "Layout",
    "align_ideal",
    "build_layout",
    "check_grades",
    "check_scores",
    "finish_layout",
]


def columns_for(backend: Backend, *inputs: Any) -> Columns:
    """The columns ``inputs`` live in: the backend's own memory when it holds one, else host."""
    if capable(backend, DeviceBackend) and any(x is not None and backend.holds(x) for x in inputs):
        return backend.columns()
    return HostColumns(backend)


def check_scores(layout: Layout, backend: Backend) -> Layout:
    """``layout`` with its scores known finite; an InputError names the first that is not.

    "First" is in input order, as when the scores are checked before rows are grouped.
    """
    if layout.scores_checked or layout.scores is None:
        return layout
    if backend.column_stats(layout.scores, integral=False).first_nonfinite < 0:
        return replace(layout, scores_checked=True)
    scores = _columns(layout, backend).host(layout.scores)  # rare: the row is found on the host
    bad = np.flatnonzero(~np.isfinite(scores))  # rare: the first bad score in input order
    if bad.size:
        rows = bad if layout.row_order is None else layout.row_order[bad]
        first = int(np.argmin(rows))
        value, row = scores[bad[first]], layout.where(int(rows[first]))
        raise nonfinite_error(layout.names[1], value, row)
    return replace(layout, scores_checked=True)


def check_grades(layout: Layout, backend: Backend) -> Layout:
    """``layout`` with its grades scanned: an InputError names the first that cannot be scored.

    For a layout whose float grades were left to the backend's kernel
    (``Layout.grades_checked``); the others come back as they are.
    """
    if layout.grades_checked:
        return layout
    stats = _columns(layout, backend).checked(layout.grades, layout.names[0], layout.where)
    return replace(layout, grade_stats=stats, grades_checked=True)


def _columns(layout: Layout, backend: Backend) -> Columns:
    return layout.columns if layout.columns is not None else HostColumns(backend)


def build_layout(
    grades: Any,
    scores: Any = None,
    *,
    qid: Any = None,
    offsets: Any = None,
    mask: Any = None,
    backend: Backend,
) -> Layout:
    """Build the CSR layout from flat or dense input (see :func:`fastndcg.ndcg`).

    ``backend`` runs the validation scans; grades and scores it holds in its own memory are
    read there (:func:`columns_for`).
    """
    reject_masked(grades, "grades")
    reject_masked(scores, "scores")
    reject_table(grades, "grades")
    columns = columns_for(backend, grades, scores)

    def array(values: Any, name: str) -> Any:
        held = capable(backend, DeviceBackend) and backend.holds(values)
        return columns.array(values if held else as_array(values, name), name)

    grades_in = array(grades, "grades")
    if grades_in.ndim == 2:
        if qid is not None or offsets is not None:
            raise InputError(
                "qid and offsets describe flat 1-D input",
                fix="dense 2-D input has one query per row (use `mask=` for padding)",
            )
        score_in = None if scores is None else array(scores, "scores")
        return _from_dense(grades_in, score_in, mask, columns, backend)
    if mask is not None:
        raise InputError(
            "mask is for dense 2-D input",
            fix="flat 1-D input is split with `qid=` or `offsets=`",
        )
    if grades_in.ndim != 1:
        got, value = f"shape {tuple(grades_in.shape)}", tuple(grades_in.shape)
        if grades_in.ndim == 0:  # a number, or an iterator NumPy does not read
            got = f"one {type(grades).__name__}; pass a list or an array (list(...) of an iterator)"
            value = type(grades).__name__
        raise InputError(
            "grades must be 1-D (flat, with `qid=` or `offsets=`) or 2-D (one query per row)",
            value=value,
            fix=f"got {got}",
        )
    grade_vec = columns.grades(grades_in, "grades", input_row)
    score_vec = (
        None if scores is None else columns.scores(array(scores, "scores"), "scores", input_row)
    )
    n = grade_vec.size
    if score_vec is not None and (score_vec.ndim != 1 or score_vec.size != n):
        raise InputError(
            "grades and scores must have the same length",
            fix=f"got {n} grades and {score_vec.size} scores",
        )
    if qid is not None and offsets is not None:
        raise InputError("pass `qid=` or `offsets=`, not both")
    row_order = None
    device_offsets = None
    if offsets is not None:
        offs = check_offsets(columns.host(offsets), n, "offsets")
        query_ids = np.arange(offs.size - 1, dtype=np.int64)
        device_offsets = columns.kernel_offsets(offsets)
    elif qid is not None:
        offs, query_ids, row_order = group_rows(columns.host(qid), n, "qid", backend)
    else:  # one query holding every row (no query at all when there are no rows)
        offs = np.array([0, n] if n else [0], dtype=np.int64)
        query_ids = np.arange(offs.size - 1, dtype=np.int64)
    return finish_layout(
        offs,
        grade_vec,
        score_vec,
        query_ids,
        input_row,
        backend,
        row_order,
        columns=columns,
        device_offsets=device_offsets,
    )


def finish_layout(
    offsets: np.ndarray,
    grades: np.ndarray,
    scores: np.ndarray | None,
    query_ids: np.ndarray,
    where: Callable[[int], str],
    backend: Backend,
    row_order: np.ndarray | None = None,
    names: tuple[str, str] = ("grades", "scores"),
    *,
    columns: Columns | None = None,
    device_offsets: Any = None,
) -> Layout:
    """Validate grades and scores, then build the layout (rows moved into ``row_order``).

    ``where(row)`` words an input row for error messages, ``names`` the grades and scores.
    A backend that checks scores as it reads them (``backend.checks_scores``) is left to do so
    (``Layout.scores_checked``), and one that checks grades as it counts them the float grades
    of rows that stay in place (``Layout.grades_checked``). ``columns`` holds the grades and
    scores (None: host memory).
    """
    columns = HostColumns(backend) if columns is None else columns
    # float grades are a pass over the column to scan (a fifth of a float64 call): where rows
    # stay in place, a backend that checks grades as it counts them is left to do so
    presumed = (
        row_order is None
        and isinstance(columns, HostColumns)
        and capable(backend, GradeCheckingBackend)
        and isinstance(grades, np.ndarray)
        and grades.dtype.kind == "f"
    )
    grade_stats = PRESUMED_GRADES if presumed else columns.checked(grades, names[0], where)
    if scores is not None and not backend.checks_scores:
        columns.checked(scores, names[1], where, integral=False)
    if row_order is not None:
        grades = columns.take(grades, row_order)
        scores = None if scores is None else columns.take(scores, row_order)
    return Layout(
        readonly(offsets),
        readonly(grades),
        None if scores is None else readonly(scores),
        query_ids,
        grade_stats,
        row_order,
        scores_checked=not backend.checks_scores,
        where=where,
        names=names,
        device_offsets=device_offsets,
        columns=columns,
        grades_checked=not presumed,
    )


def _from_dense(grades: Any, scores: Any, mask: Any, columns: Columns, backend: Backend) -> Layout:
    n_queries, width = grades.shape
    cell = cell_words(width)
    columns.numeric(grades, "grades", cell)
    if scores is not None:
        if tuple(scores.shape) != tuple(grades.shape):
            raise InputError(
                "scores must have the same shape as grades",
                value=tuple(scores.shape),
                fix=f"grades {tuple(grades.shape)}, scores {tuple(scores.shape)}",
                joiner=": ",
            )
        columns.numeric(scores, "scores", cell)
    if mask is None:
        keep = None
        offs = np.arange(n_queries + 1, dtype=np.int64) * width
    else:
        keep = dense_mask(columns.host(mask), (n_queries, width))
        offs = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum(keep.sum(axis=1), out=offs[1:])

    def where(row: int) -> str:
        return cell(row if keep is None else int(np.flatnonzero(keep.reshape(-1))[row]))

    grade_vec = columns.grades(columns.flatten(grades, keep), "grades", where)
    score_vec = (
        None if scores is None else columns.scores(columns.flatten(scores, keep), "scores", where)
    )
    query_ids = np.arange(n_queries, dtype=np.int64)
    return finish_layout(offs, grade_vec, score_vec, query_ids, where, backend, columns=columns)


def align_ideal(
    layout: Layout, ideal_grades: Any, ideal_qid: Any, ideal_offsets: Any, backend: Backend
) -> tuple[np.ndarray, np.ndarray, ColumnStats]:
    """Judgment lists for ``ideal="global"``, as a CSR aligned with ``layout``'s queries.

    Returns ``(offsets, grades, stats)`` where query ``q`` of ``layout`` owns ideal rows
    ``offsets[q]:offsets[q+1]``; a query without judgments gets an empty list.
    """
    if ideal_grades is None:
        raise OptionError(
            "`ideal='global'` needs the judgment lists",
            option="ideal",
            value="global",
            fix="pass `ideal_grades=` with `ideal_qid=` or `ideal_offsets=`",
            joiner=": ",
        )
    if (ideal_qid is None) == (ideal_offsets is None):
        raise OptionError(
            "`ideal='global'` needs exactly one of `ideal_qid=` (judgment rows matched to queries "
            "by id) or `ideal_offsets=` (one judgment list per query, in query order)",
            option="ideal",
            value="global",
        )
    host = _columns(layout, backend).host  # judgment lists are aligned on the host
    ideal_grades, ideal_qid, ideal_offsets = (
        host(ideal_grades),
        host(ideal_qid),
        host(ideal_offsets),
    )
    if ideal_qid is not None:
        return Judgments.build(ideal_grades, ideal_qid, backend).for_queries(layout.query_ids)
    grades = as_grade_vector(ideal_grades, "ideal_grades")
    stats = checked_stats(grades, "ideal_grades", lambda r: f"row {r}", backend)
    offs = check_offsets(ideal_offsets, grades.size, "ideal_offsets")
    if offs.size != layout.offsets.size:
        raise InputError(
            f"ideal_offsets describes {offs.size - 1} judgment lists but there are "
            f"{layout.n_queries} queries",
            fix="give one list per query (empty ones allowed)",
        )
    return readonly(offs), readonly(grades), stats
