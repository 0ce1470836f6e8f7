"""NDCG of a Spark DataFrame: the single-machine per-query values, computed on the cluster.

Needs the extra: ``pip install 'fastndcg[spark]'`` (Spark 4 needs Java 17 or 21). Works with a
classic session and over Spark Connect alike.

Rows are repartitioned on the query id and sorted within each partition, then streamed through
:class:`fastndcg.stream.StreamScorer` with ``mapInArrow``: Spark hands Python Arrow batches of
``spark.sql.execution.arrow.maxRecordsPerBatch`` rows (10,000 by default) that cut queries at
arbitrary rows, so the last query of every batch is carried into the next and scored once,
whole. ``colocated=True`` skips the shuffle for data already partitioned by query; the promise
is checked first with a JVM-only job over the query ids of the same DataFrame.

Each task scores with one Numba thread unless ``n_threads`` says otherwise, using the backend
the driver resolved.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

import pyarrow as pa

from fastndcg import _errors
from fastndcg._scaleout import (
    Job,
    Partitioning,
    Planner,
    Totals,
    check_disjoint,
    refuse_measures,
    score_whole_files,
    split_query_error,
)
from fastndcg._training import require

require("pyspark", "spark")
from pyspark.errors import PythonException  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql import types as T  # noqa: E402
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema  # noqa: E402

ORDER_HINT = "make the order explicit in the score column first (e.g. minus the rank)"
CAST_HINT = "cast it first, e.g. df.withColumn({0!r}, F.col({0!r}).cast('double'))"
BATCH_ROWS = 1 << 17  # Arrow batch size for sessions the command line starts


def per_query(
    df: Any,
    *,
    qid: str = "qid",
    grade: str = "grade",
    score: str = "score",
    k: Any = None,
    colocated: bool = False,
    validate: str = "ranges",
    num_partitions: int | None = None,
    n_threads: int | None = 1,
    **options: Any,
) -> Any:
    """Per-query NDCG, DCG and IDCG (or other measures) of a Spark DataFrame, lazily.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        One row per (query, item); a classic or a Spark Connect DataFrame.
    qid, grade, score : str
        Column names. Decimal grades and scores are read as doubles.
    k : int, list of (int or None), or None, default=None
        Cutoff(s), as in :func:`fastndcg.ndcg`; None: the whole list, or a preset's cutoffs.
    colocated : bool, default=False
        False: ``repartition`` on ``qid`` so each query lands in one partition. True: every
        partition already holds whole queries (e.g. a table bucketed by ``qid``); checked now,
        by a job that reads only the query ids, and a ValueError names a split query.
    validate : {"ranges", "exact"}, default="ranges"
        How ``colocated=True`` is checked: the partitions' query-id ranges must not overlap, or
        no query id may appear in two partitions (exact for any partitioning; a shuffle of the
        distinct (query id, partition) pairs).
    num_partitions : int, optional
        Partitions of the repartition (default: ``spark.sql.shuffle.partitions``).
    n_threads : int or None, default=1
        Numba threads per task, capped at the executor's ``NUMBA_NUM_THREADS``; None leaves the
        executor's setting alone.
    **options
        The options of :func:`fastndcg.ndcg` as streaming takes them (see
        :class:`fastndcg.stream.StreamScorer`), ``preset=`` and ``decimals=`` included, except
        order-dependent ones (``ties="stable"`` or ``"random"``, ranked input): Spark's sort
        does not keep the input order inside a query. ``measures=`` (with
        ``relevance_level=``) names measures beside NDCG, as :func:`evaluate` takes them,
        instead of ``k``.

    Returns
    -------
    pyspark.sql.DataFrame
        Columns ``query_id``, ``n_items``, then ``ndcg@k``, ``dcg@k``, ``idcg@k`` per cutoff
        (``ndcg``, ``dcg``, ``idcg`` for k=None); NaN NDCG where a query is skipped. With
        ``measures``: one column per measure, named as given (NaN where a query is skipped).
    """
    job, rows, qid_type = _PLANNER.planned(df, locals())
    schema = from_arrow_schema(job.output_schema(qid_type))
    return rows.mapInArrow(functools.partial(_score_batches, job), schema)


def totals(df: Any, **kwargs: Any) -> Totals:
    """The decomposable sums behind :func:`ndcg`, in one job (arguments as :func:`per_query`).

    Every partition is scored and summed in Python; only one row per partition comes back.
    """
    job, rows, _ = _PLANNER.plan(df, **kwargs)
    schema = from_arrow_schema(job.zero_totals().to_batch().schema)
    try:
        sums = rows.mapInArrow(functools.partial(_totals_batches, job), schema).toArrow()
    except PythonException as exc:
        raise _worker_error(exc) from None
    return job.totals_from_arrow(sums)


def ndcg(df: Any, **kwargs: Any) -> float | dict[int | None, float]:
    """Aggregate NDCG of a Spark DataFrame (arguments as :func:`per_query`).

    Returns
    -------
    float or dict
        A float for one cutoff, or a dict cutoff -> float for several: the same value as
        :func:`fastndcg.ndcg` on all rows at once, to rounding.
    """
    refuse_measures(kwargs, "spark")
    return totals(df, **kwargs).value()


def evaluate(df: Any, *, measures: Any, **kwargs: Any) -> dict[str, float]:
    """The measures beside NDCG of a Spark DataFrame (arguments as :func:`per_query`).

    ``measures`` by name as :func:`fastndcg.evaluate` takes them (``["P@10", "AP",
    "nDCG@10"]``), with ``relevance_level=`` and ``preset=``; each query's values are those of
    :func:`fastndcg.evaluate` on its rows (:func:`per_query` gives them, one column per measure).

    Returns
    -------
    dict
        Measure -> summary over the queries: the :attr:`fastndcg.MeasuresResult.mean` of all
        rows at once, to rounding.
    """
    return totals(df, measures=measures, **kwargs).value()


def score_files(
    source: Any,
    *,
    cluster: str | None = None,
    qid: str = "qid",
    grade: str = "grade",
    score: str = "score",
    colocated: bool = False,
    **options: Any,
) -> Totals:
    """Score Parquet files with Spark: what ``fastndcg score --engine spark`` runs.

    ``cluster`` is a master URL (``local[4]``, ``spark://host:7077``, ``yarn``...) or a Spark
    Connect address (``sc://host:15002``); None means ``local[*]``. A session that is already
    active is used as it is.
    """

    def score_paths(paths: list[str]) -> Totals:
        with _session(cluster) as spark:
            df = spark.read.parquet(*paths)
            return totals(df, qid=qid, grade=grade, score=score, colocated=colocated, **options)

    return score_whole_files(source, score_paths)


@contextlib.contextmanager
def _session(cluster: str | None) -> Iterator[Any]:
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    if cluster is not None and cluster.startswith("sc://"):
        builder = SparkSession.builder.remote(cluster)
    else:
        from fastndcg._runtime import warmup

        warmup()  # local executors then load the Numba cache instead of compiling
        if (cluster or "local").startswith("local"):
            # Python workers run PYSPARK_PYTHON (default: python3 on PATH); ours has fastndcg
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            SparkSession.builder.master(cluster or "local[*]")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH_ROWS))
        )
    spark = builder.getOrCreate()
    try:
        yield spark
    finally:
        spark.stop()


class _SparkPlanner(Planner):
    """The planning of :func:`per_query`: rows repartitioned on the query id, then sorted.

    Colocated rows are not repartitioned; the sort within each partition loses the input order.
    """

    engine = "spark"
    frame = "a pyspark DataFrame"
    frame_fix = "Make one with spark.createDataFrame(...) or spark.read.parquet(...)"
    partitions = "num_partitions"
    shuffle = "repartition"
    keeps_order = False
    order_hint = ORDER_HINT
    cast_hint = CAST_HINT

    def is_frame(self, frame: Any) -> bool:
        return hasattr(frame, "mapInArrow")

    def column_names(self, frame: Any, job: Job) -> list[Any]:
        return [field.name for field in frame.schema.fields]

    def select(self, frame: Any, job: Job) -> tuple[Any, pa.Schema]:
        fields = {field.name: field for field in frame.schema.fields}
        carried = _carried_names(job)
        columns = []
        for name in job.columns:
            column = F.col(_quoted(name))
            if name != job.qid and isinstance(fields[name].dataType, T.DecimalType):
                column = column.cast("double")
            columns.append(column.alias(carried[name]))
        rows = frame.select(*columns)
        arrow = to_arrow_schema(rows.schema)
        named = [f.with_name(name) for f, name in zip(arrow, job.columns, strict=True)]
        return rows, pa.schema(named)

    def distribute(self, job: Job, selected: Any, schema: pa.Schema, how: Partitioning) -> Any:
        """The job (in the carried names), the rows to score, and the query ids' type."""
        qid_type = schema.field(job.qid).type
        carried = _carried_names(job)
        job = replace(job, **{role: carried.get(name) for role, name in job.roles.items()})
        key = F.col(_quoted(job.qid))
        if how.colocated:
            _check_colocated(selected, key, how.validate)
        elif how.partitions is not None:
            selected = selected.repartition(how.partitions, key)
        else:
            selected = selected.repartition(key)
        return job, selected.sortWithinPartitions(key), qid_type


def _carried_names(job: Job) -> dict[str, str]:
    """The name each input column is carried under into the tasks.

    mapInArrow looks the columns up by name again, reading dots and backticks as syntax: such
    names are carried under the names of their roles.
    """
    if not any(mark in name for name in job.columns for mark in ".`"):
        return {name: name for name in job.columns}
    carried: dict[str, str] = {}
    for role, name in job.roles.items():
        if name is not None:
            carried.setdefault(name, role)
    return carried


_PLANNER = _SparkPlanner(per_query)


# the errors a worker's traceback may end with, as the traceback names them
_WORKER_ERRORS: dict[str, type[Exception]] = {
    "ValueError": ValueError,
    "TypeError": TypeError,
    "KeyError": KeyError,
    **{
        f"{kind.__module__}.{kind.__qualname__}": kind
        for kind in vars(_errors).values()
        if isinstance(kind, type) and issubclass(kind, _errors.FastNDCGError)
    },
}
_RAISED = re.compile(
    "^(" + "|".join(re.escape(name) for name in _WORKER_ERRORS) + "): ", re.MULTILINE
)


def _worker_error(exc: Exception) -> Exception:
    """The error a Spark worker raised, read back from the traceback Spark reports.

    A fastndcg error comes back as its class with its text (as its message: the traceback
    holds no more of its data); an error of another kind is returned as it is.
    """
    text = str(exc)
    raised = list(_RAISED.finditer(text))
    if not raised:
        return exc
    kind = _WORKER_ERRORS[raised[-1].group(1)]
    message = text[raised[-1].end() :].strip()
    if issubclass(kind, KeyError) and message[:1] in "'\"" and message:
        with contextlib.suppress(ValueError, SyntaxError):  # a KeyError's text is quoted
            message = ast.literal_eval(message)
    return kind(message)


def _quoted(name: str) -> str:
    """``name`` quoted for ``F.col``: any character, a backtick or dot included."""
    return "`" + name.replace("`", "``") + "`"


def _check_colocated(rows: Any, key: Any, validate: str) -> None:
    """Refuse a DataFrame whose partitions share a query id (a JVM-only job over the ids)."""
    partition = F.spark_partition_id()
    if validate == "ranges":
        # file by file: Spark packs several small files into one partition
        pieces = rows.groupBy(partition.alias("partition"), F.input_file_name()).agg(
            F.min(key).alias("lo"), F.max(key).alias("hi")
        )
        check_disjoint([(row["lo"], row["hi"], row["partition"]) for row in pieces.collect()])
        return
    pairs = rows.select(key.alias("query_id"), partition.alias("partition")).distinct()
    split = pairs.groupBy("query_id").count().where(F.col("count") > 1).limit(1).collect()
    if split:
        raise split_query_error(split[0]["query_id"])


def _score_batches(job: Job, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Task: per-query results of one partition's Arrow batches (split queries carried over)."""
    yield from job.score_stream(batches)


def _totals_batches(job: Job, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Task: one row of :class:`Totals` for one partition."""
    total = job.zero_totals()
    for out in job.score_stream(batches):
        total = total + job.totals(out)
    yield total.to_batch()
