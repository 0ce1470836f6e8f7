"""What the Dask and Spark adapters share: the planning, the job every task runs, and totals.

A :class:`Job` is the checked, picklable description of one distributed computation. The client
builds it once (every option is checked there, before any task starts); each task turns it into
a :class:`~fastndcg.stream.StreamScorer` with its own thread limit and scores either a whole
partition held in memory (Dask) or a stream of Arrow batches carrying split queries over (Spark).
A :class:`Planner` is what both adapters do in the client: check a call's frame, options and
columns, and build its job; each engine's subclass then lays out the tasks. :class:`Totals` are
the per-partition sums the aggregate is made of: added in any order, they give the
single-machine mean to rounding.

Neither engine is imported here: this module is what both adapters, and the command line,
import.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastndcg._backends import resolve_backend
from fastndcg._core.aggregate import round_half_even, tool_mean
from fastndcg._core.options import SCALEOUT, data_options, option, parse, split_options
from fastndcg._core.vocabulary import ENGINES, TOOL_AGGREGATES, listed, plain
from fastndcg._errors import (
    ColumnNotFoundError,
    FastNDCGError,
    InputError,
    InputTypeError,
    OptionError,
    OptionTypeError,
)
from fastndcg._io.parquet import changed_while_read, describe, open_dataset, promised_rows
from fastndcg._presets import resolve
from fastndcg._result import cutoff_label
from fastndcg.stream import StreamScorer, stream_columns

# Tie rules whose result does not depend on the order of the rows inside a query.
ORDER_FREE_TIES = ("average", "pessimistic", "optimistic")


def _type_fault(kind: pa.DataType, role: str) -> str | None:
    """Why a column of Arrow type ``kind`` cannot be the ``role`` column (None if it can)."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if role == "qid":
        if pa.types.is_nested(kind) or pa.types.is_null(kind):
            return "query ids must be numbers or strings"
        return None
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        return None
    return f"{role}s must be numeric"


