"""ndcg_parquet: files, directories, datasets; carry-over across files; bounded memory; progress."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from conftest import BACKENDS, TEST_DATA

import fastndcg
from fastndcg._core.vocabulary import GROUPINGS
from fastndcg.synthetic import make_synthetic


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    data = make_synthetic(1500, seed=8, max_len=200)
    table = pa.table({"qid": data.qid(), "label": data.grades, "pred": data.scores})
    folder = tmp_path_factory.mktemp("parts")
    # uneven files so that queries are split across file boundaries
    cuts = [0, 1234, 50_000, 50_001, 90_000, table.num_rows]
    for i, (a, b) in enumerate(itertools.pairwise(cuts)):
        pq.write_table(
            table.slice(a, b - a), folder / f"part-{i:02d}.parquet", row_group_size=10_000
        )
    single = folder.parent / "single.parquet"
    pq.write_table(table, single)
    expected = {  # per backend: each is compared with itself bit for bit
        backend: fastndcg.ndcg(
            data.grades, data.scores, offsets=data.offsets, k=[1, 10, None], backend=backend
        )
        for backend in (*BACKENDS, "auto")
    }
    return folder, single, table, expected


OPTS = dict(qid="qid", grade="label", score="pred", k=[1, 10, None])


@pytest.mark.parametrize("batch_rows", [97, 4099, 1 << 20])
def test_directory_with_queries_split_across_files(backend, dataset, batch_rows):
    folder, _, _, expected = dataset
    got = fastndcg.ndcg_parquet(folder, batch_rows=batch_rows, backend=backend, **OPTS)
    np.testing.assert_array_equal(got.query_ids, expected[backend].query_ids)
    np.testing.assert_array_equal(got.per_query, expected[backend].per_query)
    np.testing.assert_array_equal(got.mean, expected[backend].mean)  # summed in the same order


def test_file_list_dataset_and_memory_grouping(dataset):
    folder, single, _, expected = dataset
    for source in (
        single,
        str(single),
        sorted(folder.glob("*.parquet")),
        ds.dataset(sorted(str(p) for p in folder.glob("*.parquet"))),
    ):
        np.testing.assert_array_equal(
            fastndcg.ndcg_parquet(source, **OPTS).per_query, expected["auto"].per_query
        )
    np.testing.assert_array_equal(
        fastndcg.ndcg_parquet(single, group="memory", **OPTS).per_query, expected["auto"].per_query
    )


def test_ungrouped_file_needs_memory_grouping(tmp_path, dataset):
    _, _, table, expected = dataset
    shuffled = table.take(np.random.default_rng(1).permutation(table.num_rows))
    path = tmp_path / "shuffled.parquet"
    pq.write_table(shuffled, path)
    with pytest.raises(ValueError, match=r"not grouped by query.*group='memory'"):
        fastndcg.ndcg_parquet(path, **OPTS)
    got = fastndcg.ndcg_parquet(path, group="memory", **OPTS)
    order = np.argsort(got.query_ids)
    np.testing.assert_allclose(got.per_query[order], expected["auto"].per_query, rtol=1e-13)


def test_errors(tmp_path, dataset):
    _, single, _, _ = dataset
    with pytest.raises(
        KeyError,
        match=r"column 'grade' not found in .*single.parquet; it has columns: qid, label, pred",
    ):
        fastndcg.ndcg_parquet(single)
    with pytest.raises(FileNotFoundError, match="no such file"):
        fastndcg.ndcg_parquet(tmp_path / "nope.parquet")
    with pytest.raises(FileNotFoundError, match=r"no \*.parquet files"):
        fastndcg.ndcg_parquet(tmp_path)
    with pytest.raises(ValueError, match="batch_rows must be a positive int"):
        fastndcg.ndcg_parquet(single, batch_rows=0, **OPTS)
    np.testing.assert_array_equal(  # any integer type
        fastndcg.ndcg_parquet(single, batch_rows=np.int64(1000), **OPTS).per_query,
        fastndcg.ndcg_parquet(single, **OPTS).per_query,
    )
    with pytest.raises(
        TypeError,
        match=r"ndcg_parquet\(\.\.\., group='stream'\) got unknown option\(s\) ideal_offsets; "
        r"valid options: .*decimals.*ideal_qid.*preset",
    ):
        fastndcg.ndcg_parquet(single, ideal="global", ideal_offsets=[0, 1], **OPTS)
    with pytest.raises(ValueError, match="unknown group='disk'"):
        fastndcg.ndcg_parquet(single, group="disk", **OPTS)
    text = tmp_path / "predictions.csv"
    text.write_text("qid,grade,score\n1,1,0.5\n")
    with pytest.raises(
        ValueError,
        match=r"predictions.csv.*not a parquet file; ndcg_parquet reads Parquet files: read "
        r"other formats with pyarrow \(e.g. pyarrow.csv.read_csv\) and score the table with "
        r"fastndcg.ndcg_table",
    ):
        fastndcg.ndcg_parquet(text)
    with pytest.raises(TypeError, match=r"weights= \(one per query, in result order\) needs "):
        fastndcg.ndcg_parquet(single, weights=[1.0, 2.0], **OPTS)
    weighted = fastndcg.ndcg_parquet(single, group="memory", weights=np.ones(1500), **OPTS)
    np.testing.assert_allclose(weighted.mean, fastndcg.ndcg_parquet(single, **OPTS).mean, 1e-12)


def test_files_whose_query_ids_differ_in_type(tmp_path):
    """Integer widths may differ between files; a string id after integers is a clear error."""
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    first = pa.table(
        {"qid": pa.array([1, 1, 2], pa.int64()), "grade": [1, 0, 2], "score": [0.1, 0.2, 0.3]}
    )
    pq.write_table(first, mixed / "part0.parquet")
    pq.write_table(
        pa.table({"qid": pa.array([3, 3], pa.int32()), "grade": [1, 0], "score": [0.4, 0.1]}),
        mixed / "part1.parquet",
    )
    assert list(fastndcg.ndcg_parquet(mixed).query_ids) == [1, 2, 3]
    # strings and bytes of either offset width (pyarrow and polars write different ones)
    for kind, other, ids in [
        (pa.string(), pa.large_string(), ["a", "b"]),
        (pa.large_binary(), pa.binary(), [b"a", b"b"]),
    ]:
        widths = tmp_path / f"widths-{kind}"
        widths.mkdir()
        for i, (t, q) in enumerate([(kind, ids[0]), (other, ids[1])]):
            part = pa.table({"qid": pa.array([q, q], t), "grade": [1, 0], "score": [0.4, 0.1]})
            pq.write_table(part, widths / f"part{i}.parquet")
        assert list(fastndcg.ndcg_parquet(widths).query_ids) == ids
    pq.write_table(
        pa.table({"qid": ["x", "x"], "grade": [1, 0], "score": [0.4, 0.1]}),
        mixed / "part2.parquet",
    )
    with pytest.raises(TypeError, match="query ids change type at row 5: string after int64"):
        fastndcg.ndcg_parquet(mixed)
    with pytest.raises(
        ValueError, match=r"cannot read .*mixed as one table .*int64 vs string.*cast them"
    ):
        fastndcg.ndcg_parquet(mixed, group="memory")


def test_progress_bar_only_when_asked(dataset, capsys):
    _, single, _, _ = dataset
    fastndcg.ndcg_parquet(single, **OPTS)  # stderr is not a terminal here: silent
    assert capsys.readouterr().err == ""
    result = fastndcg.ndcg_parquet(single, progress=True, **OPTS)
    err = capsys.readouterr().err
    assert "fastndcg" in err and "queries/s" in err and "row" in err
    last = err.rstrip().rsplit("\r", 1)[-1]  # the bar's final state counts the last query too
    assert f" {result.n_queries:,} queries," in last, last


@pytest.mark.parametrize("folder", ["lgb_mq2008", "xgb_lambdarank_example"])
def test_real_predictions(backend, folder):
    path = TEST_DATA / "derived" / folder / "predictions.parquet"
    streamed = fastndcg.ndcg_parquet(
        path, grade="label", batch_rows=100, k=[1, 5, 10], backend=backend
    )
    in_memory = fastndcg.ndcg_table(
        pq.read_table(path), grade="label", k=[1, 5, 10], backend=backend
    )
    np.testing.assert_array_equal(streamed.per_query, in_memory.per_query)
    assert streamed.n_queries == in_memory.n_queries > 40


MEMORY_CHILD = textwrap.dedent(
    """
    import json, sys, threading, time
    import fastndcg

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    mode, path, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    fastndcg.ndcg_parquet(sys.argv[4], batch_rows=batch, k=10)  # compile, imports, thread pools
    peak, running = [rss()], [True]

    def sample():
        while running[0]:
            peak[0] = max(peak[0], rss())
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    before = rss()
    sampler.start()
    result = fastndcg.ndcg_parquet(path, batch_rows=batch, group=mode, k=10)
    running[0] = False
    sampler.join()
    print(json.dumps({"growth": peak[0] - before, "mean": float(result)}))
    """
)


def _write(path: Path, rows: int) -> int:
    rng = np.random.default_rng(rows)
    qid = np.repeat(np.arange(rows // 100, dtype=np.int64), 100)
    grade = rng.integers(0, 5, rows).astype(np.float64)
    pq.write_table(
        pa.table({"qid": qid, "grade": grade, "score": rng.random(rows)}),
        path,
        row_group_size=1 << 18,
    )
    return rows * 24  # bytes of the three decoded columns


@pytest.mark.slow
@pytest.mark.subprocess  # numba is not blocked in the child: the blocked pass would repeat it
def test_streaming_memory_is_bounded_by_the_batch_not_the_file(tmp_path):
    """Peak RSS growth of a streamed read stays flat when the file grows fourfold, while reading
    the same file whole grows with it.

    The streamed growth is a plateau of about 100 MB here (batches, the reader's row groups,
    allocator arenas) that a small file may not reach yet, hence the margin of a quarter of the
    large file's decoded size: a leak of that much would still fail."""
    warm = tmp_path / "warm.parquet"
    _write(warm, 1000)
    sizes = {}
    for name, rows in (("small", 4_000_000), ("large", 16_000_000)):
        path = tmp_path / f"{name}.parquet"
        decoded = _write(path, rows)
        for mode in ("stream", "memory") if name == "large" else ("stream",):
            run = subprocess.run(
                [sys.executable, "-c", MEMORY_CHILD, mode, str(path), str(1 << 13), str(warm)],
                capture_output=True,
                text=True,
                check=True,
            )
            sizes[name, mode] = json.loads(run.stdout)["growth"]
        path.unlink()
    assert sizes["large", "memory"] > decoded / 2, sizes  # the measurement sees a whole read
    assert sizes["large", "stream"] < decoded / 2, sizes
    assert sizes["large", "stream"] < sizes["small", "stream"] + decoded / 4, sizes


