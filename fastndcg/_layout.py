"""Build the CSR layout every backend works on, and check the arrays that go into it.

All queries live in one layout: ``offsets`` (int64, ``n_queries + 1`` entries, starting at 0 and
ending at the number of rows) over flat ``grades`` and ``scores``. Query ``q`` owns rows
``offsets[q]:offsets[q+1]``. Builders accept flat arrays with ``qid`` or ``offsets``, or dense
2-D arrays with an optional padding ``mask``.

dtype policy: grades stay in their own dtype when it is one the kernels read directly (float64,
float32, int64, int32, int16, int8, uint8; bool is viewed as uint8), scores when float64 or
float32; anything else is converted once here. Offsets are int64. Arrays that need no conversion
are not copied, and nothing the caller passed is ever written to. A CPU torch tensor is read in
place as well (detached when it requires grad); a bfloat16 one is widened to float32.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fastndcg._scan import GRADE_DTYPES, SCORE_DTYPES, ColumnStats, column_stats, readonly

_BLOCK = 1 << 20  # rows per block where NumPy needs a temporary per row
# query id dtypes the run-bound kernel reads (native byte order); others are compared by NumPy
_RUN_DTYPES = tuple(
    np.dtype(t) for t in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8")
)


def _input_row(row: int) -> str:
    return f"row {row}"


@dataclass(frozen=True)
class Layout:
    """Queries in CSR form.

    Attributes
    ----------
    offsets : ndarray of int64, shape (n_queries + 1,)
        Query ``q`` owns rows ``offsets[q]:offsets[q + 1]``.
    grades : ndarray
        Relevance grade of every row (one of the kernel dtypes).
    scores : ndarray of float64 or float32, or None
        Model score of every row; None when rows are already in ranked order.
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
    """

    offsets: np.ndarray
    grades: np.ndarray
    scores: np.ndarray | None
    query_ids: np.ndarray
    grade_stats: ColumnStats
    row_order: np.ndarray | None = None
    scores_checked: bool = True
    where: Callable[[int], str] = _input_row
    names: tuple[str, str] = ("grades", "scores")

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.offsets.size - 1

    @property
    def n_rows(self) -> int:
        """Number of rows (items) over all queries."""
        return self.grades.size

    def input_row(self, row: int) -> int:
        """Input row that became layout row ``row`` (for error messages)."""
        return int(row if self.row_order is None else self.row_order[row])

    def query_of_row(self, row: int) -> Any:
        """Query id of layout row ``row``."""
        query = self.query_ids[int(np.searchsorted(self.offsets, row, side="right")) - 1]
        return query.item() if isinstance(query, np.generic) else query


def reject_masked(values: Any, name: str) -> None:
    """A numpy masked array is an error: its mask would be lost on the way to the kernels."""
    if isinstance(values, np.ma.MaskedArray):
        raise TypeError(
            f"{name} is a numpy masked array, whose mask would be ignored; drop the masked "
            f"rows first ({name}.compressed()), or pass dense 2-D input with mask="
        )


# tables, which fastndcg.ndcg would read as a matrix of grades, one query per row
_TABLES = {("pyarrow", "Table"), ("pyarrow", "RecordBatch"), ("pandas", "DataFrame")}


def reject_table(values: Any, name: str) -> None:
    """A table passed as grades is an error: its rows would be taken as queries."""
    kind = (type(values).__module__.split(".")[0], type(values).__name__)
    if kind in _TABLES:
        raise TypeError(
            f"{name} is a {'.'.join(kind)}, whose rows would be read as queries (a matrix of "
            "grades). Score a table of (query, grade, score) rows with "
            "fastndcg.ndcg_table(table, qid=..., grade=..., score=...); pass a matrix of "
            "grades as a numpy array"
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
        raise TypeError(
            f"{name} is a torch tensor on {values.device}, which NumPy cannot read; "
            f"pass {name}.cpu()"
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
        raise ValueError(
            f"{name} holds lists of different lengths, which make no array; pass them flat "
            "(1-D) with qid= or offsets=, or padded to a 2-D array with mask="
        ) from exc


def numeric_vector(values: Any, name: str, where: Callable[[int], str] = _input_row) -> np.ndarray:
    """``values`` as a 1-D array of bool, int or float; a clear error otherwise.

    A None among them is named as ``where(r)``, for entry ``r``.
    """
    array = as_array(values, name)
    if array.dtype == object and array.ndim == 1:
        missing = next((row for row, value in enumerate(array) if value is None), None)
        if missing is not None:
            raise ValueError(
                f"{name} has a missing value (None) at {where(missing)}; drop or fill it first"
            )
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be numeric (bool, int or float); got dtype {array.dtype}. "
            f"Convert it first, e.g. {name}.astype(float)"
        )
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional here; got shape {array.shape}")
    return array


def as_grade_vector(values: Any, name: str, where: Callable[[int], str] = _input_row) -> np.ndarray:
    """1-D contiguous grades in a kernel dtype, converting (copying) only when needed.

    Errors name entry ``r`` of ``values`` as ``where(r)``.
    """
    array = numeric_vector(values, name, where)
    if array.dtype == np.bool_:
        array = np.ascontiguousarray(array).view(np.uint8)
    elif array.dtype not in GRADE_DTYPES:
        target = {"u": np.int64, "i": np.int64}.get(array.dtype.kind, np.float64)
        if array.dtype == np.uint64 or array.dtype.itemsize > 8:
            target = np.float64
            if array.size:
                _check_exact_in_float64(array, name, where, "gains are computed in")
        array = array.astype(target)
    return np.ascontiguousarray(array)


def as_score_vector(values: Any, name: str, where: Callable[[int], str] = _input_row) -> np.ndarray:
    """1-D contiguous scores as float64 or float32, converting (copying) only when needed.

    Errors name entry ``r`` of ``values`` as ``where(r)``.
    """
    array = numeric_vector(values, name, where)
    if (array.dtype.kind in "iu" or array.dtype.itemsize > 8) and array.size:
        _check_exact_in_float64(array, name, where, "scores are ranked in", ties=True)
    if array.dtype not in SCORE_DTYPES:
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
        raise ValueError(
            f"{name} has {array[row]!s} at {where(row)}, {beyond}: float64 (the precision {use}) "
            f"rounds it{' and neighbours can tie' if ties else ''}; rescale them, or "
            f"convert {name} to float64 to accept the rounding"
        )


def checked_stats(
    values: np.ndarray, name: str, where: Any, use_numba: bool, integral: bool = True
) -> ColumnStats:
    """Scan ``values`` once; raise a ValueError naming the first entry that cannot be scored.

    That is a NaN or infinite value, or an integer that float64 cannot hold (beyond 2**53).

    ``integral=False``: do not look for non-integral values (see :func:`column_stats`).
    """
    stats = column_stats(values, use_numba, integral)
    bad = stats.first_nonfinite
    if bad >= 0:
        raise _nonfinite_error(name, values[bad], where(bad))
    if values.dtype.kind in "iu" and max(-stats.low, stats.high) >= 2**53:  # (rounded) extremes
        _check_exact_in_float64(values, name, where, "gains are computed in")
    return stats


def _nonfinite_error(name: str, value: float, where: str) -> ValueError:
    nan = bool(np.isnan(value))
    return ValueError(
        f"{name} has {'a NaN' if nan else 'an infinite'} value at {where}; {name} must be finite: "
        f"drop or fill those rows first{' (a null or missing value reads as NaN)' if nan else ''}"
    )


def check_scores(layout: Layout) -> Layout:
    """``layout`` with its scores known finite; a ValueError names the first that is not.

    "First" is in input order, as when the scores are checked before rows are grouped.
    """
    if layout.scores_checked or layout.scores is None:
        return layout
    if column_stats(layout.scores, use_numba=True, integral=False).first_nonfinite < 0:
        return replace(layout, scores_checked=True)
    bad = np.flatnonzero(~np.isfinite(layout.scores))  # rare: the first bad score in input order
    if bad.size:
        rows = bad if layout.row_order is None else layout.row_order[bad]
        first = int(np.argmin(rows))
        value, row = layout.scores[bad[first]], layout.where(int(rows[first]))
        raise _nonfinite_error(layout.names[1], value, row)
    return replace(layout, scores_checked=True)


def build_layout(
    grades: Any,
    scores: Any = None,
    *,
    qid: Any = None,
    offsets: Any = None,
    mask: Any = None,
    use_numba: bool = False,
) -> Layout:
    """Build the CSR layout from flat or dense input (see :func:`fastndcg.ndcg`).

    ``use_numba`` runs the validation scan as a compiled kernel (threaded for long columns).
    """
    reject_masked(grades, "grades")
    reject_masked(scores, "scores")
    reject_table(grades, "grades")
    grades_in = as_array(grades, "grades")
    if grades_in.ndim == 2:
        if qid is not None or offsets is not None:
            raise ValueError(
                "qid and offsets describe flat 1-D input; dense 2-D input has one query per "
                "row (use mask= for padding)"
            )
        return _from_dense(grades_in, scores, mask, use_numba)
    if mask is not None:
        raise ValueError(
            "mask is for dense 2-D input; flat 1-D input is split with qid= or offsets="
        )
    if grades_in.ndim != 1:
        got = f"shape {grades_in.shape}"
        if grades_in.ndim == 0:  # a number, or an iterator NumPy does not read
            got = f"one {type(grades).__name__}; pass a list or an array (list(...) of an iterator)"
        raise ValueError(
            "grades must be 1-D (flat, with qid= or offsets=) or 2-D (one query per row); "
            f"got {got}"
        )
    grade_vec = as_grade_vector(grades_in, "grades")
    score_vec = None if scores is None else as_score_vector(scores, "scores")
    n = grade_vec.size
    if score_vec is not None and score_vec.size != n:
        raise ValueError(
            f"grades and scores must have the same length; got {n} grades and "
            f"{score_vec.size} scores"
        )
    if qid is not None and offsets is not None:
        raise ValueError("pass qid= or offsets=, not both")
    row_order = None
    if offsets is not None:
        offs = check_offsets(offsets, n, "offsets")
        query_ids = np.arange(offs.size - 1, dtype=np.int64)
    elif qid is not None:
        offs, query_ids, row_order = group_rows(qid, n, "qid", use_numba)
    else:  # one query holding every row (no query at all when there are no rows)
        offs = np.array([0, n] if n else [0], dtype=np.int64)
        query_ids = np.arange(offs.size - 1, dtype=np.int64)
    return finish_layout(
        offs, grade_vec, score_vec, query_ids, lambda r: f"row {r}", use_numba, row_order
    )


def finish_layout(
    offsets: np.ndarray,
    grades: np.ndarray,
    scores: np.ndarray | None,
    query_ids: np.ndarray,
    where: Any,
    use_numba: bool,
    row_order: np.ndarray | None = None,
    names: tuple[str, str] = ("grades", "scores"),
) -> Layout:
    """Validate grades and scores, then build the layout (rows moved into ``row_order``).

    ``where(row)`` words an input row for error messages, ``names`` the grades and scores.
    With ``use_numba`` the scores are left to the kernel, which checks them as it reads them
    (``Layout.scores_checked``).
    """
    grade_stats = checked_stats(grades, names[0], where, use_numba)
    if scores is not None and not use_numba:
        checked_stats(scores, names[1], where, use_numba, integral=False)
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
        scores_checked=not use_numba,
        where=where,
        names=names,
    )


def _from_dense(grades: np.ndarray, scores: Any, mask: Any, use_numba: bool) -> Layout:
    n_queries, width = grades.shape
    cell = cell_words(width)
    numeric_vector(grades.reshape(-1), "grades", cell)
    score_mat = None
    if scores is not None:
        score_mat = as_array(scores, "scores")
        if score_mat.shape != grades.shape:
            raise ValueError(
                f"scores must have the same shape as grades: grades {grades.shape}, "
                f"scores {score_mat.shape}"
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
    return finish_layout(offs, grade_vec, score_vec, query_ids, where, use_numba)


def cell_words(width: int) -> Callable[[int], str]:
    """Words for entry ``cell`` of a flattened 2-D input ``width`` items wide."""

    def where(cell: int) -> str:
        q, item = divmod(cell, width)
        return f"query row {q}, item {item}"

    return where


def dense_mask(mask: Any, shape: tuple[int, ...]) -> np.ndarray:
    """The padding ``mask`` of dense input as a boolean array of ``shape`` (True = keep)."""
    if isinstance(mask, np.ma.MaskedArray):
        raise TypeError("mask must be a plain array, not a numpy masked array")
    keep = np.asarray(from_torch(mask, "mask"))
    if keep.shape != shape:
        raise ValueError(
            f"mask must have the same shape as grades: grades {shape}, mask {keep.shape}"
        )
    if keep.dtype != np.bool_:
        if keep.dtype.kind not in "iu" or not np.isin(keep, (0, 1)).all():
            raise TypeError(f"mask must be boolean (True = keep the item); got dtype {keep.dtype}")
        keep = keep.astype(bool)
    return keep


def check_offsets(offsets: Any, n_rows: int, name: str) -> np.ndarray:
    """Check that ``offsets`` is a valid CSR index over ``n_rows`` rows; return it as int64."""
    offs = np.asarray(from_torch(offsets, name))
    if offs.ndim != 1 or offs.size == 0:
        raise ValueError(
            f"{name} must be a 1-D array of n_queries + 1 row positions; got shape {offs.shape}"
        )
    if offs.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer row positions; got dtype {offs.dtype}")
    if offs.dtype == np.uint64 and offs.max() > n_rows:  # beyond int64 too, maybe
        bad = int(np.argmax(offs > n_rows))
        raise ValueError(f"{name}[{bad}]={offs[bad]} is beyond the {n_rows} rows")
    offs = np.ascontiguousarray(offs, dtype=np.int64)
    if offs[0] != 0:
        raise ValueError(f"{name} must start at 0; got {offs[0]}")
    if offs[-1] != n_rows:
        raise ValueError(
            f"{name} must end at the number of rows ({n_rows}) so that every row belongs to a "
            f"query; got {offs[-1]}"
        )
    steps = np.diff(offs)
    if steps.size and steps.min() < 0:
        bad = int(np.argmin(steps >= 0))
        raise ValueError(
            f"{name} must be non-decreasing; {name}[{bad}]={offs[bad]} > "
            f"{name}[{bad + 1}]={offs[bad + 1]}"
        )
    return offs


def group_rows(
    qid: Any, n_rows: int, name: str, use_numba: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Group rows by query id, stably, queries in order of first appearance.

    Returns ``(offsets, query_ids, row_order)``; ``row_order`` is None when every query's rows
    are already contiguous (then nothing moves and nothing is copied).
    """
    ids = _query_id_vector(qid, name)
    if ids.size != n_rows:
        raise ValueError(f"{name} must have one entry per row: {n_rows} rows, {ids.size} ids")
    if n_rows == 0:
        return np.zeros(1, dtype=np.int64), ids[:0], None
    if ids.dtype.kind in "biufUS":
        bounds = run_bounds(ids, use_numba)
        run_ids = ids[bounds[:-1]]
        if np.unique(run_ids).size == run_ids.size:
            return bounds, run_ids, None
    codes, uniques = _dictionary_encode(ids, name)
    return group_codes(codes, uniques)


