"""Bad input gets a clear error naming the problem and the fix; inputs are never modified."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from strategies import INDEPENDENT_JUDGMENTS

import fastndcg

G = np.array([3.0, 1.0, 2.0, 0.0, 2.0])
S = np.array([0.5, 0.4, 0.3, 0.2, 0.1])


def call(**overrides):
    kwargs = dict(grades=G, scores=S)
    kwargs.update(overrides)
    grades = kwargs.pop("grades")
    scores = kwargs.pop("scores")
    return fastndcg.ndcg(grades, scores, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(scores=S[:4]), ValueError, "same length; got 5 grades and 4 scores"),
        (dict(scores=[0.1, np.nan, 0.3, 0.2, 0.1]), ValueError, "scores has a NaN value at row 1"),
        (
            dict(scores=[0.1, 0.2, np.inf, 0.2, 0.1]),
            ValueError,
            "scores has an infinite value at row 2",
        ),
        (dict(grades=[1.0, 2.0, 0.0, np.nan, 1.0]), ValueError, "grades has a NaN value at row 3"),
        (
            dict(grades=[1.0, -1.0, 0.0, 2.0, 1.0]),
            ValueError,
            r"gain='exp2' .* not defined for negative grades.*row 1",
        ),
        (
            dict(grades=[1.0, -1.0, 0.0, 2.0, 1.0], gain=[0, 1, 3]),
            ValueError,
            "outside the gain table",
        ),
        (
            dict(grades=[1.0, 1.5, 0.0, 2.0, 1.0], gain=[0, 1, 3]),
            ValueError,
            "integer grades.*1.5 at row 1",
        ),
        (
            dict(grades=[1.0, 7.0, 0.0, 2.0, 1.0], gain=[0, 1, 3]),
            ValueError,
            r"7 at row 1.*outside the gain table or dict \(grades 0..2\)",
        ),
        (  # held as the table [0, 1, 3], which a sequence gives too
            dict(grades=[1.0, 5.0, 0.0, 2.0, 1.0], gain={0: 0, 1: 1, 2: 3}),
            ValueError,
            r"5 at row 1.*outside the gain table or dict \(grades 0..2\); add a gain for that",
        ),
        (  # beyond the largest key of a dict with gaps: the dict is named, as within its range
            dict(grades=[1, 4, 0, 3, 1], gain={0: 0, 1: 1, 3: 5}),
            ValueError,
            r"4 at row 1 \(query 0\), which the gain dict does not map; add that grade to the",
        ),
        (
            dict(grades=[1, -1, 0, 3, 1], gain={0: 0, 1: 1, 3: 5}),
            ValueError,
            r"-1 at row 1 \(query 0\), which the gain dict does not map",
        ),
        (
            dict(grades=[1.0, 0.5, 0.0, 2.0, 1.0], gain={0: 0, 1: 1, 2: 3, 0.25: 9}),
            ValueError,
            "0.5 at row 1.*does not map",
        ),
        (
            dict(grades=[1, 0, 3, 2, 1], gain={0: 0, 1: 1, 3: 5}),
            ValueError,
            "2 at row 3.*does not map",
        ),
        (dict(grades=["a", "b", "c", "d", "e"]), TypeError, "grades must be numeric"),
        (
            dict(grades=[1, None, 0, 2, 1]),
            ValueError,
            r"grades has a missing value \(None\) at row 1; drop or fill",
        ),
        (
            dict(scores=pa.array([0.1, 0.2, None, 0.2, 0.1])),
            ValueError,
            r"scores has a NaN value at row 2; .* \(a null or missing value reads as NaN\)",
        ),
        (dict(k=0), ValueError, "k must be >= 1"),
        (dict(k=-3), ValueError, "k must be >= 1"),
        (dict(k=[5, 0]), ValueError, "k must be >= 1"),
        (dict(k=2.5), TypeError, "k must be an int"),
        (dict(k="5"), TypeError, "k must be an int"),
        (dict(k=True), TypeError, "k must be an int"),
        (dict(k=[]), ValueError, "k is an empty list"),
        (dict(k=[5, 5]), ValueError, "more than once"),
        (
            dict(offsets=[0, 3, 2, 5]),
            ValueError,
            r"non-decreasing; offsets\[1\]=3 > offsets\[2\]=2",
        ),
        (dict(offsets=[1, 3, 5]), ValueError, "must start at 0"),
        (dict(offsets=[0, 3, 4]), ValueError, "must end at the number of rows \\(5\\)"),
        (dict(offsets=[0, 3, 7]), ValueError, "must end at the number of rows"),
        (dict(offsets=[0.0, 2.0, 5.0]), TypeError, "offsets must hold integer"),
        (dict(offsets=[[0, 5]]), ValueError, "offsets must be a 1-D array"),
        (dict(qid=[1, 1, 2, 2, 2], offsets=[0, 2, 5]), ValueError, "qid= or offsets=, not both"),
        (dict(qid=[1, 1, 2]), ValueError, "one entry per row: 5 rows, 3 ids"),
        (dict(qid=[1.0, np.nan, 2.0, 2.0, 2.0]), ValueError, "qid has a NaN at row 1"),
        (
            dict(qid=np.array(["a", None, "b", "b", "a"], dtype=object)),
            ValueError,
            "qid has a missing value at row 1",
        ),
        (  # as pandas hands over a categorical or string column's missing values
            dict(qid=np.array(["a", "a", "b", np.nan, "a"], dtype=object)),
            ValueError,
            "qid has a missing value at row 3",
        ),
        (
            dict(qid=["a", "a", b"a", b"a", "b"]),
            TypeError,
            r"qid mixes id types: row 2 holds bytes b'a' among str ids, and NumPy would make "
            r"strings of all of them \(so 1 and '1' would be one query\); give every id the same",
        ),
        (dict(qid=(1, 1, "1", "1", "2")), TypeError, "row 0 holds int 1 among str ids"),
        (dict(qid=[b"x", b"x", 2.5, 2.5, b"y"]), TypeError, "row 2 holds float 2.5 among bytes"),
        (dict(mask=[True] * 5), ValueError, "mask is for dense 2-D input"),
        (dict(gain="exp"), ValueError, "unknown gain='exp'; valid values are 'exp2', 'linear'"),
        (dict(gain=3), TypeError, "gain must be"),
        (
            dict(gain={0: 0.0, 1: 1.0, 2: np.inf, 3: 7.0}),
            ValueError,
            "gain dict values must be finite; the gain of 2 is inf",
        ),
        (
            dict(weights="w"),
            TypeError,
            r"weights must hold one number per query \(in result order\); got the string 'w'",
        ),
        (dict(gain=[]), ValueError, "gain table is empty"),
        (dict(gain=[0, np.nan]), ValueError, "gain table must be finite"),
        (
            dict(discount="log10"),
            ValueError,
            "unknown discount='log10'; valid values are 'log2', 'jarvelin', 'reciprocal'",
        ),
        (dict(discount=[1.0, 0.5]), ValueError, "discount array has 2 entries but ranks up to 5"),
        (dict(discount=lambda r: np.ones(3)), ValueError, "one value per rank"),
        (dict(discount=lambda r: 1 / 0), ValueError, "discount callable failed"),
        (dict(gain=lambda g: g[:2]), ValueError, "one gain per grade"),
        (
            dict(gain=lambda g: np.where(g > 1, np.inf, g)),
            ValueError,
            r"returned inf for grade 3 at row 0 \(query 0\); gains must be finite",
        ),
        (
            dict(ideal="best"),
            ValueError,
            "unknown ideal='best'; valid values are 'recall', 'local', 'global', 'max'",
        ),
        (
            dict(ties="first"),
            ValueError,
            "unknown ties='first'; valid values are 'average', 'stable'",
        ),
        (
            dict(zero_idcg="nan"),
            ValueError,
            "unknown zero_idcg='nan'; valid values are 'skip', 'zero', 'one', 'error'",
        ),
        (
            dict(aggregate="median"),
            ValueError,
            "unknown aggregate='median'; valid values are 'mean', 'ratio'",
        ),
        (dict(ideal_grades=[1, 2]), ValueError, "not used with ideal='recall'"),
        (dict(ideal="global"), ValueError, "needs the judgment lists"),
        (dict(ideal="global", ideal_grades=[1.0]), ValueError, "exactly one of ideal_qid"),
        (
            dict(ideal="global", ideal_grades=[1.0], ideal_qid=[0], ideal_offsets=[0, 1]),
            ValueError,
            "exactly one of ideal_qid",
        ),
        (
            dict(ideal="global", ideal_grades=[1.0, 2.0], ideal_offsets=[0, 1, 2]),
            ValueError,
            "describes 2 judgment lists but there are 1 queries",
        ),
        (
            dict(ideal="global", ideal_grades=[1.0, np.nan], ideal_offsets=[0, 2]),
            ValueError,
            "ideal_grades has a NaN value at row 1",
        ),
        (
            dict(ideal="global", ideal_grades=[1.0], ideal_qid=["x"]),
            TypeError,
            "ideal_qid holds string values and the query ids are int64",
        ),
        (dict(k=2**63), ValueError, "k=9223372036854775808 does not fit in 64 bits; pass k=None"),
        (dict(max_grade=5), ValueError, "only used with ideal='max'"),
        (
            dict(ideal="max", max_grade=2),
            ValueError,
            "max_grade=2 is below the largest grade in the data \\(3\\)",
        ),
        (dict(ideal="max", max_grade=np.inf), ValueError, "max_grade must be finite"),
        (dict(weights=[1.0, 2.0]), ValueError, "one weight per query: 1 queries"),
        (dict(weights=[-1.0]), ValueError, r"weights must be finite and >= 0; weights\[0\] = -1.0"),
        (dict(weights=[np.nan]), ValueError, "weights must be finite"),
        (dict(seed=3), ValueError, "seed= is only used with ties='random'"),
        (dict(ties="random", seed=2**64), ValueError, r"seed must be below 2\*\*64"),
        (dict(ideal="max", max_grade=np.array([3.0])), TypeError, "max_grade must be a number"),
        (
            dict(offsets=np.array([0, 2**63, 5], dtype=np.uint64)),
            ValueError,
            r"offsets\[1\]=9223372036854775808 is beyond the 5 rows",
        ),
        (
            dict(grades=np.ma.array(G, mask=[0, 1, 0, 0, 0])),
            TypeError,
            "grades is a numpy masked array, whose mask would be ignored",
        ),
        (
            dict(scores=np.ma.array(S, mask=[0, 1, 0, 0, 0])),
            TypeError,
            "scores is a numpy masked array",
        ),
        (
            dict(scores=np.array([2**53 + 1, 2**53, 0, 0, 0])),
            ValueError,
            r"scores has 9007199254740993 at row 0, beyond 2\*\*53",
        ),
        pytest.param(
            dict(
                scores=np.array([1, 1, 0, 0, 0], np.longdouble) + np.array([1, 0, 0, 0, 0]) / 2**60
            ),
            ValueError,
            r"scores has 1\.0+[1-9]\d* at row 0, a long double that float64 cannot hold",
            marks=pytest.mark.skipif(
                np.finfo(np.longdouble).nmant <= 52, reason="long double is float64 here"
            ),
        ),
        (
            dict(grades=np.array([1, 0, -(2**53) - 1, 0, 0]), gain="linear"),
            ValueError,
            r"grades has -9007199254740993 at row 2, beyond 2\*\*53: float64 \(the precision "
            r"gains are computed in\) rounds it; rescale them",
        ),
        (
            dict(grades=np.array([2**53, 2**53 + 1, 0, 0, 0]), gain={2**53: 1.0, 2**53 + 1: 2.0}),
            ValueError,
            r"grades has 9007199254740993 at row 1, beyond 2\*\*53",
        ),
        (
            dict(grades=np.array([1, 0, 2**53 + 1, 0, 0], np.uint64), gain="linear"),
            ValueError,
            r"grades has 9007199254740993 at row 2, beyond 2\*\*53: float64 \(the precision "
            r"gains are computed in\) rounds it; rescale them",
        ),
        pytest.param(
            dict(
                grades=np.array([1, 0, 2, 0, 0], np.longdouble) + np.array([0, 0, 1, 0, 0]) / 2**60
            ),
            ValueError,
            r"grades has 2\.0+[1-9]\d* at row 2, a long double that float64 cannot hold",
            marks=pytest.mark.skipif(
                np.finfo(np.longdouble).nmant <= 52, reason="long double is float64 here"
            ),
        ),
        (dict(ties="random", seed=-1), TypeError, "seed must be a non-negative int"),
        (dict(ties="random", seed=1.5), TypeError, "seed must be a non-negative int"),
        (
            dict(grades=[0.0] * 5, zero_idcg="error"),
            ValueError,
            "query 0 has no relevant item \\(IDCG = 0\\) and zero_idcg='error'",
        ),
    ],
)
def test_bad_input(backend, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        call(backend=backend, **kwargs)


@pytest.mark.parametrize("kind", ["pyarrow.Table", "pyarrow.RecordBatch", "pandas.DataFrame"])
def test_a_table_passed_as_grades_points_to_ndcg_table(backend, kind):
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"qid": [1, 1, 2, 2], "grade": [2, 0, 0, 1], "score": [0.9, 0.1, 0.8, 0.7]})
    if kind == "pyarrow.RecordBatch":
        table = table.to_batches()[0]
    elif kind == "pandas.DataFrame":
        table = pytest.importorskip("pandas").DataFrame(table.to_pydict())
    match = rf"grades is a {kind}, whose rows would be read as queries .* fastndcg.ndcg_table"
    with pytest.raises(TypeError, match=match):
        fastndcg.ndcg(table, backend=backend)
    with pytest.raises(TypeError, match=match):
        fastndcg.Scorer(backend=backend)(table, np.ones(4))


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("grouped", [False, True], ids=["offsets", "shuffled qid"])
@pytest.mark.parametrize("held", [None, np.float32], ids=["float64", "float32 held as float32"])
def test_nonfinite_scores_are_found_anywhere(backend, n_threads, grouped, held):
    """The numba backend checks scores as its kernel reads them (in chunks, on threads, after
    rows were grouped by query); the error still names the first bad score in input order.
    Float32 scores held as float32 are not scanned first either (float64 ones are, before
    rounding makes large ones infinite)."""
    rng = np.random.default_rng(11)
    n = 300_000  # several chunks per thread
    grades = rng.integers(0, 3, n).astype(np.float64)
    layout = dict(offsets=np.arange(0, n + 1, 100))
    if grouped:  # rows of a query scattered: the kernel meets them in another order
        layout = dict(qid=rng.permutation(np.repeat(np.arange(n // 100), 100)))
    cases = [[n - 1], [0], rng.choice(n, 40, replace=False)]
    for bad_rows in cases:
        scores = rng.random(n)
        scores[bad_rows] = rng.choice([np.nan, np.inf, -np.inf], len(bad_rows))
        first = min(bad_rows)
        kind = "a NaN" if np.isnan(scores[first]) else "an infinite"
        more = {} if held is None else {"score_dtype": "float32"}
        scores = scores if held is None else scores.astype(held)
        with pytest.raises(ValueError, match=f"scores has {kind} value at row {first};"):
            fastndcg.ndcg(
                grades, scores, k=10, backend=backend, n_threads=n_threads, **layout, **more
            )


@pytest.mark.parametrize("k", [3, None])
def test_scores_beyond_float32_are_valid_when_held_as_float32(backend, k):
    """Finite float64 scores beyond the float32 range are valid input; held as float32 they
    become +-inf (as in tools that store float32), which the kernels' check must not reject."""
    grades = np.array([2.0, 0.0, 1.0, 3.0, 0.0, 1.0])
    scores = np.array([1e300, -1e300, 0.5, 1e39, 0.1, -0.2])
    held = fastndcg.ndcg(grades, scores, k=k, backend=backend, score_dtype="float32")
    # the same order, and the same tie of rows 0 and 3 at the top, from float32 scores
    same_order = np.array([1e30, -1e30, 0.5, 1e30, 0.1, -0.2])
    expected = fastndcg.ndcg(grades, same_order, k=k, backend=backend, score_dtype="float32")
    np.testing.assert_array_equal(held.per_query, expected.per_query)