def test_categorical_query_ids_stream(tmp_path, backend):
    """A pandas categorical id column is dictionary-encoded in Parquet, per row group."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "qid": pd.Categorical(["a", "a", "b", "b", "c"]),
            "grade": [2, 0, 0, 1, 1],
            "score": [0.9, 0.1, 0.8, 0.7, 0.2],
        }
    )
    path = tmp_path / "categorical.parquet"
    frame.to_parquet(path, row_group_size=3)
    assert pa.types.is_dictionary(pq.read_schema(path).field("qid").type)
    got = fastndcg.ndcg_parquet(path, batch_rows=2, backend=backend)
    expected = fastndcg.ndcg_table(frame.astype({"qid": str}), backend=backend)
    assert list(got.query_ids) == ["a", "b", "c"]
    np.testing.assert_array_equal(got.per_query, expected.per_query)


def test_files_of_wider_types_are_read_in_them(tmp_path, backend):
    """In memory, a later file's float64 scores are not rounded to the first file's float32
    (two scores 1e-12 apart would tie): every file's types promote to a common one."""
    folder = tmp_path / "widening"
    folder.mkdir()
    pq.write_table(
        pa.table({"qid": [1, 1], "grade": [1, 0], "score": pa.array([0.5, 0.25], pa.float32())}),
        folder / "a.parquet",
    )
    pq.write_table(
        pa.table({"qid": [2, 2], "grade": [0, 1], "score": [0.3 + 1e-12, 0.3]}),
        folder / "b.parquet",
    )
    pq.write_table(  # an empty file written from an empty frame: null-typed columns
        pa.table(
            {
                "qid": pa.array([], pa.null()),
                "grade": pa.array([], pa.null()),
                "score": pa.array([], pa.null()),
            }
        ),
        folder / "c.parquet",
    )
    expected = fastndcg.ndcg(
        [1, 0, 0, 1], [0.5, 0.25, 0.3 + 1e-12, 0.3], offsets=[0, 2, 4], backend=backend
    )
    for group in ("stream", "memory"):
        got = fastndcg.ndcg_parquet(folder, group=group, backend=backend)
        np.testing.assert_array_equal(got.per_query, expected.per_query)


