"""fastndcg.Scorer: one ranked list per call, bit-identical to fastndcg.ndcg, same errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import DISCOUNT_ARRAY, TABLE, cutoffs, discount_option, discounts

import fastndcg

LONG_DISCOUNT = DISCOUNT_ARRAY + [0.05] * 300  # as deep as the longest generated list


def same(a, b) -> bool:
    """Equal as floats or arrays, NaN equal to NaN."""
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


@st.composite
def one_list(draw):
    n = draw(st.integers(0, 300))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    grade_dtype = draw(st.sampled_from([np.int8, np.int64, np.uint8, np.float32, np.float64]))
    grades = rng.integers(0, draw(st.integers(1, 6)), n).astype(grade_dtype)
    if draw(st.booleans()) and grade_dtype in (np.float32, np.float64):
        grades = grades * grade_dtype(0.5)  # fractional grades: no level counting
    tied = draw(st.booleans())
    scores = rng.integers(0, 4, n).astype(float) if tied else rng.standard_normal(n)
    return grades, scores.astype(draw(st.sampled_from([np.float64, np.float32])))


@given(
    data=one_list(),
    k=cutoffs,
    gain=st.sampled_from(["exp2", "linear", "table"]),
    discount=discounts,
    ideal=st.sampled_from(["recall", "local", "max"]),
    tie=st.sampled_from(["average", "stable", "pessimistic", "optimistic", "random"]),
    zero_idcg=st.sampled_from(["skip", "zero", "one"]),
)
def test_scorer_equals_ndcg(backend, data, k, gain, discount, ideal, tie, zero_idcg):
    grades, scores = data
    if gain == "table" and grades.size and (grades.max() >= len(TABLE) or np.any(grades % 1)):
        gain = "linear"
    options = dict(
        k=k,
        gain=TABLE if gain == "table" else gain,
        discount=LONG_DISCOUNT if discount == "array" else discount_option(discount),
        ideal=ideal,
        ties=tie,
        seed=3 if tie == "random" else None,
        zero_idcg=zero_idcg,
        backend=backend,
    )
    score = fastndcg.Scorer(**options)
    expected = fastndcg.ndcg(grades, scores, **options)
    if grades.size == 0:  # no query at all for ndcg; an empty list scores as IDCG = 0
        expected_row = {"skip": np.nan, "zero": 0.0, "one": 1.0}[zero_idcg]
        expected_row = np.full(len(expected.k), expected_row)
    else:
        expected_row = expected.per_query[0]
    got = score(grades, scores)
    again = score(grades, scores)  # the second call reuses the cached kernel inputs
    want = float(expected_row[0]) if len(expected.k) == 1 else expected_row
    assert same(got, want) and same(again, want)
    assert isinstance(got, float) == (len(expected.k) == 1)


def test_scorer_reuses_inputs_only_for_the_same_length_and_grade_range():
    score = fastndcg.Scorer(k=5)
    rng = np.random.default_rng(1)
    for n, top in [(20, 2), (20, 5), (21, 2), (20, 2), (400, 9), (20, 5), (3, 1)]:
        grades = rng.integers(0, top + 1, n)
        scores = rng.random(n)
        assert score(grades, scores) == float(fastndcg.ndcg(grades, scores, k=5))


def test_scorer_ideal_max_follows_the_largest_grade_of_each_list():
    score = fastndcg.Scorer(k=3, ideal="max")
    for grades in ([1, 0, 2], [4, 0, 2], [1, 0, 2]):
        scores = [0.3, 0.2, 0.1]
        expected = float(fastndcg.ndcg(grades, scores, k=3, ideal="max"))
        assert score(grades, scores) == expected


@pytest.mark.parametrize(
    "grades, scores, message",
    [
        ([1, 0, 2], [0.3, np.nan, 0.1], "scores has a NaN value at row 1"),
        ([1, np.inf, 2], [0.3, 0.2, 0.1], "grades has an infinite value at row 1"),
        ([1, -1, 2], [0.3, 0.2, 0.1], "not defined for negative grades"),
        ([1, 0, 2], [0.3, 0.2], "same length"),
        (["a", "b"], [0.3, 0.2], "grades must be numeric"),
    ],
)
def test_scorer_errors_are_those_of_ndcg(grades, scores, message):
    score = fastndcg.Scorer(k=3)
    score([1, 0, 2], [0.3, 0.2, 0.1])  # a cached shape must not skip the checks
    with pytest.raises((ValueError, TypeError), match=message):
        score(grades, scores)
    with pytest.raises((ValueError, TypeError), match=message):
        fastndcg.ndcg(grades, scores, k=3)


def test_scorer_rejects_many_queries_and_global_ideal():
    with pytest.raises(ValueError, match="one ranked list per call"):
        fastndcg.Scorer(k=3)(np.array([[1, 0], [0, 1]]), np.array([[0.5, 0.1], [0.2, 0.3]]))
    with pytest.raises(ValueError, match="ideal='global'"):
        fastndcg.Scorer(ideal="global")
    with pytest.raises(ValueError, match="ties"):
        fastndcg.Scorer(ties="sorted")


def test_scorer_leaves_the_callers_arrays_alone():
    grades = np.array([3, 0, 1, 2], dtype=np.int8)
    scores = np.array([0.1, 0.4, 0.3, 0.2])
    before = grades.copy(), scores.copy()
    fastndcg.Scorer(k=2)(grades, scores)
    assert grades.flags.writeable and scores.flags.writeable
    assert np.array_equal(grades, before[0]) and np.array_equal(scores, before[1])


def test_scorer_random_ties_draw_one_seed():
    score = fastndcg.Scorer(k=2, ties="random")
    grades, scores = [1, 0, 2, 1], [0.5, 0.5, 0.5, 0.5]
    first = score(grades, scores)
    assert all(score(grades, scores) == first for _ in range(5))
