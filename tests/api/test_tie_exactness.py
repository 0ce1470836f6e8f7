"""ties="average" is exact: no bit of a value depends on how the question is asked.

A query's DCG, IDCG and NDCG are bit-identical under any permutation of its rows (scores and
grades moved together), and the value at a cutoff is bit-identical whether that cutoff is asked
alone or among other cutoffs. Tie-heavy data (few distinct scores) with every gain kind, every
ideal and lists long enough for every ranking path of the kernels (selection by counting or by
an insertion buffer, the partial selection that completes a tie group it cuts, DCG by counting
ranks, sorts by counting and by merging).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import DICT_GAIN, INDEPENDENT_JUDGMENTS, TABLE, halve

import fastndcg

# gains whose sums are exact in any order (integers) and gains whose sums are not
GAINS = {
    "exp2": "exp2",
    "linear": "linear",
    "table": TABLE,
    "fractional table": [0.0, 0.1, 0.7, 1.3, 2.9],
    "dict": DICT_GAIN,
    "callable": halve,
}
# grade kinds each gain takes: tables and dicts need the integers they map
GRADE_KINDS = {
    "exp2": ["small", "int8", "fractional", "large"],
    "linear": ["small", "int8", "fractional", "large", "signed"],
    "table": ["small", "int8"],
    "fractional table": ["small", "int8"],
    "dict": ["small", "int8"],
    "callable": ["small", "fractional", "signed"],
}
CUTOFFS = [1, 2, 3, 5, 10, 16, 17, 20, 32, 33, 64, 100, 129, 257, None]
IDEALS = ["recall", "local", "global", "max"]


def make_grades(rng, kind, n):
    if kind == "small":
        return rng.choice(5, n, p=[0.4, 0.25, 0.15, 0.12, 0.08]).astype(np.float64)
    if kind == "int8":
        return rng.integers(0, 5, n).astype(np.int8)
    if kind == "fractional":
        return rng.choice([0.0, 0.5, 1.0, 1.25, 2.0, 3.5, 0.1], n)
    if kind == "large":  # integer gains whose sums exceed 2**53
        return rng.choice([0.0, 1.0, 20.0, 53.0, 60.0], n)
    return rng.integers(-3, 5, n).astype(np.float64)  # "signed"


@st.composite
def tie_heavy(draw):
    """Queries with few distinct scores, their options, and judgment lists for ideal='global'."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    gain = draw(st.sampled_from(sorted(GAINS)))
    grade_kind = draw(st.sampled_from(GRADE_KINDS[gain]))
    n_queries = draw(st.integers(1, 6))
    max_len = draw(st.sampled_from([6, 40, 150, 400]))
    lengths = rng.integers(0, max_len + 1, n_queries)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = int(offsets[-1])
    pool = rng.normal(size=draw(st.sampled_from([1, 2, 3, 5, 20])))
    scores = rng.choice(pool, n)
    if draw(st.booleans()):  # a few distinct scores among the ties
        loose = rng.random(n) < 0.1
        scores[loose] = rng.normal(size=int(loose.sum()))
    if draw(st.booleans()):
        scores = scores.astype(np.float32)
    grades = make_grades(rng, grade_kind, n)
    ideal_lengths = rng.integers(0, 30, n_queries)
    ideal_offsets = np.concatenate(([0], np.cumsum(ideal_lengths))).astype(np.int64)
    ideal_grades = make_grades(rng, grade_kind, int(ideal_offsets[-1]))
    return dict(
        offsets=offsets,
        grades=grades,
        scores=scores,
        gain=gain,
        ideal_offsets=ideal_offsets,
        ideal_grades=ideal_grades,
    )


def shuffle_within(offsets, rng):
    """A permutation of the rows that moves every row within its query."""
    pieces = [rng.permutation(np.arange(a, b)) for a, b in itertools.pairwise(offsets)]
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)


def run(data, backend, k, ideal, permute=None):
    grades, scores = data["grades"], data["scores"]
    ideal_grades = data["ideal_grades"]
    if permute is not None:
        rows, ideal_rows = permute
        grades, scores, ideal_grades = grades[rows], scores[rows], ideal_grades[ideal_rows]
    options = {}
    if ideal == "global":
        options = dict(ideal_grades=ideal_grades, ideal_offsets=data["ideal_offsets"])
    return fastndcg.ndcg(
        grades,
        scores,
        offsets=data["offsets"],
        k=k,
        gain=GAINS[data["gain"]],
        ideal=ideal,
        ties="average",
        backend=backend,
        **options,
    )


def assert_same_bits(a, b):
    a, b = np.ascontiguousarray(a, np.float64), np.ascontiguousarray(b, np.float64)
    assert a.shape == b.shape
    differ = a.view(np.int64) != b.view(np.int64)
    assert not differ.any(), f"{differ.sum()} values differ, by up to {np.nanmax(abs(a - b))}"


def cutoff_sets():
    return st.lists(st.sampled_from(CUTOFFS), min_size=1, max_size=5, unique=True)


@INDEPENDENT_JUDGMENTS
@given(data=tie_heavy(), ideal=st.sampled_from(IDEALS), k=cutoff_sets(), seed=st.integers(0, 99))
def test_average_is_bit_identical_under_row_permutation(backend, data, ideal, k, seed):
    rng = np.random.default_rng(seed)
    permute = (shuffle_within(data["offsets"], rng), shuffle_within(data["ideal_offsets"], rng))
    a = run(data, backend, k, ideal)
    b = run(data, backend, k, ideal, permute)
    assert_same_bits(a.dcg, b.dcg)
    assert_same_bits(a.idcg, b.idcg)
    assert_same_bits(a.per_query, b.per_query)


@INDEPENDENT_JUDGMENTS
@given(data=tie_heavy(), ideal=st.sampled_from(IDEALS), k=cutoff_sets(), seed=st.integers(0, 99))
def test_cutoff_alone_is_bit_identical_to_cutoff_among_others(backend, data, ideal, k, seed):
    rng = np.random.default_rng(seed)
    asked = list(rng.permutation(np.array(k, dtype=object)))
    together = run(data, backend, asked, ideal)
    for j, cutoff in enumerate(together.k):
        alone = run(data, backend, cutoff, ideal)
        assert_same_bits(alone.dcg[:, 0], together.dcg[:, j])
        assert_same_bits(alone.idcg[:, 0], together.idcg[:, j])
        assert_same_bits(alone.per_query[:, 0], together.per_query[:, j])


@pytest.mark.parametrize("gain", sorted(GAINS))
def test_many_tie_heavy_queries(backend, gain):
    """Thousands of queries at once: rare orders of additions are met too."""
    rng = np.random.default_rng(sorted(GAINS).index(gain))
    lengths = rng.integers(1, 300, 2000)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = int(offsets[-1])
    kind = GRADE_KINDS[gain][-1] if gain != "exp2" else "fractional"
    data = dict(
        offsets=offsets,
        grades=make_grades(rng, kind, n),
        scores=np.round(rng.normal(size=n), 1),  # about 50 distinct scores: many ties
        gain=gain,
        ideal_offsets=offsets,
        ideal_grades=np.zeros(n),
    )
    permute = (shuffle_within(offsets, rng), np.arange(n))
    for ideal in ("recall", "local"):
        a = run(data, backend, [10, 1, None, 100], ideal)
        b = run(data, backend, [10, 1, None, 100], ideal, permute)
        assert_same_bits(a.per_query, b.per_query)
        for j, cutoff in enumerate(a.k):
            assert_same_bits(a.per_query[:, j], run(data, backend, cutoff, ideal).per_query[:, 0])
