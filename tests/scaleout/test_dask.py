"""fastndcg.dask on a 2-worker LocalCluster: every result equals single-machine fastndcg per query.

The workers run the backend the client resolved, so with numba blocked (the second run of
scripts/test.sh) they score with NumPy and never import numba.
"""

from __future__ import annotations

import doctest
import io
import itertools
import json
import logging
import os
import subprocess
import sys
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import NUMBA_BLOCKED, TESTS
from scaleout_data import (
    LONG_QUERY,
    assert_same_mean,
    assert_same_measures,
    assert_same_per_query,
    judged_table,
    measures_reference,
    query_starts,
    reference,
    shuffled,
    thread_probe,
    write_query_ranges,
)

import fastndcg

dask = pytest.importorskip("dask", reason="needs the dask extra")
dd = pytest.importorskip("dask.dataframe", reason="needs the dask extra")
distributed = pytest.importorskip("dask.distributed", reason="needs the dask extra")
import fastndcg.dask as fdask  # noqa: E402

pytestmark = pytest.mark.dask


@pytest.fixture(scope="module")
def client():
    fastndcg.warmup()  # fill the Numba cache before the workers start: they only load it
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            memory_limit="1GiB",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def table():
    return judged_table(seed=3)


def frame_of(table: pa.Table, npartitions: int):
    """A Dask DataFrame of the rows in their order, cut into equal partitions (cutting queries)."""
    return dd.from_pandas(table.to_pandas(), npartitions=npartitions, sort=False)


def by_query(table: pa.Table, bounds: list[int]):
    """A Dask DataFrame whose partitions are the given query ranges (some empty)."""
    frame = table.to_pandas()
    pieces = [frame.iloc[a:b] for a, b in itertools.pairwise(query_starts(table, bounds))]
    return dd.from_map(lambda piece: piece, pieces, meta=frame.iloc[:0], enforce_metadata=False)


OPTIONS = [
    dict(k=[1, 5, None]),
    dict(k=10, gain="linear", zero_idcg="zero", aggregate="ratio"),
    dict(k=[3, None], ideal="max", max_grade=4, ties="pessimistic", discount="reciprocal"),
]


@pytest.mark.parametrize(("options", "npartitions"), list(zip(OPTIONS, [3, 7, 5], strict=True)))
def test_shuffled_rows_give_the_single_machine_values(client, table, options, npartitions):
    rows = shuffled(table, seed=npartitions)
    expected, mean = reference(rows, **options)
    ddf = frame_of(rows, npartitions)
    # computed together, in one graph (Dask returns Delayed results mixed with frames out of
    # order; the aggregate is a Scalar, so the order holds)
    per_query, total = dask.compute(fdask.per_query(ddf, **options), fdask.ndcg(ddf, **options))
    assert isinstance(per_query, pd.DataFrame) and not isinstance(total, pd.DataFrame)
    assert_same_per_query(per_query, expected)
    assert_same_mean(total, mean)


def test_presets_decimals_and_tool_aggregates(client, table):
    shuffled_options = [
        dict(preset="sklearn", k=[5, None]),
        dict(preset="torchmetrics"),
        dict(preset="keras_rs", ties="average"),
        dict(preset="gdeval", ties="average"),  # per-query values rounded to 5 decimals
    ]
    colocated_options = [dict(preset="lightgbm"), dict(preset="xgboost")]  # input-order ties
    ddf, whole = frame_of(shuffled(table), 4), by_query(table, [0, 100, 300])
    jobs, expected = [], []
    for options in shuffled_options + colocated_options:
        colocated = options in colocated_options
        source = whole if colocated else ddf
        jobs += [
            fdask.per_query(source, colocated=colocated, **options),
            fdask.ndcg(source, colocated=colocated, **options),
        ]
        expected.append(reference(table, **options))
    got = client.compute(jobs, sync=True)
    for (per_query, mean), frame, total in zip(expected, got[::2], got[1::2], strict=True):
        assert_same_per_query(frame, per_query)
        assert_same_mean(total, mean)
    with pytest.raises(ValueError, match="ties='stable' depends on the order of rows"):
        fdask.per_query(ddf, preset="lightgbm")
    with pytest.raises(ValueError, match="ties='random'"):
        fdask.per_query(ddf, preset="keras_rs")


