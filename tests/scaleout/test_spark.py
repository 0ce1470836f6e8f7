"""fastndcg.spark on local Spark: every result equals single-machine fastndcg per query.

Arrow batches hold 64 rows here, so nearly every query boundary the scorer sees is a batch
boundary and the carry-over path runs in every test. Skipped without pyspark or Java, and in
the numba-blocked run (the adapter does not depend on the backend; the Dask tests cover that).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from contextlib import redirect_stdout

import pyarrow as pa
import pytest
from conftest import NUMBA_BLOCKED, TESTS
from scaleout_data import (
    assert_same_mean,
    assert_same_measures,
    assert_same_per_query,
    judged_table,
    measures_reference,
    reference,
    shuffled,
    thread_probe,
    write_query_ranges,
)

import fastndcg

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(NUMBA_BLOCKED, reason="Spark tests run once, in the numba run"),
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17 or 21"),
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]

BATCH_ROWS = 64
SESSION_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.driver.memory": "1g",
    "spark.sql.execution.arrow.maxRecordsPerBatch": str(BATCH_ROWS),
}


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark", reason="needs the spark extra")
    from pyspark.sql import SparkSession

    fastndcg.warmup()  # the Python workers then load the Numba cache
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers' Python: this venv's
    builder = SparkSession.builder.master("local[2]")
    for key, value in SESSION_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def fspark(spark):
    import fastndcg.spark

    return fastndcg.spark


@pytest.fixture(scope="module")
def table():
    return judged_table(seed=4)  # its long query spans 11 Arrow batches


def frame(spark, table: pa.Table, partitions: int):
    """Rows scattered round-robin over ``partitions`` partitions (every query cut up)."""
    return spark.createDataFrame(shuffled(table, partitions)).repartition(partitions)


OPTIONS = [
    dict(k=[1, 5, None]),
    dict(k=10, gain="linear", zero_idcg="zero", aggregate="ratio", num_partitions=7),
    dict(k=[3, None], ideal="max", max_grade=4, ties="optimistic", num_partitions=1),
    dict(preset="gdeval", ties="average"),  # per-query values rounded to 5 decimals
]


@pytest.mark.parametrize("options", OPTIONS)
def test_scattered_rows_give_the_single_machine_values(spark, fspark, table, options):
    expected, mean = reference(table, **{k: v for k, v in options.items() if k != "num_partitions"})
    df = frame(spark, table, 5)
    assert_same_per_query(fspark.per_query(df, **options).toArrow(), expected)
    assert_same_mean(fspark.ndcg(df, **options), mean)


def test_measures_of_scattered_rows_are_those_of_evaluate(spark, fspark, table):
    options = dict(measures=["nDCG@10", "P.5,10", "map", "recip_rank", "num_ret"])
    options.update(preset="trec_eval", ties="average")
    expected, mean = measures_reference(table, **options)
    df = frame(spark, table, 5)
    assert_same_measures(fspark.per_query(df, **options).toArrow(), expected)
    assert_same_mean(fspark.evaluate(df, **options), mean)
    totals = fspark.totals(df, **options)
    assert totals.n_rows == table.num_rows and totals.n_queries == len(expected)
    with pytest.raises(fastndcg.OptionTypeError, match=r"fastndcg\.spark\.evaluate"):
        fspark.ndcg(df, measures=["P@10"])
    with pytest.raises(fastndcg.OptionError, match="ties='stable' depends on the order"):
        fspark.evaluate(df, measures=["ERR@10"], ties="stable")


def test_scoring_each_arrow_batch_alone_is_caught(spark, fspark, table):
    """The trap the carry-over closes: 64-row batches cut queries, naive scoring splits them."""

    def alone(batches):
        from fastndcg.stream import StreamScorer

        for batch in batches:
            scorer = StreamScorer(k=5)
            yield from pa.Table.from_batches([scorer.feed(batch), scorer.finish()]).to_batches()

    rows = spark.createDataFrame(table).repartition(3, "qid").sortWithinPartitions("qid")
    schema = fspark.per_query(rows, k=5).schema
    naive = rows.mapInArrow(alone, schema).toArrow()
    expected, _ = reference(table, k=5)
    with pytest.raises(AssertionError, match="scored in pieces"):
        assert_same_per_query(naive, expected)
    assert_same_per_query(fspark.per_query(rows, k=5).toArrow(), expected)


def test_tie_heavy_data_is_independent_of_partitioning(spark, fspark):
    rows = judged_table(n_queries=150, seed=6, tie_heavy=True)
    for ties, partitionings in (("average", (1, 3, 8)), ("pessimistic", (5,))):
        expected, _ = reference(rows, k=[1, 3, None], ties=ties)
        for partitions in partitionings:
            df = frame(spark, rows, partitions)
            got = fspark.per_query(df, k=[1, 3, None], ties=ties, num_partitions=partitions)
            assert_same_per_query(got.toArrow(), expected)


@pytest.fixture()
def range_files(table, tmp_path):
    """Four Parquet files, each a range of whole queries."""
    write_query_ranges(table, tmp_path, [0, 40, 160, 230, 300], row_group_size=300)
    return tmp_path


def test_colocated_files_are_exact_and_split_files_raise(spark, fspark, table, range_files):
    expected, mean = reference(table, k=[2, None])
    df = spark.read.parquet(str(range_files))
    for validate in ("ranges", "exact"):
        got = fspark.per_query(df, k=[2, None], colocated=True, validate=validate)
        assert_same_per_query(got.toArrow(), expected)
    assert_same_mean(fspark.ndcg(df, k=[2, None], colocated=True), mean)
    # Spark packs small files into partitions, largest first: ranges interleave, files do not
    spark.conf.set("spark.sql.files.openCostInBytes", "1")
    try:
        packed = spark.read.parquet(str(range_files))
        assert packed.rdd.getNumPartitions() < 4
        got = fspark.per_query(packed, k=[2, None], colocated=True).toArrow()
        assert_same_per_query(got, expected)
    finally:
        spark.conf.unset("spark.sql.files.openCostInBytes")
    # Spark splits files larger than maxPartitionBytes: queries are cut at the splits
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    try:
        split = spark.read.parquet(str(range_files))
        assert split.rdd.getNumPartitions() > 4
        with pytest.raises(ValueError, match="partitions share query ids"):
            fspark.per_query(split, k=5, colocated=True)
        with pytest.raises(ValueError, match="has rows in more than one partition"):
            fspark.ndcg(split, k=5, colocated=True, validate="exact")
        assert_same_mean(fspark.ndcg(split, k=[2, None]), mean)  # the default repartition
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def test_empty_partitions_all_zero_queries_and_strings(spark, fspark):
    rows = judged_table(n_queries=12, seed=9, long_len=150)
    for options in (dict(k=2), dict(k=2, zero_idcg="one")):
        expected, mean = reference(rows, **options)
        df = frame(spark, rows, 3)
        assert_same_per_query(
            fspark.per_query(df, num_partitions=16, **options).toArrow(), expected
        )
        assert_same_mean(fspark.ndcg(df, num_partitions=16, **options), mean)
    named = rows.set_column(0, "qid", rows.column("qid").cast(pa.string()))
    expected, _ = reference(named, k=3)
    got = fspark.per_query(frame(spark, named, 3), k=3).toArrow()
    assert got.schema.field("query_id").type == pa.string()
    assert_same_per_query(got, expected)
    totals = fspark.totals(frame(spark, rows, 3), k=2)
    assert (totals.n_rows, totals.n_queries, int(totals.n_skipped[0])) == (rows.num_rows, 12, 2)


def test_bad_input_fails_with_a_clear_error(spark, fspark, table):
    from pyspark.sql import functions as F

    df = frame(spark, table, 2)
    with pytest.raises(
        KeyError, match="column 'label' not found; the DataFrame has columns: qid, grade, score"
    ):
        fspark.per_query(df, grade="label")
    with pytest.raises(
        TypeError, match=r"column 'grade' \(grade\) has type string, but grades must be numeric"
    ):
        fspark.ndcg(df.withColumn("grade", F.col("grade").cast("string")))
    with pytest.raises(ValueError, match="ties='stable' depends on the order of rows"):
        fspark.per_query(df, ties="stable")
    with pytest.raises(ValueError, match="ties='random' keys every tie"):
        fspark.per_query(df, ties="random", seed=3)
    with pytest.raises(ValueError, match="score=None means rows come in ranked order"):
        fspark.per_query(df, score=None)
    with pytest.raises(TypeError, match="expected a pyspark DataFrame"):
        fspark.ndcg(table)
    nulls = df.withColumn(
        "grade", F.when(F.col("qid") == table["qid"][30].as_py(), None).otherwise(F.col("grade"))
    )
    with pytest.raises(Exception, match=r"column 'grade' \(grade\) has a null"):
        fspark.ndcg(nulls)
    # a worker's error comes back as itself, not wrapped in Spark's PythonException
    negative = df.withColumn(
        "grade", F.when(F.col("qid") == table["qid"][30].as_py(), -1).otherwise(F.col("grade"))
    )
    with pytest.raises(
        ValueError,
        match=r"^gain='exp2' .* negative grades: column 'grade' has -1 at row \d+ .*"
        r"\(row numbers count within one partition of the data\)$",
    ):
        fspark.ndcg(negative)
    with pytest.raises(TypeError, match=r"fastndcg.spark got unknown option\(s\) weights"):
        fspark.ndcg(df, weights=[1.0])
    # decimal grades and scores are read as doubles
    expected, _ = reference(table, k=4)
    decimals = df.withColumn("score", F.col("score").cast("decimal(20,15)"))
    assert_same_per_query(fspark.per_query(decimals, k=4).toArrow(), expected)


def test_column_names_with_dots_and_backticks(spark, fspark, table):
    """Spark reads a dot or a backtick in a column name as syntax unless quoted."""
    names = {"qid": "query.id", "grade": "the `grade`", "score": "model.score"}
    df = frame(spark, table.rename_columns([names[c] for c in table.column_names]), 3)
    expected, mean = reference(table, k=[1, 5])
    options = dict(qid="query.id", grade="the `grade`", score="model.score", k=[1, 5])
    assert_same_per_query(fspark.per_query(df, **options).toArrow(), expected)
    assert_same_mean(fspark.ndcg(df, **options), mean)
    ideal = table.set_column(table.schema.get_field_index("score"), "score", table["grade"])
    expected, _ = reference(ideal, k=3)
    got = fspark.per_query(df, qid="query.id", grade="the `grade`", score="the `grade`", k=3)
    assert_same_per_query(got.toArrow(), expected)


@pytest.mark.numba
def test_each_task_runs_with_the_intended_numba_threads(spark, fspark, table):
    import numba

    ceiling = numba.config.NUMBA_NUM_THREADS  # the Python workers inherit this environment
    expected, _ = reference(table, k=5)
    df = frame(spark, table, 3)
    for n_threads, wanted in ((1, 1), (2, min(2, ceiling))):
        got = fspark.per_query(df, k=5, n_threads=n_threads, gain=thread_probe(wanted))
        assert_same_per_query(got.toArrow(), expected)
    with pytest.raises(Exception, match="ran with 1 Numba threads; 3 wanted"):
        fspark.ndcg(df, k=5, gain=thread_probe(3))


def test_command_line_with_spark(spark, range_files):
    from fastndcg.cli import main

    expected = fastndcg.ndcg_parquet(range_files, k=[1, 10, None])
    for extra in ([], ["--colocated"]):
        out = io.StringIO()
        with redirect_stdout(out):
            status = main(["score", str(range_files), "--engine", "spark", "-k", "1,10,all",
                           "--format", "json", *extra])  # fmt: skip
        assert status == 0
        (row,) = json.loads(out.getvalue())["results"]
        assert row["queries"] == expected.n_queries
        for k, mean in zip(expected.k, expected.mean, strict=True):
            assert row[f"ndcg{'' if k is None else f'@{k}'}"] == pytest.approx(mean, rel=1e-12)


def test_rows_spark_did_not_read_are_an_error(fspark, range_files, monkeypatch):
    """Issue 40, fault 1 on Spark: fewer rows than the files' footers promised (here a reader
    that stops early) are an InputError, not a partial mean."""
    totals = fspark.totals
    monkeypatch.setattr(fspark, "totals", lambda df, **kwargs: totals(df.limit(100), **kwargs))
    with pytest.raises(fastndcg.InputError) as info:
        fspark.score_files(range_files, k=5)
    assert (info.value.where, info.value.value) == (str(range_files), 100)
    assert "a file changed while it was read" in str(info.value)


CONNECT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from scaleout_data import assert_same_mean, assert_same_per_query, judged_table, reference, shuffled
    import fastndcg.spark

    spark = SparkSession.builder.remote("local[2]")
    for key, value in {conf!r}.items():
        spark = spark.config(key, value)
    spark = spark.getOrCreate()
    table = judged_table(seed=7)
    df = spark.createDataFrame(shuffled(table)).repartition(4)
    assert type(df).__module__.startswith("pyspark.sql.connect"), type(df)
    expected, mean = reference(table, k=[3, None])
    assert_same_per_query(fastndcg.spark.per_query(df, k=[3, None]).toArrow(), expected)
    assert_same_mean(fastndcg.spark.ndcg(df, k=[3, None]), mean)
    spark.stop()
    print("connect ok")
    """
)


@pytest.mark.slow
def test_spark_connect(spark):
    """The same adapter over Spark Connect (a local Connect server in a fresh process)."""
    pytest.importorskip("pyspark.sql.connect.session", reason="needs pyspark[connect]")
    conf = {"spark.sql.execution.arrow.maxRecordsPerBatch": str(BATCH_ROWS)}  # a runtime conf
    code = CONNECT.format(tests=str(TESTS), conf=conf)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "connect ok" in run.stdout
