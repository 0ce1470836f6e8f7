"""NDCG and the measures of Parquet files and datasets, streamed with bounded memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from fastndcg._core.options import PARQUET, data_options, parse, split_options
from fastndcg._errors import InputError, OptionTypeError
from fastndcg._evaluate import evaluate_table
from fastndcg._io.parquet import (
    LARGEST_BATCH,
    Progress,
    check_columns,
    describe,
    iter_batches,
    open_dataset,
    prefetch,
    read_whole,
)
from fastndcg._presets import accepts_preset
from fastndcg._result import MeasuresResult, NDCGResult
from fastndcg._tables import ndcg_table
from fastndcg.stream import StreamScorer, stream_columns


@accepts_preset("ndcg_parquet")
def ndcg_parquet(
    source: Any,
    *,
    qid: str = "qid",
    grade: str = "grade",
    score: str | None = "score",
    batch_rows: int = 1 << 20,
    progress: bool | None = None,
    group: str = "stream",
    preset: Any = None,
    **options: Any,
) -> NDCGResult:
    """NDCG of the queries in a Parquet file, a directory of them, or a ``pyarrow`` dataset.

    Only the three columns are read. With ``group="stream"`` (the default) record batches of
    ``batch_rows`` rows are decoded in a background thread while the previous batch is scored
    (at most two ahead of it), and a query split across batches or files is carried over and
    scored once, so peak memory follows ``batch_rows`` and the number of queries, not the file
    size (see ``batch_rows`` for measured peaks). Each query's rows must be contiguous in the file
    order (files in sorted path order); otherwise a ValueError says so. ``group="memory"``
    reads the three columns whole and groups them in memory, for files that are not grouped by
    query; it needs about ``rows * (bytes per qid + grade + score value)`` of memory.

    Parameters
    ----------
    source : str, Path, list of paths, or pyarrow.dataset.Dataset
        A Parquet file, a directory (every ``*.parquet`` below it, in sorted path order,
        skipping names that start with ``_`` or ``.`` as ``pyarrow.dataset`` does), a list of
        files (each once), or a dataset (in fragment order).
    qid, grade, score : str
        Column names; ``score=None`` means rows are already in ranked order.
    batch_rows : int, default=1048576
        Rows per decoded batch (13.6 MB for int64 ids, int8 grades and float32 scores).
        Measured peak memory above a warmed-up process (RSS, default batch, ``k=10``): 119-123
        MiB for 50 million rows of 500,000 queries in row groups of 1Mi or 64Ki rows, 195-220
        MiB when those rows are one row group (Arrow's reader keeps part of a
        dictionary-encoded column until its row group ends), 235-241 MiB for 200 million rows
        of 2 million queries. Batches, scoring scratch and the reader take about 80 MiB of
        that; the per-query results about 80 bytes per query at the end (the result keeps 32).
        Smaller batches need less memory but cost speed: each batch has a fixed cost of about
        2 ms (on the machine of the documentation's benchmarks).
    progress : bool or None, default=None
        Show a progress bar (rows and queries per second). None: only on an interactive
        terminal.
    group : {"stream", "memory"}, default="stream"
        How rows are grouped into queries (see above).
    **options
        The options of :func:`fastndcg.ndcg` (as for :class:`fastndcg.stream.StreamScorer` when
        streaming).
    preset : str, optional
        A tool's definition by name (see :func:`fastndcg.presets`); the options given override
        its settings.

    Returns
    -------
    NDCGResult
    """
    columns = {"qid": qid, "grade": grade, "score": score}
    reading = {"batch_rows": batch_rows, "progress": progress, "group": group}
    return _read(source, columns, reading, ndcg_table, "ndcg_parquet", options)


def evaluate_parquet(
    source: Any,
    *,
    measures: Any,
    qid: str = "qid",
    grade: str = "grade",
    score: str | None = "score",
    relevance_level: int = 1,
    batch_rows: int = 1 << 20,
    progress: bool | None = None,
    group: str = "stream",
    preset: str | None = None,
    **options: Any,
) -> MeasuresResult:
    """Several measures (nDCG, P, R, AP, RR, ...) of the queries in Parquet files.

    The files as :func:`ndcg_parquet` reads them (streamed in record batches, each file read
    whole or not at all, or grouped in memory), the measures as :func:`fastndcg.evaluate`
    computes them: query ids, their order, every per-query value and every mean are those
    :func:`fastndcg.evaluate` gives for the same rows read into memory, whatever the batches.

    Parameters
    ----------
    source : str, Path, list of paths, or pyarrow.dataset.Dataset
        As for :func:`ndcg_parquet`.
    measures : str, Measure or list of them
        The measures by name, in trec_eval's, ir_measures' or ranx's syntax (``"nDCG@10"``,
        ``"P.5,10"``, ``"map"``, ``"mrr@10"``, ``"P(rel=2)@10"``...; see the measures page).
    qid, grade, score : str
        Column names; ``score=None`` means rows are already in ranked order.
    relevance_level : int, default=1
        A grade at or above it is relevant, for the measures whose name sets none.
    batch_rows, progress, group
        As for :func:`ndcg_parquet`. Streaming takes each query's judgments from its rows and
        no ``ties="random"``: both need ``group="memory"``.
    preset : str, optional
        A tool's definitions (``"trec_eval"``, ``"ranx"``, ...), as for
        :func:`fastndcg.evaluate`.
    **options
        The options of :func:`fastndcg.evaluate` (``ties``, ``gain``, ``zero_idcg``,
        ``backend``...).

    Returns
    -------
    MeasuresResult
        One row per query, in file order.
    """
    columns = {"qid": qid, "grade": grade, "score": score}
    reading = {"batch_rows": batch_rows, "progress": progress, "group": group}
    given = {"measures": measures, "relevance_level": relevance_level, "preset": preset}
    return _read(source, columns, reading, evaluate_table, "evaluate_parquet", {**options, **given})


def _read(
    source: Any,
    columns: dict[str, Any],
    reading: dict[str, Any],
    in_memory: Callable[..., Any],
    entry: str,
    options: dict[str, Any],
) -> Any:
    """What ``entry`` gives for the rows of ``source``: grouped in memory, or streamed.

    ``in_memory`` scores the whole table (``group="memory"``); streaming feeds every batch to a
    :class:`StreamScorer` of ``options`` and collects its per-query results.
    """
    group = parse("group", reading["group"])
    if group == "stream":
        qid, grade, score = stream_columns(**columns)
    else:
        qid, grade, score = (parse(role, name) for role, name in columns.items())
    batch_rows = min(parse("batch_rows", reading["batch_rows"]), LARGEST_BATCH)
    progress = parse("progress", reading["progress"])
    dataset = open_dataset(source)
    roles = {"qid": qid, "grade": grade, "score": score}
    names = list(dict.fromkeys(c for c in roles.values() if c is not None))
    check_columns(dataset, roles, source, streaming=group == "stream")
    if group == "memory":
        try:
            table = read_whole(dataset, names)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # files of differing types
            raise InputError(
                f"cannot read {describe(source)} as one table ({exc})",
                where=describe(source),
                fix=f"its files must give each of the columns {', '.join(names)} one type: "
                "cast them when writing",
            ) from exc
        return in_memory(table, qid=qid, grade=grade, score=score, **options)
    measures = {name: options.pop(name) for name in _MEASURING if name in options}
    if "weights" in options and not measures:
        raise OptionTypeError(
            "`weights=` (one per query, in result order) needs `group='memory'`: streaming "
            "scores the queries batch by batch",
            option="weights",
            value=options["weights"],
            fix="or weight the per-query values yourself",
        )
    # named as the call the user made (an NDCG preset and decimals were taken before this point)
    split_options(options, f"{entry}(..., group='stream')", data_options(PARQUET))
    scorer = StreamScorer(qid=qid, grade=grade, score=score, **options, **measures)
    total = dataset.count_rows()
    results = []
    with Progress(total, progress) as bar:
        for batch in prefetch(iter_batches(dataset, names, batch_rows)):
            out = scorer.feed(batch)
            results.append(_collected(out, scorer))
            bar.update(batch.num_rows, out.num_rows)
        results.append(_collected(scorer.finish(), scorer))
        bar.update(0, results[-1].num_rows)
    return scorer.collect(results)


# what evaluate_parquet hands its stream beside the options of fastndcg.ndcg
_MEASURING = ("measures", "relevance_level", "preset")


def _collected(results: pa.RecordBatch, scorer: StreamScorer) -> pa.RecordBatch:
    """The columns of a batch of per-query results that :meth:`StreamScorer.collect` reads.

    The query ids and each cutoff's DCG and IDCG: 24 of the 40 bytes per query (one cutoff)
    kept until the end of the stream. Of the measures: the ids and every measure.
    """
    if scorer.measuring is not None:
        return results.drop_columns(["n_items"])
    names = [n for n in results.schema.names if n == "query_id" or n.startswith(("dcg", "idcg"))]
    return results.select(names)
