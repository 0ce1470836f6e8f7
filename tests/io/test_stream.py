"""StreamScorer: per-query results identical to scoring everything at once, whatever the batching."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import ragged

import fastndcg
from fastndcg.stream import StreamScorer, collect, score_batches


def batches_of(table: pa.Table, sizes: list[int]):
    """Record batches of the given sizes (empty ones included), then the rest."""
    start = 0
    for size in [*sizes, table.num_rows]:
        piece = table.slice(start, size)
        yield pa.RecordBatch.from_arrays(
            [c.combine_chunks() for c in piece.columns], names=piece.column_names
        )
        start += size
        if start >= table.num_rows:
            return


@given(
    data=ragged(max_queries=8, max_len=20),
    sizes=st.lists(st.integers(0, 9), min_size=1, max_size=30),
    k=st.sampled_from([None, 1, 3, [2, None]]),
    ties=st.sampled_from(["average", "stable", "random", "pessimistic"]),
    ranked=st.booleans(),
)
def test_any_batching_gives_the_in_memory_values(backend, data, sizes, k, ties, ranked):
    offsets, grades, scores = data
    qid = np.repeat(np.arange(offsets.size - 1) * 10 + 3, np.diff(offsets))
    table = pa.table({"qid": qid, "grade": grades, "score": scores})
    options = dict(k=k, ties=ties, backend=backend, zero_idcg="zero")
    if ties == "random":
        options["seed"] = 17
    score_column = None if ranked else "score"
    expected = fastndcg.ndcg_table(table, score=score_column, **options)
    scorer = StreamScorer(score=score_column, **options)
    results = [scorer.feed(b) for b in batches_of(table, sizes)] + [scorer.finish()]
    got = scorer.collect(results)
    np.testing.assert_array_equal(got.query_ids, expected.query_ids)
    np.testing.assert_array_equal(got.per_query, expected.per_query)
    np.testing.assert_array_equal(got.dcg, expected.dcg)


def test_output_schema_and_early_results():
    scorer = StreamScorer(k=[1, None])
    out = scorer.feed(
        pa.record_batch({"qid": ["a", "a", "b"], "grade": [1, 0, 2], "score": [0.3, 0.2, 0.1]})
    )
    assert out.schema.names == [
        "query_id",
        "n_items",
        "ndcg@1",
        "dcg@1",
        "idcg@1",
        "ndcg",
        "dcg",
        "idcg",
    ]
    assert out.column("query_id").to_pylist() == ["a"]
    assert out.column("n_items").to_pylist() == [2]
    assert scorer.feed(pa.record_batch({"qid": ["b"], "grade": [0], "score": [0.5]})).num_rows == 0
    last = scorer.finish()
    assert last.column("query_id").to_pylist() == ["b"] and last.column("n_items").to_pylist() == [
        2
    ]
    assert scorer.finish().num_rows == 0


def test_query_longer_than_many_batches(backend):
    grades = np.arange(5000) % 5
    scores = np.sin(np.arange(5000))
    table = pa.table({"qid": np.zeros(5000, dtype=np.int64), "grade": grades, "score": scores})
    scorer = StreamScorer(k=[10, None], backend=backend)
    got = scorer.collect([*map(scorer.feed, table.to_batches(max_chunksize=64)), scorer.finish()])
    expected = fastndcg.ndcg(grades, scores, k=[10, None], backend=backend)
    np.testing.assert_array_equal(got.per_query, expected.per_query)


def test_ungrouped_input_is_an_error():
    scorer = StreamScorer()
    with pytest.raises(
        ValueError,
        match=r"query 1 appears in separate runs of rows within rows 0..3: the input is not grouped by query",
    ):
        scorer.feed(
            pa.record_batch(
                {"qid": [1, 2, 1, 3], "grade": [1, 0, 2, 1], "score": [0.1, 0.2, 0.3, 0.4]}
            )
        )
    batches = [
        pa.record_batch({"qid": [1, 2], "grade": [1, 0], "score": [0.1, 0.2]}),
        pa.record_batch({"qid": [3, 1], "grade": [1, 0], "score": [0.1, 0.2]}),
    ]
    with pytest.raises(
        ValueError,
        match="query 1 appears in separate places of the input: it is not grouped by query",
    ):
        collect(score_batches(batches), fastndcg._core.definition.Definition.create())
    scorer = StreamScorer()  # fed by hand, without collect: finish checks the ids it scored
    assert [scorer.feed(b).column("query_id").to_pylist() for b in batches] == [[1], [2, 3]]
    with pytest.raises(ValueError, match="query 1 appears in separate places of the input"):
        scorer.finish()
    scorer = StreamScorer()  # a query's rows split by another query, each batch one query
    for qid in (0, 499):
        scorer.feed(pa.record_batch({"qid": [qid], "grade": [1], "score": [0.5]}))
    scorer.feed(pa.record_batch({"qid": [0], "grade": [0], "score": [0.1]}))
    with pytest.raises(ValueError, match="query 0 appears in separate places of the input"):
        scorer.finish()
    assert scorer.finish().num_rows == 0  # the check does not repeat once raised


def test_query_ids_keep_their_type_across_batches(backend):
    """Narrower integer ids are widened to the first batch's type; other changes are errors."""
    first = pa.table({"qid": pa.array([1, 1], pa.int64()), "grade": [1, 0], "score": [0.1, 0.2]})
    narrow = pa.table({"qid": pa.array([1, 2], pa.int32()), "grade": [2, 1], "score": [0.3, 0.4]})
    scorer = StreamScorer(backend=backend)
    got = scorer.collect([scorer.feed(first), scorer.feed(narrow), scorer.finish()])
    together = pa.concat_tables([first, narrow.cast(first.schema)])
    expected = fastndcg.ndcg_table(together, backend=backend)
    assert list(got.query_ids) == [1, 2]
    np.testing.assert_array_equal(got.per_query, expected.per_query)
    scorer = StreamScorer(backend=backend)
    scorer.feed(first)
    strings = pa.table({"qid": ["x", "y"], "grade": [1, 0], "score": [0.3, 0.2]})
    with pytest.raises(TypeError, match="query ids change type at row 2: string after int64"):
        scorer.feed(strings)