@pytest.mark.parametrize(
    ("grades", "scores", "kwargs", "exc", "match"),
    [
        (
            np.ones((2, 3)),
            np.ones((2, 4)),
            {},
            ValueError,
            r"scores must have the same shape as grades: grades \(2, 3\), scores \(2, 4\)",
        ),
        (np.ones((2, 3)), np.ones(6), {}, ValueError, "same shape as grades"),
        (np.ones((2, 3, 1)), None, {}, ValueError, "grades must be 1-D .* or 2-D"),
        (
            (grade for grade in [1, 0]),
            None,
            {},
            ValueError,
            r"\(one query per row\); got one generator; pass a list or an array \(list\(\.\.\.\)",
        ),
        (
            np.ones((2, 3)),
            None,
            dict(mask=np.ones((2, 2), bool)),
            ValueError,
            r"mask must have the same shape as grades: grades \(2, 3\), mask \(2, 2\)",
        ),
        (np.ones((2, 3)), None, dict(mask=np.full((2, 3), 0.5)), TypeError, "mask must be boolean"),
        (np.ones((2, 3)), None, dict(qid=[0, 1]), ValueError, "one query per row"),
        (
            np.array([[1.0, np.nan], [0.0, 1.0]]),
            None,
            {},
            ValueError,
            "grades has a NaN value at query row 0, item 1",
        ),
        (
            [[1, 0], [1]],
            None,
            {},
            ValueError,
            r"grades holds lists of different lengths, which make no array; pass them flat "
            r"\(1-D\) with qid= or offsets=, or padded to a 2-D array with mask=",
        ),
        (np.ones((2, 2)), [[1, 0], [1]], {}, ValueError, "scores holds lists of different"),
        (
            np.array([[1, 0], [0, 2**53 + 1]], np.uint64),
            None,
            dict(gain="linear"),
            ValueError,
            r"grades has 9007199254740993 at query row 1, item 1, beyond 2\*\*53",
        ),
    ],
)
def test_bad_dense_input(backend, grades, scores, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fastndcg.ndcg(grades, scores, backend=backend, **kwargs)


OVERFLOW = "a DCG could exceed the float64 range"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        # 2**2000 is infinite; 2**1023 is finite but three of them overflow the sum
        (dict(grades=[2000.0, 1.0, 0.0, 2.0, 1.0]), r"gains reach inf \(2\*\*grade - 1"),
        (dict(grades=[1023.0, 1023.0, 1023.0, 0.0, 0.0]), "gains reach 8.98847e\\+307"),
        (dict(grades=[2000, 1, 0, 2, 1]), "grades well below 1024"),  # integer grades
        (dict(gain="linear", grades=[1e308, 1e308, 0.0, 0.0, 0.0]), "Scale the gains"),
        (dict(gain={0: 0, 1: 1, 2: 2, 3: 1e308}), "gains reach 1e\\+308"),
        (dict(gain=lambda g: g * 5e307), "gains reach 1.5e\\+308"),
        (dict(discount=lambda r: np.full(r.shape, 1e308)), "discounts of the first 5 ranks"),
        (dict(ideal="max", max_grade=1500), "gains reach inf"),
        (
            dict(ideal="global", ideal_grades=[1.0, 2000.0], ideal_offsets=[0, 2]),
            "gains reach inf",
        ),
    ],
)
def test_gains_that_would_overflow_a_dcg_are_errors(backend, kwargs, match):
    """Not an infinite or NaN NDCG (which the backends did not even agree on): an error."""
    with pytest.raises(ValueError, match=OVERFLOW) as error:
        call(backend=backend, **kwargs)
    error.match(match)
    if "ideal_grades" not in kwargs:  # a Scorer takes options only
        options = {k: v for k, v in kwargs.items() if k != "grades"}
        with pytest.raises(ValueError, match=OVERFLOW):
            fastndcg.Scorer(backend=backend, **options)(kwargs.get("grades", G), S)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(grades=[1000.0, 2.0, 0.0, 1.0, 0.0]),  # 2**1000 and a few more fit
        dict(gain=[0.0, 1.0, 3.0, 7.0, 1e308]),  # a huge gain no grade here takes
        dict(gain=lambda g: g * 1e307),
    ],
)
def test_large_gains_that_fit_are_scored(backend, kwargs):
    result = call(backend=backend, **kwargs)
    assert np.all(np.isfinite(result.per_query)) and 0 < result.mean[0] <= 1