@dataclass(frozen=True)
class Job:
    """One distributed NDCG computation: column names and checked options.

    Build it with :meth:`create` in the client; tasks call :meth:`score_table` (a whole
    partition in memory) or :meth:`score_stream` (Arrow batches grouped by query).
    """

    qid: str
    grade: str
    score: str | None
    options: dict[str, Any]  # of StreamScorer, the backend resolved
    n_threads: int | None
    cutoffs: tuple[int | None, ...]
    aggregate: str  # "mean", "ratio" or a tool's rule (see fastndcg._presets)
    decimals: int | None = None  # per-query NDCG rounded to this many decimals
    measures: tuple[str, ...] = ()  # the measures' names (their columns); none: NDCG
    summaries: tuple[str, ...] = ()  # how each measure is summarised (Measuring.summary)
    gm_floor: float = 0.0  # GMAP's floor of AP
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def create(
        cls,
        *,
        qid: str,
        grade: str,
        score: str | None,
        n_threads: int | None,
        options: dict[str, Any],
        keeps_order: bool,
        order_hint: str,
        k: Any = None,
        caller: str = "StreamScorer()",
    ) -> Job:
        """Check every option now, in the client, before any task runs.

        ``options`` are those of :func:`fastndcg.ndcg` as streaming takes them, with
        ``preset=`` and ``decimals=`` resolved as :func:`fastndcg.ndcg_parquet` resolves them;
        ``k=None`` means the whole list, or the preset's cutoffs. With ``measures=`` (and
        ``relevance_level=``, ``preset=``) the job computes those measures, as
        :class:`~fastndcg.stream.StreamScorer` takes them, instead of NDCG.
        ``caller`` is the name an error for unknown options gives the function called.
        ``keeps_order`` says whether the rows of a query reach the scorer in their input order;
        when they do not, order-dependent rules (``ties="stable"``, ranked input without scores)
        are refused with ``order_hint`` as the way out. ``ties="random"`` is always refused: its
        keys come from row positions in the whole input, which a partitioned DataFrame lacks.
        """
        stream_columns(qid, grade, score)
        n_threads = parse("n_threads", n_threads)
        options = dict(options) if k is None else {**options, "k": k}  # None: a preset's k
        measuring = options.get("measures") is not None
        aggregate, decimals = "mean", None
        if not measuring:  # the measures take their preset themselves (StreamScorer)
            _, options, rules = resolve("ndcg_parquet", options.pop("preset", None), options)
            aggregate, decimals = rules.aggregate, rules.decimals
        # preset= and decimals= were taken by resolve(); named so that an error lists them
        split_options(options, caller, data_options(SCALEOUT))
        scorer = StreamScorer(qid=qid, grade=grade, score=score, **options)
        definition = scorer.definition
        if definition.ties == "random" and score is not None:
            raise OptionError(
                "`ties='random'` keys every tie on the row's position in the whole input, which "
                "a partitioned DataFrame does not define",
                option="ties",
                value="random",
                fix="use `ties='average'`, the exact expected value over random tie orders",
            )
        if not keeps_order:
            if score is None:
                raise OptionError(
                    "`score=None` means rows come in ranked order, which is lost here",
                    option="score",
                    value=None,
                    fix=f"pass the score column, or {order_hint}",
                )
            if definition.ties not in ORDER_FREE_TIES:
                raise OptionError(
                    f"`ties={definition.ties!r}` depends on the order of rows inside a query, "
                    "which is lost here",
                    option="ties",
                    value=definition.ties,
                    fix=f"use one of {listed(ORDER_FREE_TIES)}, or {order_hint}",
                )
        # workers run what the client chose
        options = {**options, "backend": definition.backend_name}
        if scorer.measuring is None:
            return cls(
                qid, grade, score, options, n_threads, definition.cutoffs, aggregate, decimals
            )
        given = scorer.measuring
        summaries = tuple(given.summary(j) for j in range(len(given.measures)))
        return cls(
            qid,
            grade,
            score,
            options,
            n_threads,
            (),
            aggregate,
            measures=given.names,
            summaries=summaries,
            gm_floor=given.rules.gm_floor,
        )

    def __dask_tokenize__(self) -> tuple[str, str]:
        # options may hold callables that Dask cannot hash deterministically
        return (type(self).__name__, self.token)

    @property
    def roles(self) -> dict[str, str | None]:
        """The column name of each role: ``qid``, ``grade`` and ``score`` (None: ranked)."""
        return {"qid": self.qid, "grade": self.grade, "score": self.score}

    @property
    def columns(self) -> list[str]:
        """The input columns a task reads, each once (one column may be grade and score)."""
        return list(dict.fromkeys(c for c in self.roles.values() if c is not None))

    def check_schema(self, schema: pa.Schema, fix: str) -> None:
        """Refuse, in the client, input columns of a type the scorer cannot read."""
        for role, name in self.roles.items():
            if name is None:
                continue
            kind = schema.field(name).type
            fault = _type_fault(kind, role)
            if fault:
                raise InputTypeError(
                    f"column {name!r} ({role}) has type {kind}, but {fault}",
                    value=kind,
                    where=f"column {name!r}",
                    fix=fix.format(name),
                )

    def scorer(self) -> StreamScorer:
        """A fresh scorer for one task, limited to ``n_threads`` threads.

        The limit is applied for each batch (never through the environment) and capped at what
        the worker's backend allows (Numba's pool size, ``NUMBA_NUM_THREADS``).
        """
        threads = self.n_threads
        if threads is not None:
            ceiling = resolve_backend(self.options["backend"]).thread_ceiling()
            threads = threads if ceiling is None else min(threads, ceiling)
        return StreamScorer(
            qid=self.qid, grade=self.grade, score=self.score, n_threads=threads, **self.options
        )

    def output_schema(self, qid_type: pa.DataType) -> pa.Schema:
        """Schema of the per-query results for query ids of Arrow type ``qid_type``."""
        if pa.types.is_dictionary(qid_type):
            qid_type = qid_type.value_type
        if self.measures:
            values = [pa.field(name, pa.float64()) for name in self.measures]
            return pa.schema([("query_id", qid_type), ("n_items", pa.int64()), *values])
        schema = StreamScorer(k=self.cutoffs, backend=self.options["backend"]).empty().schema
        return schema.set(0, pa.field("query_id", qid_type))

    def _prepared(self, data: pa.Table | pa.RecordBatch) -> pa.Table | pa.RecordBatch:
        """The task's input columns: dictionary query ids decoded, grades and scores float64.

        One dtype for grades and scores whatever the input holds, so that workers run the
        kernels ``fastndcg warmup`` compiled instead of compiling specialisations of their own
        (every grade and score is exact in float64, bar integers beyond 2**53: those columns
        stay as they are, for the scorer to refuse with the row).
        """
        data = data.select(self.columns)
        for at, name in enumerate(self.columns):
            column = data.column(at)
            if name != self.qid and column.type != pa.float64():
                try:
                    data = data.set_column(at, name, column.cast(pa.float64()))
                except pa.ArrowInvalid:
                    continue
            elif name == self.qid and pa.types.is_dictionary(column.type):
                data = data.set_column(at, name, column.cast(column.type.value_type))
        return data

    def score_table(self, table: pa.Table) -> pa.Table:
        """Per-query results of one whole partition; rows are grouped by query here if needed.

        Sorting by query id is stable, so rows keep their order inside a query.
        """
        table = self._prepared(table)
        ids = table.column(self.qid)
        if not _ascending(ids):
            table = table.take(pc.sort_indices(table, sort_keys=[(self.qid, "ascending")]))
        scorer = self.scorer()
        with _rows_of_a_partition():
            results = [scorer.feed(table), scorer.finish()]
        batches = [self._rounded(b) for b in results if b.num_rows]
        return pa.Table.from_batches(batches, schema=self.output_schema(ids.type))

    def score_stream(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Per-query results of a stream of batches grouped by query (split queries carried)."""
        scorer = self.scorer()
        for batch in batches:
            with _rows_of_a_partition():
                out = scorer.feed(self._prepared(batch))
            if out.num_rows:
                yield self._rounded(out)
        with _rows_of_a_partition():
            last = scorer.finish()
        if last.num_rows:
            yield self._rounded(last)

    def _rounded(self, results: pa.RecordBatch) -> pa.RecordBatch:
        """Per-query results with NDCG rounded to ``decimals`` (unchanged without)."""
        if self.decimals is None:
            return results
        for cut in self.cutoffs:
            name = f"ndcg{cutoff_label(cut)}"
            at = results.schema.get_field_index(name)
            values = round_half_even(results.column(at).to_numpy(), self.decimals)
            results = results.set_column(at, name, pa.array(values))
        return results

    def totals(self, results: Any) -> Totals | MeasureTotals:
        """The totals of per-query results (a pandas DataFrame or an Arrow table)."""
        if self.measures:
            return MeasureTotals.of(results, self.measures, self.summaries, self.gm_floor)
        return Totals.of(results, self.cutoffs, self.aggregate)

    def zero_totals(self) -> Totals | MeasureTotals:
        """The totals of nothing."""
        if self.measures:
            return MeasureTotals.zero(self.measures, self.summaries, self.gm_floor)
        return Totals.zero(self.cutoffs, self.aggregate)

    def totals_from_arrow(self, table: pa.Table) -> Totals | MeasureTotals:
        """The sum of ``to_batch`` rows of this job's totals (Spark's tasks send them)."""
        if self.measures:
            return MeasureTotals.from_arrow(table, self.measures, self.summaries, self.gm_floor)
        return Totals.from_arrow(table, self.cutoffs, self.aggregate)


@dataclass(frozen=True)
class Partitioning:
    """How a call gets each query into one partition.

    ``colocated``: the input has them so (checked as ``validate`` says); otherwise a shuffle on
    the query id into ``partitions`` (None: the engine's default) does.
    """

    colocated: bool
    validate: str
    partitions: int | None


class Planner:
    """The planning Dask and Spark share, done in the client before any task starts.

    :meth:`plan` takes the arguments of the engine's ``per_query`` (its ``totals`` and ``ndcg``
    take the same, with the same defaults), checks the frame, the options and the columns, and
    hands the checked job and the frame's columns to :meth:`distribute`, which lays out the
    engine's tasks. An engine subclasses it with its words (the class attributes) and the four
    methods that raise NotImplementedError here.
    """

    engine: str  # "dask" or "spark": errors name the function called fastndcg.<engine>
    frame: str  # what the engine scores, as errors name it ("a dask DataFrame")
    frame_fix: str  # how to make one
    partitions: str  # per_query's keyword for the partitions of the shuffle on qid
    shuffle: str  # the engine's word for that shuffle
    keeps_order: bool  # whether colocated partitions reach the scorer in their input order
    order_hint: str  # how to keep the input order, for the rules that need it
    cast_hint: str  # how to cast a column the scorer cannot read ({0!r}: the column's name)

    def __init__(self, per_query: Callable[..., Any]) -> None:
        self.signature = inspect.signature(per_query)

    def plan(self, frame: Any, /, **kwargs: Any) -> Any:
        """Check the call ``per_query(frame, **kwargs)``, then lay out its tasks."""
        call = self.signature.bind(frame, **kwargs)
        call.apply_defaults()
        return self.planned(frame, call.arguments)

    def planned(self, frame: Any, arguments: Mapping[str, Any]) -> Any:
        """:meth:`plan` of ``per_query``'s own arguments (its ``locals()``: ``options`` a dict)."""
        if not self.is_frame(frame):
            raise InputTypeError(
                f"expected {self.frame}; got {type(frame).__name__}",
                fix=self.frame_fix,
                joiner=". ",
            )
        validate = parse("validate", arguments["validate"])
        how = Partitioning(arguments["colocated"], validate, arguments[self.partitions])
        job = Job.create(
            **{name: arguments[name] for name in ("qid", "grade", "score", "k", "n_threads")},
            options=arguments["options"],  # per_query's **options: those of fastndcg.ndcg
            keeps_order=how.colocated and self.keeps_order,
            order_hint=self.order_hint,
            caller=f"fastndcg.{self.engine}",
        )
        names = self.column_names(frame, job)
        missing = [name for name in job.columns if name not in names]
        if missing:
            raise ColumnNotFoundError(
                f"column {missing[0]!r} not found; the DataFrame has columns: "
                f"{', '.join(map(str, names))}",
                value=missing[0],
            )
        selected, schema = self.select(frame, job)
        job.check_schema(schema, self.cast_hint)
        if how.colocated and how.partitions is not None:
            raise OptionError(
                f"{self.partitions}= sets the partitions of the {self.shuffle} on qid; "
                "`colocated=True` has none",
                option=self.partitions,
                value=how.partitions,
            )
        return self.distribute(job, selected, schema, how)

    def is_frame(self, frame: Any) -> bool:
        """Whether ``frame`` is a DataFrame of the engine."""
        raise NotImplementedError

    def column_names(self, frame: Any, job: Job) -> list[Any]:
        """The names ``frame`` offers for the job's columns, in its order."""
        raise NotImplementedError

    def select(self, frame: Any, job: Job) -> tuple[Any, pa.Schema]:
        """The job's columns of ``frame``, and their Arrow schema in the caller's names."""
        raise NotImplementedError

    def distribute(self, job: Job, selected: Any, schema: pa.Schema, how: Partitioning) -> Any:
        """The engine's tasks over the selected columns (what :meth:`plan` returns)."""
        raise NotImplementedError