def run_bounds(ids: np.ndarray, use_numba: bool) -> np.ndarray:
    """Start row of every run of equal consecutive ids, and the row count at the end.

    Temporary memory is bounded (a kernel with numba, blocks of rows without).
    """
    if use_numba and ids.dtype in _RUN_DTYPES:
        from fastndcg._kernels import run_starts

        return run_starts(readonly(np.ascontiguousarray(ids)))
    pieces = [np.zeros(1, dtype=np.int64)]
    for start in range(1, ids.size, _BLOCK):
        stop = min(start + _BLOCK, ids.size)
        changed = ids[start:stop] != ids[start - 1 : stop - 1]
        pieces.append(np.flatnonzero(changed) + start)
    pieces.append(np.array([ids.size], dtype=np.int64))
    return np.concatenate(pieces).astype(np.int64)


def group_codes(codes: np.ndarray, uniques: Any) -> tuple[np.ndarray, Any, np.ndarray | None]:
    """Offsets and row order for rows labelled by query codes ``0..len(uniques)-1``.

    Codes must number queries in order of first appearance; the grouping is stable.
    """
    counts = np.bincount(codes, minlength=len(uniques))
    offs = np.zeros(len(uniques) + 1, dtype=np.int64)
    np.cumsum(counts, out=offs[1:])
    if np.all(codes[1:] >= codes[:-1]):
        return offs, uniques, None
    return offs, uniques, np.argsort(codes, kind="stable").astype(np.int64)