def test_naive_partition_scoring_is_caught_by_the_comparison(client, table):
    """The failure the adapter prevents: scoring partitions that cut queries, each alone."""
    from fastndcg.stream import StreamScorer

    backend = fastndcg.available_backends()[0]  # what the client would resolve

    def alone(part):
        scorer = StreamScorer(k=5, backend=backend)
        batch = pa.RecordBatch.from_pandas(part, preserve_index=False)
        return pa.Table.from_batches([scorer.feed(batch), scorer.finish()]).to_pandas()

    ddf = frame_of(table, 7)
    naive = ddf.map_partitions(alone, meta=fdask.per_query(ddf, k=5)._meta).compute()
    expected, _ = reference(table, k=5)
    with pytest.raises(AssertionError, match="scored in pieces"):
        assert_same_per_query(naive, expected)


def test_tie_heavy_data_is_independent_of_partitioning(client):
    rows = judged_table(n_queries=150, seed=5, tie_heavy=True)
    ties = ["average", "pessimistic", "optimistic"]
    expected = [reference(rows, k=[1, 3, None], ties=t) for t in ties]
    for npartitions, seed in ((1, 0), (4, 1), (9, 2)):
        ddf = frame_of(shuffled(rows, seed), npartitions)
        jobs = [
            fdask.per_query(ddf, k=[1, 3, None], ties=t, npartitions=npartitions + 1) for t in ties
        ]
        jobs += [fdask.ndcg(ddf, k=[1, 3, None], ties=t) for t in ties]
        got = client.compute(jobs, sync=True)
        for (per_query, mean), frame, total in zip(expected, got[:3], got[3:], strict=True):
            assert_same_per_query(frame, per_query)
            assert_same_mean(total, mean)


@pytest.mark.parametrize("validate", ["ranges", "exact"])
def test_colocated_partitions_are_exact_without_a_shuffle(client, table, validate):
    # cut at query boundaries, with empty partitions and the long query alone in one
    ddf = by_query(table, [0, 0, LONG_QUERY, LONG_QUERY + 1, 120, 120, 300])
    assert ddf.npartitions == 6
    for options in (dict(k=[2, None]), dict(k=4, ties="stable")):
        expected, mean = reference(table, **options)
        got = fdask.per_query(ddf, colocated=True, validate=validate, **options)
        assert_same_per_query(got.compute(), expected)
        assert_same_mean(
            fdask.ndcg(ddf, colocated=True, validate=validate, **options).compute(), mean
        )
    # rows in ranked order (no score column) keep their order without a shuffle
    ranked = table.drop_columns("score")
    expected, _ = reference(ranked, score=None, k=3)
    got = fdask.per_query(by_query(ranked, [0, 50, 300]), score=None, k=3, colocated=True)
    assert_same_per_query(got.compute(), expected)


@pytest.mark.parametrize("validate", ["ranges", "exact"])
def test_colocated_partitions_that_cut_a_query_raise(client, table, validate):
    ddf = frame_of(table, 5)  # equal row counts: the cuts fall inside queries
    message = "partitions share query ids" if validate == "ranges" else "more than one partition"
    with pytest.raises(ValueError, match=message):
        fdask.per_query(ddf, k=5, colocated=True, validate=validate).compute()
    with pytest.raises(ValueError, match=message):
        fdask.ndcg(ddf, k=5, colocated=True, validate=validate).compute()


def test_exact_check_accepts_interleaved_but_disjoint_partitions(client, table):
    frame = table.to_pandas()
    buckets = [frame[frame["qid"] % 3 == r] for r in range(3)]  # hash-like partitioning
    ddf = dd.from_map(lambda piece: piece, buckets, meta=frame.iloc[:0], enforce_metadata=False)
    expected, mean = reference(table, k=5)
    with pytest.raises(ValueError, match="validate='exact' when partitions hold interleaved"):
        fdask.ndcg(ddf, k=5, colocated=True).compute()
    assert_same_per_query(
        fdask.per_query(ddf, k=5, colocated=True, validate="exact").compute(), expected
    )
    assert_same_mean(fdask.ndcg(ddf, k=5, colocated=True, validate="exact").compute(), mean)


