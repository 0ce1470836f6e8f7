"""The measures beside NDCG read from tables, Parquet files and streams: fastndcg.evaluate_table,
fastndcg.evaluate_parquet and StreamScorer(measures=...) give, bit for bit, what
fastndcg.evaluate gives for the same rows as arrays (query ids, their order, every per-query
value, every mean), whatever the table kind, the files or the batches; and refuse what they
cannot compute with a fastndcg error."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import INDEPENDENT_JUDGMENTS

import fastndcg
from fastndcg._errors import ColumnNotFoundError, InputError, OptionError, OptionTypeError
from fastndcg.stream import StreamScorer
from fastndcg.synthetic import make_synthetic

# every kind the measure kernels compute under ties="average", and nDCG beside them
MEASURES = ["nDCG@10", "P@5", "R@10", "AP", "RR@10", "Success@3", "Rprec", "Judged@10", "NumRet"]
# those that need a tie order (and the counts of a tool)
ORDERED = ["ERR@10", "bpref", "map", "P.5,10", "num_rel_ret"]


def same_result(got, expected):
    """Two MeasuresResults equal bit for bit (NaN where the other has NaN)."""
    assert got.measures == expected.measures
    assert got.query_ids.tolist() == expected.query_ids.tolist()
    np.testing.assert_array_equal(got.per_query, expected.per_query)
    np.testing.assert_array_equal(got.mean, expected.mean)
    np.testing.assert_array_equal(got.n_skipped, expected.n_skipped)
    assert got.options == expected.options


@pytest.fixture(scope="module")
def rows():
    """Queries of 1..60 rows with ties and queries without a relevant item."""
    data = make_synthetic(400, seed=5, max_len=60)
    scores = np.round(data.scores, 1)  # ties
    grades = data.grades.astype(np.int64)
    grades[data.offsets[3] : data.offsets[5]] = 0  # two queries without a relevant item
    return pa.table({"qid": data.qid(), "grade": grades, "score": scores})


def arrays(table, **options):
    grades = table.column("grade").to_numpy()
    scores = None if "score" not in table.column_names else table.column("score").to_numpy()
    return fastndcg.evaluate(grades, scores, qid=table.column("qid").to_numpy(), **options)


# -- evaluate_table ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "convert",
    [
        lambda t: t,
        lambda t: t.to_batches(max_chunksize=10**9)[0],
        lambda t: pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=777)),
        lambda t: t.to_pandas(),
        lambda t: pa.Table.from_batches(t.to_batches(max_chunksize=1000)),  # multi-chunk
    ],
    ids=["table", "record_batch", "reader", "pandas", "chunked"],
)
def test_every_table_kind_gives_the_measures_of_the_arrays(backend, rows, convert):
    expected = arrays(rows, measures=MEASURES, backend=backend)
    same_result(
        fastndcg.evaluate_table(convert(rows), measures=MEASURES, backend=backend), expected
    )


def test_columns_options_and_presets_as_for_arrays(backend, rows):
    renamed = rows.rename_columns(["q", "label", "pred"])
    options = dict(measures=[*MEASURES, *ORDERED], ties="stable", zero_idcg="zero", backend=backend)
    got = fastndcg.evaluate_table(renamed, qid="q", grade="label", score="pred", **options)
    same_result(got, arrays(rows, **options))
    for preset in ("ranx", "ir_measures"):
        options = dict(measures=["ndcg@10", "map@100", "mrr"], preset=preset, ties="stable")
        same_result(fastndcg.evaluate_table(rows, **options), arrays(rows, **options))
    level = dict(measures=MEASURES, relevance_level=2, backend=backend)
    same_result(fastndcg.evaluate_table(rows, **level), arrays(rows, **level))


def test_ranked_rows_one_query_and_shuffled_string_ids(rows):
    ranked = fastndcg.evaluate_table(rows, measures=ORDERED, score=None)
    expected = fastndcg.evaluate(
        rows.column("grade").to_numpy(), qid=rows.column("qid").to_numpy(), measures=ORDERED
    )
    same_result(ranked, expected)
    whole = fastndcg.evaluate_table(rows, measures=MEASURES, qid=None)
    same_result(whole, fastndcg.evaluate(rows["grade"], rows["score"], measures=MEASURES))
    order = np.random.default_rng(1).permutation(rows.num_rows)
    shuffled = rows.take(order)
    named = shuffled.set_column(0, "qid", pa.array([f"q{v}" for v in shuffled["qid"].to_pylist()]))
    got = fastndcg.evaluate_table(named, measures=MEASURES)
    expected = arrays(shuffled, measures=MEASURES)
    assert got.query_ids.tolist() == [f"q{v}" for v in expected.query_ids.tolist()]
    np.testing.assert_array_equal(got.per_query, expected.per_query)


@INDEPENDENT_JUDGMENTS
def test_judgment_lists_count_unretrieved_relevant_documents(rows):
    ideal = dict(ideal_grades=[3, 1, 1, 2], ideal_qid=[0, 0, 1, 1], ideal="global")
    table = rows.filter(pa.compute.less(rows["qid"], 2))
    got = fastndcg.evaluate_table(table, measures=["R@5", "AP", "nDCG@5"], **ideal)
    same_result(got, arrays(table, measures=["R@5", "AP", "nDCG@5"], **ideal))
    own = fastndcg.evaluate_table(table, measures=["R@5", "AP", "nDCG@5"])
    assert not np.array_equal(got.per_query, own.per_query)


def test_the_caller_table_is_not_modified(rows):
    frame = rows.to_pandas()
    before = frame.copy()
    fastndcg.evaluate_table(frame, measures=MEASURES)
    assert frame.equals(before)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (dict(grade="label"), ColumnNotFoundError, "'label'"),
        (dict(measures=["P@10", "nDGC@10"]), OptionError, "nearest: 'ndcg@10'"),
        (dict(k=10), OptionTypeError, "nDCG@10"),
        (dict(weights=np.ones(400)), OptionTypeError, "weights"),
        (dict(measures=["ERR@10"]), OptionError, "ties"),  # ERR needs a tie order
        (dict(measures=["ERR@10"], preset="trec_eval", ties="stable"), OptionError, "ERR"),
        (dict(colour="red"), OptionTypeError, "evaluate_table()"),
        (dict(ideal_grades=[1, 2], ideal_qid=[0, 0]), OptionError, "ideal='global'"),
    ],
)
def test_bad_calls_are_fastndcg_errors(rows, call, error, words):
    call = {"measures": MEASURES, **call}
    with pytest.raises(error) as caught:
        fastndcg.evaluate_table(rows, **call)
    assert words in str(caught.value)


# -- evaluate_parquet -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(rows, tmp_path_factory):
    """The rows in four files of uneven sizes, queries split across file boundaries."""
    folder = tmp_path_factory.mktemp("measures")
    cuts = [0, 1, 700, 4000, rows.num_rows]
    paths = []
    for i, (start, stop) in enumerate(itertools.pairwise(cuts)):
        path = folder / f"part-{i}.parquet"
        pq.write_table(rows.slice(start, stop - start), path, row_group_size=500)
        paths.append(path)
    return folder, paths


@pytest.mark.parametrize("batch_rows", [1, 5, 333, 1 << 20])
def test_parquet_gives_the_measures_of_all_rows_in_memory_whatever_the_batches(
    backend, rows, files, batch_rows
):
    folder, paths = files
    sources = [folder, paths]
    if batch_rows == 1:  # a batch a row (slow): the first two files, a boundary and 700 rows
        sources = [paths[:2]]
        rows = rows.slice(0, 700)
    options = dict(measures=[*MEASURES, *ORDERED], ties="stable", backend=backend)
    expected = arrays(rows, **options)
    for source in sources:
        same_result(fastndcg.evaluate_parquet(source, batch_rows=batch_rows, **options), expected)


def test_parquet_grouped_in_memory_presets_and_ranked_rows(rows, files):
    folder, _ = files
    options = dict(measures=["map", "P.5,10", "ndcg_cut.10"], preset="trec_eval", ties="stable")
    expected = arrays(rows, **options)
    same_result(fastndcg.evaluate_parquet(folder, batch_rows=77, **options), expected)
    same_result(fastndcg.evaluate_parquet(folder, group="memory", **options), expected)
    shuffled = rows.take(np.random.default_rng(2).permutation(rows.num_rows))
    pq.write_table(shuffled, folder.parent / "shuffled.parquet")
    got = fastndcg.evaluate_parquet(folder.parent / "shuffled.parquet", group="memory", **options)
    same_result(got, arrays(shuffled, **options))
    with pytest.raises(InputError, match="not grouped by query"):
        fastndcg.evaluate_parquet(folder.parent / "shuffled.parquet", **options)
    ranked = fastndcg.evaluate_parquet(folder, score=None, measures=ORDERED, batch_rows=50)
    expected = fastndcg.evaluate(rows["grade"], qid=rows["qid"], measures=ORDERED)
    same_result(ranked, expected)


@settings(max_examples=20, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 9), min_size=1, max_size=12),
    batch_rows=st.integers(1, 20),
    seed=st.integers(0, 2**16),
)
def test_chunking_never_changes_a_bit(tmp_path_factory, lengths, batch_rows, seed):
    rng = np.random.default_rng(seed)
    n = sum(lengths)
    table = pa.table(
        {
            "qid": np.repeat(np.arange(len(lengths)) * 3, lengths),
            "grade": rng.integers(0, 4, n),
            "score": rng.integers(0, 3, n).astype(float),  # many ties
        }
    )
    path = tmp_path_factory.mktemp("chunks") / "rows.parquet"
    pq.write_table(table, path, row_group_size=max(1, n // 3))
    options = dict(measures=[*MEASURES, "ERR@5", "bpref"], ties="stable", zero_idcg="zero")
    same_result(
        fastndcg.evaluate_parquet(path, batch_rows=batch_rows, **options), arrays(table, **options)
    )


@pytest.mark.parametrize(
    "call, error, words",
    [
        (dict(score="pred"), ColumnNotFoundError, "'pred'"),
        (dict(measures="P@ten"), OptionError, "P@"),
        (dict(k=[1, 10]), OptionTypeError, "nDCG@10"),
        (dict(ties="random", seed=1), OptionError, "evaluate_table"),
        (dict(ideal="global"), OptionError, "group='memory'"),
        (dict(ideal_grades=[1], ideal_qid=[0], ideal="global"), OptionError, "in memory"),
        (dict(colour="red"), OptionTypeError, "evaluate_parquet(..., group='stream')"),
        (dict(preset="sklearn"), OptionError, "sklearn"),  # a preset of NDCG only
    ],
)
def test_bad_parquet_calls_are_fastndcg_errors(files, call, error, words):
    call = {"measures": MEASURES, **call}
    with pytest.raises(error) as caught:
        fastndcg.evaluate_parquet(files[0], **call)
    assert words in str(caught.value)


# -- StreamScorer(measures=...) ---------------------------------------------------------------


def test_a_stream_of_the_measures_gives_per_query_columns_and_collects_as_evaluate(rows):
    scorer = StreamScorer(measures=MEASURES, relevance_level=2)
    assert scorer.empty().schema.names == ["query_id", "n_items", *MEASURES]
    results = [scorer.feed(batch) for batch in rows.to_batches(max_chunksize=97)]
    results.append(scorer.finish())
    expected = arrays(rows, measures=MEASURES, relevance_level=2)
    same_result(scorer.collect(results), expected)
    table = pa.Table.from_batches(results)
    assert table.column("n_items").to_pylist() == np.bincount(rows["qid"].to_numpy()).tolist()
    np.testing.assert_array_equal(table.column("AP").to_numpy(), expected.per_query[:, 3])


def test_a_stream_without_measures_refuses_their_options():
    with pytest.raises(OptionError, match="relevance_level"):
        StreamScorer(relevance_level=2)
    with pytest.raises(OptionTypeError, match="preset"):
        StreamScorer(preset="trec_eval")
    with pytest.raises(OptionError, match="ties"):
        StreamScorer(measures="ERR@10")  # ties="average"
    StreamScorer(measures="ERR@10", score=None)  # ranked rows: no tie
