"""fastndcg.ndcg_score against scikit-learn's ndcg_score: values per row, and the same errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import fastndcg

sklearn_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn not installed")
scipy_sparse = pytest.importorskip("scipy.sparse")  # scikit-learn depends on SciPy


def dense(shape_rows, shape_cols, values):
    return arrays(np.float64, (shape_rows, shape_cols), elements=values)


@st.composite
def problems(draw):
    rows = draw(st.integers(1, 6))
    cols = draw(st.integers(2, 9))
    y_true = draw(dense(rows, cols, st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, 0.5])))
    y_score = draw(dense(rows, cols, st.sampled_from([0.0, 0.1, 0.2, 1.0, -3.0])))
    return y_true, y_score


@given(
    problem=problems(),
    k=st.one_of(st.none(), st.integers(1, 10)),
    ignore_ties=st.booleans(),
    weighted=st.booleans(),
)
def test_matches_sklearn_per_row_and_on_average(problem, k, ignore_ties, weighted):
    y_true, y_score = problem
    weights = np.arange(1, y_true.shape[0] + 1, dtype=float) if weighted else None
    ours = fastndcg.ndcg_score(y_true, y_score, k=k, sample_weight=weights, ignore_ties=ignore_ties)
    theirs = sklearn_metrics.ndcg_score(
        y_true, y_score, k=k, sample_weight=weights, ignore_ties=ignore_ties
    )
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)
    for row in range(y_true.shape[0]):  # per query, not only the mean
        one = dict(k=k, ignore_ties=ignore_ties)
        a = fastndcg.ndcg_score(y_true[row : row + 1], y_score[row : row + 1], **one)
        b = sklearn_metrics.ndcg_score(y_true[row : row + 1], y_score[row : row + 1], **one)
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12)


BAD = {
    "k0": dict(y_true=[[1, 0, 2]], y_score=[[1, 2, 3]], k=0),
    "kfloat": dict(y_true=[[1, 0, 2]], y_score=[[1, 2, 3]], k=2.0),
    "negative": dict(y_true=[[1, 0, -2]], y_score=[[1, 2, 3]]),
    "one_column": dict(y_true=[[1], [0]], y_score=[[1], [2]]),
    "one_d": dict(y_true=[1, 0, 2], y_score=[1, 2, 3]),
    "one_d_binary": dict(y_true=[1, 0, 1], y_score=[1, 2, 3]),
    "nan_true": dict(y_true=[[1, np.nan, 2]], y_score=[[1, 2, 3]]),
    "nan_score": dict(y_true=[[1, 0, 2]], y_score=[[1, np.nan, 3]]),
    "inf_score": dict(y_true=[[1, 0, 2]], y_score=[[1, np.inf, 3]]),
    "rows": dict(y_true=[[1, 0, 2], [1, 1, 1]], y_score=[[1, 2, 3]]),
    "empty": dict(y_true=np.zeros((0, 3)), y_score=np.zeros((0, 3))),
    "three_d": dict(y_true=np.zeros((2, 3, 2)), y_score=np.zeros((2, 3, 2))),
    "weights_length": dict(
        y_true=[[1, 0, 2], [1, 1, 1]], y_score=[[1, 2, 3], [1, 2, 3]], sample_weight=[1]
    ),
    "weights_zero": dict(
        y_true=[[1, 0, 2], [1, 1, 1]], y_score=[[1, 2, 3], [1, 2, 3]], sample_weight=[0, 0]
    ),
    "ignore_ties": dict(y_true=[[1, 0, 2]], y_score=[[1, 2, 3]], ignore_ties="yes"),
    "strings": dict(y_true=[["a", "b"]], y_score=[[1, 2]]),
    "scalars": dict(y_true=1, y_score=1),
    "none": dict(y_true=None, y_score=None),
    "scalar_score": dict(y_true=[[1, 0, 2]], y_score=3.0),
    "weight_scalar": dict(y_true=[[1, 0], [0, 1]], y_score=[[1, 2], [1, 2]], sample_weight=1.0),
    "weight_string": dict(y_true=[[1, 0], [0, 1]], y_score=[[1, 2], [1, 2]], sample_weight="ab"),
    "complex": dict(y_true=np.array([[1 + 1j, 0], [0, 1]]), y_score=[[1, 2], [1, 2]]),
    "no_columns": dict(y_true=np.zeros((2, 0)), y_score=np.zeros((2, 0))),
    "no_score_columns": dict(y_true=[[1, 0], [0, 1]], y_score=np.zeros((2, 0))),
    "inf_float16": dict(y_true=[[1, 0, 2]], y_score=np.array([[1, np.inf, 3]], np.float16)),
    "inf_big_endian": dict(y_true=np.array([[1, np.inf, 2]], ">f8"), y_score=[[1, 2, 3]]),
    "zero_d": dict(y_true=np.array(2.0), y_score=np.array(2.0)),
    "zero_d_nan": dict(y_true=np.array(np.nan), y_score=np.array(2.0)),
    "zero_d_weight": dict(
        y_true=[[1, 0], [0, 1]], y_score=[[1, 2], [1, 2]], sample_weight=np.array(1.0)
    ),
    "set": dict(y_true={1, 2}, y_score=[[1, 2]]),
    "dict": dict(y_true={0: [1, 2]}, y_score=[[1, 2]]),
    "sparse_true": dict(y_true=scipy_sparse.csr_matrix([[1, 0], [0, 1]]), y_score=[[1, 2], [1, 2]]),
    "sparse_score": dict(
        y_true=[[1, 0], [0, 1]], y_score=scipy_sparse.csr_matrix([[1, 2], [1, 2]])
    ),
    "sparse_weight": dict(
        y_true=[[1, 0], [0, 1]],
        y_score=[[1, 2], [1, 2]],
        sample_weight=scipy_sparse.csr_matrix([1, 2]),
    ),
    "y_true_checked_before_k": dict(y_true=None, y_score=[[1, 2]], k=0),
    "weights_checked_before_ignore_ties": dict(
        y_true=[[1, 0]], y_score=[[1, 2]], sample_weight=1.0, ignore_ties="yes"
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_same_errors_as_sklearn(case):
    kwargs = BAD[case]
    with pytest.raises(Exception) as theirs:
        sklearn_metrics.ndcg_score(**kwargs)
    with pytest.raises(Exception) as ours:
        fastndcg.ndcg_score(**kwargs)
    assert str(ours.value) == str(theirs.value)
    assert type(ours.value).__name__ == theirs.type.__name__
    assert isinstance(ours.value, theirs.type.__mro__[1])


def test_all_zero_row_scores_zero_and_counts():
    y_true = np.array([[0, 0, 0], [1, 0, 2]])
    y_score = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    assert fastndcg.ndcg_score(y_true, y_score) == pytest.approx(
        sklearn_metrics.ndcg_score(y_true, y_score), rel=1e-14
    )
    assert fastndcg.ndcg_score(y_true, y_true) < 1.0  # as in scikit-learn


def test_k_beyond_the_lists_is_no_cutoff():
    y_true, y_score = [[1, 0, 2], [0, 3, 1]], [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]
    for k in (3, 10**30):
        ours = fastndcg.ndcg_score(y_true, y_score, k=k)
        assert ours == pytest.approx(sklearn_metrics.ndcg_score(y_true, y_score, k=k), rel=1e-12)


def assert_rows_match_sklearn(y_true, y_score, **options):
    """fastndcg.ndcg_score equals scikit-learn's on every row alone and on the average."""
    reference = y_score
    if not options.get("ignore_ties") and y_score.dtype.kind in "ub":
        # scikit-learn sorts -y_score when it averages ties: unsigned scores wrap around (0 ranks
        # first) and bool ones raise a TypeError. fastndcg ranks them as the numbers they are,
        # as scikit-learn does the same scores in a signed dtype
        reference = y_score.astype(np.int64)
    ours = fastndcg.ndcg_score(y_true, y_score, **options)
    assert ours == pytest.approx(
        sklearn_metrics.ndcg_score(y_true, reference, **options), rel=1e-12
    )
    for row in range(len(y_true)):
        ours = fastndcg.ndcg_score(y_true[row : row + 1], y_score[row : row + 1], **options)
        theirs = sklearn_metrics.ndcg_score(
            y_true[row : row + 1], reference[row : row + 1], **options
        )
        assert ours == pytest.approx(theirs, rel=1e-12)


