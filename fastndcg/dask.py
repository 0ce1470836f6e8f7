"""NDCG of a Dask DataFrame: the single-machine per-query values, computed where the data lives.

Needs the extra: ``pip install 'fastndcg[dask]'``.

Every query must be scored whole, by one task. By default the rows are shuffled on the query
id (Dask's own ``shuffle``), which co-locates every query whatever the input partitioning.
``colocated=True`` skips the shuffle for data already partitioned by query (for example one
query range per Parquet file, read with ``split_row_groups=False``); that promise is checked,
never trusted: ``validate="ranges"`` compares the query-id range of every partition (cheap) and
``validate="exact"`` looks every query id up once (a shuffle of the per-query results, which are
much smaller than the input).

Each task scores with one Numba thread unless ``n_threads`` says otherwise (the engine already
runs one task per core), using the backend the client resolved. Everything is lazy:
:func:`per_query` returns a Dask DataFrame, :func:`ndcg` and :func:`totals` return Dask
Scalars.

Examples
--------
>>> import dask.dataframe as dd, pandas as pd
>>> import fastndcg.dask
>>> frame = pd.DataFrame({"qid": [1, 1, 2, 2, 3], "grade": [2, 0, 0, 1, 1],
...                       "score": [0.9, 0.1, 0.8, 0.7, 0.5]})
>>> ddf = dd.from_pandas(frame, npartitions=2)
>>> round(fastndcg.dask.ndcg(ddf, k=2).compute(), 4)
0.877
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from fastndcg._errors import OptionError
from fastndcg._scaleout import (
    Job,
    Partitioning,
    Planner,
    Totals,
    parquet_paths,
    refuse_measures,
    score_whole_files,
    split_query_error,
)
from fastndcg._training import require

dd = require("dask.dataframe", "dask")

ORDER_HINT = (
    "pass `colocated=True` with partitions that each hold whole queries in their input order"
)
CAST_HINT = "cast it first, e.g. ddf[{0!r}] = ddf[{0!r}].astype('float64')"


def per_query(
    ddf: Any,
    *,
    qid: str = "qid",
    grade: str = "grade",
    score: str | None = "score",
    k: Any = None,
    colocated: bool = False,
    validate: str = "ranges",
    npartitions: int | None = None,
    n_threads: int | None = 1,
    **options: Any,
) -> Any:
    """Per-query NDCG, DCG and IDCG (or other measures) of a Dask DataFrame, lazily.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        One row per (query, item). ``qid`` may also name the index.
    qid, grade, score : str
        Column names; ``score=None`` means rows come in ranked order (``colocated=True`` only).
    k : int, list of (int or None), or None, default=None
        Cutoff(s), as in :func:`fastndcg.ndcg`; None: the whole list, or a preset's cutoffs.
    colocated : bool, default=False
        False: shuffle the rows on ``qid`` so each query lands in one partition. True: every
        partition already holds whole queries; checked as ``validate`` says, and a query found
        in two partitions raises a ValueError when the result is computed.
    validate : {"ranges", "exact"}, default="ranges"
        How ``colocated=True`` is checked: the partitions' query-id ranges must not overlap
        (cheap; right for data partitioned by query-id range), or no query id may appear in two
        partitions (exact for any partitioning; shuffles the per-query results).
    npartitions : int, optional
        Partitions after the shuffle (default: as many as the input).
    n_threads : int or None, default=1
        Numba threads per task, capped at the worker's ``NUMBA_NUM_THREADS``; None leaves the
        worker's setting (all cores) alone.
    **options
        The options of :func:`fastndcg.ndcg` as streaming takes them (see
        :class:`fastndcg.stream.StreamScorer`), ``preset=`` and ``decimals=`` included.
        Order-dependent ones (``ties="stable"``, ranked input) need ``colocated=True``;
        ``ties="random"`` is not available. ``measures=`` (with ``relevance_level=``) names
        measures beside NDCG, as :func:`evaluate` takes them, instead of ``k``.

    Returns
    -------
    dask.dataframe.DataFrame
        Columns ``query_id``, ``n_items``, then ``ndcg@k``, ``dcg@k``, ``idcg@k`` per cutoff
        (``ndcg``, ``dcg``, ``idcg`` for k=None); NaN NDCG where a query is skipped. With
        ``measures``: one column per measure, named as given (NaN where a query is skipped).
    """
    plan = _PLANNER.planned(ddf, locals())
    if plan.check == "ranges":  # every partition waits for the range check of all of them
        gate = _totals(plan.scored, plan.job, disjoint=True)
        return plan.scored.map_partitions(
            _released, gate, meta=plan.scored._meta, enforce_metadata=False
        )
    return plan.scored


def totals(ddf: Any, **kwargs: Any) -> Any:
    """The decomposable sums behind :func:`ndcg`, lazily (arguments as :func:`per_query`).

    Returns
    -------
    dask.dataframe.Scalar
        Computes to :class:`fastndcg._scaleout.Totals`: rows, queries, counted and skipped
        queries and the sums of NDCG, DCG and IDCG per cutoff, with ``mean`` and ``value()``;
        with ``measures=``, to :class:`fastndcg._scaleout.MeasureTotals` (``measures``,
        ``mean``, ``n_skipped``, ``value()``).
    """
    plan = _PLANNER.plan(ddf, **kwargs)
    return _totals(plan.scored, plan.job, disjoint=plan.check == "ranges")


def ndcg(ddf: Any, **kwargs: Any) -> Any:
    """Aggregate NDCG of a Dask DataFrame, lazily (arguments as :func:`per_query`).

    Returns
    -------
    dask.dataframe.Scalar
        Computes to a float for one cutoff, or a dict cutoff -> float for several: the same
        value as :func:`fastndcg.ndcg` on all rows at once, to rounding.
    """
    refuse_measures(kwargs, "dask")
    plan = _PLANNER.plan(ddf, **kwargs)
    return _totals(plan.scored, plan.job, disjoint=plan.check == "ranges", value=True)


def evaluate(ddf: Any, *, measures: Any, **kwargs: Any) -> Any:
    """The measures beside NDCG of a Dask DataFrame, lazily (arguments as :func:`per_query`).

    ``measures`` by name as :func:`fastndcg.evaluate` takes them (``["P@10", "AP",
    "nDCG@10"]``), with ``relevance_level=`` and ``preset=``; each query's values are those of
    :func:`fastndcg.evaluate` on its rows (:func:`per_query` gives them, one column per measure).

    Returns
    -------
    dask.dataframe.Scalar
        Computes to a dict measure -> summary over the queries: the
        :attr:`fastndcg.MeasuresResult.mean` of all rows at once, to rounding.
    """
    plan = _PLANNER.plan(ddf, measures=measures, **kwargs)
    return _totals(plan.scored, plan.job, disjoint=plan.check == "ranges", value=True)


def read_parquet(source: Any, *, columns: list[str] | None = None, colocated: bool = False) -> Any:
    """A Dask DataFrame over Parquet files, partitioned to suit :func:`per_query`.

    With ``colocated=True`` every file becomes one partition (``split_row_groups=False``):
    Dask otherwise splits large files at row groups, which cuts queries in two. A local
    directory is read as :func:`fastndcg.ndcg_parquet` reads it (``*.parquet`` below it, sorted).
    """
    split = False if colocated else "infer"
    return dd.read_parquet(parquet_paths(source), columns=columns, split_row_groups=split)


def score_files(
    source: Any,
    *,
    cluster: str | None = None,
    qid: str = "qid",
    grade: str = "grade",
    score: str | None = "score",
    colocated: bool = False,
    **options: Any,
) -> Totals:
    """Score Parquet files on a Dask cluster: what ``fastndcg score --engine dask`` runs.

    ``cluster`` is a scheduler address; None starts a local cluster, one single-threaded worker
    per core, after compiling the kernels into the Numba cache so that workers only load them.
    A malformed address fails at once; a scheduler that does not answer fails after Dask's
    ``distributed.comm.timeouts.connect`` (30 s unless configured otherwise).
    """
    columns = [c for c in (qid, grade, score) if c is not None]

    def score_paths(paths: list[str]) -> Totals:
        ddf = read_parquet(paths, columns=columns, colocated=colocated)
        lazy = totals(ddf, qid=qid, grade=grade, score=score, colocated=colocated, **options)
        with _client(cluster) as client:
            return client.compute(lazy).result()

    return score_whole_files(source, score_paths)


@contextlib.contextmanager
def _client(address: str | None) -> Iterator[Any]:
    distributed = require("dask.distributed", "dask")
    if address is not None:
        with _connect(distributed, address) as client:
            yield client
        return
    from fastndcg._runtime import warmup

    warmup()  # before the workers start: they load the cache instead of compiling at once
    with (
        distributed.LocalCluster(threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client


def _connect(distributed: Any, address: str) -> Any:
    """A client of the scheduler at ``address``, or an error that names the address."""
    try:
        return distributed.Client(address, set_as_default=False)
    except Exception as exc:
        problem = f"cannot connect to a Dask scheduler at {address!r}: {exc}"
        fix = "give the address a running scheduler prints, such as tcp://10.0.0.5:8786"
        if isinstance(exc, OSError):
            error: Exception = ConnectionError(f"{problem}; {fix}")
        else:
            error = OptionError(problem, option="cluster", value=address, fix=fix)
    # The half-built client is freed now, while its event loop still runs: at exit its close
    # would wait 60 s for a loop already stopped.
    gc.collect()
    raise error


@dataclass(frozen=True)
class _Plan:
    """A checked job and the lazy per-query results it gives (before any range check)."""

    job: Job
    scored: Any  # dask DataFrame of per-query results
    check: str | None  # "ranges": still to be checked on the results; else None


class _DaskPlanner(Planner):
    """The planning of :func:`per_query`: the rows shuffled on the query id unless colocated."""

    engine = "dask"
    frame = "a dask DataFrame"
    frame_fix = "Wrap a pandas DataFrame with dask.dataframe.from_pandas(frame, npartitions=...)"
    partitions = "npartitions"
    shuffle = "shuffle"
    keeps_order = True
    order_hint = ORDER_HINT
    cast_hint = CAST_HINT

    def is_frame(self, frame: Any) -> bool:
        return isinstance(frame, dd.DataFrame)

    def column_names(self, frame: Any, job: Job) -> list[Any]:
        names = list(frame.columns)
        if job.qid == frame.index.name and job.qid not in names:
            return [job.qid, *names]  # the query ids are the index, reset in select()
        return names

    def select(self, frame: Any, job: Job) -> tuple[Any, pa.Schema]:
        if job.qid not in frame.columns:
            frame = frame.reset_index()
        frame = frame[job.columns]
        return frame, _placeholder_schema(frame._meta, job.qid)

    def distribute(self, job: Job, selected: Any, schema: pa.Schema, how: Partitioning) -> _Plan:
        if not how.colocated:
            selected = selected.shuffle(on=job.qid, npartitions=how.partitions)
        meta = job.output_schema(schema.field(job.qid).type).empty_table().to_pandas()
        scored = selected.map_partitions(_score_partition, job, meta=meta, enforce_metadata=False)
        if how.colocated and how.validate == "exact":
            scored = scored.shuffle(on="query_id").map_partitions(
                _unique, meta=meta, enforce_metadata=False
            )
        return _Plan(job, scored, "ranges" if how.colocated and how.validate == "ranges" else None)


_PLANNER = _DaskPlanner(per_query)


def _placeholder_schema(meta: Any, qid: str) -> pa.Schema:
    """The Arrow schema of Dask's empty placeholder frame ``meta``.

    Its empty object columns, and categoricals of unknown categories (as Dask reads Parquet
    dictionaries), have no values to tell their type: Arrow calls it null. Query ids of that
    kind are taken as strings; the tasks read the real values.
    """
    schema = pa.Schema.from_pandas(meta, preserve_index=False)
    at = schema.get_field_index(qid)
    kind = schema.field(at).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_null(kind):
        schema = schema.set(at, pa.field(qid, pa.string()))
    return schema


def _score_partition(part: Any, job: Job) -> Any:
    """Task: per-query results of one partition (pandas in, pandas out)."""
    table = pa.Table.from_pandas(part, preserve_index=False)
    return job.score_table(table).to_pandas()


def _partition_totals(part: Any, job: Job) -> Any:
    """Task: the :class:`Totals` of one partition's per-query results, as a one-row frame."""
    import pandas as pd

    return pd.DataFrame({"totals": [job.totals(part)]})