def test_parquet_row_groups_split_queries_unless_files_are_read_whole(client, table, tmp_path):
    # 4 files, each a whole-query range, with row groups that cut queries
    write_query_ranges(table, tmp_path, [0, 40, 160, 230, 300], row_group_size=1000)
    expected, mean = reference(table, k=[1, 10])
    split = dd.read_parquet(str(tmp_path), split_row_groups=True)
    assert split.npartitions > 4
    with pytest.raises(ValueError, match="partitions share query ids"):
        fdask.ndcg(split, k=[1, 10], colocated=True).compute()
    whole = fdask.read_parquet(tmp_path, colocated=True)
    assert whole.npartitions == 4
    assert_same_per_query(fdask.per_query(whole, k=[1, 10], colocated=True).compute(), expected)
    assert_same_mean(fdask.ndcg(split, k=[1, 10]).compute(), mean)  # the default shuffle


def test_query_id_index_and_string_ids(client, table):
    frame = table.to_pandas()
    frame["qid"] = "q" + frame["qid"].astype(str)
    rows = pa.Table.from_pandas(frame, preserve_index=False)
    expected, _ = reference(rows, k=3)
    indexed = dd.from_pandas(frame.set_index("qid"), npartitions=4, sort=True)
    got = fdask.per_query(indexed, k=3, colocated=True).compute()
    assert_same_per_query(got, expected)
    ddf = dd.from_pandas(frame.sample(frac=1, random_state=0), npartitions=4, sort=False)
    assert_same_per_query(fdask.per_query(ddf, k=3).compute(), expected)
    categorical = dd.from_pandas(frame.astype({"qid": "category"}), npartitions=3, sort=False)
    assert_same_per_query(fdask.per_query(categorical, k=3).compute(), expected)


def test_string_ids_whose_placeholder_has_no_type(client, table, tmp_path):
    """Dask's empty placeholder frame holds no id to tell the type of an object column or of
    a Parquet dictionary read as categories not yet known: Arrow calls it null."""
    frame = table.to_pandas()
    frame["qid"] = "q" + frame["qid"].astype(str)
    expected, mean = reference(pa.Table.from_pandas(frame, preserve_index=False), k=3)
    rows = pa.Table.from_pandas(frame, preserve_index=False)
    at = rows.schema.get_field_index("qid")
    pq.write_table(
        rows.set_column(at, "qid", rows.column("qid").dictionary_encode()), tmp_path / "a.parquet"
    )
    ddf = fdask.read_parquet(tmp_path)
    assert pa.types.is_null(pa.Schema.from_pandas(ddf._meta).field("qid").type.value_type)
    assert_same_per_query(fdask.per_query(ddf, k=3).compute(), expected)
    with dask.config.set({"dataframe.convert-string": False}):
        ddf = dd.from_pandas(frame.astype({"qid": object}), npartitions=3, sort=False)
        assert pa.types.is_null(pa.Schema.from_pandas(ddf._meta).field("qid").type)
        assert_same_mean(fdask.ndcg(ddf, k=3).compute(), mean)


def test_one_column_as_grade_and_score(client, table):
    """Scoring the grades themselves (the ideal ranking) reads the column once."""
    ideal = table.set_column(table.schema.get_field_index("score"), "score", table["grade"])
    expected, _ = reference(ideal, k=[1, 5])
    got = fdask.per_query(frame_of(table, 3), k=[1, 5], score="grade").compute()
    assert_same_per_query(got, expected)


def test_more_partitions_than_queries_and_all_zero_queries(client):
    rows = judged_table(n_queries=12, seed=9, long_len=60)
    ddf = frame_of(shuffled(rows), 4)
    for options in (dict(k=2), dict(k=2, zero_idcg="one")):
        expected, mean = reference(rows, **options)
        got, total = client.compute(
            [fdask.per_query(ddf, npartitions=24, **options), fdask.ndcg(ddf, **options)], sync=True
        )
        assert_same_per_query(got, expected)
        assert_same_mean(total, mean)
    totals = fdask.totals(frame_of(rows, 4), k=2).compute()
    assert (totals.n_rows, totals.n_queries) == (rows.num_rows, 12)
    assert totals.n_skipped[0] == 2  # queries 0 and 10 have no relevant item