@pytest.mark.parametrize("k", [10**12, [5, 10**9]])
def test_ideal_max_beyond_the_discount_limit_is_an_error(backend, k):
    """Not a MemoryError for a table of 10**12 discounts, nor 16 GiB allocated for 10**9."""
    with pytest.raises(ValueError, match=r"ideal='max' fills all k=1,000,000,000(,000)? slots"):
        call(backend=backend, ideal="max", k=k)


def test_ideal_max_cutoffs_up_to_the_limit_are_scored(backend, monkeypatch):
    """Beyond the longest list ideal='max' sums discounts up to MAX_IDEAL_SLOTS ranks; a list
    longer than that is scored whole (its table is as long as the data)."""
    from fastndcg._core import plan as _plan

    monkeypatch.setattr(_plan, "MAX_IDEAL_SLOTS", 8)
    at_limit = call(backend=backend, ideal="max", k=8).mean[0]
    dcg = (2**G - 1) @ (1 / np.log2(np.arange(2, 7)))  # S ranks the rows in input order
    expected = dcg / (7 * np.sum(1 / np.log2(np.arange(2, 10))))
    assert at_limit == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="takes cutoffs up to 8: pass a smaller k"):
        call(backend=backend, ideal="max", k=9)
    long_list = np.arange(20.0) % 3
    whole = fastndcg.ndcg(long_list, -np.arange(20.0), ideal="max", backend=backend)
    assert 0 < whole.mean[0] < 1


