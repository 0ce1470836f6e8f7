"""Scale-out benchmark: 20M rows in 32 Parquet files, one machine against Dask and Spark.

Run: ``.venv/bin/python bench/scaleout.py`` (a few minutes; ``--rows`` for a smaller run).
Not part of the pytest suites. It writes two layouts of the same rows once (reused later):

- ``clustered/``: each file holds a contiguous range of whole queries, sorted by query id;
- ``shuffled/``: the rows randomly permuted over the files (every query scattered).

and times, in one run on this machine:

- single-machine streaming (:func:`fastndcg.ndcg_parquet` on ``clustered/``), with all Numba
  threads (the reference) and with one;
- Dask on a LocalCluster of one single-threaded worker per core: co-located files without a
  shuffle (``colocated=True``; one Numba thread per task, the default, and all of them), and
  the scattered files with the shuffle on the query id;
- local Spark (``local[N]``): ``repartition`` on the query id + ``mapInArrow`` on the scattered
  files, with Spark's default Arrow batches (10,000 rows) and with 131,072-row batches, and the
  co-located files without a shuffle.

Each path is timed two ways: the per-query results collected to this process (what
:func:`fastndcg.ndcg_parquet` returns) and the aggregate alone; each runs ``--repeat`` times
(default 2) and the fastest run counts. Compile time, cluster and JVM
start are kept out (each engine runs a small job first). Every per-query result is compared
with the single-machine one: query count, duplicates, missing queries, largest difference.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import fastndcg

K = 10
COLUMNS = ["qid", "grade", "score"]
MEASURES = [f"ndcg@{K}", f"dcg@{K}", f"idcg@{K}"]


def generate(rows: int, files: int, folder: Path, seed: int = 0) -> None:
    """Write ``clustered/`` and ``shuffled/`` (``files`` Parquet files each) unless present."""
    clustered, shuffled = folder / "clustered", folder / "shuffled"
    if len(list(clustered.glob("*.parquet"))) == files == len(list(shuffled.glob("*.parquet"))):
        return
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 100, rows // 50 + 1000)  # uniform 1..99, as in scale-out.md
    sizes = sizes[: np.searchsorted(np.cumsum(sizes), rows) + 1]
    sizes[-1] -= int(sizes.sum()) - rows
    qids = np.cumsum(rng.integers(1, 5000, sizes.size, dtype=np.int64))  # sparse, sorted
    grades = rng.choice(5, size=rows, p=[0.5, 0.25, 0.13, 0.08, 0.04]).astype(np.int8)
    scores = rng.standard_normal(rows, dtype=np.float32) + np.float32(0.6) * grades
    table = pa.table({"qid": np.repeat(qids, sizes), "grade": grades, "score": scores})
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    cuts = starts[np.searchsorted(starts, np.linspace(0, rows, files + 1)[1:-1])]
    bounds = [0, *cuts.tolist(), rows]
    for name, layout in (("clustered", table), ("shuffled", table.take(rng.permutation(rows)))):
        target = folder / name
        target.mkdir(parents=True, exist_ok=True)
        step = rows // files
        edges = bounds if name == "clustered" else [i * step for i in range(files)] + [rows]
        for i, (a, b) in enumerate(itertools.pairwise(edges)):
            pq.write_table(layout.slice(a, b - a), target / f"part-{i:03d}.parquet",
                           row_group_size=1 << 18)  # fmt: skip


def agreement(got: pd.DataFrame, reference: pd.DataFrame) -> dict:
    """Per-query agreement of ``got`` with the single-machine results."""
    duplicates = int(got["query_id"].duplicated().sum())
    merged = reference.merge(got, on="query_id", how="outer", suffixes=("", "_got"), indicator=True)
    both = merged[merged["_merge"] == "both"]
    worst = 0.0
    for name in MEASURES:
        a, b = both[name].to_numpy(), both[f"{name}_got"].to_numpy()
        differ = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(a - b))  # NaN vs number: NaN
        worst = max(worst, float(np.max(np.nan_to_num(differ, nan=np.inf), initial=0.0)))
    return dict(
        queries=len(got),
        duplicates=duplicates,
        missing=int((merged["_merge"] == "left_only").sum()),
        extra=int((merged["_merge"] == "right_only").sum()),
        max_abs_diff=worst,
    )


def timed(repeat, func, *args, **kwargs):
    """The fastest of ``repeat`` runs of ``func`` (seconds) and its value."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        value = func(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, value