def test_bad_input_fails_with_a_clear_error(client, table):
    ddf = frame_of(table, 3)
    with pytest.raises(
        KeyError, match="column 'label' not found; the DataFrame has columns: qid, grade, score"
    ):
        fdask.per_query(ddf, grade="label")
    text = dd.from_pandas(table.to_pandas().astype({"grade": str}), npartitions=2)
    with pytest.raises(
        TypeError,
        match=r"column 'grade' \(grade\) has type .*string, but grades must be numeric; cast it first",
    ):
        fdask.ndcg(text)
    with pytest.raises(ValueError, match="ties='random' keys every tie on the row's position"):
        fdask.ndcg(ddf, ties="random", seed=1)
    with pytest.raises(
        ValueError, match=r"ties='stable' depends on the order of rows .* colocated=True"
    ):
        fdask.per_query(ddf, ties="stable")
    with pytest.raises(ValueError, match="score=None means rows come in ranked order"):
        fdask.per_query(ddf, score=None)
    with pytest.raises(ValueError, match="unknown validate='nope'"):
        fdask.per_query(ddf, colocated=True, validate="nope")
    with pytest.raises(TypeError, match="expected a dask DataFrame; got DataFrame"):
        fdask.ndcg(table.to_pandas())
    with pytest.raises(
        TypeError, match=r"fastndcg.dask got unknown option\(s\) weights; valid options: .*decimals"
    ):
        fdask.ndcg(ddf, weights=[1.0])
    negative = table.to_pandas()
    negative.loc[17, "grade"] = -1.0
    with pytest.raises(
        ValueError,
        match=r"negative grades: column 'grade' has -1 at row \d+ .*"
        r"\(row numbers count within one partition of the data\)",
    ):
        fdask.ndcg(dd.from_pandas(negative, npartitions=3)).compute()
    frame = table.to_pandas()
    frame.loc[17, "grade"] = np.nan
    with pytest.raises(ValueError, match=r"column 'grade' \(grade\) has a null"):
        fdask.ndcg(dd.from_pandas(frame, npartitions=3)).compute()
    frame = table.to_pandas().astype({"qid": "Int64"})
    frame.loc[5, "qid"] = pd.NA
    with pytest.raises(ValueError, match=r"column 'qid' \(qid\) has a null"):
        fdask.per_query(dd.from_pandas(frame, npartitions=3)).compute()


@pytest.mark.skipif(not NUMBA_BLOCKED, reason="only meaningful when numba is blocked")
def test_workers_run_the_backend_the_client_resolved(client, table):
    """The client resolved NumPy (numba blocked), so the workers never import numba."""
    expected, _ = reference(table, k=5)
    assert_same_per_query(fdask.per_query(frame_of(shuffled(table), 3), k=5).compute(), expected)
    assert not any(client.run(lambda: "numba" in __import__("sys").modules).values())


@pytest.mark.numba
def test_each_task_runs_with_the_intended_numba_threads(client, table):
    def pool():
        import numba

        return numba.config.NUMBA_NUM_THREADS, os.environ.get("NUMBA_NUM_THREADS")

    before = client.run(pool)
    ceiling = min(size for size, _ in before.values())
    expected, _ = reference(table, k=5)
    ddf = frame_of(shuffled(table), 4)
    for n_threads, wanted in ((1, 1), (2, min(2, ceiling)), (None, ceiling)):
        got = fdask.per_query(ddf, k=5, n_threads=n_threads, gain=thread_probe(wanted))
        assert_same_per_query(got.compute(), expected)
    assert client.run(pool) == before  # set per task, never through the environment
    with pytest.raises(ValueError, match="ran with 1 Numba threads; 3 wanted"):
        fdask.ndcg(ddf, k=5, gain=thread_probe(3)).compute()


WORKQUEUE = """
import sys
sys.path.insert(0, {tests!r})
import dask, dask.dataframe as dd, numba
import fastndcg.dask
from scaleout_data import assert_same_per_query, judged_table, reference, shuffled
table = judged_table(n_queries=400, seed=2)
ddf = dd.from_pandas(shuffled(table).to_pandas(), npartitions=12, sort=False)
expected, _ = reference(table, k=5)
with dask.config.set(scheduler="threads", num_workers=4):
    for _ in range(3):
        assert_same_per_query(fastndcg.dask.per_query(ddf, k=5).compute(), expected)
print(numba.threading_layer())
"""