@pytest.mark.parametrize("column", ["score", "grade"])
def test_values_beyond_float64_are_named_by_their_row_in_the_stream(backend, column):
    first = pa.table({"qid": [1, 1], "grade": [1, 0], "score": [3, 2]})
    second = pa.table({"qid": [2, 2], "grade": [1, 0], "score": [1, 0]})
    beyond = pa.array([1, 2**53 + 1], pa.uint64())
    second = second.set_column(second.schema.get_field_index(column), column, beyond)
    scorer = StreamScorer(backend=backend, gain="linear")
    scorer.feed(first)
    with pytest.raises(
        ValueError,
        match=rf"column {column!r} has 9007199254740993 at row 3, beyond 2\*\*53.*"
        rf"convert column {column!r} to float64",
    ):
        scorer.feed(second)


def test_streaming_option_rules():
    with pytest.raises(ValueError, match="ideal='max' needs max_grade= when streaming"):
        StreamScorer(ideal="max")
    with pytest.raises(ValueError, match="needs the judgment lists when streaming"):
        StreamScorer(ideal="global")
    with pytest.raises(TypeError, match=r"StreamScorer\(\) got unknown option\(s\) weights"):
        StreamScorer(weights=[1.0])


def test_global_ideal_and_max_ideal_when_streaming(backend):
    table = pa.table(
        {
            "qid": ["x", "x", "y", "y", "y"],
            "grade": [1, 0, 2, 0, 0],
            "score": [0.9, 0.8, 0.1, 0.7, 0.2],
        }
    )
    judged = dict(ideal_grades=[3, 1, 2, 2], ideal_qid=["x", "y", "y", "x"])
    for options in (dict(ideal="global", **judged), dict(ideal="max", max_grade=4)):
        expected = fastndcg.ndcg_table(table, k=[1, None], backend=backend, **options)
        batches = table.to_batches(max_chunksize=2)
        got = collect(
            score_batches(batches, k=[1, None], backend=backend, **options),
            StreamScorer(k=[1, None]).definition,
        )
        np.testing.assert_array_equal(got.per_query, expected.per_query)


