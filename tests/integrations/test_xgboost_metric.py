"""fastndcg.xgboost.eval_metric: XGBoost's own ndcg@k at every boosting round with its preset,
in xgboost.train (queries from the DMatrix) and XGBRanker (one query per call)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from parity_data import tool
from reference import queries_from_csr, reference_ndcg
from training_data import lambdarank

import fastndcg

xgb = tool("xgboost", "xgboost")
sklearn_base = tool("sklearn.base", "scikit-learn")
from fastndcg.xgboost import eval_metric  # noqa: E402

PARAMS = {"objective": "rank:ndcg", "max_depth": 3, "eta": 0.3, "seed": 5, "nthread": 1}
# XGBoost's metric -> the options that reproduce it
METRICS = {"ndcg@1": {"k": 1}, "ndcg@5": {"k": 5}, "ndcg@5-": {"k": 5, "zero_idcg": "zero"}}


def dmatrices(group_weights: bool = False):
    data = lambdarank()
    train, valid = data.queries(0, 30), data.queries(30, 50)
    made = [xgb.DMatrix(part.features, part.grades, qid=part.qid) for part in (train, valid)]
    if group_weights:
        rng = np.random.default_rng(91)
        for part, matrix in zip((train, valid), made, strict=True):
            matrix.set_weight(1 + rng.random(part.sizes.size))
    return made


class Recorder:
    """A custom metric that keeps the exact values the callable returns (XGBoost logs %f)."""

    def __init__(self, metric):
        self.metric, self.values = metric, {}

    def __call__(self, predt, dmatrix):
        returned = self.metric(predt, dmatrix)
        for name, value in returned if isinstance(returned, list) else [returned]:
            self.values.setdefault(name, []).append(value)
        return returned


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "group_weights"])
@pytest.mark.parametrize(("metric", "options"), list(METRICS.items()))
def test_preset_xgboost_is_xgboosts_ndcg_at_every_round(metric, options, weighted):
    train, valid = dmatrices(weighted)
    recorder = Recorder(eval_metric(preset="xgboost", **options))
    history: dict = {}
    xgb.train(
        dict(PARAMS, eval_metric=[metric]),
        train,
        num_boost_round=6,
        evals=[(valid, "valid")],
        evals_result=history,
        custom_metric=recorder,
        verbose_eval=False,
    )
    name = f"fastndcg_ndcg@{options['k']}"
    theirs = history["valid"][metric]
    np.testing.assert_allclose(recorder.values[name], theirs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(history["valid"][name], theirs, rtol=0, atol=5e-7)  # logged %f
    assert len(set(theirs)) > 1


def test_several_cutoffs_and_the_plain_ndcg():
    """XGBoost's plain ndcg is ndcg@32: the preset's cutoff when k is left out."""
    train, valid = dmatrices()
    recorder = Recorder(eval_metric(preset="xgboost"))
    history: dict = {}
    xgb.train(
        dict(PARAMS, eval_metric=["ndcg"]),
        train,
        num_boost_round=3,
        evals=[(valid, "valid")],
        evals_result=history,
        custom_metric=recorder,
        verbose_eval=False,
    )
    np.testing.assert_allclose(recorder.values["fastndcg_ndcg@32"], history["valid"]["ndcg"])
    both = eval_metric(k=[2, None], gain="linear")(np.zeros(valid.num_row()), valid)
    assert [name for name, _ in both] == ["fastndcg_ndcg@2", "fastndcg_ndcg"]


def test_xgbranker_scores_query_by_query():
    """XGBRanker calls the metric once per query and averages the values itself, weighting
    each query by its number of rows (XGBoost's ltr_metric_decorator takes DMatrix.get_group(),
    the query sizes, as weights), so its logged number is that weighted mean of exact values."""
    data = lambdarank()
    train, valid = data.queries(0, 30), data.queries(30, 50)
    metric = eval_metric(k=5, preset="xgboost")
    ranker = xgb.XGBRanker(n_estimators=3, max_depth=3, eval_metric=metric, n_jobs=1)
    ranker.fit(
        train.features,
        train.grades,
        qid=train.qid,
        eval_set=[(valid.features, valid.grades)],
        eval_qid=[valid.qid],
        verbose=False,
    )
    logged = ranker.evals_result()["validation_0"]["fastndcg_ndcg@5"]
    scores = ranker.predict(valid.features, output_margin=True)
    queries = queries_from_csr(valid.offsets, valid.grades, scores.astype(np.float64))
    per_query = reference_ndcg(queries, k=[5], ties="stable", zero_idcg="one").ndcg
    assert logged[-1] == pytest.approx(
        np.average(np.ravel(per_query), weights=valid.sizes), abs=5e-7
    )
    assert sklearn_base.clone(ranker).get_params()["eval_metric"].__name__ == "fastndcg_ndcg@5"


def test_the_wiring_under_another_definition():
    """A definition XGBoost does not have, checked against the reference each round."""
    train, valid = dmatrices()
    recorder = Recorder(eval_metric(k=4, gain="linear", ties="pessimistic", zero_idcg="skip"))
    booster = xgb.train(
        dict(PARAMS, eval_metric=[]),
        train,
        3,
        evals=[(valid, "valid")],
        custom_metric=recorder,
        verbose_eval=False,
    )
    part = lambdarank().queries(30, 50)
    for iteration in (1, 3):
        scores = booster.predict(valid, iteration_range=(0, iteration), output_margin=True)
        queries = queries_from_csr(part.offsets, part.grades, scores.astype(np.float64))
        expected = reference_ndcg(queries, k=[4], gain="linear", ties="pessimistic").mean[0]
        assert recorder.values["fastndcg_ndcg@4"][iteration - 1] == pytest.approx(
            expected, abs=1e-12
        )


def test_errors():
    with pytest.raises(fastndcg.OptionError, match="ties"):
        eval_metric(ties="sideways")
    metric = eval_metric(k=3)
    with pytest.raises(fastndcg.InputError, match="queries of the evaluated DMatrix") as caught:
        metric(np.zeros(4), xgb.DMatrix(np.zeros((4, 1)), np.array([1.0, 0, 0, 1])))
    assert "qid=" in caught.value.fix
    with pytest.raises(fastndcg.OptionError, match="one value per query"):
        eval_metric(k=[1, 3])(np.array([1, 0]), np.array([0.5, 0.2]))
    assert pickle.loads(pickle.dumps(metric))(np.array([1, 0]), np.array([0.5, 0.2])) == 1.0


# -- other measures (measures=) ----------------------------------------------------------------

MEASURES = ["map@5", "P@5", "RR@10", "Success@1"]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "group_weights"])
def test_measures_at_every_round_are_evaluate_of_that_rounds_predictions(weighted):
    train, valid = dmatrices(weighted)
    recorder = Recorder(eval_metric(measures=MEASURES, ties="stable"))
    history: dict = {}
    booster = xgb.train(
        dict(PARAMS, eval_metric=[]),
        train,
        4,
        evals=[(valid, "valid")],
        evals_result=history,
        custom_metric=recorder,
        verbose_eval=False,
    )
    part = lambdarank().queries(30, 50)
    weights = valid.get_weight() if weighted else None
    for iteration in (1, 4):
        scores = booster.predict(valid, iteration_range=(0, iteration), output_margin=True)
        result = fastndcg.evaluate(
            part.grades, scores, offsets=part.offsets, measures=MEASURES, ties="stable"
        )
        for j, name in enumerate(MEASURES):
            expected = np.average(result.per_query[:, j], weights=weights)
            recorded = recorder.values[f"fastndcg_{name}"][iteration - 1]
            assert recorded == pytest.approx(expected, abs=1e-12), (name, iteration)
            logged = history["valid"][f"fastndcg_{name}"][iteration - 1]
            assert logged == pytest.approx(expected, abs=5e-7)  # logged %f
    assert weights is None or weights.size == part.sizes.size


def test_xgbranker_takes_one_measure():
    data = lambdarank()
    train, valid = data.queries(0, 30), data.queries(30, 50)
    metric = eval_metric(measures="RR@10", ties="stable")
    ranker = xgb.XGBRanker(n_estimators=3, max_depth=3, eval_metric=metric, n_jobs=1)
    ranker.fit(
        train.features,
        train.grades,
        qid=train.qid,
        eval_set=[(valid.features, valid.grades)],
        eval_qid=[valid.qid],
        verbose=False,
    )
    logged = ranker.evals_result()["validation_0"]["fastndcg_RR@10"]
    scores = ranker.predict(valid.features, output_margin=True)
    per_query = fastndcg.evaluate(
        valid.grades, scores, offsets=valid.offsets, measures="RR@10", ties="stable"
    ).per_query[:, 0]
    assert logged[-1] == pytest.approx(np.average(per_query, weights=valid.sizes), abs=5e-7)
    with pytest.raises(fastndcg.OptionError, match="one value per query") as caught:
        eval_metric(measures=["P@5", "AP"])(np.array([1, 0]), np.array([0.5, 0.2]))
    assert (caught.value.option, caught.value.value) == (
        "measures",
        ["fastndcg_P@5", "fastndcg_AP"],
    )
    with pytest.raises(fastndcg.OptionTypeError, match="names its cutoff"):
        eval_metric(k=5, measures="P@5")