@pytest.mark.parametrize("aggregate", ["mean", "ratio", "keras_rs"])
@pytest.mark.parametrize("scale", [2.0**-1072, 2.0**-600, 2.0**900, 2.0**1020])
def test_aggregates_depend_only_on_the_weights_ratios(backend, aggregate, scale):
    """Weights near the ends of the float64 range (subnormal, or whose sums and products
    overflow) give the aggregate of the same weights scaled into range, bit for bit (for the
    aggregates that depend only on the weights' ratios)."""
    qid = [0, 0, 1, 1, 1, 2, 2, 3]
    grades = [2.0, 0.0, 1.0, 0.0, 3.0, 0.0, 1.0, 1.0]
    scores = [0.1, 0.2, 0.3, 0.9, 0.5, 0.4, 0.3, 0.2]
    weights = np.array([1.0, 3.0, 2.0, 4.0])
    options = dict(qid=qid, backend=backend, aggregate=aggregate, k=2)
    expected = fastndcg.ndcg(grades, scores, weights=weights, **options).mean
    assert np.all(np.isfinite(expected))
    scaled = fastndcg.ndcg(grades, scores, weights=weights * scale, **options).mean
    np.testing.assert_array_equal(scaled, expected)


@pytest.mark.parametrize(
    ("aggregate", "weights"), [("lightgbm", [1e308, 1e308]), ("xgboost", [1.0, 1e39])]
)
def test_weights_beyond_a_tools_range_are_an_error(backend, aggregate, weights):
    """LightGBM and XGBoost add queries without relevant items unweighted: the weights' scale
    matters, so they cannot be rescaled; XGBoost holds them as float32."""
    with pytest.raises(ValueError, match=f"weights beyond the .* range.*aggregate='{aggregate}'"):
        fastndcg.ndcg(
            G, S, qid=[0, 0, 1, 1, 1], weights=weights, aggregate=aggregate, backend=backend
        )


