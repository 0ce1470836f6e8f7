"""ndcg_table: every table type, zero-copy numeric columns, and clear errors."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import BACKENDS, TEST_DATA
from reference import queries_from_csr, reference_ndcg

import fastndcg
from fastndcg._backends import get_backend, resolve_backend
from fastndcg._io.arrow import as_arrow, table_layout
from fastndcg.synthetic import make_synthetic


@pytest.fixture(scope="module")
def synthetic():
    data = make_synthetic(3000, seed=4, max_len=300)
    table = pa.table({"qid": data.qid(), "grade": data.grades, "score": data.scores})
    expected = {  # per backend: each is compared with itself bit for bit
        backend: fastndcg.ndcg(
            data.grades, data.scores, offsets=data.offsets, k=[1, 10, None], backend=backend
        )
        for backend in (*BACKENDS, "auto")
    }
    return data, table, expected


class Capsule:
    """Any object speaking the Arrow PyCapsule stream interface."""

    def __init__(self, table):
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


@pytest.mark.parametrize(
    "convert",
    [
        lambda t: t,
        lambda t: t.combine_chunks().to_batches()[0],
        lambda t: pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=777)),
        lambda t: t.to_pandas(),
        Capsule,
        lambda t: pa.Table.from_batches(t.to_batches(max_chunksize=1000)),  # multi-chunk
    ],
    ids=["table", "record_batch", "reader", "pandas", "capsule", "chunked"],
)
def test_every_table_kind_matches_arrays(backend, synthetic, convert):
    _, table, expected = synthetic
    result = fastndcg.ndcg_table(convert(table), k=[1, 10, None], backend=backend)
    np.testing.assert_array_equal(result.per_query, expected[backend].per_query)
    np.testing.assert_array_equal(result.query_ids, expected[backend].query_ids)


@pytest.mark.parametrize("qid_kind", ["string", "large_string", "dictionary", "shuffled"])
def test_string_dictionary_and_shuffled_query_ids(backend, synthetic, qid_kind):
    data, table, expected = synthetic
    names = pa.array([f"q{q:05d}" for q in data.qid()])
    if qid_kind == "large_string":
        names = names.cast(pa.large_string())
    if qid_kind == "dictionary":
        names = pc.dictionary_encode(names)
    table = table.set_column(0, "qid", names)
    if qid_kind == "shuffled":
        table = table.take(np.random.default_rng(0).permutation(table.num_rows))
    result = fastndcg.ndcg_table(table, k=[1, 10, None], backend=backend)
    assert list(result.query_ids[:3]) == (
        [f"q{q:05d}" for q in range(3)] if qid_kind != "shuffled" else list(result.query_ids[:3])
    )
    by_id = dict(zip(result.query_ids, result.per_query, strict=True))
    for q in range(0, data.n_queries, 97):
        np.testing.assert_allclose(by_id[f"q{q:05d}"], expected[backend].per_query[q], rtol=1e-14)


def test_numeric_columns_reach_the_kernels_without_a_copy(synthetic):
    """The layout's arrays are the Arrow buffers, and no buffer of a column's size is allocated."""
    _, table, _ = synthetic
    big = make_synthetic(40_000, seed=2)
    table = pa.table(
        {
            "qid": big.qid(),
            "grade": big.grades.astype(np.int32),
            "score": big.scores.astype(np.float64),
        }
    )
    grade_buffer = table.column("grade").chunk(0).to_numpy()
    score_buffer = table.column("score").chunk(0).to_numpy()
    backend = resolve_backend("auto")
    layout = table_layout(as_arrow(table), "qid", "grade", "score", backend)
    assert np.shares_memory(layout.grades, grade_buffer)
    assert np.shares_memory(layout.scores, score_buffer)
    if "numba" not in fastndcg.available_backends():
        return  # the NumPy backend works in bounded blocks of padded copies by design
    fastndcg.ndcg_table(table, k=10)  # warm up compile caches outside the measurement
    tracemalloc.start()
    fastndcg.ndcg_table(table, k=10)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    smallest_column = table.num_rows * 4  # the int32 grade column
    assert peak < smallest_column / 2, f"peak {peak} bytes vs column {smallest_column}"


def test_a_dataframe_arrow_cannot_hold_is_a_type_error():
    frame = pd.DataFrame({"q": [1, 1], "g": [1, 0], "s": np.array([0.1, 0.2], np.longdouble)})
    if np.dtype(np.longdouble).itemsize <= 8:
        pytest.skip("long double is float64 here, which Arrow holds")
    with pytest.raises(TypeError, match=r"the DataFrame cannot be read as Arrow columns .*astype"):
        fastndcg.ndcg_table(frame, qid="q", grade="g", score="s")


def test_pandas_numeric_columns_are_not_copied():
    frame = pd.DataFrame(
        {
            "qid": np.repeat(np.arange(100), 10),
            "grade": np.arange(1000) % 3,
            "score": np.linspace(0, 1, 1000),
        }
    )
    layout = table_layout(as_arrow(frame), "qid", "grade", "score", get_backend("numpy"))
    assert np.shares_memory(layout.scores, frame["score"].to_numpy())


def test_missing_column_lists_the_columns():
    table = pa.table({"qid": [1], "label": [1], "pred": [0.5]})
    with pytest.raises(
        KeyError,
        match=r"column 'grade' \(the grade column\) not found; the table has columns: qid, label, pred",
    ):
        fastndcg.ndcg_table(table)
    assert float(fastndcg.ndcg_table(table, grade="label", score="pred", zero_idcg="zero")) == 1.0


@pytest.mark.parametrize("name", ["grade", "score"])
def test_nulls_name_the_column_and_first_row(name):
    values = {"qid": [1, 1, 2, 2], "grade": [1, 0, 2, 1], "score": [0.1, 0.2, 0.3, 0.4]}
    values[name] = [*values[name][:2], None, *values[name][3:]]
    with pytest.raises(
        ValueError, match=rf"column '{name}' \({name}\) has a null at row 2; fill or drop"
    ):
        fastndcg.ndcg_table(pa.table(values))


def test_null_query_id_and_non_numeric_columns():
    with pytest.raises(ValueError, match=r"column 'qid' \(qid\) has a null at row 1"):
        fastndcg.ndcg_table(pa.table({"qid": ["a", None], "grade": [1, 0], "score": [0.1, 0.2]}))
    with pytest.raises(
        TypeError, match=r"column 'score' \(score\) must be numeric; it has Arrow type string"
    ):
        fastndcg.ndcg_table(pa.table({"qid": [1, 1], "grade": [1, 0], "score": ["a", "b"]}))


def test_integer_grades_float64_cannot_hold_name_their_row(backend):
    table = pa.table({"qid": [1, 1, 2], "grade": [1, 0, 2**53 + 1], "score": [0.1, 0.2, 0.3]})
    with pytest.raises(
        ValueError,
        match=r"column 'grade' has 9007199254740993 at row 2, beyond 2\*\*53.*convert column 'grade' to float64",
    ):
        fastndcg.ndcg_table(table, gain="linear", backend=backend)


def test_unknown_option_lists_valid_ones():
    with pytest.raises(
        TypeError,
        match=r"ndcg_table\(\) got unknown option\(s\) cutoff; valid options: aggregate, backend",
    ):
        fastndcg.ndcg_table(pa.table({"qid": [1], "grade": [1], "score": [0.5]}), cutoff=3)
    with pytest.raises(TypeError, match="expected a pyarrow Table"):
        fastndcg.ndcg_table([1, 2, 3])


def test_options_and_ranked_tables(backend):
    table = pa.table({"qid": [7, 7, 7, 8, 8], "grade": [0, 2, 1, 1, 0]})
    result = fastndcg.ndcg_table(
        table, score=None, gain="linear", k=2, backend=backend, weights=[1.0, 3.0]
    )
    expected = fastndcg.ndcg(
        [0, 2, 1, 1, 0], offsets=[0, 3, 5], gain="linear", k=2, weights=[1.0, 3.0], backend=backend
    )
    np.testing.assert_array_equal(result.per_query, expected.per_query)
    assert float(result) == float(expected)


@pytest.mark.parametrize(
    "folder", ["lgb_mq2008", "xgb_mq2008", "lgb_lambdarank_example", "xgb_lambdarank_example"]
)
def test_real_predictions_against_reference(backend, folder):
    table = pq.read_table(TEST_DATA / "derived" / folder / "predictions.parquet")
    result = fastndcg.ndcg_table(
        table, grade="label", k=[1, 5, 10, None], ties="stable", zero_idcg="zero", backend=backend
    )
    assert result.n_queries == len(set(table.column("qid").to_pylist()))
    labels = table.column("label").to_numpy().astype(float)
    scores = table.column("score").to_numpy()
    qids = table.column("qid").to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]])
    offsets = np.r_[starts, qids.size]
    expected = reference_ndcg(
        queries_from_csr(offsets, labels, scores), k=result.k, ties="stable", zero_idcg="zero"
    )
    np.testing.assert_allclose(result.per_query, np.array(expected.ndcg), rtol=1e-12, atol=1e-12)


def test_empty_table_with_dictionary_ids(backend):
    schema = pa.schema(
        [
            ("qid", pa.dictionary(pa.int32(), pa.string())),
            ("grade", pa.int64()),
            ("score", pa.float64()),
        ]
    )
    result = fastndcg.ndcg_table(pa.Table.from_batches([], schema=schema), backend=backend)
    assert result.n_queries == 0 and result.per_query.shape == (0, 1)


def test_a_csv_file_with_only_a_header_has_no_queries(tmp_path, backend):
    """pyarrow reads a header-only CSV file as null-typed columns without rows: no queries."""
    import pyarrow.csv as pacsv

    path = tmp_path / "header.csv"
    path.write_text("qid,grade,score\n")
    table = pacsv.read_csv(path)
    assert pa.types.is_null(table.schema.field("grade").type)
    result = fastndcg.ndcg_table(table, k=[3, None], backend=backend)
    assert result.n_queries == 0 and result.per_query.shape == (0, 2)
    with pytest.raises(ValueError, match=r"'qid' .* has a null at row 0"):  # rows: still nulls
        fastndcg.ndcg_table(
            pa.table({"qid": pa.array([None]), "grade": [1], "score": [0.5]}), backend=backend
        )


def _stream_table(table, **options):
    from fastndcg.stream import StreamScorer

    scorer = StreamScorer(**options)
    return scorer.collect([scorer.feed(table), scorer.finish()])


IRREGULAR_DICTIONARIES = {
    # polars exports Categorical/Enum columns as dictionaries of string views
    "string views": pa.DictionaryArray.from_arrays(
        pa.array([0, 0, 1, 1, 1, 2], pa.int32()), pa.array(["a", "b", "c"], pa.string_view())
    ),
    "a value twice": pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 0, 2, 2, 2], pa.int32()), pa.array(["a", "a", "b"])
    ),
    "-0.0 and 0.0": pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 2, 2, 2, 2], pa.int32()), pa.array([0.0, -0.0, 1.5])
    ),
}


@pytest.mark.parametrize("entry", [fastndcg.ndcg_table, _stream_table], ids=["table", "stream"])
@pytest.mark.parametrize("kind", IRREGULAR_DICTIONARIES)
def test_dictionary_ids_score_as_their_decoded_values(backend, entry, kind):
    """Rows are grouped by id value, whatever the dictionary's codes or value type."""
    ids = IRREGULAR_DICTIONARIES[kind]
    decoded = ids.dictionary.cast(pa.large_string()) if kind == "string views" else ids.dictionary
    grades, scores = [1, 0, 2, 0, 1, 3], [0.9, 0.1, 0.5, 0.3, 0.8, 0.2]
    result = entry(pa.table({"qid": ids, "grade": grades, "score": scores}), backend=backend)
    plain = pa.DictionaryArray.from_arrays(ids.indices, decoded).dictionary_decode()
    expected = fastndcg.ndcg(grades, scores, qid=plain.to_numpy(zero_copy_only=False))
    assert list(result.query_ids) == list(expected.query_ids)
    np.testing.assert_array_equal(result.per_query, expected.per_query)