PARTITION_ROWS = " (row numbers count within one partition of the data)"


@contextlib.contextmanager
def _rows_of_a_partition() -> Iterator[None]:
    """A task's errors that name a row (in ``where``) say that it is counted within a partition."""
    try:
        yield
    except FastNDCGError as exc:
        if not _names_a_row(exc):
            raise
        raise _noted(exc, PARTITION_ROWS) from exc


def _names_a_row(exc: FastNDCGError) -> bool:
    """Whether ``exc`` is about rows of the input: its ``where`` is ``row 7`` or ``rows 0..9``."""
    return isinstance(exc.where, str) and exc.where.startswith(("row ", "rows "))


def _noted(exc: FastNDCGError, note: str) -> FastNDCGError:
    """``exc`` with ``note`` at the end of its text: same class, same data.

    The note goes after the fix where there is one (the text ends as before); otherwise it
    ends the message (:meth:`FastNDCGError.extended`).
    """
    if not exc.fix:
        return exc.extended(note)
    fix = exc.fix
    if isinstance(fix, Mapping):
        fix = {front: text + note for front, text in fix.items()}
    else:
        fix = fix + note
    return type(exc)(
        exc.message, option=exc.option, value=exc.value, where=exc.where, fix=fix, joiner=exc.joiner
    )