def computed(make, *args, **kwargs):
    """Build a lazy Dask object and compute it (both inside the timing)."""
    return make(*args, **kwargs).compute()


def collected(*args, **kwargs):
    """fastndcg.spark.per_query, collected to the driver as Arrow."""
    import fastndcg.spark

    return fastndcg.spark.per_query(*args, **kwargs).toArrow()


def run_single(folder: Path, repeat: int) -> tuple[list[dict], pd.DataFrame, float]:
    """The reference (all Numba threads), and the same with one thread."""
    wall, result = timed(repeat, fastndcg.ndcg_parquet, folder / "clustered", k=K)
    frame, mean = result.to_pandas(), float(result)
    rows = [dict(path="single machine, ndcg_parquet streaming, all Numba threads",
                 per_query_s=wall, aggregate_s=wall)]  # fmt: skip
    wall, one = timed(repeat, fastndcg.ndcg_parquet, folder / "clustered", k=K, n_threads=1)
    rows.append(dict(path="single machine, ndcg_parquet streaming, 1 Numba thread",
                     per_query_s=wall, aggregate_s=wall, mean_diff=abs(float(one) - mean),
                     **agreement(one.to_pandas(), frame)))  # fmt: skip
    return rows, frame, mean


def run_dask(
    folder: Path, workers: int, reference: pd.DataFrame, mean: float, repeat: int
) -> list[dict]:
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    import fastndcg.dask as fdask

    rows = []
    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster),
    ):
        tiny = dd.from_pandas(reference.head(1000).rename(columns={"query_id": "qid"})
                              .assign(grade=1, score=0.5)[COLUMNS], npartitions=2)  # fmt: skip
        fdask.ndcg(tiny, k=K).compute()  # workers import and load the Numba cache
        for label, layout, colocated, threads in (
            ("Dask, co-located files, no shuffle", "clustered", True, 1),
            ("Dask, co-located files, no shuffle, all Numba threads per task", "clustered",
             True, None),
            ("Dask, scattered rows, shuffle on qid (p2p)", "shuffled", False, 1),
        ):  # fmt: skip
            ddf = fdask.read_parquet(folder / layout, columns=COLUMNS, colocated=colocated)
            options = dict(k=K, colocated=colocated, n_threads=threads)
            per_query_s, got = timed(repeat, computed, fdask.per_query, ddf, **options)
            aggregate_s, total = timed(repeat, computed, fdask.ndcg, ddf, **options)
            rows.append(dict(path=f"{label} ({ddf.npartitions} partitions)",
                             per_query_s=per_query_s, aggregate_s=aggregate_s,
                             mean_diff=abs(total - mean), **agreement(got, reference)))  # fmt: skip
    return rows