def _combined_totals(frame: Any, disjoint: bool, value: bool) -> Any:
    """Task: the sum of all partitions' totals (or its aggregate value), ranges checked."""
    parts = list(frame["totals"])
    total = type(parts[0]).combine(parts, disjoint)
    return total.value() if value else total


def _totals(scored: Any, job: Job, disjoint: bool, value: bool = False) -> Any:
    """A lazy Dask Scalar: :class:`Totals` of all partitions (or their aggregate value).

    A Scalar, not a Delayed: ``dask.compute`` of DataFrames mixed with Delayed objects returns
    the results out of order (dask 2026.8).
    """
    return scored.reduction(
        _partition_totals,
        aggregate=_combined_totals,
        split_every=False,  # one task sees every partition's query-id range
        meta=object,
        chunk_kwargs={"job": job},
        aggregate_kwargs={"disjoint": disjoint, "value": value},
    )


def _released(part: Any, gate: Totals) -> Any:
    """Task: a scored partition, handed on once the range check (``gate``) has passed."""
    return part


def _unique(part: Any) -> Any:
    """Task: refuse a query id seen twice (after the per-query results were shuffled on it)."""
    repeated = part["query_id"].duplicated()
    if repeated.any():
        raise split_query_error(part["query_id"][repeated].iloc[0])
    return part