@pytest.mark.parametrize("entry", [fastndcg.ndcg_table, _stream_table], ids=["table", "stream"])
@pytest.mark.parametrize(
    ("dictionary", "message"),
    [(pa.array(["a", None]), "has a null at row 2"), (pa.array([1.0, np.nan]), "NaN at row 2")],
)
def test_a_dictionary_null_or_nan_id_is_named_by_its_row(backend, entry, dictionary, message):
    ids = pa.DictionaryArray.from_arrays(pa.array([0, 0, 1, 1], pa.int32()), dictionary)
    table = pa.table({"qid": ids, "grade": [1, 0, 0, 1], "score": [0.9, 0.1, 0.8, 0.2]})
    with pytest.raises(ValueError, match=message):
        entry(table, backend=backend)


@pytest.mark.parametrize(
    ("data", "advice"),
    [
        (pd.Series([1, 2]), "pass a table of named columns, or the arrays themselves"),
        (pa.array([1, 2]), "pass a table of named columns, or the arrays themselves"),
        (pa.chunked_array([[1, 2]]), "pass a table of named columns, or the arrays themselves"),
        (pa.table({"qid": [1]}), None),
    ],
)
def test_a_column_or_a_dataset_is_not_a_table(data, advice):
    import pyarrow.dataset as ds

    if advice is None:  # a dataset: ndcg_parquet reads those
        data, advice = ds.dataset(data), "pass a dataset to fastndcg.ndcg_parquet"
    with pytest.raises(TypeError, match=rf"got {type(data).__name__}: {advice}"):
        fastndcg.ndcg_table(data)