def test_awkward_datasets(tmp_path, backend):
    table = pa.table({"qid": [1, 1, 2], "grade": [1, 0, 2], "score": [0.1, 0.2, 0.3]})
    expected = fastndcg.ndcg_table(table, backend=backend)
    spark = tmp_path / "spark"  # Spark names its output directories *.parquet
    (spark / "preds.parquet").mkdir(parents=True)
    pq.write_table(table, spark / "preds.parquet" / "part-0.parquet")
    got = fastndcg.ndcg_parquet(spark, batch_rows=2**40, backend=backend)
    np.testing.assert_array_equal(got.per_query, expected.per_query)
    lacking = tmp_path / "lacking"
    lacking.mkdir()
    pq.write_table(table, lacking / "a.parquet")
    pq.write_table(table.drop_columns(["score"]), lacking / "b.parquet")
    for group in ("stream", "memory"):
        with pytest.raises(KeyError, match=r"column 'score' not found in .*b\.parquet"):
            fastndcg.ndcg_parquet(lacking, group=group)
    hive = tmp_path / "hive"
    pq.write_to_dataset(table, hive, partition_cols=["qid"])
    partitioned = ds.dataset(hive, partitioning="hive")
    with pytest.raises(ValueError, match=r"'qid' is a partition key .* pass group='memory'"):
        fastndcg.ndcg_parquet(partitioned)
    got = fastndcg.ndcg_parquet(partitioned, group="memory", backend=backend)
    assert sorted(got.per_query[:, 0]) == sorted(expected.per_query[:, 0])
    for group in ("stream", "memory"):  # the directory's path: the error says how to read keys
        with pytest.raises(KeyError, match=r"'qid' names directories .* partitioning='hive'"):
            fastndcg.ndcg_parquet(hive, group=group)
    with pytest.raises(  # no hive hint where no directory names it
        KeyError,
        match=r"'grades' not found in .*: qid, grade, score\. Pass grade='<column name>'\"$",
    ):
        fastndcg.ndcg_parquet(spark, grade="grades")
    with pytest.raises(ValueError, match="no Parquet files given"):
        fastndcg.ndcg_parquet([])


