"""Property tests: every backend and every option value against the plain reference."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from reference import Item, queries_from_csr, reference_ndcg
from strategies import (
    INDEPENDENT_JUDGMENTS,
    cutoffs,
    discount_option,
    discounts,
    gain_option,
    gains,
    ideals,
    ragged,
    ties,
)

import fastndcg

TOL = dict(rtol=1e-12, atol=1e-12)


@st.composite
def judgment_lists(draw, n_queries):
    lengths = draw(st.lists(st.integers(0, 10), min_size=n_queries, max_size=n_queries))
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    grades = draw(
        st.lists(st.integers(0, 4).map(float), min_size=int(offsets[-1]), max_size=int(offsets[-1]))
    )
    return offsets, np.array(grades, dtype=float)


@INDEPENDENT_JUDGMENTS
@given(
    data=ragged(),
    k=cutoffs,
    gain=gains,
    discount=discounts,
    ideal=ideals,
    tie=ties,
    seed=st.integers(0, 2**63),
    ranked=st.booleans(),
    zero_idcg=st.sampled_from(["skip", "zero", "one", "error"]),
    aggregate=st.sampled_from(["mean", "ratio"]),
    weighted=st.booleans(),
    extra=st.data(),
)
def test_backend_matches_reference(
    backend,
    data,
    k,
    gain,
    discount,
    ideal,
    tie,
    seed,
    ranked,
    zero_idcg,
    aggregate,
    weighted,
    extra,
):
    offsets, grades, scores = data
    n_queries = offsets.size - 1
    kwargs = dict(
        k=k,
        gain=gain_option(gain),
        discount=discount_option(discount),
        ideal=ideal,
        ties=tie,
        zero_idcg=zero_idcg,
        aggregate=aggregate,
        backend=backend,
    )
    if tie == "random":
        kwargs["seed"] = seed
    ideal_lists = None
    if ideal == "global":
        ideal_offsets, ideal_grades = extra.draw(judgment_lists(n_queries))
        kwargs.update(ideal_grades=ideal_grades, ideal_offsets=ideal_offsets)
        ideal_lists = [
            list(ideal_grades[ideal_offsets[q] : ideal_offsets[q + 1]]) for q in range(n_queries)
        ]
    weights = None
    if weighted:
        weights = extra.draw(
            st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n_queries, max_size=n_queries)
        )
        kwargs["weights"] = weights
    queries = queries_from_csr(offsets, grades, scores)
    expected_k = fastndcg._core.specs.parse_cutoffs(k)
    ref_kwargs = dict(
        k=expected_k,
        gain=gain_option(gain),
        discount=discount_option(discount),
        ideal=ideal,
        ideal_lists=ideal_lists,
        ties="ranked" if ranked else tie,
        seed=seed,
        zero_idcg=zero_idcg,
        aggregate=aggregate,
        weights=weights,
    )
    try:
        expected = reference_ndcg(queries, **ref_kwargs)
    except ValueError:
        assert zero_idcg == "error"
        with pytest.raises(ValueError, match="no relevant item"):
            fastndcg.ndcg(grades, None if ranked else scores, offsets=offsets, **kwargs)
        return
    result = fastndcg.ndcg(grades, None if ranked else scores, offsets=offsets, **kwargs)
    assert result.k == expected_k
    assert result.n_queries == n_queries
    shape = (n_queries, len(expected_k))
    np.testing.assert_allclose(result.dcg, np.array(expected.dcg).reshape(shape), **TOL)
    np.testing.assert_allclose(result.idcg, np.array(expected.idcg).reshape(shape), **TOL)
    np.testing.assert_allclose(result.per_query, np.array(expected.ndcg).reshape(shape), **TOL)
    np.testing.assert_allclose(result.mean, expected.mean, **TOL)
    np.testing.assert_array_equal(result.n_skipped, expected.n_skipped)


@given(data=ragged(max_queries=5, max_len=9), k=cutoffs, ideal=ideals, tie=ties, gain=gains)
def test_backends_agree(data, k, ideal, tie, gain):
    if len(fastndcg.available_backends()) < 2:
        pytest.skip("only one backend here")
    offsets, grades, scores = data
    kwargs = dict(
        k=k, ideal=ideal if ideal != "global" else "recall", ties=tie, gain=gain_option(gain)
    )
    if tie == "random":
        kwargs["seed"] = 7
    a = fastndcg.ndcg(grades, scores, offsets=offsets, backend="numba", **kwargs)
    b = fastndcg.ndcg(grades, scores, offsets=offsets, backend="numpy", **kwargs)
    np.testing.assert_allclose(a.dcg, b.dcg, **TOL)
    np.testing.assert_allclose(a.idcg, b.idcg, **TOL)
    np.testing.assert_allclose(a.per_query, b.per_query, **TOL)


@given(data=ragged(integer_grades=False), k=cutoffs, ideal=ideals, tie=ties)
def test_fractional_grades(backend, data, k, ideal, tie):
    """Non-integer grades take the selection path for IDCG instead of counting grade levels."""
    offsets, grades, scores = data
    if ideal == "global":
        ideal = "recall"
    kwargs = dict(k=k, ideal=ideal, ties=tie, gain="linear", zero_idcg="zero")
    if tie == "random":
        kwargs["seed"] = 3
    result = fastndcg.ndcg(grades, scores, offsets=offsets, backend=backend, **kwargs)
    ref_kwargs = dict(kwargs, k=result.k, seed=kwargs.get("seed", 0))
    expected = reference_ndcg(queries_from_csr(offsets, grades, scores), **ref_kwargs)
    np.testing.assert_allclose(
        result.per_query, np.array(expected.ndcg).reshape(result.per_query.shape), **TOL
    )


@given(
    grades=st.lists(st.integers(0, 3).map(float), min_size=1, max_size=7),
    scores=st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=7, max_size=7),
    k=st.one_of(st.none(), st.integers(1, 8)),
)
def test_average_ties_is_expectation_over_orders(grades, scores, k):
    """The closed form of tie averaging equals the mean DCG over every order of the tied items."""
    from itertools import permutations

    from reference import dcg_at, rank_items

    scores = scores[: len(grades)]
    items = [Item(r, g, s) for r, (g, s) in enumerate(zip(grades, scores, strict=True))]
    closed = dcg_at(rank_items(items, "average", 0, "exp2"), k, "average", "exp2", "log2")
    totals = []
    for perm in permutations(items):
        ordered = sorted(perm, key=lambda it: -it.score)  # Python's sort is stable
        totals.append(dcg_at(ordered, k, "stable", "exp2", "log2"))
    expected = math.fsum(totals) / len(totals)
    assert abs(closed - expected) <= 1e-12 * max(1.0, abs(expected))


@given(
    data=st.one_of(
        ragged(max_queries=4, max_len=300), ragged(max_queries=4, max_len=300, integer_grades=False)
    ),
    k=st.one_of(
        st.none(),
        st.sampled_from([1, 5, 16, 17, 31, 32, 33, 127, 128, 129, 299]),
        st.just([3, None, 64]),
    ),
    ideal=ideals,
    tie=ties,
    gain=st.sampled_from(["exp2", "linear"]),
)
def test_long_lists(backend, data, k, ideal, tie, gain):
    """Lists long enough for every selection path: insertion buffer, merge sort, partial sort."""
    offsets, grades, scores = data
    if ideal == "global":
        ideal = "recall"
    kwargs = dict(k=k, ideal=ideal, ties=tie, gain=gain, zero_idcg="zero")
    if tie == "random":
        kwargs["seed"] = 11
    result = fastndcg.ndcg(grades, scores, offsets=offsets, backend=backend, **kwargs)
    ref_kwargs = dict(kwargs, k=result.k, seed=kwargs.get("seed", 0))
    expected = reference_ndcg(queries_from_csr(offsets, grades, scores), **ref_kwargs)
    shape = result.per_query.shape
    np.testing.assert_allclose(result.dcg, np.array(expected.dcg).reshape(shape), **TOL)
    np.testing.assert_allclose(result.idcg, np.array(expected.idcg).reshape(shape), **TOL)


@given(
    data=ragged(max_queries=5, max_len=40),
    huge=st.lists(st.sampled_from([1e300, -1e300, 3e38, -3e38]), min_size=1, max_size=40),
    k=st.one_of(st.none(), st.sampled_from([1, 3, 10]), st.just([2, None])),
    ideal=st.sampled_from(["recall", "local"]),
    tie=ties,
)
@example(  # a relevant row at -inf among 22 rows: the counting kernel's -inf padding tied with it
    data=(np.array([0, 22]), np.eye(1, 22, 4).ravel(), np.zeros(22)),
    huge=[1e300, 1e300, 1e300, 1e300, -1e300],
    k=None,
    ideal="recall",
    tie="average",
)
def test_float32_overflow_scores(backend, data, huge, k, ideal, tie):
    """Scores beyond float32's range become +-inf when held as float32; those infinities tie
    with each other and rank above or below every finite score, on every backend (the NumPy
    backend pads lists with -inf internally and must not mix the padding in)."""
    offsets, grades, scores = data
    scores = scores.copy()
    scores[: min(len(huge), scores.size)] = huge[: scores.size]
    kwargs = dict(k=k, ideal=ideal, ties=tie, zero_idcg="zero", score_dtype="float32")
    if tie == "random":
        kwargs["seed"] = 5
    result = fastndcg.ndcg(grades, scores, offsets=offsets, backend=backend, **kwargs)
    with np.errstate(over="ignore"):
        held = scores.astype(np.float32).astype(np.float64)
    ref_kwargs = {
        name: value for name, value in kwargs.items() if name not in ("score_dtype", "seed")
    }
    expected = reference_ndcg(
        queries_from_csr(offsets, grades, held), **dict(ref_kwargs, k=result.k, seed=5)
    )
    shape = result.per_query.shape
    np.testing.assert_allclose(result.dcg, np.array(expected.dcg).reshape(shape), **TOL)
    np.testing.assert_allclose(result.idcg, np.array(expected.idcg).reshape(shape), **TOL)


@given(
    seed=st.integers(0, 2**32 - 1),
    length=st.sampled_from([129, 257, 600, 2500]),
    k=st.one_of(st.sampled_from([1, 10, 20, 33, 64, 100, 128]), st.just([1, 3, 5, 10, 20, 100])),
    distinct=st.sampled_from([3, 50, None]),
    tie=st.sampled_from(["average", "stable", "optimistic"]),
)
def test_long_candidate_lists_are_narrowed_exactly(backend, seed, length, k, distinct, tie):
    """Lists long enough that the candidates of the selection are narrowed by a sampled bound
    and ranked by counting, with continuous and with heavily tied scores."""
    rng = np.random.default_rng(seed)
    lengths = [length, length // 2 + 1, 7]
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    grades = rng.integers(0, 5, offsets[-1]).astype(float)
    if distinct is None:
        scores = rng.standard_normal(offsets[-1]) + 0.5 * grades
    else:
        scores = rng.integers(0, distinct, offsets[-1]).astype(float)
    _check_dcg_and_idcg(backend, offsets, grades, scores, k, tie)


@given(
    seed=st.integers(0, 2**32 - 1),
    length=st.sampled_from([1, 3, 100, 1024, 3000]),
    relevant=st.sampled_from([0.002, 0.5, 1.0]),
    k=st.sampled_from([None, [1, 200, None]]),
    distinct=st.sampled_from([2, None]),
    tie=st.sampled_from(["average", "stable", "pessimistic"]),
)
def test_whole_lists_by_counting_and_by_sorting_agree(
    backend, seed, length, relevant, k, distinct, tie
):
    """Deep cutoffs over whole lists: DCG from counted ranks of the rows with a gain while
    (rows with a gain) x (rows) is small (sparse relevance, short lists), from a sort beyond.
    With ``distinct``, every other query holds tied scores: counting first tries ranks without
    a repeated score, and tries again after queries with ties."""
    rng = np.random.default_rng(seed)
    sizes = np.array([length, length // 3 + 1, length, 7, length])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    grades = rng.integers(1, 5, offsets[-1]) * (rng.random(offsets[-1]) < relevant)
    scores = rng.standard_normal(offsets[-1])
    if distinct is not None:
        for q in (1, 3):
            scores[offsets[q] : offsets[q + 1]] = rng.integers(0, distinct, sizes[q])
    _check_dcg_and_idcg(backend, offsets, grades, scores, k, tie)


@given(
    seed=st.integers(0, 2**32 - 1),
    length=st.sampled_from([20, 100, 300]),
    k=st.sampled_from([None, [1, 5, 100]]),
    tie=st.sampled_from(["average", "stable"]),
    single=st.booleans(),
)
def test_counted_ranks_of_scores_alike_in_float32(backend, seed, length, k, tie, single):
    """The counting kernel compares float32 copies of the scores; float64 scores that differ
    below float32's precision, or beyond its range (+-inf as float32), are ranked by their
    float64 values all the same; float32 scores are counted on their own values."""
    rng = np.random.default_rng(seed)
    offsets = np.array([0, length, 2 * length], dtype=np.int64)
    grades = rng.integers(0, 4, offsets[-1]).astype(float)
    levels = np.array([-1e301, -1e300, -1.0, 0.0, 1.0, 2.0, 1e300, 1e301])
    scores = levels[rng.integers(0, levels.size, offsets[-1])]
    if single:  # exact ties only
        scores = np.clip(scores, -3e38, 3e38).astype(np.float32)
    else:  # mostly distinct float64 scores that round to the same float32 value
        scores = scores * (1.0 + rng.integers(0, 40, offsets[-1]) * 2.0**-45)
        scores[rng.random(offsets[-1]) < 0.2] = 1.0  # and exact ties
    _check_dcg_and_idcg(backend, offsets, grades, scores, k, tie)


def _check_dcg_and_idcg(backend, offsets, grades, scores, k, tie):
    """DCG and IDCG of every query and cutoff equal the reference's."""
    result = fastndcg.ndcg(grades, scores, offsets=offsets, k=k, ties=tie, backend=backend)
    expected = reference_ndcg(
        queries_from_csr(offsets, grades, scores), k=result.k, ties=tie, zero_idcg="skip"
    )
    shape = result.per_query.shape
    np.testing.assert_allclose(result.dcg, np.array(expected.dcg).reshape(shape), **TOL)
    np.testing.assert_allclose(result.idcg, np.array(expected.idcg).reshape(shape), **TOL)


