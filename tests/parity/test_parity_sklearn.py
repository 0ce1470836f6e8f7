"""Parity of ``preset="sklearn"`` with scikit-learn's ``ndcg_score``, per query, at 1e-12.

scikit-learn computes in float64. Each query is scored by ``ndcg_score`` on its own (a 1 x n
matrix; it needs n >= 2), on real data with many tied scores (TREC runs, GBDT predictions) and
random heavily tied lists; the weighted mean is checked on dense matrices with
``sample_weight``.
"""

from __future__ import annotations

import numpy as np
import pytest
from parity_data import PREDICTIONS, assert_same_values, predictions, random_lists, tool, trec_lists

import fastndcg

metrics = tool("sklearn.metrics", "scikit-learn")

CUTOFFS = [None, 1, 3, 5, 10]


def lists():
    yield from (predictions(name) for name in PREDICTIONS)
    yield from (trec_lists(name) for name in ("adhoc", "rag2024"))
    yield from (random_lists(seed) for seed in (11, 12))


@pytest.mark.parametrize("data", list(lists()), ids=lambda d: f"{d.qid.size}rows")
def test_per_query(data):
    ours = fastndcg.ndcg(data.grades, data.scores, qid=data.qid, preset="sklearn", k=CUTOFFS)
    for j, k in enumerate(CUTOFFS):
        theirs, mine = {}, {}
        for i, (q, g, s) in enumerate(data.queries()):
            if g.size >= 2:  # ndcg_score rejects single-item lists
                theirs[str(q)] = metrics.ndcg_score(g[None, :], s[None, :], k=k)
                mine[str(q)] = ours.per_query[i, j]
        assert_same_values(mine, theirs, 1e-12, f"k={k}")


def test_weighted_mean_of_dense_rows():
    rng = np.random.default_rng(13)
    y_true = rng.integers(0, 4, size=(300, 12)).astype(float)
    y_true[::10] = 0  # rows without relevant items score 0 and count
    y_score = rng.choice([0.1, 0.2, 0.5, 0.5, 1.0], size=y_true.shape)
    weights = rng.random(300) * 3
    for k in CUTOFFS:
        theirs = metrics.ndcg_score(y_true, y_score, k=k, sample_weight=weights)
        ours = fastndcg.ndcg(y_true, y_score, preset="sklearn", k=k, weights=weights)
        assert abs(float(ours) - theirs) <= 1e-12
