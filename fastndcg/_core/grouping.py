"""Group rows into queries by their ids, and align judgment lists with queries.

Queries keep their order of first appearance and rows their order within a query (a stable
grouping); when every query's rows are already contiguous nothing moves and nothing is copied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._contract import Backend, ColumnStats, readonly
from fastndcg._core.coerce import as_grade_vector, checked_stats, from_torch
from fastndcg._errors import InputError, InputTypeError


def group_rows(
    qid: Any, n_rows: int, name: str, backend: Backend
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Group rows by query id, stably, queries in order of first appearance.

    Returns ``(offsets, query_ids, row_order)``; ``row_order`` is None when every query's rows
    are already contiguous (then nothing moves and nothing is copied).
    """
    ids = _query_id_vector(qid, name)
    if ids.size != n_rows:
        raise InputError(
            f"{name} must have one entry per row",
            fix=f"{n_rows} rows, {ids.size} ids",
            joiner=": ",
        )
    if n_rows == 0:
        return np.zeros(1, dtype=np.int64), ids[:0], None
    if ids.dtype.kind not in "biufUS":
        return group_codes(*_dictionary_encode(ids, name))
    # the rows in runs of one id: the ids of the runs say whether each query is one run
    bounds = backend.run_bounds(ids)
    run_ids = ids[bounds[:-1]]
    if np.all(run_ids[1:] > run_ids[:-1]):  # sorted ids: no id can repeat
        return bounds, run_ids, None
    many_runs = 2 * run_ids.size > n_rows  # runs of about a row: encode the rows' ids at once
    codes, uniques = _dictionary_encode(ids if many_runs else run_ids, name)
    if len(uniques) == run_ids.size:  # no id in two runs
        return bounds, run_ids, None
    return group_codes(codes if many_runs else np.repeat(codes, np.diff(bounds)), uniques)


def group_codes(codes: np.ndarray, uniques: Any) -> tuple[np.ndarray, Any, np.ndarray | None]:
    """Offsets and row order for rows labelled by query codes ``0..len(uniques)-1``.

    Codes must number queries in order of first appearance; the grouping is stable.
    """
    counts = np.bincount(codes, minlength=len(uniques))
    offs = np.zeros(len(uniques) + 1, dtype=np.int64)
    np.cumsum(counts, out=offs[1:])
    if np.all(codes[1:] >= codes[:-1]):
        return offs, uniques, None
    return offs, uniques, _stable_order(codes, len(uniques))