def test_string_view_query_ids_stream(tmp_path, backend):
    table = pa.table(
        {
            "qid": pa.array(["a", "a", "b"], pa.string_view()),
            "grade": [1, 0, 2],
            "score": [0.1, 0.2, 0.3],
        }
    )
    path = tmp_path / "views.parquet"
    pq.write_table(table, path)
    got = fastndcg.ndcg_parquet(path, backend=backend)
    assert list(got.query_ids) == ["a", "b"]


def test_an_empty_first_file_before_string_ids(tmp_path, backend):
    """Spark writes empty part files; one sorted first must not fix the result's id type."""
    folder = tmp_path / "parts"
    folder.mkdir()
    empty = pa.table(
        {"qid": pa.array([], pa.string()), "grade": pa.array([], pa.int64()), "score": []}
    )
    pq.write_table(empty, folder / "part-00000.parquet")
    data = pa.table(
        {"qid": ["a", "a", "b", "b"], "grade": [1, 0, 0, 1], "score": [0.9, 0.1, 0.8, 0.2]}
    )
    pq.write_table(data, folder / "part-00001.parquet")
    expected = fastndcg.ndcg_table(data, backend=backend)
    for group in GROUPINGS:
        got = fastndcg.ndcg_parquet(folder, group=group, backend=backend)
        assert list(got.query_ids) == ["a", "b"]
        np.testing.assert_array_equal(got.per_query, expected.per_query)