def test_weights_whose_sum_overflows_are_scored(backend):
    """The sum of these weights is beyond float64; they are equal, so the mean is unweighted."""
    options = dict(qid=[0, 0, 1, 1, 1], backend=backend)
    weighted = fastndcg.ndcg(G, S, weights=[1e308, 1e308], **options).mean
    np.testing.assert_allclose(weighted, fastndcg.ndcg(G, S, **options).mean, rtol=1e-15)


@pytest.mark.parametrize(
    ("grades", "options", "match"),
    [
        # the non-integral grade sits in the third query, which grouping moves
        (
            [0.0, 0.0, 0.0, 0.0, 0.0, 1.5, 0.0],
            dict(qid=[1, 2, 3, 1, 2, 3, 1], gain=[0, 1, 3]),
            r"grades has 1.5 at row 5 \(query 3\)",
        ),
        # dense input: the item is the column, whatever the mask dropped before it
        (
            np.array([[1.0, 0.0, -1.0], [0.0, 1.0, 1.0]]),
            dict(mask=np.array([[True, False, True], [True, True, True]])),
            r"grades has -1 at query row 0, item 2",
        ),
        (
            np.array([[1.0, 0.0, np.nan], [0.0, 1.0, 1.0]]),
            dict(mask=np.array([[True, False, True], [True, True, True]])),
            r"grades has a NaN value at query row 0, item 2",
        ),
        (
            np.array([[1.0, 0.0], [0.0, None]]),
            {},
            r"grades has a missing value \(None\) at query row 1, item 1",
        ),
        (
            [1, 0, None],
            dict(qid=[5, 5, 6]),
            r"grades has a missing value \(None\) at row 2",
        ),
    ],
)
def test_errors_name_the_input_row(backend, grades, options, match):
    scores = np.arange(np.size(grades), dtype=np.float64).reshape(np.shape(grades))
    with pytest.raises(ValueError, match=match):
        fastndcg.ndcg(grades, scores, backend=backend, **options)