def _stable_order(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """``np.argsort(codes, kind="stable")`` for codes ``0..n_codes-1``, as int64.

    In one or two passes of NumPy's radix sort over 16-bit keys (its stable sort of wider
    integers is a merge sort, 8x slower on 320,000 rows): the low 16 bits first, then, stably,
    the high ones.
    """
    if n_codes > 1 << 32:
        return np.argsort(codes, kind="stable").astype(np.int64)
    if n_codes <= 1 << 16:
        return np.argsort(codes.astype(np.uint16), kind="stable").astype(np.int64)
    order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    high = (codes[order] >> 16).astype(np.uint16)
    return order[np.argsort(high, kind="stable")].astype(np.int64)


def _query_id_vector(qid: Any, name: str) -> np.ndarray:
    ids = np.asarray(from_torch(qid, name))
    if ids.dtype.kind in "US" and isinstance(qid, (list, tuple)):
        _require_one_id_type(qid, str if ids.dtype.kind == "U" else bytes, name)
    if ids.ndim != 1:
        raise InputError(
            f"{name} must be one-dimensional", value=ids.shape, fix=f"got shape {ids.shape}"
        )
    if ids.dtype.kind not in "biufUSO":
        raise InputTypeError(
            f"{name} must hold integers, floats, strings or bytes",
            value=ids.dtype,
            fix=f"got {ids.dtype}",
        )
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
            raise InputTypeError(
                f"{name} mixes id types: row {row} holds {type(value).__name__} {value!r} "
                f"among {kind.__name__} ids, and NumPy would make strings of all of them (so 1 "
                "and '1' would be one query)",
                value=value,
                where=f"row {row}",
                fix="give every id the same type",
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
            raise InputTypeError(
                f"{name} holds {ids.dtype} values that float64 cannot tell apart",
                value=ids.dtype,
                fix="pass the ids as integers or strings",
            )
        ids = narrow
    bad = np.flatnonzero(np.isnan(ids))
    if bad.size:
        raise InputError(
            f"{name} has a NaN at {where(int(bad[0]))}",
            value=float("nan"),
            where=where(int(bad[0])),
            fix="every row needs a query id",
        )
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
        raise InputTypeError(
            f"{name} holds integers that do not fit in 64 bits ({exc})",
            fix="pass such ids as strings",
        ) from exc
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise InputTypeError(
            f"{name} must hold values of one type (integers, floats, strings or bytes): {exc}"
        ) from exc
    if encoded.null_count:
        bad = int(np.flatnonzero(encoded.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(
            f"{name} has a missing value at row {bad}",
            value=None,
            where=f"row {bad}",
            fix="every row needs a query id",
        )
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
    def build(cls, grades: Any, qid: Any, backend: Backend) -> Judgments:
        """Check and group judgment rows (``grades`` with their query ids ``qid``)."""
        values = as_grade_vector(grades, "ideal_grades")
        stats = checked_stats(values, "ideal_grades", lambda r: f"row {r}", backend)
        offs, ids, order = group_rows(qid, values.size, "ideal_qid", backend)
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
        where = _judged_positions(query_ids, self.query_ids)
        found = where >= 0
        starts = np.where(found, self.offsets[np.maximum(where, 0)], 0)
        lengths = np.where(found, self.offsets[np.maximum(where, 0) + 1] - starts, 0)
        aligned = np.zeros(where.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=aligned[1:])
        gather = np.repeat(starts - aligned[:-1], lengths) + np.arange(aligned[-1])
        grades = np.ascontiguousarray(self.grades[gather])
        return readonly(aligned), readonly(grades), self.stats


def id_family(kind: Any) -> str:
    """The family of an Arrow id type: "integer", "float", "text" or "bytes" (else the type)."""
    import pyarrow as pa

    if pa.types.is_integer(kind):
        return "integer"
    if pa.types.is_floating(kind):
        return "float"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "text"
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return "bytes"
    return str(kind)


def positions(values: Any, value_set: Any) -> np.ndarray:
    """Position of each of ``values`` in ``value_set`` (int64, -1 if absent).

    Both are Arrow arrays or anything ``pyarrow.array`` takes; ``value_set``'s values are
    distinct.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(values) == 0 or len(value_set) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values)
    if not isinstance(value_set, (pa.Array, pa.ChunkedArray)):
        value_set = pa.array(value_set)
    found = pc.index_in(values, value_set=value_set).fill_null(-1)
    return found.to_numpy(zero_copy_only=False).astype(np.int64)


def _judged_positions(needles: np.ndarray, haystack: np.ndarray) -> np.ndarray:
    """Position of every query id in the judged ids, -1 where absent (ids of one family)."""
    import pyarrow as pa

    ids, judged = pa.array(needles), pa.array(haystack)
    numbers = ("integer", "float")
    families = {id_family(ids.type), id_family(judged.type)}
    if len(ids) and len(judged) and len(families) > 1 and not families <= set(numbers):
        raise InputTypeError(
            f"ideal_qid holds {judged.type} values and the query ids are {ids.type}: they would "
            "only match after a conversion",
            value=str(judged.type),
            fix="give both the same type",
        )
    try:
        return positions(ids, judged)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise InputTypeError(
            f"ideal_qid values cannot be matched to the query ids (different types?): {exc}"
        ) from exc