def _ascending(ids: pa.ChunkedArray | pa.Array) -> bool:
    """True when ``ids`` never decrease (so every query's rows are contiguous)."""
    if ids.null_count:
        return False  # sorted, then refused by the scorer with the row of the null
    if len(ids) < 2:
        return True
    ahead = pc.greater_equal(ids.slice(1), ids.slice(0, len(ids) - 1))
    return bool(pc.all(ahead).as_py())


class _Additive:
    """Totals that add up across partitions, each partition's query-id range kept for a check."""

    ranges: tuple[tuple[Any, Any], ...]

    @classmethod
    def combine(cls, parts: list[Any], disjoint: bool = False) -> Any:
        """The sum of ``parts``; with ``disjoint``, first check no query spans two of them."""
        if disjoint:
            check_disjoint([(*r, i) for i, part in enumerate(parts) for r in part.ranges])
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return replace(total, ranges=())


def _id_range(ids: np.ndarray) -> tuple[tuple[Any, Any], ...]:
    """The query-id range of one partition's results (none without a query)."""
    return ((plain(ids.min()), plain(ids.max())),) if ids.size else ()


@dataclass(frozen=True)
class Totals(_Additive):
    """Sums over per-query results that add up across partitions, and the aggregate they give.

    Attributes
    ----------
    k : tuple of (int or None)
        The cutoffs.
    aggregate : str
        How :attr:`mean` is formed: ``"mean"``, ``"ratio"`` or a tool's rule (as in
        :func:`fastndcg.ndcg`).
    n_rows, n_queries : int
        Rows and queries scored.
    counted : ndarray of int64, shape (len(k),)
        Queries in the aggregate (not skipped for lack of relevant items).
    sum_ndcg, sum_dcg, sum_idcg : ndarray of float64, shape (len(k),)
        Sums over the counted queries.
    ranges : tuple of (min, max) query-id pairs
        The query-id range of one partition's results, for the co-location check of
        :meth:`combine`; sums carry none.
    """

    k: tuple[int | None, ...]
    aggregate: str
    n_rows: int
    n_queries: int
    counted: np.ndarray
    sum_ndcg: np.ndarray
    sum_dcg: np.ndarray
    sum_idcg: np.ndarray
    ranges: tuple[tuple[Any, Any], ...] = ()

    @classmethod
    def of(cls, results: Any, k: tuple[int | None, ...], aggregate: str) -> Totals:
        """Totals of per-query results with columns ``query_id``, ``n_items``, ``ndcg@k`` ..."""

        def values(name: str) -> np.ndarray:
            return np.asarray(results[name])

        ids = values("query_id")
        counted, sums = [], {"ndcg": [], "dcg": [], "idcg": []}
        for cut in k:
            ndcg = values(f"ndcg{cutoff_label(cut)}")
            kept = ~np.isnan(ndcg)
            counted.append(int(kept.sum()))
            for measure in sums:
                column = ndcg if measure == "ndcg" else values(f"{measure}{cutoff_label(cut)}")
                sums[measure].append(float(column[kept].sum()))
        return cls(
            k=tuple(k),
            aggregate=aggregate,
            n_rows=int(values("n_items").sum()),
            n_queries=int(ids.size),
            counted=np.array(counted, dtype=np.int64),
            sum_ndcg=np.array(sums["ndcg"]),
            sum_dcg=np.array(sums["dcg"]),
            sum_idcg=np.array(sums["idcg"]),
            ranges=_id_range(ids),
        )

    @classmethod
    def zero(cls, k: tuple[int | None, ...], aggregate: str) -> Totals:
        """Totals of nothing."""
        zeros = np.zeros(len(k))
        return cls(tuple(k), aggregate, 0, 0, zeros.astype(np.int64), zeros, zeros, zeros)

    def __add__(self, other: Totals) -> Totals:
        return replace(
            self,
            n_rows=self.n_rows + other.n_rows,
            n_queries=self.n_queries + other.n_queries,
            counted=self.counted + other.counted,
            sum_ndcg=self.sum_ndcg + other.sum_ndcg,
            sum_dcg=self.sum_dcg + other.sum_dcg,
            sum_idcg=self.sum_idcg + other.sum_idcg,
            ranges=(),  # a per-partition fact, consumed by combine()
        )

    @property
    def mean(self) -> np.ndarray:
        """The aggregate per cutoff (NaN where no query counts).

        Without per-query weights (streaming takes none) a tool's rule is the mean over the
        counted queries followed by the rule's own finish (a cap, 0 instead of NaN), which
        :func:`~fastndcg._core.aggregate.tool_mean` applies to that mean as to a single query.
        """
        ratio = self.aggregate == "ratio"
        numerator = self.sum_dcg if ratio else self.sum_ndcg
        denominator = self.sum_idcg if ratio else self.counted.astype(float)
        out = np.full(len(self.k), np.nan)
        np.divide(numerator, denominator, out=out, where=denominator > 0)
        if self.aggregate in TOOL_AGGREGATES:
            out = tool_mean(self.aggregate, out[None, :], np.ones((1, len(self.k))), None)
        return out

    @property
    def n_skipped(self) -> np.ndarray:
        """Queries left out of the aggregate at each cutoff (no relevant item)."""
        return self.n_queries - self.counted

    def value(self) -> float | dict[int | None, float]:
        """The aggregate: a float for one cutoff, else a dict cutoff -> float."""
        if len(self.k) == 1:
            return float(self.mean[0])
        return {cut: float(m) for cut, m in zip(self.k, self.mean, strict=True)}

    def __float__(self) -> float:
        if len(self.k) != 1:
            raise TypeError(f"float() needs one cutoff; these totals have k={self.k}")
        return float(self.mean[0])

    def to_batch(self) -> pa.RecordBatch:
        """One row: the sums, for engines that move results as Arrow (see :meth:`from_arrow`)."""
        columns = {"n_rows": [self.n_rows], "n_queries": [self.n_queries]}
        for j in range(len(self.k)):
            columns[f"counted_{j}"] = [int(self.counted[j])]
            for measure in ("ndcg", "dcg", "idcg"):
                columns[f"sum_{measure}_{j}"] = [float(getattr(self, f"sum_{measure}")[j])]
        return pa.record_batch(columns)

    @classmethod
    def arrow_schema(cls, n_cutoffs: int) -> pa.Schema:
        """Schema of :meth:`to_batch` rows."""
        return cls.zero((None,) * n_cutoffs, "mean").to_batch().schema

    @classmethod
    def from_arrow(cls, table: pa.Table, k: tuple[int | None, ...], aggregate: str) -> Totals:
        """The sum of :meth:`to_batch` rows."""
        total = cls.zero(k, aggregate)
        sums = {name: pc.sum(table.column(name)).as_py() or 0 for name in table.column_names}
        return replace(
            total,
            n_rows=int(sums["n_rows"]),
            n_queries=int(sums["n_queries"]),
            counted=np.array([sums[f"counted_{j}"] for j in range(len(k))], dtype=np.int64),
            **{
                f"sum_{m}": np.array([float(sums[f"sum_{m}_{j}"]) for j in range(len(k))])
                for m in ("ndcg", "dcg", "idcg")
            },
        )

    def __repr__(self) -> str:
        means = ", ".join(
            f"ndcg{cutoff_label(cut)}={m:.6f}" for cut, m in zip(self.k, self.mean, strict=True)
        )
        return f"Totals(n_queries={self.n_queries}, n_rows={self.n_rows}, {means})"


