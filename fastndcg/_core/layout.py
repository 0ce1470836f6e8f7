"""The CSR layout every backend works on, and how flat or dense inputs become one.

All queries live in one layout: ``offsets`` (int64, ``n_queries + 1`` entries, starting at 0 and
ending at the number of rows) over flat ``grades`` and ``scores``. Query ``q`` owns rows
``offsets[q]:offsets[q+1]``. Builders accept flat arrays with ``qid`` or ``offsets``, or dense
2-D arrays with an optional padding ``mask`` (see :mod:`fastndcg._core.coerce` for how values
are read and checked).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fastndcg._backends import Backend
from fastndcg._backends.abi import ColumnStats, on_cuda_device, readonly
from fastndcg._core.coerce import (
    as_array,
    as_grade_vector,
    as_score_vector,
    cell_words,
    check_offsets,
    checked_stats,
    dense_mask,
    input_row,
    nonfinite_error,
    numeric_vector,
    reject_masked,
    reject_table,
)
from fastndcg._core.device import device_layout, on_device, reads_device
from fastndcg._core.grouping import Judgments, group_rows
from fastndcg._core.vocabulary import plain
from fastndcg._errors import InputError, OptionError


@dataclass(frozen=True)
class Layout:
    """Queries in CSR form.

    Attributes
    ----------
    offsets : ndarray of int64, shape (n_queries + 1,)
        Query ``q`` owns rows ``offsets[q]:offsets[q + 1]`` (always on the host).
    grades : ndarray
        Relevance grade of every row (one of the kernel dtypes); a device array for inputs in
        GPU memory (:mod:`fastndcg._core.device`).
    scores : ndarray of float64 or float32, or None
        Model score of every row (on the device with the grades); None when rows are already
        in ranked order.
    query_ids : ndarray
        Identifier of every query, in layout order.
    grade_stats : ColumnStats
        Range and integrality of the grades (from the validation pass).
    row_order : ndarray of int64 or None
        ``row_order[r]`` is the input row that became layout row ``r``; None when no rows moved.
    scores_checked : bool
        False while the scores may still hold a NaN or an infinite value: the Numba kernel
        checks them as it reads them, and :func:`check_scores` then names the first one.
    where : callable
        Words an input row for error messages.
    names : tuple of str
        How error messages name the grades and the scores (a table's column names).
    device_offsets : device array or None
        The same offsets in device memory, where they were given there as contiguous int64: the
        CUDA backend reads them in place instead of copying ``offsets`` back.
    """

    offsets: np.ndarray
    grades: np.ndarray
    scores: np.ndarray | None
    query_ids: np.ndarray
    grade_stats: ColumnStats
    row_order: np.ndarray | None = None
    scores_checked: bool = True
    where: Callable[[int], str] = input_row
    names: tuple[str, str] = ("grades", "scores")
    device_offsets: Any = None

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.offsets.size - 1

    def input_row(self, row: int) -> int:
        """Input row that became layout row ``row`` (for error messages)."""
        return int(row if self.row_order is None else self.row_order[row])

    def query_of_row(self, row: int) -> Any:
        """Query id of layout row ``row``."""
        return plain(self.query_ids[int(np.searchsorted(self.offsets, row, side="right")) - 1])


def check_scores(layout: Layout, backend: Backend) -> Layout:
    """``layout`` with its scores known finite; an InputError names the first that is not.

    "First" is in input order, as when the scores are checked before rows are grouped.
    """
    if layout.scores_checked or layout.scores is None:
        return layout
    if backend.column_stats(layout.scores, integral=False).first_nonfinite < 0:
        return replace(layout, scores_checked=True)
    scores = layout.scores
    if on_cuda_device(scores):  # rare: the error names a row, found on the host
        scores = backend.to_host(scores)
    bad = np.flatnonzero(~np.isfinite(scores))  # rare: the first bad score in input order
    if bad.size:
        rows = bad if layout.row_order is None else layout.row_order[bad]
        first = int(np.argmin(rows))
        value, row = scores[bad[first]], layout.where(int(rows[first]))
        raise nonfinite_error(layout.names[1], value, row)
    return replace(layout, scores_checked=True)


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

    ``backend`` runs the validation scans. A backend that reads device memory takes inputs
    on the device as they are (:func:`fastndcg._core.device.device_layout`).
    """
    reject_masked(grades, "grades")
    reject_masked(scores, "scores")
    reject_table(grades, "grades")
    if reads_device(backend) and (on_device(grades) or on_device(scores)):
        return device_layout(grades, scores, qid=qid, offsets=offsets, mask=mask, backend=backend)
    grades_in = as_array(grades, "grades")
    if grades_in.ndim == 2:
        if qid is not None or offsets is not None:
            raise InputError(
                "qid and offsets describe flat 1-D input",
                fix="dense 2-D input has one query per row (use `mask=` for padding)",
            )
        return _from_dense(grades_in, scores, mask, backend)
    if mask is not None:
        raise InputError(
            "mask is for dense 2-D input",
            fix="flat 1-D input is split with `qid=` or `offsets=`",
        )
    if grades_in.ndim != 1:
        got, value = f"shape {grades_in.shape}", grades_in.shape
        if grades_in.ndim == 0:  # a number, or an iterator NumPy does not read
            got = f"one {type(grades).__name__}; pass a list or an array (list(...) of an iterator)"
            value = type(grades).__name__
        raise InputError(
            "grades must be 1-D (flat, with `qid=` or `offsets=`) or 2-D (one query per row)",
            value=value,
            fix=f"got {got}",
        )
    grade_vec = as_grade_vector(grades_in, "grades")
    score_vec = None if scores is None else as_score_vector(scores, "scores")
    n = grade_vec.size
    if score_vec is not None and score_vec.size != n:
        raise InputError(
            "grades and scores must have the same length",
            fix=f"got {n} grades and {score_vec.size} scores",
        )
    if qid is not None and offsets is not None:
        raise InputError("pass `qid=` or `offsets=`, not both")
    row_order = None
    if offsets is not None:
        offs = check_offsets(offsets, n, "offsets")
        query_ids = np.arange(offs.size - 1, dtype=np.int64)
    elif qid is not None:
        offs, query_ids, row_order = group_rows(qid, n, "qid", backend)
    else:  # one query holding every row (no query at all when there are no rows)
        offs = np.array([0, n] if n else [0], dtype=np.int64)
        query_ids = np.arange(offs.size - 1, dtype=np.int64)
    return finish_layout(
        offs, grade_vec, score_vec, query_ids, lambda r: f"row {r}", backend, row_order
    )


def finish_layout(
    offsets: np.ndarray,
    grades: np.ndarray,
    scores: np.ndarray | None,
    query_ids: np.ndarray,
    where: Any,
    backend: Backend,
    row_order: np.ndarray | None = None,
    names: tuple[str, str] = ("grades", "scores"),
) -> Layout:
    """Validate grades and scores, then build the layout (rows moved into ``row_order``).

    ``where(row)`` words an input row for error messages, ``names`` the grades and scores.
    A backend that checks scores as it reads them (``backend.checks_scores``) is left to do so
    (``Layout.scores_checked``).
    """
    grade_stats = checked_stats(grades, names[0], where, backend)
    if scores is not None and not backend.checks_scores:
        checked_stats(scores, names[1], where, backend, integral=False)
    if row_order is not None:
        grades = grades[row_order]
        scores = None if scores is None else scores[row_order]
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
    )