def test_hidden_folders_and_repeated_files_are_not_read(tmp_path, dataset):
    """Below a directory, names starting with _ or . are skipped, as pyarrow.dataset does."""
    _, single, table, expected = dataset
    folder = tmp_path / "job"
    for stale in ("_temporary/0", ".ipynb_checkpoints"):
        (folder / stale).mkdir(parents=True)
        pq.write_table(table.slice(0, 500), folder / stale / "part-00000.parquet")
    pq.write_table(table.slice(0, 10), folder / "_part-metadata.parquet")
    pq.write_table(table, folder / "part-00000.parquet")
    assert ds.dataset(folder).files == [str(folder / "part-00000.parquet")]
    for group in GROUPINGS:
        got = fastndcg.ndcg_parquet(folder, group=group, **OPTS)
        np.testing.assert_array_equal(got.per_query, expected["auto"].per_query)
    for listed in ([single, single], [single, single.parent / "." / single.name]):
        with pytest.raises(ValueError, match=r"single.parquet is listed twice .*list it once"):
            fastndcg.ndcg_parquet(listed, group="memory", **OPTS)
    # the directory given may itself be named so; only the names below it count
    np.testing.assert_array_equal(
        fastndcg.ndcg_parquet(folder / "_temporary", **OPTS).per_query,
        fastndcg.ndcg_table(table.slice(0, 500), **OPTS).per_query,
    )
    (folder / "part-00000.parquet").unlink()
    (folder / "_part-metadata.parquet").unlink()
    with pytest.raises(FileNotFoundError, match=r"names starting with _ or \. are skipped"):
        fastndcg.ndcg_parquet(folder, **OPTS)


def test_one_column_in_two_roles(dataset, backend):
    _, single, table, _ = dataset
    options = dict(qid="qid", grade="label", score="label", k=[1, 10], backend=backend)
    expected = fastndcg.ndcg_table(table, **options)
    for group in GROUPINGS:
        got = fastndcg.ndcg_parquet(single, group=group, **options)
        np.testing.assert_array_equal(got.per_query, expected.per_query)


def test_an_error_late_in_the_stream_stops_the_reader_at_once():
    """The reader has put the last batches (the queue is full) when the consumer fails."""
    import threading
    import time

    from fastndcg._io.parquet import prefetch

    batches = prefetch(iter(range(3)), depth=2)
    assert next(batches) == 0
    time.sleep(0.3)  # the reader fills the queue and waits to put the end-of-stream mark
    started = time.perf_counter()
    batches.close()  # as when scoring a batch raises
    assert time.perf_counter() - started < 1.0
    assert not any(t.name == "fastndcg-reader" for t in threading.enumerate())


def test_prefetch_decodes_at_most_depth_batches_ahead():
    """The reader starts decoding a batch only when there is room for it: besides the batch the
    consumer holds, at most ``depth`` are decoded or being decoded (the queue of ``depth``
    slots let the reader decode one more and hold it while it waited)."""
    import threading
    import time

    from fastndcg._io.parquet import prefetch

    started, taken, ahead = [0], [0], []
    lock = threading.Lock()

    def batches():
        for i in range(40):
            with lock:
                started[0] += 1
                ahead.append(started[0] - taken[0])
            yield i

    for item in prefetch(batches(), depth=2):
        time.sleep(0.01)  # a slow consumer: the reader runs as far ahead as it may
        with lock:
            taken[0] += 1
        assert item == taken[0] - 1
    assert taken[0] == 40
    # started but not yet scored: the one being scored and 2 more (the queue made it 3 more)
    assert max(ahead) == 3, ahead