@pytest.mark.parametrize(
    ("options", "exc", "match"),
    [
        (dict(grades=[[1.0, np.nan], [0.0, 1.0]]), ValueError, "NaN value at query row 0, item 1"),
        (
            dict(grades=[[1.0, None], [0.0, 1.0]]),
            ValueError,
            r"grades has a missing value \(None\) at query row 0, item 1",
        ),
        (dict(mask=[True, False]), ValueError, "mask must have the same shape as grades"),
        (dict(mask=[[2, 0], [1, 1]]), TypeError, "mask must be boolean"),
        (dict(weights=[[np.nan, 1.0], [1.0, 1.0]]), ValueError, r"weights\[0, 0\] = nan"),
        (dict(weights=[[1.0, 1.0], [np.inf, 1.0]]), ValueError, r"weights\[1, 0\] = inf"),
    ],
)
def test_keras_rs_item_handling_checks_its_inputs(backend, options, exc, match):
    """keras-rs drops items with a negative label, a False mask or a weight <= 0; anything it
    would not drop must still be valid."""
    options = {"grades": [[1.0, 0.0], [0.0, 1.0]], **options}
    grades = np.array(options.pop("grades"))  # with a None: an object array
    with pytest.raises(exc, match=match):
        fastndcg.ndcg(
            grades, [[0.1, 0.2], [0.3, 0.4]], aggregate="keras_rs", backend=backend, **options
        )