def _from_dense(grades: np.ndarray, scores: Any, mask: Any, backend: Backend) -> Layout:
    n_queries, width = grades.shape
    cell = cell_words(width)
    numeric_vector(grades.reshape(-1), "grades", cell)
    score_mat = None
    if scores is not None:
        score_mat = as_array(scores, "scores")
        if score_mat.shape != grades.shape:
            raise InputError(
                "scores must have the same shape as grades",
                value=score_mat.shape,
                fix=f"grades {grades.shape}, scores {score_mat.shape}",
                joiner=": ",
            )
        numeric_vector(score_mat.reshape(-1), "scores", cell)
    if mask is None:
        keep = None
        offs = np.arange(n_queries + 1, dtype=np.int64) * width
    else:
        keep = dense_mask(mask, grades.shape)
        offs = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum(keep.sum(axis=1), out=offs[1:])

    def flat(matrix: np.ndarray) -> np.ndarray:
        return matrix.reshape(-1) if keep is None else matrix[keep]

    def where(row: int) -> str:
        return cell(row if keep is None else int(np.flatnonzero(keep.reshape(-1))[row]))

    grade_vec = as_grade_vector(flat(grades), "grades", where)
    score_vec = None if score_mat is None else as_score_vector(flat(score_mat), "scores", where)
    query_ids = np.arange(n_queries, dtype=np.int64)
    return finish_layout(offs, grade_vec, score_vec, query_ids, where, backend)


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
    if on_device(ideal_grades):  # judgment lists are aligned on the host
        ideal_grades = backend.to_host(ideal_grades)
    if on_device(ideal_qid):
        ideal_qid = backend.to_host(ideal_qid)
    if on_device(ideal_offsets):
        ideal_offsets = backend.to_host(ideal_offsets)
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
