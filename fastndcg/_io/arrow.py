"""Columns out of Arrow tables, record batches, streams and DataFrames, without needless copies.

A numeric column without nulls held in one chunk becomes a read-only NumPy view of the Arrow
buffer; only multi-chunk columns (concatenated), booleans (bit-packed in Arrow) and
non-numeric query ids (dictionary-encoded) are copied, once. The layout then converts, once, a
column whose type the kernels do not read (see :mod:`fastndcg._core.coerce`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastndcg._contract import Backend
from fastndcg._core.coerce import as_grade_vector, as_score_vector
from fastndcg._core.grouping import group_codes, group_rows
from fastndcg._core.layout import Layout, finish_layout
from fastndcg._errors import ColumnNotFoundError, InputError, InputTypeError, OptionTypeError

# Arrow's take has no kernel for view types: their values are handled as the large types
VIEW_TYPES = {pa.string_view(): pa.large_string(), pa.binary_view(): pa.large_binary()}


def as_arrow(data: Any) -> pa.Table | pa.RecordBatch:
    """An Arrow table or record batch holding ``data``.

    Accepts ``pyarrow.Table``, ``RecordBatch``, ``RecordBatchReader``, pandas and polars
    DataFrames, and any object with the Arrow PyCapsule interface (``__arrow_c_stream__`` or
    ``__arrow_c_array__``).
    """
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return data
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if type(data).__module__.startswith("pyarrow") or _is_pandas_series(data):
        raise _not_a_table(data)
    if _is_pandas(data):
        # named index levels are columns too (after df.set_index("qid")), unless a column
        # has the same name
        named = {str(name) for name in data.index.names if name is not None}
        keep_index = bool(named) and not named & {str(c) for c in data.columns}
        try:
            return pa.Table.from_pandas(data, preserve_index=keep_index)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise InputTypeError(
                f"the DataFrame cannot be read as Arrow columns ({exc})",
                fix="convert the columns to plain numeric or string dtypes first, e.g. "
                "df[col].astype(float)",
            ) from exc
    try:
        if hasattr(data, "__arrow_c_stream__"):
            return pa.RecordBatchReader.from_stream(data).read_all()
        if hasattr(data, "__arrow_c_array__"):
            return pa.record_batch(data)
    except pa.ArrowInvalid as exc:  # a single column (e.g. a polars Series), not a table
        raise _not_a_table(data) from exc
    raise _not_a_table(data)


def _not_a_table(data: Any) -> InputTypeError:
    kind = type(data).__name__
    if kind.endswith("Dataset"):
        advice = "pass a dataset to fastndcg.ndcg_parquet, which reads it batch by batch"
    else:
        advice = "pass a table of named columns, or the arrays themselves to fastndcg.ndcg"
    return InputTypeError(
        "expected a pyarrow Table, RecordBatch or RecordBatchReader, a pandas or polars "
        f"DataFrame, or an object with the Arrow PyCapsule stream interface; got {kind}",
        fix=advice,
        joiner=": ",
    )


def _is_pandas(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "columns")


def _is_pandas_series(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "pandas" and not hasattr(data, "columns")


def column(data: pa.Table | pa.RecordBatch, name: str, role: str) -> pa.ChunkedArray | pa.Array:
    """Column ``name`` of ``data``; a missing column is an error listing those that exist.

    A column without rows typed null (as a CSV file with only a header reads) is an empty
    float64 column: it holds no value of the wrong type.
    """
    if not isinstance(name, str):
        raise OptionTypeError(
            f"`{role}=` must be a column name (str)", option=role, value=name, fix=f"got {name!r}"
        )
    names = data.schema.names
    if name not in names:
        raise ColumnNotFoundError(
            f"column {name!r} (the {role} column) not found; the table has columns: "
            f"{', '.join(names)}",
            option=role,
            value=name,
            fix=f"Pass `{role}='<column name>'`",
            joiner=". ",
        )
    values = data.column(name)
    if pa.types.is_null(values.type) and len(values) == 0:
        return pa.array([], type=pa.float64())
    return values


def _first_null(values: pa.ChunkedArray | pa.Array) -> int:
    mask = values.is_null()
    return int(pc.index(mask, True).as_py())


def numeric_column(
    values: pa.ChunkedArray | pa.Array, name: str, role: str, base_row: int = 0
) -> np.ndarray:
    """A numeric column as a NumPy array: a zero-copy view when Arrow's layout allows it."""
    kind = values.type
    if pa.types.is_dictionary(kind):
        values = values.cast(kind.value_type)
        kind = values.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)):
        raise InputTypeError(
            f"column {name!r} ({role}) must be numeric; it has Arrow type {kind}",
            value=kind,
            where=f"column {name!r}",
            fix="Cast it first, e.g. table.set_column(...) with pyarrow.compute.cast",
            joiner=". ",
        )
    if values.null_count:
        row = base_row + _first_null(values)
        raise InputError(
            f"column {name!r} ({role}) has a null at row {row}",
            value=None,
            where=f"row {row}",
            fix="fill or drop the nulls first (e.g. table.drop_null())",
        )
    if isinstance(values, pa.ChunkedArray):
        values = values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    if pa.types.is_boolean(kind):
        return values.to_numpy(zero_copy_only=False).view(np.uint8)
    return values.to_numpy(zero_copy_only=True)