def test_dictionary_query_ids_stream(backend):
    """Dictionary ids (a pandas categorical written to Parquet), with a dictionary per batch."""
    first = pa.table(
        {
            "qid": pa.array(["a", "a", "b"]).dictionary_encode(),
            "grade": [2, 0, 1],
            "score": [0.9, 0.1, 0.3],
        }
    )
    second = pa.table(
        {"qid": pa.array(["b", "c"]).dictionary_encode(), "grade": [0, 1], "score": [0.8, 0.2]}
    )
    scorer = StreamScorer(backend=backend)
    got = scorer.collect([scorer.feed(first), scorer.feed(second), scorer.finish()])
    plain = pa.concat_tables(
        [
            t.cast(
                pa.schema([("qid", pa.string()), ("grade", pa.int64()), ("score", pa.float64())])
            )
            for t in (first, second)
        ]
    )
    expected = fastndcg.ndcg_table(plain, backend=backend)
    assert list(got.query_ids) == ["a", "b", "c"]
    np.testing.assert_array_equal(got.per_query, expected.per_query)


def test_float_query_ids_stream_as_ndcg_takes_them(backend):
    """-0.0 continues query 0.0 across batches; NaN ids are an error naming the stream row."""
    first = pa.record_batch({"qid": [1.0, -0.0], "grade": [1, 2], "score": [0.5, 0.1]})
    second = pa.record_batch({"qid": [0.0, 2.0], "grade": [0, 1], "score": [0.9, 0.3]})
    got = collect(
        score_batches([first, second], backend=backend),
        fastndcg._core.definition.Definition.create(backend=backend),
    )
    expected = fastndcg.ndcg(
        [1, 2, 0, 1], [0.5, 0.1, 0.9, 0.3], offsets=[0, 1, 3, 4], backend=backend
    )
    np.testing.assert_array_equal(got.per_query, expected.per_query)
    with pytest.raises(ValueError, match=r"column 'qid' \(qid\) has a NaN at row 3"):
        list(
            score_batches(
                [
                    first,
                    pa.record_batch({"qid": [0.0, np.nan], "grade": [0, 1], "score": [0.9, 0.3]}),
                ],
                backend=backend,
            )
        )


def test_list_query_ids_are_a_type_error():
    batch = pa.record_batch({"qid": [[1], [1]], "grade": [2, 0], "score": [0.9, 0.1]})
    with pytest.raises(TypeError, match=r"must hold integers, floats, strings or bytes.*list"):
        StreamScorer().feed(batch)
    with pytest.raises(TypeError, match=r"must hold integers, floats, strings or bytes.*list"):
        fastndcg.ndcg_table(batch)


def test_errors_name_the_stream_row(backend):
    """A grade the gain rejects is named by its row in the stream, not in its batch."""
    batches = [
        pa.record_batch({"qid": [1, 1], "grade": [1, 2], "score": [0.5, 0.1]}),
        pa.record_batch({"qid": [2, 3], "grade": [-1, 0], "score": [0.9, 0.1]}),
    ]
    with pytest.raises(ValueError, match=r"column 'grade' has -1 at row 2 \(query 2\)"):
        list(score_batches(batches, backend=backend))


def test_a_finished_scorer_starts_a_new_stream(backend):
    """After finish() the same ids may come again, of another type, with rows counted anew."""
    scorer = StreamScorer(k=2, backend=backend)
    first = pa.table({"qid": [1, 1, 2], "grade": [2, 0, 1], "score": [0.9, 0.1, 0.5]})
    again = [scorer.feed(first), scorer.finish(), scorer.feed(first), scorer.finish()]
    expected = fastndcg.ndcg_table(first, k=2, backend=backend).per_query
    assert scorer.collect(again[2:]).per_query.tolist() == expected.tolist()
    assert scorer.collect(again[:2]).per_query.tolist() == expected.tolist()
    text = pa.table({"qid": ["a", "a", "b"], "grade": [1, -1, 0], "score": [0.3, 0.2, 0.1]})
    with pytest.raises(ValueError, match=r"column 'grade' has -1 at row 1 \(query 'a'\)"):
        scorer.feed(text)


def test_column_names_are_checked_when_the_scorer_is_made():
    """Before, StreamScorer(qid=1) was made, and the first batch raised."""
    for role, value in (("qid", 1), ("qid", None), ("grade", None), ("score", 2.5)):
        with pytest.raises(fastndcg.OptionTypeError) as info:
            StreamScorer(**{role: value})
        assert (info.value.option, info.value.value) == (role, value)
    assert StreamScorer(score=None).ranked
