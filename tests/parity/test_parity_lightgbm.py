"""Parity of ``preset="lightgbm"`` with LightGBM's own ndcg metric, per query and mean, at 1e-12.

LightGBM evaluates its metric on the model's raw scores plus a dataset's ``init_score``. A
booster trained one round with a zero-gradient objective adds exactly 0, so the metric sees the
given scores (checked). Per-query values come from one validation set per query, evaluated in
one training call; the mean (with per-query weights) from the whole set.

Data: LightGBM's lambdarank example and LETOR MQ2008 (51 queries without a relevant document,
which LightGBM scores 1) with model predictions full of ties, and random heavily tied lists.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from parity_data import PREDICTIONS, assert_same_values, predictions, random_lists, tool

import fastndcg

lgb = tool("lightgbm", "lightgbm")


def _zero_objective(preds, data):
    return np.zeros_like(preds), np.ones_like(preds)


def lightgbm_ndcg(data, eval_at=None, label_gain=None, weights=None):
    """({cutoff: per-query values}, {cutoff: mean}) from LightGBM's metric."""
    params = {"objective": _zero_objective, "metric": "ndcg", "verbose": -1}
    if eval_at is not None:
        params["eval_at"] = eval_at
    if label_gain is not None:
        params["label_gain"] = label_gain
    b = data.bounds
    features = np.arange(data.grades.size, dtype=np.float64)[:, None]
    row_weights = None if weights is None else np.repeat(weights, np.diff(b))

    def dataset(s, e, **more):
        return lgb.Dataset(
            features[s:e],
            label=data.grades[s:e],
            group=np.diff(b[(b >= s) & (b <= e)]),
            init_score=data.scores[s:e],
            **more,
        )

    whole = dataset(0, b[-1], weight=row_weights)
    singles = [dataset(s, e, reference=whole) for s, e in pairwise(b)]
    record: dict = {}
    booster = lgb.train(
        params,
        whole,
        num_boost_round=1,
        valid_sets=[whole, *singles],
        valid_names=["all", *map(str, range(len(singles)))],
        callbacks=[lgb.record_evaluation(record)],
    )
    assert not booster.predict(
        features, raw_score=True
    ).any()  # the scores reach the metric as given
    cutoffs = [int(name.split("@")[1]) for name in record["all"]]
    per_query = {
        k: {str(i): record[str(i)][f"ndcg@{k}"][-1] for i in range(len(singles))} for k in cutoffs
    }
    return per_query, {k: record["all"][f"ndcg@{k}"][-1] for k in cutoffs}


def lists():
    yield from (predictions(name) for name in PREDICTIONS)
    yield from (random_lists(seed) for seed in (51, 52))


@pytest.mark.parametrize("data", list(lists()), ids=lambda d: f"{d.qid.size}rows")
@pytest.mark.parametrize(
    ("eval_at", "label_gain"),
    [(None, None), ([1, 3, 10, 20], None), ([2, 5], [0.0, 1.0, 2.0, 5.0, 10.0])],
)
def test_per_query_and_mean(data, eval_at, label_gain):
    theirs, means = lightgbm_ndcg(data, eval_at, label_gain)
    options = {} if label_gain is None else {"gain": label_gain}
    if eval_at is not None:
        options["k"] = eval_at
    ours = fastndcg.ndcg(data.grades, data.scores, qid=data.qid, preset="lightgbm", **options)
    assert list(ours.k) == list(theirs)  # default cutoffs 1..5
    ids = [str(i) for i in range(ours.n_queries)]
    for j, k in enumerate(ours.k):
        assert_same_values(
            dict(zip(ids, ours.per_query[:, j], strict=True)), theirs[k], 1e-12, f"@{k}"
        )
        assert abs(ours.mean[j] - means[k]) <= 1e-12


def test_query_weights_leave_empty_queries_unweighted():
    """Queries without relevant items add 1 unweighted. LightGBM sums row weights into query
    weights in float32, so with weights whose float32 sums are exact (multiples of 1/8) the
    mean matches at 1e-12, and with arbitrary weights to float32 resolution (1e-7)."""
    data = predictions("lgb_mq2008")
    rng = np.random.default_rng(53)
    dyadic = rng.integers(1, 24, size=np.diff(data.bounds).size) / 8
    for weights, atol in ((dyadic, 1e-12), (rng.random(dyadic.size) * 3, 1e-7)):
        _, means = lightgbm_ndcg(data, [1, 5, 10], weights=weights)
        options = dict(qid=data.qid, preset="lightgbm", k=[1, 5, 10], weights=weights)
        ours = fastndcg.ndcg(data.grades, data.scores, **options)
        plain = fastndcg.ndcg(data.grades, data.scores, aggregate="mean", **options)
        for j, k in enumerate([1, 5, 10]):
            assert abs(ours.mean[j] - means[k]) <= atol
            assert abs(plain.mean[j] - means[k]) > 1e-3  # a plain weighted mean is not LightGBM's