def _query_id_vector(qid: Any, name: str) -> np.ndarray:
    ids = np.asarray(from_torch(qid, name))
    if ids.dtype.kind in "US" and isinstance(qid, (list, tuple)):
        _require_one_id_type(qid, str if ids.dtype.kind == "U" else bytes, name)
    if ids.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {ids.shape}")
    if ids.dtype.kind not in "biufUSO":
        raise TypeError(f"{name} must hold integers, floats, strings or bytes; got {ids.dtype}")
    if ids.dtype.kind in "iuf" and not ids.dtype.isnative:
        ids = ids.astype(ids.dtype.newbyteorder("="))
    if ids.dtype.kind == "f":
        ids = plain_float_ids(ids, name, lambda r: f"row {r}")
    return ids


def _require_one_id_type(ids: list | tuple, kind: type, name: str) -> None:
    """Every id of a list that NumPy made ``kind`` (str or bytes) strings of must be ``kind``.

    NumPy turns mixed ids into one string type: 1 and '1', or b'a' and 'a', would be one query.
    """
    for row, value in enumerate(ids):
        if not isinstance(value, kind):
            raise TypeError(
                f"{name} mixes id types: row {row} holds {type(value).__name__} {value!r} "
                f"among {kind.__name__} ids, and NumPy would make strings of all of them (so 1 "
                "and '1' would be one query); give every id the same type"
            )


