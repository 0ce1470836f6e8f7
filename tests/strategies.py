"""Hypothesis strategies: ragged query data with many ties, and option sets for ``ndcg``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

TABLE = [0.0, 1.0, 3.0, 7.0, 15.0]
DICT_GAIN = {0: 0.0, 1: 2.5, 2: 1.0, 3: 6.0, 4: 4.0}  # deliberately not monotone
DISCOUNT_ARRAY = [1.0, 0.9, 0.7, 0.65, 0.5, 0.45, 0.3, 0.25, 0.2, 0.18] + [0.1] * 10


def halve(x):
    return np.asarray(x, dtype=float) / 2.0


def reciprocal_sqrt(ranks):
    return 1.0 / np.sqrt(np.asarray(ranks, dtype=float))


@st.composite
def ragged(draw, max_queries=7, max_len=12, integer_grades=True):
    """Offsets, grades and scores: few distinct scores (ties), empty lists, all-zero queries."""
    lengths = draw(st.lists(st.integers(0, max_len), min_size=0, max_size=max_queries))
    n = sum(lengths)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if integer_grades:
        grade_values = st.integers(0, 4).map(float)
    else:
        grade_values = st.sampled_from([0.0, 0.5, 1.0, 1.25, 2.0, 3.5])
    grades = np.array(draw(st.lists(grade_values, min_size=n, max_size=n)), dtype=float)
    if n and draw(st.booleans()):
        # zero out whole queries now and then
        for q in range(len(lengths)):
            if draw(st.integers(0, 3)) == 0:
                grades[offsets[q] : offsets[q + 1]] = 0.0
    score_pool = draw(st.sampled_from([[0.0, 1.0], [0.1, 0.2, 0.3], [-1.5, 0.0, 2.0, 7.25], None]))
    if score_pool is None:
        scores = draw(st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n))
    else:
        scores = draw(st.lists(st.sampled_from(score_pool), min_size=n, max_size=n))
    return offsets, grades, np.array(scores, dtype=float)


cutoffs = st.one_of(
    st.none(),
    st.integers(1, 15),
    st.lists(st.one_of(st.none(), st.integers(1, 15)), min_size=1, max_size=4, unique=True),
)

gains = st.sampled_from(["exp2", "linear", "table", "dict", "callable"])
discounts = st.sampled_from(["log2", "jarvelin", "reciprocal", "array", "callable"])
ideals = st.sampled_from(["recall", "local", "global", "max"])
# tests drawing judgment lists independent of the rows: a list lacking rows given may put NDCG
# above 1, which fastndcg scores as given and warns of (tests/core/test_layout.py checks it)
INDEPENDENT_JUDGMENTS = pytest.mark.filterwarnings("ignore:NDCG is above 1:UserWarning")
ties = st.sampled_from(["average", "stable", "pessimistic", "optimistic", "random"])


def gain_option(name):
    return {"table": TABLE, "dict": DICT_GAIN, "callable": halve}.get(name, name)


def discount_option(name):
    return {"array": DISCOUNT_ARRAY, "callable": reciprocal_sqrt}.get(name, name)


@st.composite
def judged_lists(draw, max_queries=5, max_len=10):
    """TREC-like queries: each ranked document's judgment (None: unjudged; -1: in the pool, not
    judged), judgments of documents not retrieved, and scores with many ties."""
    queries = []
    for _ in range(draw(st.integers(1, max_queries))):
        n = draw(st.integers(0, max_len))
        labels = draw(st.lists(st.sampled_from([None, -1, 0, 1, 2, 3, 4]), min_size=n, max_size=n))
        unretrieved = draw(st.lists(st.sampled_from([-1, 0, 1, 2, 3]), max_size=4))
        pool = draw(st.sampled_from([[0.0, 1.0], [0.5, 1.0, 2.0, 3.0], [-1.0, 0.0, 0.25, 4.0]]))
        scores = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
        queries.append((labels, unretrieved, scores))
    return queries