GRADE_DTYPES = ["float64", "float32", "int64", "int32", "int16", "int8", "uint8"]


@INDEPENDENT_JUDGMENTS
@given(
    seed=st.integers(0, 2**32 - 1),
    lengths=st.lists(
        st.sampled_from([0, 1, 2, 9, 15, 16, 17, 33, 89, 300, 3000]), min_size=1, max_size=4
    ),
    k=st.one_of(
        st.integers(1, 28), st.lists(st.integers(1, 28), min_size=2, max_size=3, unique=True)
    ),
    levels=st.sampled_from([1, 2, 5, 8, 9, 12]),
    scores=st.sampled_from(["continuous", "few", "signed zeros", "neighbours", "tied top"]),
    dtypes=st.tuples(st.sampled_from(GRADE_DTYPES), st.sampled_from(["float64", "float32"])),
    ideal=ideals,
    tie=ties,
    gain=st.sampled_from(["exp2", "linear", "table"]),
)
def test_short_cutoffs(backend, seed, lengths, k, levels, scores, dtypes, ideal, tie, gain):
    """Cutoffs up to 28 over lists of 1 to 3,000 rows of every kernel dtype: the Numba kernel's
    short-cutoff path (which the plan takes for these options), the queries it hands to the
    general path (empty lists, ties among the best rows, too many rows above its bound), scores
    that tie as floats only (0.0 and -0.0) or differ in their last bits, grade levels counted
    in packed words (up to 8) or in a histogram, and lists without a relevant row."""
    rng = np.random.default_rng(seed)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = int(offsets[-1])
    grades = rng.integers(0, levels, n)
    grades[rng.random(n) < 0.5] = 0  # mostly irrelevant; short lists often without a gain
    if scores == "continuous":
        values = 0.5 * grades + rng.standard_normal(n)
    elif scores == "few":
        values = rng.integers(0, 3, n).astype(float)
    elif scores == "signed zeros":  # the best two rows of a list score 0.0 and -0.0: a tie
        values = -1.0 - np.abs(rng.standard_normal(n))
        for a, b in itertools.pairwise(offsets):
            if b - a > 1:
                values[a + rng.choice(b - a, 2, replace=False)] = [0.0, -0.0]
    elif scores == "neighbours":  # differing in the last bits of the mantissa, or not at all
        values = rng.choice([1.0, -3.0], n) * (1.0 + rng.integers(0, 40, n) * 2.0**-52)
    else:  # every list's best rows tie with many others
        values = np.where(rng.random(n) < 0.3, 5.0, rng.standard_normal(n))
    values = values.astype(dtypes[1])
    grades = grades.astype(dtypes[0])
    gain_spec = rng.permutation(levels).astype(float).tolist() if gain == "table" else gain
    kwargs = dict(k=k, gain=gain_spec, ideal=ideal, ties=tie, zero_idcg="zero")
    if tie == "random":
        kwargs["seed"] = seed
    ideal_lists = None
    if ideal == "global":
        judged = rng.integers(0, 40, len(lengths))
        ideal_offsets = np.concatenate(([0], np.cumsum(judged))).astype(np.int64)
        ideal_grades = rng.integers(0, levels, int(ideal_offsets[-1])).astype(dtypes[0])
        kwargs.update(ideal_grades=ideal_grades, ideal_offsets=ideal_offsets)
        ideal_lists = [
            ideal_grades[a:b].astype(float).tolist() for a, b in itertools.pairwise(ideal_offsets)
        ]
    result = fastndcg.ndcg(grades, values, offsets=offsets, backend=backend, **kwargs)
    queries = queries_from_csr(offsets, grades.astype(float), values.astype(float))
    ref_kwargs = dict(kwargs, k=result.k, ideal_lists=ideal_lists, seed=seed)
    for name in ("ideal_grades", "ideal_offsets"):
        ref_kwargs.pop(name, None)
    expected = reference_ndcg(queries, **ref_kwargs)
    shape = result.per_query.shape
    np.testing.assert_allclose(result.dcg, np.array(expected.dcg).reshape(shape), **TOL)
    np.testing.assert_allclose(result.idcg, np.array(expected.idcg).reshape(shape), **TOL)
