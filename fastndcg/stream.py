"""Score query-contiguous Arrow record batches as they arrive, carrying split queries over.

The engine-free streaming primitive behind :func:`fastndcg.ndcg_parquet` and the distributed
adapters. Feed record batches whose rows are grouped by query (a query may continue across any
number of batch boundaries); every call returns the per-query results of the queries it
completed, and :meth:`StreamScorer.finish` flushes the last one. Per-query values are identical
to scoring the whole input at once with :func:`fastndcg.ndcg`.

Examples
--------
>>> import pyarrow as pa
>>> from fastndcg.stream import StreamScorer
>>> scorer = StreamScorer(k=2)
>>> batch = pa.record_batch({"qid": [1, 1, 2], "grade": [2, 0, 1], "score": [.9, .1, .5]})
>>> first = scorer.feed(batch)
>>> first.column("query_id").to_pylist()  # query 2 may continue in the next batch
[1]
>>> last = scorer.feed(pa.record_batch({"qid": [2], "grade": [3], "score": [.8]}))
>>> scorer.finish().column("query_id").to_pylist()
[2]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastndcg._contract import Backend
from fastndcg._core.coerce import as_grade_vector, as_score_vector
from fastndcg._core.definition import Definition
from fastndcg._core.grouping import Judgments, id_family, plain_float_ids
from fastndcg._core.layout import finish_layout
from fastndcg._core.options import OPTIONS, STREAM, data_options, parse, split_options
from fastndcg._core.options.model import EVALUATE_PARQUET, check_column_name
from fastndcg._core.vocabulary import plain
from fastndcg._errors import COMMAND, PYTHON, InputError, InputTypeError, OptionError
from fastndcg._evaluate import Measuring
from fastndcg._io.arrow import (
    VIEW_TYPES,
    as_arrow,
    check_id_column,
    column,
    numeric_column,
    plain_dictionary,
    value_names,
)
from fastndcg._result import MeasuresResult, NDCGResult, cutoff_label

# the way out when the input is not grouped by query, in Python and on the command line
GROUP_IN_MEMORY = "group it in memory (ndcg_table, or ndcg_parquet(..., group='memory'))"
GROUP_IN_MEMORY_COMMAND = "group it in memory (--group memory)"


def _sort_or_group(sort: str) -> dict[str, str]:
    """The fix of input not grouped by query: ``sort`` it, or group it in memory."""
    return {
        PYTHON: f"{sort}, or {GROUP_IN_MEMORY}",
        COMMAND: f"{sort}, or {GROUP_IN_MEMORY_COMMAND}",
    }


def stream_columns(qid: Any, grade: Any, score: Any) -> tuple[str, str, str | None]:
    """The column names a stream is read by, checked by the option table.

    The table's ``qid=None`` (the whole table is one query) is for tables grouped in memory: a
    stream needs the query id column.
    """
    return check_column_name("qid")(qid), parse("grade", grade), parse("score", score)


@dataclass
class _Carry:
    """The last, possibly incomplete, query of the batches seen so far."""

    query_id: Any
    grades: np.ndarray
    scores: np.ndarray | None
    first_row: int  # stream position of its first row


class StreamScorer:
    """Per-query NDCG (or other measures) of a stream of record batches grouped by query.

    Parameters
    ----------
    qid, grade, score : str
        Column names; ``score=None`` means rows are already in ranked order.
    measures : str, Measure or list of them, optional
        The measures beside NDCG by name (``["P@10", "AP", "nDCG@10"]``, as
        :func:`fastndcg.evaluate` takes them): each result batch then has one column per measure
        instead of NDCG, DCG and IDCG per cutoff, and :meth:`collect` gives a
        :class:`~fastndcg.MeasuresResult`. With them, ``relevance_level`` and ``preset`` (a
        tool's definitions) are taken as :func:`fastndcg.evaluate` takes them; ``k`` is not (name
        ``nDCG@k``), nor are judgment lists or ``ties="random"`` (they need every row in memory:
        :func:`fastndcg.evaluate_table`).
    **options
        The options of :func:`fastndcg.ndcg`. ``ideal="max"`` needs an explicit ``max_grade``
        (the largest grade is unknown until the end) and ``ideal="global"`` takes its judgments
        as ``ideal_grades`` with ``ideal_qid``. Per-query ``weights`` are not accepted: aggregate
        the per-query output instead.
    """

    def __init__(
        self, *, qid: str = "qid", grade: str = "grade", score: str | None = "score", **options: Any
    ) -> None:
        self.columns = stream_columns(qid, grade, score)
        self.measuring = None
        if options.get("measures") is not None:
            options, self.measuring = _measuring(options, ranked=score is None)
        ours, data = split_options(options, "StreamScorer()", data_options(STREAM))
        for name in ("measures", "relevance_level"):
            if data.pop(name, None) is not None:
                raise OptionError(
                    f"`{name}` goes with the measures beside NDCG",
                    option=name,
                    value=options[name],
                    fix="name them with `measures=`, or leave it out",
                )
        self.definition = Definition.create(**ours)
        self.definition.check_tie_keys(known=False)
        if self.measuring is not None:
            self._check_measures(data)
        if self.definition.ideal == "max" and self.definition.max_grade is None:
            raise OptionError(
                "`ideal='max'` needs `max_grade=` when streaming: the largest grade of the data "
                "is not known until the last batch",
                option="max_grade",
                value=None,
            )
        self._judgments = None
        if self.definition.ideal == "global":
            if data.get("ideal_grades") is None or data.get("ideal_qid") is None:
                raise OptionError(
                    "`ideal='global'` needs the judgment lists when streaming",
                    option="ideal_grades" if data.get("ideal_grades") is None else "ideal_qid",
                    value=None,
                    fix="pass `ideal_grades=` with `ideal_qid=`",
                    joiner=": ",
                )
            self._judgments = Judgments.build(
                data["ideal_grades"], data["ideal_qid"], self.definition.backend
            )
        elif data:
            self.definition.check_ideal_inputs(**data)
        self._names = value_names(grade, score)
        self._carry: _Carry | None = None
        self._rows = 0
        self._scored_ids: list[pa.Array] = []  # one id per query scored: grouping is checked
        self._qid_type: pa.DataType | None = None

    def _check_measures(self, data: dict[str, Any]) -> None:
        """Refuse what the measures cannot take batch by batch."""
        if self.definition.ideal == "global" or any(v is not None for v in data.values()):
            raise OptionError(
                "the measures take every judgment of a query from its rows when streaming: "
                "judgment lists (`ideal='global'`) need the rows in memory",
                option="ideal",
                value=self.definition.ideal,
                fix="use fastndcg.evaluate_table, or evaluate_parquet(..., group='memory')",
            )
        if self.definition.ties == "random" and not self.ranked:
            raise OptionError(
                "`ties='random'` keys every tie on the row's place in the whole input, which the "
                "measures of a stream do not know",
                option="ties",
                value="random",
                fix="use `ties='average'` (the expected value over random orders, where the "
                "measure has one) or `ties='stable'`, or score the rows in memory "
                "(fastndcg.evaluate_table)",
            )

    # -- public ------------------------------------------------------------------------------

    def feed(self, batch: Any) -> pa.RecordBatch:
        """Score the queries ``batch`` completes; return their per-query results.

        ``batch`` is a record batch or table (or anything :func:`fastndcg.ndcg_table` takes).
        """
        data = as_arrow(batch)
        batches = data.to_batches() if isinstance(data, pa.Table) else [data]
        return self._concat([self._feed_batch(b) for b in batches])

    @property
    def ranked(self) -> bool:
        """True when rows come in ranked order (no score column)."""
        return self.columns[2] is None

    def finish(self) -> pa.RecordBatch:
        """Score the query carried over from the last batch (if any) and return its results.

        Raises an InputError (a ValueError) when a query id was scored twice: its rows came in
        separate places of the stream (not grouped by query), so each piece was scored as a
        query. The scorer is then ready for a new stream, as if new (rows are counted from 0
        again).
        """
        carry, self._carry = self._carry, None
        last = self.empty()
        if carry is not None:
            with self.definition.threads():
                last = self._score_carry(carry)
        self._rows = 0
        self._qid_type = None
        scored, self._scored_ids = self._scored_ids, []
        if scored:
            _require_grouped(pa.chunked_array(scored))
        return last

    def collect(self, results: Iterable[pa.RecordBatch]) -> NDCGResult | MeasuresResult:
        """Aggregate this scorer's per-query result batches (see :func:`collect`).

        With ``measures``: a :class:`~fastndcg.MeasuresResult`, the one
        :func:`fastndcg.evaluate` gives for the same rows.
        """
        if self.measuring is None:
            return collect(results, self.definition, ranked=self.ranked)
        table = _grouped_results(results)
        names = self.measuring.names
        if table is None:
            ids, per_query = np.zeros(0, dtype=np.int64), np.zeros((0, len(names)))
        else:
            ids = table.column("query_id").to_numpy()
            per_query = np.column_stack([table.column(name).to_numpy() for name in names])
        return self.measuring.result(per_query, ids, self.definition, ranked=self.ranked)

    def empty(self) -> pa.RecordBatch:
        """A result batch with no rows (the output schema)."""
        ids = pa.array([], type=self._qid_type or pa.int64())
        if self.measuring is not None:
            values = np.zeros((0, len(self.measuring.measures)))
            return self._measure_results(ids, np.zeros(0, dtype=np.int64), values)
        none = np.zeros((0, len(self.definition.cutoffs)))
        return self._results(ids, np.zeros(0, dtype=np.int64), none, none, none)

    # -- internals ---------------------------------------------------------------------------

    def _feed_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        qid_name, grade_name, score_name = self.columns
        n = batch.num_rows
        base = self._rows
        self._rows += n
        if n == 0:
            return self.empty()
        ids = _plain_ids(column(batch, qid_name, "qid"), qid_name, base)
        if self._qid_type is None:
            self._qid_type = ids.type
        elif ids.type != self._qid_type:
            ids = self._same_qid_type(ids, base)
        grades = as_grade_vector(
            numeric_column(column(batch, grade_name, "grade"), grade_name, "grade", base),
            self._names[0],
            lambda r: f"row {base + r}",
        )
        scores = None
        if score_name is not None:
            raw = column(batch, score_name, "score")
            scores = as_score_vector(
                numeric_column(raw, score_name, "score", base),
                self._names[1],
                lambda r: f"row {base + r}",
            )
        bounds = _run_bounds(ids, self.definition.backend)
        run_ids = ids.take(pa.array(bounds[:-1]))
        if not _distinct(run_ids):
            repeated = _first_repeat(run_ids)
            raise InputError(
                f"query {repeated!r} appears in separate runs of rows within rows {base}.."
                f"{base + n - 1}: the input is not grouped by query",
                value=repeated,
                where=f"rows {base}..{base + n - 1}",
                fix=_sort_or_group(f"Sort it by {qid_name!r}"),
                joiner=". ",
            )
        out = []
        first_run = 0
        with self.definition.threads():
            if self._carry is not None:
                carry, self._carry = self._carry, None
                if run_ids[0].as_py() == carry.query_id:
                    stop = int(bounds[1])
                    carry = _Carry(
                        carry.query_id,
                        np.concatenate([carry.grades, grades[:stop]]),
                        None if scores is None else np.concatenate([carry.scores, scores[:stop]]),
                        carry.first_row,
                    )
                    first_run = 1
                    if bounds.size == 2:  # the query goes on into the next batch
                        self._carry = carry
                        return self.empty()
                out.append(self._score_carry(carry))
            last = int(bounds[-2])
            start = int(bounds[first_run])
            if last > start:
                offsets = bounds[first_run:-1] - start
                out.append(
                    self._score(
                        run_ids[first_run:-1],
                        offsets,
                        grades[start:last],
                        None if scores is None else scores[start:last],
                        base + start,
                    )
                )
        self._carry = _Carry(
            run_ids[-1].as_py(),
            grades[last:].copy(),
            None if scores is None else scores[last:].copy(),
            base + last,
        )
        return self._concat(out)

    def _same_qid_type(self, ids: pa.Array, base: int) -> pa.Array:
        """``ids`` in the first batch's query id type when both are integers, strings or bytes.

        Integers are cast when they fit; strings and bytes of the other offset width (files
        from different writers differ so) when their data fits.
        """
        first = self._qid_type
        family = id_family(ids.type)
        if family in ("integer", "text", "bytes") and family == id_family(first):
            try:
                return ids.cast(first)
            except pa.ArrowInvalid:
                pass  # a value that does not fit: refused below
        raise InputTypeError(
            f"query ids change type at row {base}: {ids.type} after {first} in the batches before",
            value=ids.type,
            where=f"row {base}",
            fix="give every batch the same qid type (cast the column first)",
        )

    def _concat(self, pieces: list[pa.RecordBatch]) -> pa.RecordBatch:
        pieces = [p for p in pieces if p.num_rows]
        if not pieces:
            return self.empty()
        if len(pieces) == 1:
            return pieces[0]
        return pa.Table.from_batches(pieces).combine_chunks().to_batches()[0]

    def _score_carry(self, carry: _Carry) -> pa.RecordBatch:
        ids = pa.array([carry.query_id], type=self._qid_type)
        offsets = np.array([0, carry.grades.size], dtype=np.int64)
        return self._score(ids, offsets, carry.grades, carry.scores, carry.first_row)

    def _score(self, ids: pa.Array, offsets, grades, scores, first_row: int) -> pa.RecordBatch:
        self._scored_ids.append(ids)
        query_ids = ids.to_numpy(zero_copy_only=False)
        layout = finish_layout(
            offsets,
            grades,
            scores,
            query_ids,
            lambda r: f"row {first_row + r}",
            self.definition.backend,
            names=self._names,
        )
        if self.measuring is not None:
            values = self.measuring.of_layout(self.definition, layout)
            return self._measure_results(ids, np.diff(offsets), values)
        dcg, idcg = self.definition.score(layout, judgments=self._judgments, row_base=first_row)
        ndcg = self.definition.per_query(query_ids, dcg, idcg)
        return self._results(ids, np.diff(offsets), ndcg, dcg, idcg)

    def _results(self, ids: pa.Array, n_items, ndcg, dcg, idcg) -> pa.RecordBatch:
        """Per-query results: ids, row counts, then NDCG, DCG and IDCG of every cutoff."""
        arrays = [ids, pa.array(n_items)]
        names = ["query_id", "n_items"]
        for j, k in enumerate(self.definition.cutoffs):
            for measure, values in (("ndcg", ndcg), ("dcg", dcg), ("idcg", idcg)):
                arrays.append(pa.array(values[:, j]))
                names.append(f"{measure}{cutoff_label(k)}")
        return pa.record_batch(arrays, names=names)

    def _measure_results(self, ids: pa.Array, n_items, values: np.ndarray) -> pa.RecordBatch:
        """Per-query results of the measures: ids, row counts, then one column per measure."""
        assert self.measuring is not None
        arrays = [ids, pa.array(n_items), *(pa.array(values[:, j]) for j in range(values.shape[1]))]
        return pa.record_batch(arrays, names=["query_id", "n_items", *self.measuring.names])


def _measuring(options: dict[str, Any], ranked: bool) -> tuple[dict[str, Any], Measuring]:
    """The options of a stream of the measures, and its :class:`Measuring` (checked now)."""
    options = dict(options)
    measures = options.pop("measures")
    level = options.pop("relevance_level", OPTIONS["relevance_level"].default)
    preset = options.pop("preset", None)
    return Measuring.create(EVALUATE_PARQUET, preset, options, measures, level, ranked=ranked)


def _plain_ids(ids: pa.Array, name: str, base: int) -> pa.Array:
    """The batch's query ids, checked, with dictionaries decoded.

    Float ids are taken as :func:`fastndcg.ndcg` takes them: no NaN, and -0.0 is query 0.0.
    """
    ids = plain_dictionary(ids)
    check_id_column(ids, name, base)
    if pa.types.is_dictionary(ids.type):
        ids = ids.dictionary_decode()
    if ids.type in VIEW_TYPES:
        ids = ids.cast(VIEW_TYPES[ids.type])
    if pa.types.is_floating(ids.type):
        values = ids.to_numpy(zero_copy_only=False)
        plain = plain_float_ids(values, f"column {name!r} (qid)", lambda r: f"row {base + r}")
        if plain is not values:
            ids = pa.array(plain)
    return ids


def _run_bounds(ids: pa.Array, backend: Backend) -> np.ndarray:
    """Start of every run of equal consecutive ids, and the row count at the end."""
    kind = ids.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return backend.run_bounds(ids.to_numpy(zero_copy_only=False))
    changed = pc.not_equal(ids[1:], ids[:-1]).to_numpy(zero_copy_only=False)
    inner = np.flatnonzero(changed) + 1
    return np.concatenate(([0], inner, [len(ids)])).astype(np.int64)


def _distinct(ids: pa.Array | pa.ChunkedArray) -> bool:
    """Whether no id occurs twice (ids without nulls).

    Numeric ids in increasing order are distinct without hashing: checking a million takes
    about 2 ms, hashing them about 100 ms.
    """
    if pa.types.is_integer(ids.type) or pa.types.is_floating(ids.type):
        values = ids.to_numpy()
        if values.size < 2 or bool(np.all(values[1:] > values[:-1])):
            return True
    return pc.count_distinct(ids).as_py() == len(ids)


def _require_grouped(ids: pa.ChunkedArray) -> None:
    """Raise if a query id occurs twice among the ids of scored queries."""
    if not _distinct(ids):
        counts = pc.value_counts(ids)
        repeated = counts.filter(pc.greater(counts.field("counts"), 1))[0]["values"].as_py()
        raise InputError(
            f"query {plain(repeated)!r} appears in separate places of the input: it is not "
            "grouped by query, so streaming scores that query in pieces",
            value=plain(repeated),
            where=f"query {plain(repeated)!r}",
            fix=_sort_or_group("Sort the input by query id"),
            joiner=". ",
        )


def _first_repeat(ids: pa.Array) -> Any:
    seen = set()
    for value in ids.to_pylist():
        if value in seen:
            return value
        seen.add(value)
    return None


def score_batches(batches: Iterable[Any], **options: Any) -> Iterator[pa.RecordBatch]:
    """Per-query results of a stream of query-grouped batches (see :class:`StreamScorer`).

    Yields one result batch per input batch that completed at least one query, then the last
    query. Options are those of :class:`StreamScorer`.
    """
    scorer = StreamScorer(**options)
    for batch in batches:
        out = scorer.feed(batch)
        if out.num_rows:
            yield out
    last = scorer.finish()
    if last.num_rows:
        yield last


def _grouped_results(results: Iterable[pa.RecordBatch]) -> pa.Table | None:
    """Per-query result batches as one table (None without a row), each query id once.

    Raises an InputError (a ValueError) when a query id occurs twice (the input was not grouped
    by query).
    """
    # batches without rows carry nothing, and their query-id type may predate the stream's
    batches = [batch for batch in results if batch.num_rows]
    if not batches:
        return None
    table = pa.Table.from_batches(batches)
    _require_grouped(table.column("query_id"))
    return table


def collect(
    results: Iterable[pa.RecordBatch], definition: Definition, ranked: bool = False
) -> NDCGResult:
    """Aggregate per-query result batches into an :class:`NDCGResult`.

    Raises an InputError (a ValueError) when a query id occurs twice (the input was not grouped
    by query).
    """
    table = _grouped_results(results)
    if table is None:
        empty = np.zeros((0, len(definition.cutoffs)))
        return definition.finish(np.zeros(0, dtype=np.int64), empty, empty.copy(), ranked=ranked)
    ids = table.column("query_id")
    dcg = np.column_stack(
        [table.column(f"dcg{cutoff_label(k)}").to_numpy() for k in definition.cutoffs]
    )
    idcg = np.column_stack(
        [table.column(f"idcg{cutoff_label(k)}").to_numpy() for k in definition.cutoffs]
    )
    return definition.finish(ids.to_numpy(), dcg, idcg, ranked=ranked)
