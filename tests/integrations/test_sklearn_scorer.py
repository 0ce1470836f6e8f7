"""fastndcg.sklearn.make_ndcg_scorer: grouped cross-validation and grid search of a ranker,
the query ids routed by scikit-learn's metadata routing, every fold checked against the
reference."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from parity_data import tool
from reference import Item, reference_ndcg
from training_data import lambdarank

import fastndcg

sklearn = tool("sklearn", "scikit-learn")
model_selection = tool("sklearn.model_selection", "scikit-learn")
linear_model = tool("sklearn.linear_model", "scikit-learn")
xgb = tool("xgboost", "xgboost")
from fastndcg.sklearn import make_ndcg_scorer  # noqa: E402


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def reference_mean(grades, scores, qid, **options) -> float:
    """The reference's NDCG of rows grouped by ``qid`` (in order of first appearance)."""
    queries: dict = {}
    for row, (q, g, s) in enumerate(zip(qid, grades, scores, strict=True)):
        queries.setdefault(q, []).append(Item(row, float(g), float(s)))
    return reference_ndcg(list(queries.values()), **options).mean[0]


def ranker(**params):
    return xgb.XGBRanker(n_estimators=4, max_depth=2, n_jobs=1, **params).set_fit_request(qid=True)


def test_cross_validate_scores_every_fold_by_query(routing):
    data = lambdarank()
    X, y, qid = data.features, data.grades, data.qid
    folds = model_selection.GroupKFold(n_splits=3)
    scores = model_selection.cross_validate(
        ranker(),
        X,
        y,
        cv=folds,
        scoring=make_ndcg_scorer(k=5, gain="linear"),
        params={"qid": qid, "groups": qid},
        return_estimator=True,
    )
    splits = folds.split(X, y, groups=qid)
    for score, model, (_, test) in zip(
        scores["test_score"], scores["estimator"], splits, strict=True
    ):
        predicted = model.predict(X[test])
        assert score == pytest.approx(
            reference_mean(y[test], predicted, qid[test], k=[5], gain="linear"), abs=1e-12
        )


def test_grid_search_tunes_a_ranker(routing):
    data = lambdarank()
    search = model_selection.GridSearchCV(
        ranker(),
        {"max_depth": [1, 3]},
        cv=model_selection.GroupKFold(n_splits=2),
        scoring={
            "ndcg@3": make_ndcg_scorer(k=3),
            "lightgbm@3": make_ndcg_scorer(k=3, preset="lightgbm"),
        },
        refit="ndcg@3",
    )
    search.fit(data.features, data.grades, groups=data.qid, qid=data.qid)
    results = search.cv_results_
    assert search.best_params_ == results["params"][int(np.argmax(results["mean_test_ndcg@3"]))]
    assert np.all((results["mean_test_lightgbm@3"] > 0) & (results["mean_test_lightgbm@3"] <= 1))


def test_rows_of_a_query_may_be_anywhere(routing):
    rng = np.random.default_rng(95)
    qid = rng.integers(0, 12, 200)
    y = rng.integers(0, 4, 200)
    X = rng.random((200, 1))
    model = linear_model.LinearRegression().fit(X, y)
    scorer = make_ndcg_scorer(k=4, ties="stable", preset="sklearn")
    expected = reference_mean(
        y, model.predict(X), qid, k=[4], gain="linear", ties="stable", zero_idcg="zero"
    )
    assert scorer(model, X, y, qid=qid) == pytest.approx(expected, abs=1e-12)
    assert pickle.loads(pickle.dumps(scorer))(model, X, y, qid=qid) == scorer(model, X, y, qid=qid)


def test_errors(routing):
    with pytest.raises(fastndcg.OptionError, match="one number") as caught:
        make_ndcg_scorer(k=[5, 10])
    assert "one scorer per cutoff" in caught.value.fix
    with pytest.raises(fastndcg.OptionError, match="discount"):
        make_ndcg_scorer(discount="sqrt")
    model = linear_model.LinearRegression().fit(np.zeros((2, 1)), [1, 0])
    with pytest.raises(fastndcg.InputError, match="query id of every row") as caught:
        make_ndcg_scorer(k=2)(model, np.zeros((2, 1)), [1, 0])
    assert "enable_metadata_routing=True" in caught.value.fix


def test_the_scorer_requests_qid_where_routing_is_on():
    with sklearn.config_context(enable_metadata_routing=True):
        assert make_ndcg_scorer(k=2).get_metadata_routing().score.requests == {"qid": True}
    assert make_ndcg_scorer(k=2).get_metadata_routing().score.requests == {"qid": None}


def test_cross_validate_with_another_measure(routing):
    data = lambdarank()
    X, y, qid = data.features, data.grades, data.qid
    folds = model_selection.GroupKFold(n_splits=3)
    options = {"ties": "stable", "relevance_level": 2}
    scores = model_selection.cross_validate(
        ranker(),
        X,
        y,
        cv=folds,
        scoring={"ap": make_ndcg_scorer(measure="AP@10", **options)},
        params={"qid": qid, "groups": qid},
        return_estimator=True,
    )
    splits = folds.split(X, y, groups=qid)
    for score, model, (_, test) in zip(scores["test_ap"], scores["estimator"], splits, strict=True):
        expected = fastndcg.evaluate(
            y[test], model.predict(X[test]), qid=qid[test], measures="AP@10", **options
        )
        assert score == pytest.approx(expected.mean[0], abs=1e-12)
    scorer = make_ndcg_scorer(measure="P@5")
    model = scores["estimator"][0]
    assert pickle.loads(pickle.dumps(scorer))(model, X, y, qid=qid) == scorer(model, X, y, qid=qid)


def test_measure_errors(routing):
    with pytest.raises(fastndcg.OptionError, match="one number") as caught:
        make_ndcg_scorer(measure="P.5,10")
    assert caught.value.option == "measure"
    with pytest.raises(fastndcg.OptionTypeError, match="names its cutoff"):
        make_ndcg_scorer(k=5, measure="P@5")
    model = linear_model.LinearRegression().fit(np.zeros((2, 1)), [1, 0])
    with pytest.raises(fastndcg.InputError, match="measure scorer needs the query id"):
        make_ndcg_scorer(measure="AP")(model, np.zeros((2, 1)), [1, 0])