def test_masked_padding_is_not_validated(backend):
    grades = np.array([[3.0, 1.0, np.nan], [0.0, 2.0, -7.0]])
    mask = np.array([[True, True, False], [True, True, False]])
    result = fastndcg.ndcg(grades, mask=mask, backend=backend)
    assert result.n_queries == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda b: fastndcg.ndcg([], [], backend=b),
        lambda b: fastndcg.ndcg([], [], qid=[], backend=b),
        lambda b: fastndcg.ndcg([], [], offsets=[0], k=[1, 5], backend=b),
        lambda b: fastndcg.ndcg(np.zeros((0, 4)), np.zeros((0, 4)), backend=b),
    ],
)
def test_empty_input_gives_zero_queries(backend, make):
    result = make(backend)
    assert result.n_queries == 0
    assert result.per_query.shape == (0, len(result.k))
    assert np.all(np.isnan(result.mean))
    assert list(result.n_skipped) == [0] * len(result.k)


def test_unknown_backend_lists_the_valid_ones():
    with pytest.raises(
        ValueError, match="unknown backend='gpu'; valid values are 'auto', 'numba', 'numpy'"
    ):
        fastndcg.ndcg(G, S, backend="gpu")


def test_numba_backend_unavailable_message(monkeypatch):
    from fastndcg import _backends

    monkeypatch.setitem(_backends._LOADED, "numba", ImportError("blocked for this test"))
    with pytest.raises(
        ImportError, match=r"backend='numba' needs numba.*pip install numba.*backend='numpy'"
    ):
        fastndcg.ndcg(G, S, backend="numba")


def test_bad_backend_environment_variable(monkeypatch):
    monkeypatch.setenv("FASTNDCG_BACKEND", "rocm")
    with pytest.raises(ValueError, match="unknown FASTNDCG_BACKEND environment variable='rocm'"):
        fastndcg.ndcg(G, S)


@pytest.mark.numba
@pytest.mark.parametrize(
    ("n_threads", "exc"),
    [(0, ValueError), (10_000, ValueError), (1.5, TypeError), (True, TypeError)],
)
def test_bad_thread_count(n_threads, exc):
    with pytest.raises(exc, match="n_threads must be"):
        fastndcg.ndcg(G, S, backend="numba", n_threads=n_threads)


def test_float_of_multi_cutoff_result_explains():
    result = fastndcg.ndcg(G, S, k=[1, 3])
    with pytest.raises(
        TypeError, match=r"float\(\) needs a result with one cutoff; this one has k=\(1, 3\)"
    ):
        float(result)
    with pytest.raises(KeyError, match="computed cutoffs are"):
        result.mean_at(10)


@pytest.mark.parametrize("k", [3.0, True, np.bool_(True), "3"])
def test_mean_at_refuses_what_ndcg_refuses_as_k(k):
    result = fastndcg.ndcg(G, S, k=[1, 3])
    with pytest.raises(TypeError, match="k must be an int"):
        fastndcg.ndcg(G, S, k=k)
    with pytest.raises(
        TypeError,
        match=rf"k must be an int or None \(whole list\), one of the computed cutoffs "
        rf"\(1, 3\); got {k!r}",
    ):
        result.mean_at(k)
    assert result.mean_at(np.int64(3)) == result.mean_at(3) == result.mean[1]