def test_a_named_pandas_index_is_a_column(backend):
    frame = pd.DataFrame(
        {"qid": [1, 1, 2, 2], "grade": [2, 0, 0, 1], "score": [0.9, 0.1, 0.8, 0.7]}
    )
    expected = fastndcg.ndcg_table(frame, backend=backend)
    for indexed in (frame.set_index("qid"), frame.set_index(["qid", "grade"])):
        got = fastndcg.ndcg_table(indexed, backend=backend)
        np.testing.assert_array_equal(got.query_ids, expected.query_ids)
        np.testing.assert_array_equal(got.per_query, expected.per_query)
    # a column of the same name wins over the index
    clash = frame.set_index(pd.Index([7, 7, 7, 7], name="qid"))
    np.testing.assert_array_equal(fastndcg.ndcg_table(clash).query_ids, expected.query_ids)


@pytest.mark.parametrize("entry", [fastndcg.ndcg_table, _stream_table], ids=["table", "stream"])
def test_bad_values_are_named_by_their_column(backend, entry):
    table = pa.table({"qid": [1, 1, 2], "label": [1, 0, 2], "pred": [0.1, np.nan, 0.3]})
    with pytest.raises(ValueError, match=r"^column 'pred' has a NaN value at row 1; column 'pred'"):
        entry(table, grade="label", score="pred", backend=backend)
    negative = table.set_column(2, "pred", pa.array([0.1, 0.2, 0.3])).set_column(
        1, "label", pa.array([1, -1, 0])
    )
    with pytest.raises(ValueError, match=r"column 'label' has -1 at row 1 \(query 1\)"):
        entry(negative, grade="label", score="pred", backend=backend)
