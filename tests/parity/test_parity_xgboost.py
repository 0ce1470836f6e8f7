"""Parity of ``preset="xgboost"`` with XGBoost's ndcg metrics, per query and mean, at 1e-12.

XGBoost evaluates on predictions held as float32 and accumulates in double. A booster with no
trees predicts a DMatrix's ``base_margin`` exactly, so the metric sees the given scores (as
float32). Per-query values come from one DMatrix per query; the mean (with group weights) from
the whole set.

Data: LETOR MQ2008 (51 groups without a relevant document) and LightGBM's lambdarank example
with XGBoost model predictions (float32 values, many ties), and random heavily tied lists with
near-ties only float64 tells apart.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from parity_data import PREDICTIONS, Lists, assert_same_values, predictions, random_lists, tool

import fastndcg

xgb = tool("xgboost", "xgboost")

# XGBoost metric -> fastndcg options
METRICS = {
    "ndcg": {},  # XGBoost's plain ndcg stops at 32
    "ndcg@1": {"k": 1},
    "ndcg@5": {"k": 5},
    "ndcg@5-": {"k": 5, "zero_idcg": "zero"},
    "ndcg@50": {"k": 50},
}


def _parse(text):
    """{(dataset name, metric): value} of an XGBoost evaluation line."""
    out = {}
    for field in text.split("\t")[1:]:
        name, value = field.rsplit(":", 1)
        dataset, metric = name.split("-", 1)
        out[dataset, metric] = float(value)
    return out


def xgboost_ndcg(data, metrics, weights=None, exp_gain=True):
    """({metric: per-query values}, {metric: mean})."""
    b = data.bounds
    features = np.zeros((data.grades.size, 1))

    def dmatrix(s, e):
        return xgb.DMatrix(
            features[s:e],
            label=data.grades[s:e],
            base_margin=data.scores[s:e],
            group=np.diff(b[(b >= s) & (b <= e)]).tolist(),
        )

    whole = dmatrix(0, b[-1])
    if weights is not None:
        whole.set_weight(weights)
    params = {"objective": "rank:ndcg", "eval_metric": metrics, "ndcg_exp_gain": exp_gain}
    booster = xgb.train(params, whole, num_boost_round=0)
    assert np.array_equal(
        booster.predict(whole, output_margin=True), data.scores.astype(np.float32)
    )
    singles = _parse(
        booster.eval_set([(dmatrix(s, e), str(i)) for i, (s, e) in enumerate(pairwise(b))])
    )
    means = _parse(booster.eval(whole, "all"))
    per_query = {m: {str(i): singles[str(i), m] for i in range(b.size - 1)} for m in metrics}
    return per_query, {m: means["all", m] for m in metrics}


def lists():
    yield from (predictions(name) for name in PREDICTIONS)
    yield from (random_lists(seed) for seed in (61, 62))


@pytest.mark.parametrize("data", list(lists()), ids=lambda d: f"{d.qid.size}rows")
def test_per_query_and_mean(data):
    theirs, means = xgboost_ndcg(data, list(METRICS))
    for metric, options in METRICS.items():
        ours = fastndcg.ndcg(data.grades, data.scores, qid=data.qid, preset="xgboost", **options)
        ids = [str(i) for i in range(ours.n_queries)]
        assert_same_values(
            dict(zip(ids, ours.per_query[:, 0], strict=True)), theirs[metric], 1e-12, metric
        )
        assert abs(float(ours) - means[metric]) <= 1e-12, metric


def test_linear_gain_and_fractional_labels():
    """ndcg_exp_gain=false: the label is the gain (XGBoost holds labels as float32, so the
    fractional labels here are float32-representable)."""
    data = random_lists(63)
    rng = np.random.default_rng(63)
    data = Lists(
        data.qid, data.grades + rng.choice([0.0, 0.25, 0.5], size=data.grades.size), data.scores
    )
    theirs, means = xgboost_ndcg(data, ["ndcg@3", "ndcg"], exp_gain=False)
    for metric, k in (("ndcg@3", 3), ("ndcg", 32)):
        ours = fastndcg.ndcg(
            data.grades, data.scores, qid=data.qid, preset="xgboost", k=k, gain="linear"
        )
        ids = [str(i) for i in range(ours.n_queries)]
        assert_same_values(
            dict(zip(ids, ours.per_query[:, 0], strict=True)), theirs[metric], 1e-12, metric
        )
        assert abs(float(ours) - means[metric]) <= 1e-12


def test_group_weights_and_the_check_on_the_mean():
    """Group weights (held as float32 by XGBoost, and by the preset's aggregate)."""
    data = predictions("xgb_mq2008")
    weights = 1.0 + np.random.default_rng(64).random(np.diff(data.bounds).size) * 2
    _, means = xgboost_ndcg(data, ["ndcg@10"], weights=weights)
    ours = fastndcg.ndcg(
        data.grades, data.scores, qid=data.qid, preset="xgboost", k=10, weights=weights
    )
    assert abs(float(ours) - means["ndcg@10"]) <= 1e-12
    # a group without relevant items adds 1 unweighted: with small weights the mean passes 1,
    # which XGBoost refuses (it does not clamp such means), and so does the preset
    small = Lists(
        np.array([0, 0, 1, 1]), np.array([0.0, 0.0, 1.0, 0.0]), np.array([0.1, 0.2, 0.3, 0.4])
    )
    with pytest.raises(xgb.core.XGBoostError, match="Invalid output score"):
        xgboost_ndcg(small, ["ndcg@2"], weights=np.array([0.2, 0.5]))
    with pytest.raises(ValueError, match="Invalid output score"):
        fastndcg.ndcg(
            small.grades, small.scores, qid=small.qid, preset="xgboost", k=2, weights=[0.2, 0.5]
        )