@dataclass(frozen=True)
class MeasureTotals(_Additive):
    """Sums over per-query values of the measures beside NDCG, and the summaries they give.

    What :func:`fastndcg.dask.totals` and :func:`fastndcg.spark.totals` give with ``measures=``:
    added in any order, they give :attr:`fastndcg.MeasuresResult.mean` of the same rows, to
    rounding.

    Attributes
    ----------
    measures : tuple of str
        The measures' names as given.
    summaries : tuple of str
        How each is summarised over the queries not skipped: ``"mean"``, ``"sum"`` (counts),
        ``"geometric"`` (GMAP of APs floored at ``gm_floor``) or ``"exp_mean"`` (GMAP of logs).
    gm_floor : float
        GMAP's floor of AP.
    n_rows, n_queries : int
        Rows and queries scored.
    counted : ndarray of int64, shape (len(measures),)
        Queries in each summary (not skipped).
    sums : ndarray of float64, shape (len(measures),)
        The sum of each measure over the counted queries (of the logs, for ``"geometric"``).
    ranges : tuple of (min, max) query-id pairs
        As for :class:`Totals`.
    """

    measures: tuple[str, ...]
    summaries: tuple[str, ...]
    gm_floor: float
    n_rows: int
    n_queries: int
    counted: np.ndarray
    sums: np.ndarray
    ranges: tuple[tuple[Any, Any], ...] = ()

    @classmethod
    def of(
        cls, results: Any, measures: tuple[str, ...], summaries: tuple[str, ...], gm_floor: float
    ) -> MeasureTotals:
        """Totals of per-query results with columns ``query_id``, ``n_items`` and the measures."""
        counted, sums = [], []
        for name, summary in zip(measures, summaries, strict=True):
            values = np.asarray(results[name], dtype=np.float64)
            kept = values[~np.isnan(values)]
            if summary == "geometric":
                kept = np.log(np.maximum(kept, gm_floor))
            counted.append(kept.size)
            sums.append(float(kept.sum()))
        ids = np.asarray(results["query_id"])
        return cls(
            measures=tuple(measures),
            summaries=tuple(summaries),
            gm_floor=gm_floor,
            n_rows=int(np.asarray(results["n_items"]).sum()),
            n_queries=int(ids.size),
            counted=np.array(counted, dtype=np.int64),
            sums=np.array(sums),
            ranges=_id_range(ids),
        )

    @classmethod
    def zero(
        cls, measures: tuple[str, ...], summaries: tuple[str, ...], gm_floor: float
    ) -> MeasureTotals:
        """Totals of nothing."""
        zeros = np.zeros(len(measures))
        return cls(measures, summaries, gm_floor, 0, 0, zeros.astype(np.int64), zeros)

    def __add__(self, other: MeasureTotals) -> MeasureTotals:
        return replace(
            self,
            n_rows=self.n_rows + other.n_rows,
            n_queries=self.n_queries + other.n_queries,
            counted=self.counted + other.counted,
            sums=self.sums + other.sums,
            ranges=(),  # a per-partition fact, consumed by combine()
        )

    @property
    def mean(self) -> np.ndarray:
        """Each measure's summary (NaN where no query counts; a count's sum is 0 then)."""
        out = np.full(len(self.measures), np.nan)
        np.divide(self.sums, self.counted, out=out, where=self.counted > 0)
        for j, summary in enumerate(self.summaries):
            if summary == "sum":
                out[j] = self.sums[j]
            elif summary in ("geometric", "exp_mean"):
                out[j] = np.exp(out[j])
        return out

    @property
    def n_skipped(self) -> np.ndarray:
        """Queries left out of each measure's summary."""
        return self.n_queries - self.counted

    def value(self) -> dict[str, float]:
        """Each measure's summary, by name."""
        return {name: float(m) for name, m in zip(self.measures, self.mean, strict=True)}

    def __getitem__(self, name: str) -> float:
        """The summary of measure ``name``."""
        return self.value()[name]

    def to_batch(self) -> pa.RecordBatch:
        """One row: the sums, for engines that move results as Arrow (see :meth:`from_arrow`)."""
        columns = {"n_rows": [self.n_rows], "n_queries": [self.n_queries]}
        for j in range(len(self.measures)):
            columns[f"counted_{j}"] = [int(self.counted[j])]
            columns[f"sum_{j}"] = [float(self.sums[j])]
        return pa.record_batch(columns)

    @classmethod
    def from_arrow(
        cls,
        table: pa.Table,
        measures: tuple[str, ...],
        summaries: tuple[str, ...],
        gm_floor: float,
    ) -> MeasureTotals:
        """The sum of :meth:`to_batch` rows."""
        sums = {name: pc.sum(table.column(name)).as_py() or 0 for name in table.column_names}
        n = len(measures)
        return cls(
            tuple(measures),
            tuple(summaries),
            gm_floor,
            int(sums["n_rows"]),
            int(sums["n_queries"]),
            np.array([sums[f"counted_{j}"] for j in range(n)], dtype=np.int64),
            np.array([float(sums[f"sum_{j}"]) for j in range(n)]),
        )

    def __repr__(self) -> str:
        means = ", ".join(f"{name}={m:.6f}" for name, m in self.value().items())
        return f"MeasureTotals(n_queries={self.n_queries}, n_rows={self.n_rows}, {means})"