def run_spark(
    folder: Path, workers: int, reference: pd.DataFrame, mean: float, repeat: int
) -> list[dict]:
    from pyspark.sql import SparkSession

    import fastndcg.spark as fspark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master(f"local[{workers}]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rows = []
    try:
        warm = spark.createDataFrame(
            pa.table({"qid": [1, 1], "grade": [1, 0], "score": [0.2, 0.1]})
        )
        fspark.ndcg(warm, k=K)  # Python workers start and load the Numba cache
        for label, layout, colocated, batch in (
            ("Spark, scattered rows, repartition + mapInArrow, 10,000-row batches (default)",
             "shuffled", False, 10_000),
            ("Spark, scattered rows, repartition + mapInArrow, 131,072-row batches",
             "shuffled", False, 1 << 17),
            ("Spark, co-located files, no shuffle, 131,072-row batches", "clustered", True, 1 << 17),
        ):  # fmt: skip
            spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(batch))
            df = spark.read.parquet(str(folder / layout))
            options = dict(k=K, colocated=colocated)
            per_query_s, got = timed(repeat, collected, df, **options)
            aggregate_s, total = timed(repeat, fspark.ndcg, df, **options)
            rows.append(dict(path=label, per_query_s=per_query_s, aggregate_s=aggregate_s,
                             mean_diff=abs(total - mean),
                             **agreement(got.to_pandas(), reference)))  # fmt: skip
    finally:
        spark.stop()
    return rows


TABLE_COLUMNS = [
    "path",
    "per query to driver: s",
    "rows/s",
    "aggregate only: s",
    "rows/s",
    "per-query agreement with one machine",
]


def table_cells(rows: list[dict], n_rows: int) -> list[list[str]]:
    """The table's cells, row by row (the Markdown table and the JSON file)."""
    cells = []
    for r in rows:
        agree = (
            "reference"
            if "queries" not in r
            else f"{r['queries']:,} queries, {r['duplicates']} duplicated, {r['missing']} missing, "
            f"max diff {r['max_abs_diff']:.1e}; mean diff {r['mean_diff']:.1e}"
        )
        cells.append(
            [
                r["path"],
                f"{r['per_query_s']:.3g}",
                f"{n_rows / r['per_query_s'] / 1e6:.2f} M",
                f"{r['aggregate_s']:.3g}",
                f"{n_rows / r['aggregate_s'] / 1e6:.2f} M",
                agree,
            ]
        )
    return cells


def table(rows: list[dict], n_rows: int) -> str:
    lines = ["| " + " | ".join(TABLE_COLUMNS) + " |", "|---|--:|--:|--:|--:|---|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_cells(rows, n_rows)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument("--data", type=Path, default=Path("/tmp/fastndcg-scaleout"))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--engines", default="dask,spark", help="comma-separated: dask,spark")
    parser.add_argument("--repeat", type=int, default=2, help="runs per path (fastest counts)")
    parser.add_argument("--json", type=Path, help="also write the table here (docs/benchmarks/)")
    args = parser.parse_args()
    folder = args.data / f"{args.rows}-{args.files}"
    start = time.perf_counter()
    generate(args.rows, args.files, folder)
    print(f"data: {folder} ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    fastndcg.warmup()
    load = os.getloadavg()[0]
    rows, reference, mean = run_single(folder, args.repeat)
    engines = args.engines.split(",")
    if "dask" in engines:
        rows += run_dask(folder, args.workers, reference, mean, args.repeat)
    if "spark" in engines:
        rows += run_spark(folder, args.workers, reference, mean, args.repeat)
    described = (
        f"{args.rows:,} rows, {len(reference):,} queries of 1-99 rows, {args.files} Parquet "
        f"files; NDCG@{K}; {os.cpu_count()} cores, {args.workers} workers; fastest of "
        f"{args.repeat} runs; load average {load:.1f} at start, {os.getloadavg()[0]:.1f} at end"
    )
    print(f"{described}; Python {platform.python_version()}, fastndcg {fastndcg.__version__}")
    print(table(rows, args.rows))
    if args.json:
        import report

        report.write(
            args.json,
            title="Dask and Spark against one machine",
            command=report.command_line(),
            columns=TABLE_COLUMNS,
            rows=table_cells(rows, args.rows),
            data=described,
            notes=[
                "*per query to driver*: every query's results collected to the calling "
                "process, as `ndcg_parquet` returns them; *aggregate only*: the mean alone. "
                "Compile time, cluster and JVM start are kept out (each engine runs a small "
                "job first).",
            ],
            tools=("dask", "distributed", "pyspark"),
            raw=rows,
        )


if __name__ == "__main__":
    main()