@pytest.mark.parametrize("row_group", [1 << 16, 4_000_000], ids=["64k-groups", "one-group"])
def test_streaming_decodes_a_bounded_number_of_batches_ahead(tmp_path, row_group):
    """Arrow's memory when each batch reaches the scorer, with a consumer slower than decoding:
    a few batches and the reader's buffers, whether the row groups are smaller or far larger
    than a batch. The dataset scanner held 49-54 (small groups) and 64-94 (one group) batches'
    worth then, read ahead of the consumer; this reader holds about 5 and 12."""
    import time

    from fastndcg import stream

    rows, batch_rows = 4_000_000, 1 << 16
    rng = np.random.default_rng(5)
    path = tmp_path / "ahead.parquet"
    pq.write_table(
        pa.table(
            {
                "qid": np.repeat(np.arange(rows // 100, dtype=np.int64), 100),
                "grade": rng.integers(0, 5, rows).astype(np.int8),
                "score": rng.random(rows, dtype=np.float32),
            }
        ),
        path,
        row_group_size=row_group,
    )
    expected = fastndcg.ndcg_parquet(path, batch_rows=batch_rows, k=10)  # warm, and the values
    before = pa.total_allocated_bytes()
    held = []
    feed = stream.StreamScorer.feed

    def slow_feed(self, batch):
        held.append(pa.total_allocated_bytes() - before)
        time.sleep(0.005)
        return feed(self, batch)

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(stream.StreamScorer, "feed", slow_feed)
        got = fastndcg.ndcg_parquet(path, batch_rows=batch_rows, k=10)
    np.testing.assert_array_equal(got.per_query, expected.per_query)
    assert len(held) >= rows // batch_rows
    batch_bytes = batch_rows * 13  # int64 ids, int8 grades, float32 scores
    # 8 batches, and 8 MiB for the reader's buffers (1 MiB per column read) and pages
    assert max(held) < 8 * batch_bytes + (8 << 20), (max(held) / batch_bytes, held[:8])


@pytest.mark.parametrize("group", ["stream", "memory"])
def test_a_corrupt_file_is_named(tmp_path, group):
    """Before, a corrupt page gave Arrow's "Corrupt snappy compressed data." alone."""
    rng = np.random.default_rng(9)
    n = 100_000
    table = pa.table(
        {
            "qid": np.repeat(np.arange(n // 50), 50),
            "grade": rng.integers(0, 4, n),
            "score": rng.random(n),
        }
    )
    path = tmp_path / "corrupt.parquet"
    pq.write_table(table, path, compression="snappy")
    data = bytearray(path.read_bytes())
    for i in range(2000, 20000, 7):  # inside the first column chunk's pages
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    with pytest.raises(fastndcg.InputError) as info:
        fastndcg.ndcg_parquet(path, group=group)
    assert info.value.where == str(path) and str(info.value).startswith(f"{path}: ")


def _write_queries(path: Path, rows: int, row_group_size: int) -> None:
    ids = np.repeat(np.arange(rows // 10), 10)
    scores = np.random.default_rng(rows).random(rows)
    table = pa.table({"qid": ids, "grade": (ids % 3).astype(np.int8), "score": scores})
    pq.write_table(table, path, row_group_size=row_group_size)


def test_a_file_rewritten_while_it_is_streamed_is_an_error_not_a_partial_result(
    tmp_path, monkeypatch, capsys
):
    """Issue 40, fault 1: a writer rewrote the file in place after its rows were counted. Its
    first row groups were read, and a partial result came back with nothing said."""
    import fastndcg._parquet as entry
    from fastndcg.cli import main

    path = tmp_path / "predictions.parquet"
    read = entry.iter_batches

    def rewritten_then_read(*args, **kwargs):
        _write_queries(path, 100_000, 20_000)  # 5 row groups where 4 were promised
        return read(*args, **kwargs)

    monkeypatch.setattr(entry, "iter_batches", rewritten_then_read)
    _write_queries(path, 200_000, 50_000)
    with pytest.raises(fastndcg.InputError) as info:
        fastndcg.ndcg_parquet(path)
    exc = info.value
    assert (exc.where, exc.value) == (str(path), 0)
    assert str(exc).startswith(
        f"{path}: 0 rows read of the 200,000 its Parquet metadata promised (it now says "
        "100,000): a file changed while it was read; "
    )
    _write_queries(path, 200_000, 50_000)  # the command line's Parquet path: one line, exit 2
    assert main(["score", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a file changed while it was read" in err[0], err


@pytest.mark.parametrize("group", ["stream", "memory"])
def test_a_reader_that_stops_short_is_an_error(tmp_path, monkeypatch, group):
    """Rows read are compared with the footer's count, whatever the reader does: here it loses
    the last batch of the file (in memory: the last rows of its table)."""
    import fastndcg._io.parquet as reading

    path = tmp_path / "predictions.parquet"
    _write_queries(path, 50_000, 20_000)
    if group == "stream":
        open_reader = reading._parquet_file

        class ShortReader:
            def __init__(self, reader):
                self.reader = reader
                self.metadata, self.schema_arrow = reader.metadata, reader.schema_arrow

            def iter_batches(self, **kwargs):
                yield from list(self.reader.iter_batches(**kwargs))[:-1]

        monkeypatch.setattr(reading, "_parquet_file", lambda *a: ShortReader(open_reader(*a)))
    else:
        import fastndcg._parquet as entry

        class Delegate:
            def __init__(self, inner):
                self.inner = inner

            def __getattr__(self, name):
                return getattr(self.inner, name)

        class ShortFragment(Delegate):
            def to_table(self, **kwargs):
                return self.inner.to_table(**kwargs).slice(10)

        class ShortDataset(Delegate):
            def get_fragments(self):
                return map(ShortFragment, self.inner.get_fragments())

        open_dataset = entry.open_dataset
        monkeypatch.setattr(
            entry, "open_dataset", lambda source: ShortDataset(open_dataset(source))
        )
    with pytest.raises(fastndcg.InputError) as info:
        fastndcg.ndcg_parquet(path, batch_rows=4096, group=group)
    read = 49_990 if group == "memory" else 50_000 // 4096 * 4096  # batches span row groups
    assert (info.value.where, info.value.value) == (str(path), read)
    assert f"{read:,} rows read of the 50,000 its Parquet metadata promised:" in str(info.value)


def test_column_and_progress_options_are_checked_as_every_entry_point_checks_them(
    dataset, tmp_path
):
    """Issue 40, fault 5: qid=1 or a missing column gave an error without option or fix, and
    progress='yes' was taken for True."""
    _, single, table, _ = dataset
    pq.write_table(table, tmp_path / "a.parquet")
    pq.write_table(table.drop_columns(["pred"]), tmp_path / "b.parquet")
    exc = raised(fastndcg.ndcg_parquet, tmp_path, **OPTS)  # one file lacks the column
    assert (exc.option, exc.value, exc.where) == ("score", "pred", str(tmp_path / "b.parquet"))
    assert exc.fix == "every file needs it: write 'pred' into that file, or leave the file out"
    for group in GROUPINGS:
        exc = raised(fastndcg.ndcg_parquet, single, qid=1, grade="label", group=group)
        assert type(exc) is fastndcg.OptionTypeError
        assert (exc.option, exc.value, exc.fix) == ("qid", 1, "got 1")
        exc = raised(fastndcg.ndcg_parquet, single, score="prediction", grade="label", group=group)
        assert isinstance(exc, fastndcg.ColumnNotFoundError)
        assert (exc.option, exc.value, exc.where) == ("score", "prediction", str(single))
        assert exc.fix == "Pass `score='<column name>'`"
        exc = raised(fastndcg.ndcg_parquet, single, progress="yes", **OPTS)
        assert type(exc) is fastndcg.OptionTypeError
        assert (exc.option, exc.value, exc.fix) == ("progress", "yes", "got 'yes'")
    exc = raised(fastndcg.ndcg_parquet, single, qid=None, grade="label", score="pred")
    assert (type(exc), exc.option, exc.value) == (fastndcg.OptionTypeError, "qid", None)
    one = fastndcg.ndcg_parquet(single, qid=None, grade="label", score="pred", group="memory")
    assert one.n_queries == 1  # in memory, qid=None is the whole table as one query
    exc = raised(fastndcg.ndcg_parquet, single, batch_rows=None, **OPTS)
    assert (type(exc), exc.option, exc.fix) == (fastndcg.OptionTypeError, "batch_rows", "got None")


def raised(function, *args, **kwargs) -> Exception:
    with pytest.raises(Exception) as info:
        function(*args, **kwargs)
    return info.value