COLOCATION_FIX = (
    "`colocated=True` promised that every query lies in one partition; leave `colocated=True` "
    "out to co-locate queries with a shuffle on the query id"
)


def check_disjoint(spans: list[tuple[Any, Any, Any]]) -> None:
    """Raise an InputError (a ValueError) when query-id ranges of different partitions overlap.

    ``spans`` are ``(lowest id, highest id, partition)`` of pieces of the input: one per
    partition, or several (e.g. one per file packed into a partition). Pieces of the same
    partition may overlap, since a partition is grouped by query id before it is scored.
    """
    # sweep by lowest id, keeping the piece reaching furthest and the furthest-reaching piece
    # of any other partition: a piece overlaps another partition's iff one of them reaches it
    first: tuple[Any, Any, Any] | None = None
    second: tuple[Any, Any, Any] | None = None
    for span in sorted(spans, key=lambda span: span[0]):
        lo, hi, part = span
        other = second if first is not None and first[2] == part else first
        if other is not None and other[1] >= lo:
            raise InputError(
                f"partitions share query ids: one holds query ids {other[0]!r}..{other[1]!r}, "
                f"another {lo!r}..{hi!r}, so a query may be split between them",
                value=(lo, hi),
                where=f"partitions {other[2]!r} and {part!r}",
                fix=f"{COLOCATION_FIX}, or `validate='exact'` when partitions hold interleaved "
                "but disjoint sets of query ids (e.g. hash-partitioned)",
                joiner=". ",
            )
        if first is None or hi > first[1]:
            if first is not None and first[2] != part:
                second = first
            first = span
        elif part != first[2] and (second is None or hi > second[1]):
            second = span