@pytest.mark.parametrize("dtype", ["i1", "u1", "i2", "u2", "?", "f2", "f4", "i8", ">f8", ">i4"])
@pytest.mark.parametrize("ignore_ties", [True, False])
def test_tied_scores_in_every_dtype(dtype, ignore_ties):
    # NumPy's argsort puts ties in a different order for each dtype: ignore_ties=True must
    # argsort the scores in their own dtype, as scikit-learn does
    rng = np.random.default_rng(7)
    y_true = rng.integers(0, 4, size=(20, 50))
    y_score = rng.integers(0, 2 if dtype == "?" else 5, size=(20, 50)).astype(dtype)
    assert_rows_match_sklearn(y_true, y_score, k=10, ignore_ties=ignore_ties)
    assert_rows_match_sklearn(y_true, y_score, ignore_ties=ignore_ties)


def test_sklearn_negates_unsigned_scores():
    # the difference assert_rows_match_sklearn allows for: scikit-learn ranks unsigned 0 first
    y_true, y_score = np.array([[1, 0, 0]]), np.array([[2, 1, 0]], np.uint8)
    assert sklearn_metrics.ndcg_score(y_true, y_score) < 1.0
    assert (
        fastndcg.ndcg_score(y_true, y_score)
        == 1.0
        == sklearn_metrics.ndcg_score(y_true, [[2, 1, 0]])
    )


@pytest.mark.parametrize("dtype", ["i8", "u8", ">i8"])
@pytest.mark.parametrize("ignore_ties", [True, False])
def test_integer_scores_beyond_float64_stay_exact(dtype, ignore_ties):
    # 2**60 + 1 and 2**60 + 2 are one float64 (a tie there) but two scores for scikit-learn
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 4, size=(20, 12))
    y_score = (2**60 + rng.integers(-6, 6, size=(20, 12))).astype(dtype)
    if dtype == "i8":
        y_score[::2] *= -1
    assert_rows_match_sklearn(y_true, y_score, ignore_ties=ignore_ties)
    assert_rows_match_sklearn(y_true, y_score, k=3, ignore_ties=ignore_ties)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="long double is float64 here")
@pytest.mark.parametrize("ignore_ties", [True, False])
def test_long_double_scores_stay_exact(ignore_ties):
    rng = np.random.default_rng(5)
    y_true = rng.integers(0, 4, size=(20, 12))
    step = np.longdouble(2) ** -60  # below float64 resolution at 1
    y_score = 1 + rng.integers(0, 6, size=(20, 12)).astype(np.longdouble) * step
    assert_rows_match_sklearn(y_true, y_score, ignore_ties=ignore_ties)
