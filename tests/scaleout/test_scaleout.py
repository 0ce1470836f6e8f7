"""What the Dask and Spark adapters share, without any engine: imports, totals, checks, errors."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scaleout_data import judged_table, shuffled

import fastndcg
from fastndcg._scaleout import Job, Totals, check_disjoint


def python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True
    )


def test_import_fastndcg_loads_no_engine():
    run = python(
        """
        import sys, fastndcg, fastndcg.cli, fastndcg.stream
        fastndcg.cli.build_parser()
        print(sorted(m for m in ("dask", "distributed", "pyspark") if m in sys.modules))
        """
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {blocked!r}:
            raise ImportError(f"No module named {{name!r}}")
sys.meta_path.insert(0, Block())
"""


@pytest.mark.parametrize(("extra", "blocked"), [("dask", "dask"), ("spark", "pyspark")])
def test_a_missing_extra_names_the_install_command(extra, blocked):
    run = python(
        BLOCK.format(blocked=blocked)
        + f"""
try:
    import fastndcg.{extra}
except ImportError as exc:
    print(exc)
"""
    )
    assert run.returncode == 0, run.stderr
    assert f"fastndcg.{extra} needs {blocked}" in run.stdout
    assert f"pip install 'fastndcg[{extra}]'" in run.stdout
    command = python(
        BLOCK.format(blocked=blocked)
        + f"""
from fastndcg.cli import main
sys.exit(main(["score", "predictions.parquet", "--engine", "{extra}"]))
"""
    )
    assert command.returncode == 2
    lines = command.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pip install 'fastndcg[{extra}]'" in lines[0]


def partition_totals(table: pa.Table, cuts: list[int], **options) -> list[Totals]:
    """Totals of the per-query results of each partition (scored as whole queries)."""
    job = Job.create(
        qid="qid",
        grade="grade",
        score="score",
        n_threads=1,
        options=options,
        keeps_order=False,
        order_hint="",
    )
    ids = table.column("qid").to_numpy()
    parts = []
    for lo, hi in itertools.pairwise(cuts):
        rows = table.filter(pa.array((ids >= lo) & (ids < hi)))
        parts.append(job.totals(job.score_table(shuffled(rows))))
    return parts


@pytest.mark.parametrize(
    "options",
    [
        dict(k=[1, 5, None]),
        dict(k=3, aggregate="ratio"),
        dict(k=[2, None], zero_idcg="zero", gain="linear"),
        dict(k=4, zero_idcg="one", aggregate="ratio"),
    ],
)
def test_totals_of_partitions_give_the_single_machine_aggregate(options):
    table = judged_table(n_queries=200, seed=2)
    expected = fastndcg.ndcg_table(table, **options)
    ids = np.unique(table.column("qid").to_numpy())
    cuts = [int(ids[0]), int(ids[50]), int(ids[51]), int(ids[120]), int(ids[-1]) + 1]
    parts = partition_totals(table, cuts, **options)
    total = Totals.combine(parts, disjoint=True)
    np.testing.assert_allclose(total.mean, expected.mean, rtol=1e-12)
    np.testing.assert_array_equal(total.n_skipped, expected.n_skipped)
    assert (total.n_queries, total.n_rows) == (expected.n_queries, table.num_rows)
    assert total.ranges == ()
    assert repr(total).startswith(f"Totals(n_queries={expected.n_queries}, n_rows=")
    # the Arrow round trip Spark uses
    rows = pa.Table.from_batches([p.to_batch() for p in parts])
    assert rows.schema == Totals.arrow_schema(len(expected.k))
    again = Totals.from_arrow(rows, total.k, total.aggregate)
    np.testing.assert_array_equal(again.mean, total.mean)
    if len(expected.k) == 1:
        assert total.value() == float(total) == pytest.approx(float(expected), rel=1e-12)
    else:
        assert list(total.value()) == list(expected.k)
        with pytest.raises(TypeError, match="float\\(\\) needs one cutoff"):
            float(total)