def split_query_error(query_id: Any) -> InputError:
    """The error for a query found in more than one partition."""
    return InputError(
        f"query {plain(query_id)!r} has rows in more than one partition, so it would be scored "
        "in pieces",
        value=plain(query_id),
        where=f"query {plain(query_id)!r}",
        fix=COLOCATION_FIX,
        joiner=". ",
    )


def parquet_paths(source: Any) -> list[str]:
    """The Parquet files of a local file or directory (sorted, as ``ndcg_parquet`` reads them).

    Anything else (a URL such as ``s3://...`` or ``hdfs://...``) goes to the engine unchanged.
    """
    if isinstance(source, (list, tuple)):
        return [p for item in source for p in parquet_paths(item)]
    text = str(source)
    if _remote(text):
        return [text]
    return list(open_dataset(text).files)


def _remote(path: str) -> bool:
    return "://" in path and not Path(path).exists()


def score_whole_files(source: Any, score: Callable[[list[str]], Totals]) -> Totals:
    """The :class:`Totals` ``score`` computes from the Parquet files of ``source``, all of them.

    The rows scored must be those the files' footers promise before the engine starts: a file
    rewritten or truncated meanwhile is an InputError, not a partial result. Remote files (URLs)
    are left to the engine, whose reader alone sees them.
    """
    paths = parquet_paths(source)
    promised = None if any(map(_remote, paths)) else promised_rows(open_dataset(paths))
    totals = score(paths)
    if promised is not None and totals.n_rows != promised:
        raise changed_while_read(describe(source), totals.n_rows, promised)
    return totals