@pytest.mark.numba
def test_concurrent_tasks_under_the_workqueue_threading_layer():
    """Numba's workqueue layer kills the process when two threads launch parallel kernels at
    once; fastndcg launches none (its threads are a plain pool), so tasks run side by side."""
    code = WORKQUEUE.format(tests=str(TESTS))
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "workqueue"


@pytest.mark.numba
def test_workers_load_the_kernels_from_the_cache(client, table):
    def compile_stats():
        from numba.core.registry import CPUDispatcher

        from fastndcg._backends.numba import scan, score, trec

        stats = {}
        kernels = {**vars(score), **vars(scan), **vars(trec)}
        for name, kernel in kernels.items():
            if isinstance(kernel, CPUDispatcher) and kernel.signatures:
                hits, misses = kernel.stats.cache_hits, kernel.stats.cache_misses
                stats[name] = (sum(hits.values()), sum(misses.values()))
        return stats

    fdask.ndcg(frame_of(shuffled(table), 4), k=5).compute()
    for worker, stats in client.run(compile_stats).items():
        assert stats, f"{worker} ran no kernel"
        assert all(misses == 0 and hits >= 1 for hits, misses in stats.values()), (worker, stats)


def test_command_line_on_a_dask_cluster(client, table, tmp_path):
    from fastndcg.cli import main

    write_query_ranges(table, tmp_path, [0, 100, 200, 300], row_group_size=50)
    expected = fastndcg.ndcg_parquet(tmp_path, k=[1, 10, None])
    address = client.scheduler.address
    for extra in ([], ["--colocated"]):
        out = io.StringIO()
        with redirect_stdout(out):
            status = main(["score", str(tmp_path), "--engine", "dask", "--cluster", address,
                           "-k", "1,10,all", "--format", "json", *extra])  # fmt: skip
        assert status == 0
        (row,) = json.loads(out.getvalue())["results"]
        assert row["queries"] == expected.n_queries
        assert row["skipped"] == int(expected.n_skipped.max())
        for k, mean in zip(expected.k, expected.mean, strict=True):
            assert row[f"ndcg{'' if k is None else f'@{k}'}"] == pytest.approx(mean, rel=1e-12)


def test_measures_on_the_command_line_on_a_dask_cluster(client, table, tmp_path):
    from fastndcg.cli import main

    write_query_ranges(table, tmp_path, [0, 100, 200, 300], row_group_size=50)
    names = ["P@10", "AP", "nDCG@10"]
    expected = fastndcg.evaluate_parquet(tmp_path, measures=names)
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(["score", str(tmp_path), "--engine", "dask", "--cluster",
                       client.scheduler.address, "-m", "P@10", "-m", "AP", "-m", "nDCG@10",
                       "--colocated", "--format", "json"])  # fmt: skip
    assert status == 0
    (row,) = json.loads(out.getvalue())["results"]
    assert row["queries"] == expected.n_queries
    assert [row[name] for name in names] == pytest.approx(list(expected.mean), rel=1e-12)