def test_overlapping_partition_ranges_are_refused():
    check_disjoint([(10, 20, 0), (0, 9, 1), (21, 30, 2)])
    check_disjoint([])
    with pytest.raises(ValueError, match=r"one holds query ids 0\.\.10, another 10\.\.30"):
        check_disjoint([(10, 30, 0), (0, 10, 1)])
    with pytest.raises(ValueError, match="validate='exact' when partitions hold interleaved"):
        check_disjoint([("a", "m", 0), ("c", "d", 1)])
    # pieces of one partition (files packed together) may interleave; other partitions may not
    packed = [(0, 9, 0), (20, 29, 1), (30, 39, 0), (10, 19, 1), (40, 49, 2)]
    check_disjoint(packed)
    check_disjoint([(0, 100, 0), (5, 6, 0), (101, 102, 1)])
    for intruder in [(35, 35, 1), (49, 60, 0), (0, 0, 2), (25, 31, 2)]:
        with pytest.raises(ValueError, match="partitions share query ids"):
            check_disjoint([*packed, intruder])
    # a brute-force check on random pieces
    rng = np.random.default_rng(0)
    for _ in range(300):
        lo = rng.integers(0, 60, 6)
        pieces = [(int(a), int(a + rng.integers(0, 8)), int(rng.integers(0, 3))) for a in lo]
        clash = any(
            p[2] != q[2] and p[0] <= q[1] and q[0] <= p[1]
            for i, p in enumerate(pieces)
            for q in pieces[i + 1 :]
        )
        if clash:
            with pytest.raises(ValueError):
                check_disjoint(pieces)
        else:
            check_disjoint(pieces)
    table = judged_table(n_queries=30, seed=1)
    ids = np.unique(table.column("qid").to_numpy())
    parts = partition_totals(table, [int(ids[0]), int(ids[10]), int(ids[-1]) + 1], k=3)
    assert [p.ranges for p in parts] == [
        ((int(ids[0]), int(ids[9])),),
        ((int(ids[10]), int(ids[-1])),),
    ]


def test_job_checks_options_before_any_task():
    make = dict(qid="qid", grade="grade", score="score", n_threads=1, order_hint="HINT")
    with pytest.raises(ValueError, match=r"ties='stable' depends on the order of rows .* HINT"):
        Job.create(options=dict(ties="stable"), keeps_order=False, **make)
    Job.create(options=dict(ties="stable"), keeps_order=True, **make)
    with pytest.raises(ValueError, match="ties='random' keys every tie"):
        Job.create(options=dict(ties="random", seed=1), keeps_order=True, **make)
    with pytest.raises(ValueError, match="ties='docid_desc' orders ties by document id"):
        Job.create(options=dict(ties="docid_desc"), keeps_order=True, **make)
    with pytest.raises(ValueError, match="preset 'trec_eval' orders tied scores by document id"):
        Job.create(options=dict(preset="trec_eval"), keeps_order=True, **make)
    with pytest.raises(ValueError, match="n_threads must be a positive int or None; got 0"):
        Job.create(options={}, keeps_order=True, **{**make, "n_threads": 0})
    with pytest.raises(TypeError, match="grade= must be a column name"):
        Job.create(options={}, keeps_order=True, **{**make, "grade": 3})
    with pytest.raises(ValueError, match="ideal='max' needs max_grade= when streaming"):
        Job.create(options=dict(ideal="max"), keeps_order=True, **make)
    job = Job.create(options=dict(backend="numpy", k=[1, None]), keeps_order=True, **make)
    assert job.options["backend"] == "numpy" and job.cutoffs == (1, None)
    with pytest.raises(
        TypeError,
        match=r"column 'score' \(score\) has type string, but scores must be numeric; FIX score",
    ):
        job.check_schema(
            pa.schema([("qid", pa.int64()), ("grade", pa.int8()), ("score", pa.string())]),
            "FIX {0}",
        )
    with pytest.raises(
        TypeError, match=r"column 'qid' \(qid\) has type list<item: int64>, but query ids"
    ):
        job.check_schema(
            pa.schema(
                [("qid", pa.list_(pa.int64())), ("grade", pa.int8()), ("score", pa.float32())]
            ),
            "",
        )


def test_one_partition_is_grouped_stably_before_streaming():
    """A partition whose queries are not contiguous is sorted by query id, keeping row order."""
    table = judged_table(n_queries=40, seed=8, tie_heavy=True)
    expected = fastndcg.ndcg_table(table, k=[1, None], ties="stable")
    job = Job.create(
        qid="qid",
        grade="grade",
        score="score",
        n_threads=None,
        options=dict(k=[1, None], ties="stable"),
        keeps_order=True,
        order_hint="",
    )
    # interleave two halves of the queries: rows stay in order inside each query
    ids = table.column("qid").to_numpy()
    order = np.argsort(np.where(np.isin(ids, np.unique(ids)[::2]), 0, 1), kind="stable")
    got = job.score_table(table.take(order)).to_pandas().set_index("query_id")
    np.testing.assert_array_equal(
        got.loc[expected.query_ids, ["ndcg@1", "ndcg"]], expected.per_query
    )
    assert job.score_table(table.slice(0, 0)).num_rows == 0