def plain_dictionary(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """A dictionary-encoded query-id column in a form that may be grouped by its codes.

    Grouping by code is right only when each id has one code and every value is a valid id.
    A dictionary holding a null, a value twice, or floats (NaN, and -0.0 equal to 0.0) is
    therefore decoded, and its values are checked like any other column's. View value types
    become the large types. Other columns are returned as they are.
    """
    if not pa.types.is_dictionary(values.type):
        return values
    value_type = values.type.value_type
    plain_type = VIEW_TYPES.get(value_type, value_type)
    chunked = isinstance(values, pa.ChunkedArray)
    decode = pa.types.is_floating(value_type)
    chunks = []
    for chunk in values.chunks if chunked else [values]:
        dictionary = chunk.dictionary.cast(plain_type)
        decode |= dictionary.null_count > 0
        decode |= pc.count_distinct(dictionary).as_py() < len(dictionary)
        chunks.append(pa.DictionaryArray.from_arrays(chunk.indices, dictionary))
    if decode:
        chunks = [chunk.dictionary_decode() for chunk in chunks]
    if not chunked:
        return chunks[0]
    kind = plain_type if decode else pa.dictionary(values.type.index_type, plain_type)
    return pa.chunked_array(chunks, type=kind)


def value_names(grade: str, score: str | None) -> tuple[str, str]:
    """How error messages name a table's grades and scores: by their columns."""
    return f"column {grade!r}", f"column {score!r}"


def check_id_column(values: pa.ChunkedArray | pa.Array, name: str, base_row: int = 0) -> None:
    """A query-id column must have no nulls and hold plain values (not lists or structs)."""
    if values.null_count:
        row = base_row + _first_null(values)
        raise InputError(
            f"column {name!r} (qid) has a null at row {row}",
            value=None,
            where=f"row {row}",
            fix="every row needs a query id",
        )
    kind = values.type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_nested(kind) or pa.types.is_null(kind):
        raise InputTypeError(
            f"column {name!r} (qid) must hold integers, floats, strings or bytes; it has Arrow "
            f"type {values.type}",
            value=values.type,
            where=f"column {name!r}",
            fix="Cast it first, e.g. table.set_column(...) with pyarrow.compute.cast",
            joiner=". ",
        )


def group_column(
    values: pa.ChunkedArray | pa.Array, name: str, backend: Backend
) -> tuple[np.ndarray, Any, np.ndarray | None]:
    """Group rows by the query-id column: ``(offsets, query_ids, row_order)``.

    Numeric ids in one chunk are read in place; strings and dictionaries are encoded once.
    """
    values = plain_dictionary(values)
    check_id_column(values, name)
    kind = values.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        ids = numeric_column(values, name, "qid")
        return group_rows(ids, ids.size, f"column {name!r}", backend)
    if isinstance(values, pa.ChunkedArray) and not pa.types.is_dictionary(kind):
        encoded = pc.dictionary_encode(values)
        if encoded.num_chunks == 0:
            return np.zeros(1, dtype=np.int64), np.empty(0, dtype=object), None
        codes = np.concatenate([chunk.indices.to_numpy() for chunk in encoded.chunks])
        return group_codes(codes.astype(np.int64), encoded.chunk(0).dictionary)
    if isinstance(values, pa.ChunkedArray):
        values = values.unify_dictionaries().combine_chunks()
    if not pa.types.is_dictionary(values.type):
        values = pc.dictionary_encode(values)
    return _first_appearance_groups(values)


def _first_appearance_groups(
    encoded: pa.DictionaryArray,
) -> tuple[np.ndarray, Any, np.ndarray | None]:
    """Renumber dictionary codes by first appearance, then group."""
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    if codes.size == 0:
        return np.zeros(1, dtype=np.int64), encoded.dictionary[:0], None
    used, first = np.unique(codes, return_index=True)
    order = np.argsort(first, kind="stable")
    renumber = np.empty(len(encoded.dictionary), dtype=np.int64)
    renumber[used[order]] = np.arange(used.size)
    return group_codes(renumber[codes], encoded.dictionary.take(pa.array(used[order])))


def ids_to_numpy(ids: Any) -> np.ndarray:
    """Query ids as a NumPy array (Arrow arrays of strings become object arrays)."""
    if isinstance(ids, (pa.Array, pa.ChunkedArray)):
        return ids.to_numpy(zero_copy_only=False)
    return np.asarray(ids)


def table_layout(
    data: Any, qid: str | None, grade: str, score: str | None, backend: Backend
) -> Layout:
    """The CSR layout of an Arrow table or record batch (views of its buffers where possible)."""
    names = value_names(grade, score)
    grades = as_grade_vector(numeric_column(column(data, grade, "grade"), grade, "grade"), names[0])
    scores = None
    if score is not None:
        scores = as_score_vector(
            numeric_column(column(data, score, "score"), score, "score"), names[1]
        )
    if qid is None:
        n = grades.size
        offsets = np.array([0, n] if n else [0], dtype=np.int64)
        ids, order = np.arange(offsets.size - 1), None
    else:
        offsets, ids, order = group_column(column(data, qid, "qid"), qid, backend)
    return finish_layout(
        offsets, grades, scores, ids_to_numpy(ids), lambda r: f"row {r}", backend, order, names
    )
