"""Parity of ``preset="keras_rs"`` with keras_rs.metrics.NDCG, per list and mean.

keras-rs breaks ties at random (``shuffle_ties=False`` is ignored), so parity is claimed on
lists without tied scores (also in float32): the real data are the LETOR MQ2008 and LightGBM
example predictions with the tied queries left out, padded into (batch, list) matrices with
label -1 (which keras-rs masks). Tolerance 2e-6 (absolute): keras-rs computes in float32
(Keras' default floatx), fastndcg in float64; observed differences stay below 3e-7.
Per-list values and weights are read from the metric's own ``compute_metric``.
"""

from __future__ import annotations

import os
from itertools import pairwise

import numpy as np
import pytest
from parity_data import Lists, assert_same_values, predictions, random_lists, tool

import fastndcg

os.environ.setdefault("KERAS_BACKEND", "torch")  # the CPU torch of the parity extra
keras = tool("keras", "keras")
keras_rs = tool("keras_rs", "keras-rs")

ATOL = 2e-6  # float32 arithmetic (see module docstring)
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")


def tie_free(data: Lists) -> Lists:
    keep = np.zeros(data.qid.size, dtype=bool)
    b = data.bounds
    for s, e in pairwise(b):
        scores = data.scores[s:e].astype(np.float32)
        keep[s:e] = np.unique(scores).size == e - s
    return Lists(data.qid[keep], data.grades[keep], data.scores[keep])


def datasets():
    yield "mq2008", tie_free(predictions("lgb_mq2008"))  # 51 lists without relevant items
    yield "lambdarank", tie_free(predictions("lgb_lambdarank_example"))
    yield "random", random_lists(41, tied=False)


def keras_rs_ndcg(k, grades, scores, weights=None):
    """(per-list values, per-list weights, result) from keras-rs itself."""
    captured = {}

    class Capture(keras_rs.metrics.NDCG):
        def compute_metric(self, *args, **kwargs):
            values, list_weights = super().compute_metric(*args, **kwargs)
            captured["values"] = keras.ops.convert_to_numpy(values).ravel()
            captured["weights"] = keras.ops.convert_to_numpy(list_weights).ravel()
            return values, list_weights

    metric = Capture(k=k)
    metric.update_state(grades, scores, sample_weight=weights)
    result = float(keras.ops.convert_to_numpy(metric.result()))
    return captured["values"].astype(np.float64), captured["weights"], result


@pytest.mark.parametrize(
    ("name", "data"), list(datasets()), ids=lambda x: x if isinstance(x, str) else ""
)
@pytest.mark.parametrize("weighting", ["none", "per_list", "per_item"])
def test_per_list_and_mean(name, data, weighting):
    grades, scores, _ = data.dense(pad=-1.0)  # padding: label -1, masked by keras-rs
    rng = np.random.default_rng(42)
    weights = {
        "none": None,
        "per_list": np.where(
            rng.random(grades.shape[0]) < 0.1, 0.0, rng.random(grades.shape[0]) * 3
        ),
        "per_item": np.where(rng.random(grades.shape) < 0.1, 0.0, rng.random(grades.shape) * 2),
    }[weighting]
    for k in (None, 1, 5, 10):
        values, _, result = keras_rs_ndcg(k, grades, scores, weights)
        ours = fastndcg.ndcg(grades, scores, preset="keras_rs", k=k, weights=weights)
        ids = [str(i) for i in range(grades.shape[0])]
        assert_same_values(
            dict(zip(ids, ours.per_query[:, 0], strict=True)),
            dict(zip(ids, values, strict=True)),
            ATOL,
            f"{name} {weighting} k={k}",
        )
        assert abs(float(ours) - result) <= ATOL, (name, weighting, k)


def test_list_weights_rule():
    """List weight = sum(w * gain) / sum(gain); lists without gain (list 1; list 2, whose only
    relevant item weighs 0 and is masked) take the mean weight of the lists with gain; a list
    whose weights sum to 0 (list 3) counts 0."""
    grades = np.array([[2.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, -1.0], [3.0, 1.0, 0.0]])
    scores = np.array([[0.3, 0.2, 0.1], [0.1, 0.2, 0.3], [0.1, 0.3, 0.2], [0.2, 0.3, 0.1]])
    weights = np.array([[1.0, 2.0, 0.5], [1.0, 1.0, 1.0], [0.0, 3.0, 1.0], [0.0, 0.0, 0.0]])
    _, list_weights, result = keras_rs_ndcg(None, grades, scores, weights)
    ours = fastndcg.ndcg(grades, scores, preset="keras_rs", weights=weights)
    np.testing.assert_allclose(list_weights, [0.875, 0.875, 0.875, 0.0], atol=1e-6)  # 3.5 / 4
    assert abs(float(ours) - result) <= ATOL
