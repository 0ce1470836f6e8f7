"""Data and per-query comparison for the Dask and Spark tests (single machine is the reference)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import fastndcg

LONG_QUERY = 5  # index of the query that is longer than many Arrow batches


def judged_table(n_queries=300, seed=0, max_len=40, tie_heavy=False, long_len=700) -> pa.Table:
    """Rows sorted by query: sizes 1..max_len plus one long query, sparse int64 qids, every
    tenth query without a relevant item; ``tie_heavy`` rounds scores so most queries have ties."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_len + 1, n_queries)
    sizes[LONG_QUERY] = long_len
    qids = np.sort(rng.choice(10**12, n_queries, replace=False)).astype(np.int64)
    qid = np.repeat(qids, sizes)
    grades = rng.choice(5, size=qid.size, p=[0.5, 0.25, 0.13, 0.08, 0.04]).astype(np.int8)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    for q in range(0, n_queries, 10):
        grades[starts[q] : starts[q] + sizes[q]] = 0
    scores = rng.normal(size=qid.size) + 0.6 * grades
    if tie_heavy:
        scores = np.round(scores)
    return pa.table({"qid": qid, "grade": grades, "score": scores})


def query_starts(table: pa.Table, queries: list[int]) -> list[int]:
    """The first row of each of the given queries (by position; past the last: the row count)."""
    starts = np.flatnonzero(np.r_[True, np.diff(table.column("qid").to_numpy()) != 0])
    return [int(starts[q]) if q < starts.size else table.num_rows for q in queries]


def write_query_ranges(table: pa.Table, folder, cuts: list[int], row_group_size: int) -> None:
    """Parquet files holding whole queries: queries cuts[i]..cuts[i+1] go to file i."""
    rows = query_starts(table, cuts)
    for i, (a, b) in enumerate(itertools.pairwise(rows)):
        pq.write_table(
            table.slice(a, b - a), folder / f"part-{i}.parquet", row_group_size=row_group_size
        )


def thread_probe(wanted: int):
    """An exp2 gain that fails the task unless it runs with ``wanted`` Numba threads."""

    def gain(grades):  # defined inside: pickled by value, so workers need not import tests
        import numba

        seen = numba.get_num_threads()
        if seen != wanted:
            raise RuntimeError(f"the task ran with {seen} Numba threads; {wanted} wanted")
        return np.exp2(grades) - 1.0

    return gain


def shuffled(table: pa.Table, seed=1) -> pa.Table:
    """The rows in random order (every query scattered)."""
    return table.take(np.random.default_rng(seed).permutation(table.num_rows))


def reference(table: pa.Table, **options) -> tuple[pd.DataFrame, object]:
    """Single-machine per-query results (query_id, n_items, ndcg/dcg/idcg per cutoff) sorted by
    query id, and the aggregate (a float, or a dict per cutoff)."""
    result = fastndcg.ndcg_table(table, **options)
    frame = result.to_pandas()
    ids, counts = np.unique(table.column("qid").to_numpy(), return_counts=True)
    frame = frame.sort_values("query_id", ignore_index=True)
    np.testing.assert_array_equal(frame["query_id"].to_numpy(), ids)
    frame.insert(1, "n_items", counts)
    mean = float(result) if len(result.k) == 1 else dict(zip(result.k, result.mean, strict=True))
    return frame, mean


def assert_same_per_query(got, expected: pd.DataFrame) -> None:
    """Per query, the same results as the single machine: every query once, 1e-12."""
    if isinstance(got, (pa.Table, pa.RecordBatch)):
        got = got.to_pandas()
    assert list(got.columns) == list(expected.columns)
    assert got["query_id"].is_unique, "a query was scored in pieces"
    got = got.sort_values("query_id", ignore_index=True)
    np.testing.assert_array_equal(got["query_id"].to_numpy(), expected["query_id"].to_numpy())
    np.testing.assert_array_equal(got["n_items"].to_numpy(), expected["n_items"].to_numpy())
    for name in expected.columns[2:]:
        np.testing.assert_allclose(
            got[name].to_numpy(), expected[name].to_numpy(), rtol=1e-12, atol=1e-12, err_msg=name
        )


def assert_same_mean(got, expected) -> None:
    """The aggregate equals the single machine's to 1e-12 (NaN where it is NaN)."""
    if isinstance(expected, dict):
        assert list(got) == list(expected)
        for k in expected:
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-12, atol=0)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def measures_reference(table: pa.Table, **options) -> tuple[pd.DataFrame, dict[str, float]]:
    """Single-machine per-query values of the measures (query_id, n_items, one column per
    measure) sorted by query id, and each measure's summary (``MeasuresResult.mean``)."""
    result = fastndcg.evaluate_table(table, **options)
    frame = result.to_pandas().sort_values("query_id", ignore_index=True)
    ids, counts = np.unique(table.column("qid").to_numpy(), return_counts=True)
    np.testing.assert_array_equal(frame["query_id"].to_numpy(), ids)
    frame.insert(1, "n_items", counts)
    return frame, dict(zip(result.measures, result.mean.tolist(), strict=True))


def assert_same_measures(got, expected: pd.DataFrame) -> None:
    """Per query, the very values of the single machine (bit for bit), every query once."""
    if isinstance(got, (pa.Table, pa.RecordBatch)):
        got = got.to_pandas()
    assert list(got.columns) == list(expected.columns)
    assert got["query_id"].is_unique, "a query was scored in pieces"
    got = got.sort_values("query_id", ignore_index=True)
    for name in expected.columns:
        np.testing.assert_array_equal(got[name].to_numpy(), expected[name].to_numpy(), name)