def plain_float_ids(ids: np.ndarray, name: str, where: Callable[[int], str]) -> np.ndarray:
    """Float query ids as float32 or float64, without NaN, with -0.0 as 0.0.

    -0.0 and 0.0 are one query, as Python and NumPy compare them (Arrow's hashing would tell
    them apart). float16 ids widen exactly; wider floats must be float64 values.
    """
    if ids.dtype == np.float16:
        ids = ids.astype(np.float32)
    elif ids.dtype.itemsize > 8:
        narrow = ids.astype(np.float64)
        if not np.array_equal(narrow, ids, equal_nan=True):
            raise TypeError(
                f"{name} holds {ids.dtype} values that float64 cannot tell apart; pass the ids "
                "as integers or strings"
            )
        ids = narrow
    bad = np.flatnonzero(np.isnan(ids))
    if bad.size:
        raise ValueError(f"{name} has a NaN at {where(int(bad[0]))}; every row needs a query id")
    negative_zero = (ids == 0) & np.signbit(ids)
    if negative_zero.any():
        ids = np.where(negative_zero, ids.dtype.type(0), ids)
    return ids


def _dictionary_encode(ids: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes 0..n_unique-1 in order of first appearance, and the unique ids in that order."""
    import pyarrow as pa

    try:
        encoded = pa.array(ids, from_pandas=True).dictionary_encode()  # NaN: missing, as None
    except OverflowError as exc:
        raise TypeError(
            f"{name} holds integers that do not fit in 64 bits ({exc}); pass such ids as strings"
        ) from exc
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise TypeError(
            f"{name} must hold values of one type (integers, floats, strings or bytes): {exc}"
        ) from exc
    if encoded.null_count:
        bad = int(np.flatnonzero(encoded.is_null().to_numpy(zero_copy_only=False))[0])
        raise ValueError(f"{name} has a missing value at row {bad}; every row needs a query id")
    codes = encoded.indices.to_numpy().astype(np.int64)
    uniques = encoded.dictionary.to_numpy(zero_copy_only=False)
    return codes, uniques


@dataclass(frozen=True)
class Judgments:
    """Judgment lists grouped by query id, ready to be aligned with any set of queries."""

    offsets: np.ndarray
    query_ids: np.ndarray
    grades: np.ndarray
    stats: ColumnStats

    @classmethod
    def build(cls, grades: Any, qid: Any, use_numba: bool = False) -> Judgments:
        """Check and group judgment rows (``grades`` with their query ids ``qid``)."""
        values = as_grade_vector(grades, "ideal_grades")
        stats = checked_stats(values, "ideal_grades", lambda r: f"row {r}", use_numba)
        offs, ids, order = group_rows(qid, values.size, "ideal_qid", use_numba)
        if order is not None:
            values = values[order]
        return cls(offs, ids, values, stats)

    def for_queries(self, query_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, ColumnStats]:
        """Judgments aligned with ``query_ids``: ``(offsets, grades, stats)``.

        Query ``q`` owns judgment rows ``offsets[q]:offsets[q+1]``; a query without judgments
        gets an empty list.
        """
        if self.query_ids.size == 0:  # no judgment at all: every list is empty
            empty = np.zeros(len(query_ids) + 1, dtype=np.int64)
            return readonly(empty), readonly(self.grades), self.stats
        where = _positions_of(query_ids, self.query_ids)
        found = where >= 0
        starts = np.where(found, self.offsets[np.maximum(where, 0)], 0)
        lengths = np.where(found, self.offsets[np.maximum(where, 0) + 1] - starts, 0)
        aligned = np.zeros(where.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=aligned[1:])
        gather = np.repeat(starts - aligned[:-1], lengths) + np.arange(aligned[-1])
        grades = np.ascontiguousarray(self.grades[gather])
        return readonly(aligned), readonly(grades), self.stats


def align_ideal(
    layout: Layout, ideal_grades: Any, ideal_qid: Any, ideal_offsets: Any, use_numba: bool = False
) -> tuple[np.ndarray, np.ndarray, ColumnStats]:
    """Judgment lists for ``ideal="global"``, as a CSR aligned with ``layout``'s queries.

    Returns ``(offsets, grades, stats)`` where query ``q`` of ``layout`` owns ideal rows
    ``offsets[q]:offsets[q+1]``; a query without judgments gets an empty list.
    """
    if ideal_grades is None:
        raise ValueError(
            "ideal='global' needs the judgment lists: pass ideal_grades= with ideal_qid= or "
            "ideal_offsets="
        )
    if (ideal_qid is None) == (ideal_offsets is None):
        raise ValueError(
            "ideal='global' needs exactly one of ideal_qid= (judgment rows matched to queries "
            "by id) or ideal_offsets= (one judgment list per query, in query order)"
        )
    if ideal_qid is not None:
        return Judgments.build(ideal_grades, ideal_qid, use_numba).for_queries(layout.query_ids)
    grades = as_grade_vector(ideal_grades, "ideal_grades")
    stats = checked_stats(grades, "ideal_grades", lambda r: f"row {r}", use_numba)
    offs = check_offsets(ideal_offsets, grades.size, "ideal_offsets")
    if offs.size != layout.offsets.size:
        raise ValueError(
            f"ideal_offsets describes {offs.size - 1} judgment lists but there are "
            f"{layout.n_queries} queries; give one list per query (empty ones allowed)"
        )
    return readonly(offs), readonly(grades), stats


def _id_kind(kind: Any) -> str:
    """Arrow types whose values may equal each other: numbers, text, bytes (others: own)."""
    import pyarrow as pa

    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return "number"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "text"
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return "bytes"
    return str(kind)


def _positions_of(needles: np.ndarray, haystack: np.ndarray) -> np.ndarray:
    """Position of every needle in haystack, -1 where absent (haystack values are unique)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids, judged = pa.array(needles), pa.array(haystack)
    if len(ids) and len(judged) and _id_kind(ids.type) != _id_kind(judged.type):
        raise TypeError(
            f"ideal_qid holds {judged.type} values and the query ids are {ids.type}: they would "
            "only match after a conversion; give both the same type"
        )
    try:
        found = pc.index_in(ids, value_set=judged)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise TypeError(
            f"ideal_qid values cannot be matched to the query ids (different types?): {exc}"
        ) from exc
    return found.fill_null(-1).to_numpy().astype(np.int64)