@pytest.mark.parametrize(
    ("tolerance", "exc"),
    [
        (True, TypeError),
        (False, TypeError),
        ("0", TypeError),
        (None, TypeError),
        (-1e-9, ValueError),
        (float("nan"), ValueError),
    ],
)
def test_compare_definitions_refuses_a_tolerance_that_is_no_number(tolerance, exc):
    with pytest.raises(exc, match=rf"tolerance must be a number >= 0; got {tolerance!r}"):
        fastndcg.compare_definitions(G, S, definitions=["sklearn", "lightgbm"], tolerance=tolerance)


def _frozen(values):
    array = np.array(values)
    array.setflags(write=False)
    return array


@INDEPENDENT_JUDGMENTS
def test_caller_arrays_are_never_modified(backend):
    """Read-only inputs would raise on any write; copies taken before the call must still match."""
    rng = np.random.default_rng(5)
    n = 300
    qid = _frozen(rng.integers(0, 20, n))  # not contiguous: rows get regrouped
    grades = _frozen(rng.integers(0, 5, n).astype(float))
    scores = _frozen(rng.integers(0, 6, n).astype(float))
    weights = _frozen(np.ones(20))
    ideal_qid = _frozen(np.arange(20).repeat(3))
    ideal_grades = _frozen(rng.integers(0, 5, 60).astype(float))
    table = _frozen([0.0, 1.0, 3.0, 7.0, 15.0])
    discount = _frozen(1.0 / np.log2(np.arange(2, 400)))
    before = [
        a.copy() for a in (qid, grades, scores, weights, ideal_qid, ideal_grades, table, discount)
    ]
    for ideal in ("recall", "local", "global", "max"):
        extra = dict(ideal_grades=ideal_grades, ideal_qid=ideal_qid) if ideal == "global" else {}
        for ties in ("average", "stable", "pessimistic", "random"):
            fastndcg.ndcg(
                grades,
                scores,
                qid=qid,
                k=[3, None],
                gain=table,
                discount=discount,
                ideal=ideal,
                ties=ties,
                weights=weights,
                backend=backend,
                **extra,
            )
    dense_g = _frozen(rng.integers(0, 5, (4, 6)).astype(float))
    dense_s = _frozen(rng.random((4, 6)))
    mask = _frozen(rng.random((4, 6)) > 0.3)
    dense_before = [a.copy() for a in (dense_g, dense_s, mask)]
    fastndcg.ndcg(dense_g, dense_s, mask=mask, backend=backend)
    fastndcg.ndcg_score(dense_g, dense_s)
    inputs = (qid, grades, scores, weights, ideal_qid, ideal_grades, table, discount)
    for old, new in zip(before + dense_before, (*inputs, dense_g, dense_s, mask), strict=True):
        np.testing.assert_array_equal(old, new)


def test_a_zero_dimensional_k_is_an_int(backend):
    expected = call(backend=backend, k=2).mean
    np.testing.assert_array_equal(call(backend=backend, k=np.array(2)).mean, expected)


def test_scores_float64_cannot_hold_are_named_by_their_cell(backend):
    grades = np.ones((3, 4))
    scores = np.arange(12, dtype=np.int64).reshape(3, 4)
    scores[2, 3] = 2**53 + 1
    mask = np.ones((3, 4), dtype=bool)
    mask[:, 0] = False  # padding before the bad cell: its place in the kept rows differs
    for kwargs in ({}, {"mask": mask}):
        with pytest.raises(ValueError, match=r"at query row 2, item 3, beyond 2\*\*53"):
            fastndcg.ndcg(grades, scores, backend=backend, **kwargs)


def test_long_double_scores_that_float64_holds_are_accepted(backend):
    scores = np.array([2.5, 0.25, -1e300, 3.0, 1.0], dtype=np.longdouble)
    np.testing.assert_array_equal(
        call(backend=backend, scores=scores).per_query,
        call(backend=backend, scores=scores.astype(np.float64)).per_query,
    )


def test_integer_scores_up_to_2_pow_53_are_exact(backend):
    scores = np.array([2**53, 2**53 - 1, 7, 3, 1], dtype=np.int64)
    np.testing.assert_array_equal(
        call(backend=backend, scores=scores).per_query,
        call(backend=backend, scores=[5.0, 4.0, 3.0, 2.0, 1.0]).per_query,
    )


@pytest.mark.parametrize("make", ["Scorer", "StreamScorer"])
def test_document_id_ties_fail_at_construction_where_no_ids_come(make):
    from fastndcg.stream import StreamScorer

    factory = {"Scorer": fastndcg.Scorer, "StreamScorer": StreamScorer}[make]
    with pytest.raises(ValueError, match="ties='docid_desc' orders ties by document id"):
        factory(ties="docid_desc")