def test_a_file_rewritten_before_the_workers_read_it_is_an_error(
    client, table, tmp_path, monkeypatch
):
    """Issue 40, fault 1 on Dask: the workers read a file a writer had rewritten with fewer rows
    since it was listed; its footer's rows were scored in part, and nothing said so."""
    path = tmp_path / "predictions.parquet"
    pq.write_table(table, path)
    read = fdask.read_parquet

    def rewritten_then_read(paths, **kwargs):
        pq.write_table(table.slice(0, 100), path)
        return read(paths, **kwargs)

    monkeypatch.setattr(fdask, "read_parquet", rewritten_then_read)
    with pytest.raises(fastndcg.InputError) as info:
        fdask.score_files(path, cluster=client.scheduler.address, k=5)
    assert (info.value.where, info.value.value) == (str(path), 100)
    assert f"100 rows read of the {table.num_rows:,} its Parquet metadata" in str(info.value)


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("foo", "missing port number in address 'foo'"),  # the 60 s wait at exit was here
        ("bar://host:1", "unknown address scheme 'bar'"),
        ("tcp://127.0.0.1:1", "Timed out trying to connect to tcp://127.0.0.1:1 after 1 s"),
    ],
)
def test_command_line_with_a_bad_scheduler_address_fails_at_once(tmp_path, address, said):
    """One line, exit 2, no traceback and no wait for the half-built client at exit."""
    import time

    from fastndcg.synthetic import make_synthetic

    data = make_synthetic(20, seed=1, max_len=10)
    path = tmp_path / "predictions.parquet"
    pq.write_table(pa.table({"qid": data.qid(), "grade": data.grades, "score": data.scores}), path)
    env = dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="1s")
    command = [sys.executable, "-m", "fastndcg", "score", str(path), "--engine", "dask"]
    started = time.perf_counter()
    run = subprocess.run(
        [*command, "--cluster", address], capture_output=True, text=True, env=env, timeout=50
    )
    assert time.perf_counter() - started < 20
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(
        f"fastndcg: error: cannot connect to a Dask scheduler at {address!r}"
    )
    assert said in lines[0] and lines[0].endswith("such as tcp://10.0.0.5:8786")


def test_module_example(client):
    failures, tried = doctest.testmod(fdask, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


MEASURES = ["nDCG@10", "P@5", "R@10", "AP", "RR", "Success@3", "Judged@10", "NumRelRet"]


def test_measures_of_shuffled_rows_are_those_of_evaluate(client, table):
    rows = shuffled(table, seed=11)
    options = dict(measures=MEASURES, relevance_level=2)
    expected, mean = measures_reference(rows, **options)
    ddf = frame_of(rows, 5)
    per_query, total = dask.compute(fdask.per_query(ddf, **options), fdask.evaluate(ddf, **options))
    assert_same_measures(per_query, expected)
    assert_same_mean(total, mean)
    totals = fdask.totals(ddf, **options).compute()
    assert totals.measures == tuple(MEASURES) and totals.n_queries == len(expected)
    assert totals.n_rows == table.num_rows
    skipped = fastndcg.evaluate_table(rows, **options).n_skipped
    assert skipped.any()  # queries without a relevant judgment are left out of the means
    np.testing.assert_array_equal(totals.n_skipped, skipped)


def test_measures_of_colocated_queries_under_a_tool_s_definitions(client, table):
    """trec_eval's measures in the input order of ties: GMAP, counts, a measure per cutoff."""
    options = dict(measures=["map", "gm_map", "P.5,10", "num_rel_ret", "bpref"], ties="stable")
    options.update(preset="trec_eval", zero_idcg="skip")
    expected, mean = measures_reference(table, **options)
    ddf = by_query(table, [0, 100, 300])
    per_query = fdask.per_query(ddf, colocated=True, **options)
    total = fdask.evaluate(ddf, colocated=True, validate="exact", **options)
    got, total = client.compute([per_query, total], sync=True)
    assert_same_measures(got, expected)
    assert list(total) == ["map", "gm_map", "P_5", "P_10", "num_rel_ret", "bpref"]
    assert_same_mean(total, mean)


def test_measures_refusals(client, table):
    ddf = frame_of(table, 3)
    with pytest.raises(fastndcg.OptionTypeError, match=r"fastndcg\.dask\.evaluate"):
        fdask.ndcg(ddf, measures=["P@10"])
    with pytest.raises(fastndcg.OptionTypeError, match="nDCG@10"):
        fdask.evaluate(ddf, measures=["P@10"], k=10)
    with pytest.raises(fastndcg.OptionError, match="'ERR@10'"):
        fdask.evaluate(ddf, measures=["ERR@10"])  # needs a tie order
    with pytest.raises(fastndcg.OptionError, match="ties='stable' depends on the order"):
        fdask.per_query(ddf, measures=["ERR@10"], ties="stable")
    with pytest.raises(fastndcg.OptionError, match="relevance_level"):
        fdask.per_query(ddf, relevance_level=2)
    with pytest.raises(fastndcg.OptionError, match="nearest"):
        fdask.per_query(ddf, measures=["P@ten"])