def refuse_measures(kwargs: Mapping[str, Any], engine: str) -> None:
    """``ndcg()`` of an engine computes NDCG: the measures beside it go to ``evaluate()``."""
    if kwargs.get("measures") is not None:
        raise OptionTypeError(
            f"fastndcg.{engine}.ndcg computes NDCG only",
            option="measures",
            value=kwargs["measures"],
            fix=f"call fastndcg.{engine}.evaluate(frame, measures=...) for the measures",
        )


def score_on_engine(
    engine: str, source: Any, *, cluster: str | None = None, colocated: bool = False, **options: Any
) -> Totals:
    """Score Parquet predictions on Dask or Spark: what ``fastndcg score --engine`` runs.

    ``cluster`` is the Dask scheduler address or the Spark master URL (None: a local one).
    ``n_threads=None`` means the adapters' default of one Numba thread per task.
    """
    engine = option("engine").check(engine)
    if engine not in ENGINES:  # "local": this process, where the caller scores it itself
        raise OptionError(
            f"`engine={engine!r}` scores in this process, not on a cluster",
            option="engine",
            value=engine,
            fix=f"use one of {listed(ENGINES)}",
        )
    if options.get("n_threads") is None:
        options.pop("n_threads", None)
    module = importlib.import_module(f"fastndcg.{engine}")
    return module.score_files(source, cluster=cluster, colocated=colocated, **options)
