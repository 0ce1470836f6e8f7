"""Input shapes: qid grouping, offsets, dense 2-D with and without a mask, ranked input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fastndcg


def test_qid_groups_noncontiguous_rows_stably_in_first_appearance_order(backend):
    qid = np.array(["b", "a", "b", "c", "a", "b"])
    grades = np.array([2.0, 1.0, 0.0, 3.0, 0.0, 1.0])
    scores = np.array([0.1, 0.9, 0.5, 0.3, 0.8, 0.5])
    result = fastndcg.ndcg(grades, scores, qid=qid, ties="stable", k=[1, None], backend=backend)
    assert list(result.query_ids) == ["b", "a", "c"]
    # the same queries spelled out one by one, in first-appearance row order
    for q, rows in enumerate(([0, 2, 5], [1, 4], [3])):
        alone = fastndcg.ndcg(
            grades[rows], scores[rows], ties="stable", k=[1, None], backend=backend
        )
        np.testing.assert_array_equal(result.per_query[q], alone.per_query[0])


@pytest.mark.parametrize(
    "qid",
    [
        np.array([7, 7, 3, 3, 3, 9]),
        np.array([7.5, 7.5, 3.0, 3.0, 3.0, 9.0]),
        np.array([b"x", b"x", b"y", b"y", b"y", b"z"]),
        np.array(["x", "x", "y", "y", "y", "z"], dtype=object),
        [("u", 1)] and ["q7", "q7", "q3", "q3", "q3", "q9"],
    ],
)
def test_qid_of_any_dtype(backend, qid):
    grades = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0])
    scores = np.array([0.2, 0.4, 0.1, 0.3, 0.5, 0.9])
    result = fastndcg.ndcg(grades, scores, qid=qid, backend=backend)
    by_offsets = fastndcg.ndcg(grades, scores, offsets=[0, 2, 5, 6], backend=backend)
    np.testing.assert_array_equal(result.per_query, by_offsets.per_query)
    assert result.n_queries == 3
    assert list(result.query_ids) == list(dict.fromkeys(list(qid)))


def test_repeated_qid_runs_are_regrouped(backend):
    """A query id that comes back after another query is one query, not two."""
    qid = [1, 1, 2, 1]
    result = fastndcg.ndcg([1.0, 0.0, 1.0, 2.0], [3.0, 2.0, 1.0, 0.0], qid=qid, backend=backend)
    assert list(result.query_ids) == [1, 2]
    alone = fastndcg.ndcg([1.0, 0.0, 2.0], [3.0, 2.0, 0.0], backend=backend)
    assert result.per_query[0, 0] == alone.per_query[0, 0]


@pytest.mark.parametrize("n_queries", [300, 70_000])  # the grouping's one and two sort passes
def test_shuffled_rows_group_as_a_stable_sort_by_first_appearance(backend, n_queries):
    rng = np.random.default_rng(n_queries)
    qid = rng.integers(0, 10**12, n_queries)[rng.integers(0, n_queries, 3 * n_queries)]
    grades = rng.integers(0, 3, qid.size).astype(np.float64)
    scores = rng.integers(0, 4, qid.size).astype(np.float64)  # ties: the row order matters
    result = fastndcg.ndcg(grades, scores, qid=qid, k=[3, None], ties="stable", backend=backend)
    first = dict.fromkeys(qid.tolist())
    code_of = {query: c for c, query in enumerate(first)}
    codes = np.array([code_of[query] for query in qid.tolist()])
    order = np.argsort(codes, kind="stable")  # the reference grouping
    offsets = np.searchsorted(codes[order], range(len(first) + 1))
    expected = fastndcg.ndcg(
        grades[order], scores[order], offsets=offsets, k=[3, None], ties="stable", backend=backend
    )
    assert list(result.query_ids) == list(first)
    np.testing.assert_array_equal(result.per_query, expected.per_query)


def test_dense_rows_are_queries(backend):
    grades = np.array([[3, 2, 0, 1], [0, 0, 1, 2]])
    scores = np.array([[0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]])
    dense = fastndcg.ndcg(grades, scores, k=3, backend=backend)
    flat = fastndcg.ndcg(grades.ravel(), scores.ravel(), offsets=[0, 4, 8], k=3, backend=backend)
    np.testing.assert_array_equal(dense.per_query, flat.per_query)
    assert list(dense.query_ids) == [0, 1]


def test_dense_mask_drops_padding(backend):
    grades = np.array([[3, 2, 9, 9], [1, 0, 2, 9]], dtype=float)
    scores = np.array([[0.4, 0.3, 9.0, 9.0], [0.1, 0.2, 0.3, 9.0]])
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 0]], dtype=bool)
    dense = fastndcg.ndcg(grades, scores, mask=mask, backend=backend)
    flat = fastndcg.ndcg(
        [3, 2, 1, 0, 2], [0.4, 0.3, 0.1, 0.2, 0.3], offsets=[0, 2, 5], backend=backend
    )
    np.testing.assert_array_equal(dense.per_query, flat.per_query)


def test_dense_ranked_rows(backend):
    result = fastndcg.ndcg(np.array([[3, 1, 2, 0, 2], [0, 1, 0, 0, 0]]), k=5, backend=backend)
    assert result.per_query[0, 0] == pytest.approx(0.950849602851865, rel=1e-14)
    assert result.per_query[1, 0] == pytest.approx(1 / np.log2(3), rel=1e-14)


def test_flat_input_without_qid_is_one_query(backend):
    result = fastndcg.ndcg([0, 1, 2], [3, 2, 1], backend=backend)
    assert result.n_queries == 1


GRADE_DTYPES = [
    "float64",
    "float32",
    "float16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
]
SCORE_DTYPES = ["float64", "float32", "float16", "int64", "int8"]


@pytest.mark.parametrize("grade_dtype", GRADE_DTYPES)
@pytest.mark.parametrize("score_dtype", SCORE_DTYPES)
def test_every_numeric_dtype_matches_float64(backend, grade_dtype, score_dtype):
    rng = np.random.default_rng(0)
    grades = rng.integers(0, 2 if grade_dtype == "bool" else 5, 500)
    scores = rng.integers(-20, 20, 500)  # exact in every score dtype
    offsets = np.array([0, 100, 350, 500])
    options = dict(k=[1, 10, None], ideal="global", ideal_offsets=offsets.astype(np.int32))
    a = fastndcg.ndcg(
        grades.astype(grade_dtype),
        scores.astype(score_dtype),
        offsets=offsets.astype(np.int32),
        ideal_grades=grades[::-1].astype(grade_dtype),
        backend=backend,
        **options,
    )
    b = fastndcg.ndcg(
        grades.astype(float),
        scores.astype(float),
        offsets=offsets,
        ideal_grades=grades[::-1].astype(float),
        backend=backend,
        **options,
    )
    np.testing.assert_array_equal(a.per_query, b.per_query)


def test_ideal_qid_matches_queries_by_id(backend):
    grades = [1.0, 0.0, 2.0, 1.0]
    scores = [0.9, 0.8, 0.7, 0.6]
    qid = ["a", "a", "b", "b"]
    # judgments in another order, with an unknown query "z" and nothing for "b"... except one row
    ideal_qid = ["z", "b", "a", "a", "a", "b"]
    ideal_grades = [3.0, 2.0, 1.0, 2.0, 0.0, 1.0]
    result = fastndcg.ndcg(
        grades,
        scores,
        qid=qid,
        ideal="global",
        ideal_grades=ideal_grades,
        ideal_qid=ideal_qid,
        gain="linear",
        backend=backend,
    )
    by_offsets = fastndcg.ndcg(
        grades,
        scores,
        qid=qid,
        ideal="global",
        ideal_grades=[1.0, 2.0, 0.0, 2.0, 1.0],
        ideal_offsets=[0, 3, 5],
        gain="linear",
        backend=backend,
    )
    np.testing.assert_array_equal(result.per_query, by_offsets.per_query)


def test_query_without_judgments_has_zero_idcg(backend):
    result = fastndcg.ndcg(
        [1.0, 1.0],
        [0.5, 0.4],
        qid=[1, 2],
        ideal="global",
        ideal_grades=[2.0],
        ideal_qid=[1],
        backend=backend,
    )
    assert np.isnan(result.per_query[1, 0]) and result.n_skipped[0] == 1


def test_judgment_lists_lacking_rows_given_warn_of_ndcg_above_1(backend):
    """The rows are judgments, so a judgment list's ideal can only fall below them when it
    lacks some: the values stand (each list's own ideal), and a warning names the first."""
    grades, scores, offsets = [0, 0, 1, 2], [1.5, -0.7, 0.8, 1.7], [0, 4]
    lacking = dict(ideal="global", ideal_grades=[1], ideal_offsets=[0, 1], backend=backend)
    with pytest.warns(UserWarning, match=r"1 of 1 queries \(first: query 0, DCG@2 = 3, IDCG@2 = 1"):
        result = fastndcg.ndcg(grades, scores, offsets=offsets, k=2, **lacking)
    assert result.per_query[0, 0] == 3.0
    with pytest.warns(UserWarning, match="NDCG is above 1") as caught:
        fastndcg.evaluate(
            grades, scores, offsets=offsets, measures=["nDCG@2"], ties="stable", **lacking
        )
    assert caught[0].filename == __file__  # the caller's line, not fastndcg's
    holding = dict(ideal="global", ideal_grades=[2, 1, 0, 0, 3], ideal_offsets=[0, 5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fastndcg.ndcg(grades, scores, offsets=offsets, k=2, backend=backend, **holding)
        # a list without relevant judgments: IDCG = 0 and the zero-IDCG rule, as before
        empty = dict(ideal="global", ideal_grades=[0], ideal_offsets=[0, 1])
        assert np.isnan(
            fastndcg.ndcg(grades, scores, offsets=offsets, backend=backend, **empty).per_query[0, 0]
        )


@pytest.mark.parametrize("dtype", [np.float16, np.longdouble, ">f8", ">i4", "<u2"])
def test_qid_dtypes_numpy_and_numba_read_differently_are_the_same_queries(backend, dtype):
    """float16, long double and big-endian ids (the run kernel reads none of them) group as
    their float64 or native values do."""
    qid = np.array([3, 3, 1, 1, 1, 2], dtype=dtype)
    grades = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0])
    scores = np.array([0.2, 0.4, 0.1, 0.3, 0.5, 0.9])
    result = fastndcg.ndcg(grades, scores, qid=qid, backend=backend)
    expected = fastndcg.ndcg(grades, scores, offsets=[0, 2, 5, 6], backend=backend)
    np.testing.assert_array_equal(result.per_query, expected.per_query)
    assert list(result.query_ids) == [3, 1, 2]


@pytest.mark.parametrize("order", [[0.0, -0.0, 1.0, 1.0], [0.0, 1.0, 1.0, -0.0]])
def test_negative_zero_is_query_zero(backend, order):
    """-0.0 == 0.0: one query wherever its rows are (Arrow's hashing tells them apart)."""
    grades = np.array([1.0, 0.0, 2.0, 1.0])
    scores = np.array([0.3, 0.2, 0.1, 0.4])
    result = fastndcg.ndcg(grades, scores, qid=np.array(order), backend=backend)
    assert result.n_queries == 2
    assert not np.signbit(result.query_ids).any()
    judged = fastndcg.ndcg(
        grades,
        scores,
        qid=np.array(order),
        ideal="global",
        ideal_grades=[3.0, 3.0],
        ideal_qid=np.array([-0.0, 1.0]),
        backend=backend,
    )
    assert np.all(np.isfinite(judged.per_query))


def test_ids_beyond_64_bits_are_a_type_error(backend):
    with pytest.raises(TypeError, match=r"integers that do not fit in 64 bits.*pass such ids as"):
        fastndcg.ndcg([1.0, 0.0], [0.2, 0.1], qid=[2**64, 1], backend=backend)


def test_empty_judgment_lists_give_every_query_zero_idcg(backend):
    result = fastndcg.ndcg(
        [1.0, 0.0],
        [0.2, 0.1],
        qid=[5, 6],
        ideal="global",
        ideal_grades=[],
        ideal_qid=[],
        zero_idcg="zero",
        backend=backend,
    )
    np.testing.assert_array_equal(result.per_query, [[0.0], [0.0]])
    np.testing.assert_array_equal(result.idcg, [[0.0], [0.0]])


@pytest.mark.parametrize(("ideal_qid", "match"), [(["1", "2"], "string"), ([True, False], "bool")])
def test_judgment_ids_of_another_kind_do_not_match_by_conversion(backend, ideal_qid, match):
    with pytest.raises(TypeError, match=f"ideal_qid holds {match} values and the query ids are"):
        fastndcg.ndcg(
            [1.0, 0.0],
            [0.2, 0.1],
            qid=[1, 2],
            ideal="global",
            ideal_grades=[2.0, 1.0],
            ideal_qid=ideal_qid,
            backend=backend,
        )


def test_judgment_ids_of_another_integer_width_match(backend):
    result = fastndcg.ndcg(
        [1.0, 0.0],
        [0.2, 0.1],
        qid=np.array([1, 2], dtype=np.int64),
        ideal="global",
        ideal_grades=[2.0, 1.0],
        ideal_qid=np.array([1, 2], dtype=np.int32),
        backend=backend,
    )
    assert np.all(np.isfinite(result.per_query[:, 0]))