@pytest.mark.parametrize("column", ["grade", "score"])
def test_integers_beyond_float64_are_refused_with_their_row(column):
    """A task refuses integers float64 rounds as the single-machine scorer does, row named."""
    table = pa.table(
        {
            "qid": [1, 1, 2],
            "grade": pa.array([0, 1, 2], pa.int64()),
            "score": pa.array([3, 2, 1], pa.int64()),
        }
    )
    at = table.schema.get_field_index(column)
    table = table.set_column(at, column, pa.array([0, 2**53 + 1, 2], pa.int64()))
    job = Job.create(
        qid="qid",
        grade="grade",
        score="score",
        n_threads=1,
        options={},
        keeps_order=True,
        order_hint="",
    )
    with pytest.raises(ValueError, match=r"has 9007199254740993 at row 1, beyond 2\*\*53"):
        job.score_table(table)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["score", "x.parquet", "--cluster", "tcp://h:8786"],
            "--cluster and --colocated go with --engine",
        ),
        (
            ["score", "--qrels", "q", "--run", "r", "--engine", "dask"],
            "--engine dask scores Parquet predictions, not TREC runs",
        ),
        (["score", "x.csv", "--engine", "spark"], "--engine spark reads Parquet; convert x.csv"),
        (["score", "x.TSV.gz", "--engine", "dask"], "--engine dask reads Parquet; convert x.TSV"),
        (
            ["score", "x.parquet", "--engine", "dask", "--per-query", "p.parquet"],
            "--per-query is not available with --engine dask",
        ),
    ],
)
def test_engine_options_of_the_command(args, message, capsys):
    from fastndcg.cli import main

    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_the_partition_note_follows_the_place_an_error_names():
    """An error about a row of a partition says rows count within it; one about a query does
    not, whatever its words (here a query id that reads like a row)."""
    job = Job.create(
        qid="qid",
        grade="grade",
        score="score",
        n_threads=None,
        options=dict(zero_idcg="error"),
        keeps_order=True,
        order_hint="",
    )
    unjudged = pa.table({"qid": ["row 3", "row 3"], "grade": [0, 0], "score": [0.5, 0.2]})
    with pytest.raises(ValueError) as info:
        job.score_table(unjudged)
    assert info.value.where == "query 'row 3'"
    assert "partition" not in str(info.value)
    negative = pa.table({"qid": ["a", "a"], "grade": [1, -1], "score": [0.5, 0.2]})
    with pytest.raises(ValueError) as info:
        job.score_table(negative)
    assert info.value.where == "row 1 (query 'a')"
    assert str(info.value).endswith("(row numbers count within one partition of the data)")


def test_files_are_scored_whole_or_not_at_all(tmp_path):
    """The rows an engine scored must be those the files' footers promised before it started
    (a file rewritten meanwhile, or a reader that stops early, is an InputError)."""
    from fastndcg._scaleout import score_whole_files

    table = judged_table(n_queries=30, seed=4)
    for i, half in enumerate((table.slice(0, 100), table.slice(100))):
        pq.write_table(half, tmp_path / f"part-{i}.parquet")

    def totals_of(rows: int):
        """An engine's scoring that saw ``rows`` rows (of one query, for short)."""

        def score(paths):
            assert paths == [str(tmp_path / "part-0.parquet"), str(tmp_path / "part-1.parquet")]
            results = {"query_id": [1], "n_items": [rows], "ndcg": [0.5], "dcg": [1], "idcg": [2]}
            return Totals.of(results, (None,), "mean")

        return score

    assert score_whole_files(tmp_path, totals_of(table.num_rows)).n_rows == table.num_rows
    with pytest.raises(fastndcg.InputError) as info:
        score_whole_files(tmp_path, totals_of(table.num_rows - 7))
    exc = info.value
    assert (exc.value, exc.where) == (table.num_rows - 7, str(tmp_path))
    assert f"{table.num_rows - 7:,} rows read of the {table.num_rows:,}" in str(exc)
    remote = score_whole_files("s3://bucket/none.parquet", lambda paths: Totals.zero((None,), "m"))
    assert remote.n_rows == 0  # remote files: the engine's reader alone sees them


def test_the_engine_is_checked_by_the_option_table():
    from fastndcg._scaleout import score_on_engine

    with pytest.raises(fastndcg.OptionError) as info:
        score_on_engine("ray", "x.parquet")
    assert (info.value.option, info.value.value) == ("engine", "ray")
    assert str(info.value).endswith("valid values are 'local', 'dask', 'spark'")
    with pytest.raises(fastndcg.OptionError) as info:
        score_on_engine("local", "x.parquet")
    assert info.value.option == "engine" and str(info.value).endswith("use one of 'dask', 'spark'")
