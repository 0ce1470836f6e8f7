"""fastndcg.lightgbm.eval_metric: LightGBM's own ndcg@k at every boosting round with its preset,
any definition otherwise (checked against the reference), in lightgbm.train and LGBMRanker."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from parity_data import tool
from reference import queries_from_csr, reference_ndcg
from training_data import lambdarank

import fastndcg

lgb = tool("lightgbm", "lightgbm")
from fastndcg.lightgbm import eval_metric  # noqa: E402

PARAMS = {
    "objective": "lambdarank",
    "num_leaves": 7,
    "min_data_in_leaf": 5,
    "learning_rate": 0.2,
    "seed": 3,
    "deterministic": True,
    "num_threads": 1,
    "verbose": -1,
}


def datasets(weighted: bool = False):
    """The lambdarank example split by query: 30 queries to train on, 20 to validate."""
    data = lambdarank()
    train, valid = data.queries(0, 30), data.queries(30, 50)
    weights = np.random.default_rng(81).random(data.grades.size) * 3 if weighted else None

    def dataset(part, rows, **more):
        w = None if weights is None else weights[rows]
        return lgb.Dataset(part.features, part.grades, group=part.sizes, weight=w, **more)

    whole = dataset(train, slice(0, train.grades.size))
    return whole, dataset(valid, slice(train.grades.size, None), reference=whole), valid


def record(params, feval, rounds=6, weighted=False, **more):
    train, valid, _ = datasets(weighted)
    history: dict = {}
    booster = lgb.train(
        params,
        train,
        num_boost_round=rounds,
        valid_sets=[train, valid],
        valid_names=["train", "valid"],
        feval=feval,
        callbacks=[lgb.record_evaluation(history), *more.pop("callbacks", [])],
        **more,
    )
    return booster, history


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "row_weights"])
def test_preset_lightgbm_is_lightgbms_ndcg_at_every_round(weighted):
    params = dict(PARAMS, metric="ndcg", eval_at=[1, 3, 5, 10])
    _, history = record(
        params, eval_metric(k=[1, 3, 5, 10], preset="lightgbm"), rounds=8, weighted=weighted
    )
    for name in ("train", "valid"):
        for k in (1, 3, 5, 10):
            theirs, ours = history[name][f"ndcg@{k}"], history[name][f"fastndcg_ndcg@{k}"]
            assert len(ours) == 8
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
        assert len(set(history[name]["ndcg@5"])) > 1  # the rounds changed the model


def test_the_preset_cutoffs_are_lightgbms_default_eval_at():
    _, history = record(dict(PARAMS, metric="ndcg"), eval_metric(preset="lightgbm"), rounds=2)
    assert [name for name in history["valid"] if name.startswith("fastndcg")] == [
        f"fastndcg_ndcg@{k}" for k in range(1, 6)
    ]
    for k in range(1, 6):
        np.testing.assert_allclose(
            history["valid"][f"fastndcg_ndcg@{k}"], history["valid"][f"ndcg@{k}"], atol=1e-9
        )


def test_early_stopping_on_another_definition_matches_the_reference():
    """Early stopping watches fastndcg's metric (LightGBM's own is off); every recorded value
    is the reference's NDCG of that round's predictions on the validation queries."""
    stop = lgb.early_stopping(2, first_metric_only=True, verbose=False)
    booster, history = record(
        dict(PARAMS, metric="None", learning_rate=0.5),
        eval_metric(k=3, gain="linear", discount="reciprocal"),
        rounds=40,
        callbacks=[stop],
    )
    values = history["valid"]["fastndcg_ndcg@3"]
    assert list(history["valid"]) == ["fastndcg_ndcg@3"]
    assert booster.best_iteration == int(np.argmax(values)) + 1 < len(values)
    _, _, valid = datasets()
    for iteration in (1, booster.best_iteration):  # lgb.train keeps the trees up to the best
        scores = booster.predict(valid.features, num_iteration=iteration, raw_score=True)
        queries = queries_from_csr(valid.offsets, valid.grades, scores)
        expected = reference_ndcg(queries, k=[3], gain="linear", discount="reciprocal").mean[0]
        assert values[iteration - 1] == pytest.approx(expected, abs=1e-12)


@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")  # LightGBM 4.7
def test_lgbm_ranker_fit_takes_it_as_eval_metric():
    train, valid = lambdarank().queries(0, 30), lambdarank().queries(30, 50)
    ranker = lgb.LGBMRanker(n_estimators=4, **PARAMS)
    ranker.fit(
        train.features,
        train.grades,
        group=train.sizes,
        eval_set=[(valid.features, valid.grades)],
        eval_group=[valid.sizes],
        eval_metric=eval_metric(k=[2, 10], preset="lightgbm"),
        eval_at=[2, 10],
    )
    result = ranker.evals_result_["valid_0"]
    for k in (2, 10):
        np.testing.assert_allclose(result[f"fastndcg_ndcg@{k}"], result[f"ndcg@{k}"], atol=1e-9)


def test_the_whole_list_is_named_without_a_cutoff():
    metric = eval_metric()
    values = metric(np.array([0, 1, 2]), np.array([0.1, 0.2, 0.3]), None, np.array([3]))
    assert values == [("fastndcg_ndcg", 1.0, True)]
    assert repr(metric) == "fastndcg.lightgbm.eval_metric()"
    assert pickle.loads(pickle.dumps(metric))(np.array([1, 0]), np.array([0.1, 0.2]), None, [2])


def test_errors():
    with pytest.raises(fastndcg.OptionError, match="gain"):
        eval_metric(gain="cubic")
    with pytest.raises(fastndcg.OptionTypeError, match="eval_at"):
        eval_metric(eval_at=[5])
    train, _, _ = datasets()
    no_groups = lgb.Dataset(np.zeros((4, 1)), np.array([1.0, 0, 0, 1])).construct()
    metric = eval_metric(k=5)
    with pytest.raises(fastndcg.InputError, match="query groups") as caught:
        metric(np.zeros(4), no_groups)
    assert "group=" in caught.value.fix
    with pytest.raises(fastndcg.InputError, match="one prediction per row"):
        metric(np.array([0, 1, 0, 1]), np.zeros((4, 3)), None, [4])
    train.construct()
    with pytest.raises(fastndcg.InputError, match="NaN"):
        metric(np.full(train.num_data(), np.nan), train)


# -- other measures (measures=): fastndcg.evaluate of each round's predictions ----------------

MEASURES = ["map@5", "P@5", "RR@10", "nDCG@10", "R@20", "ERR@10"]


def lightgbm_query_weights(row_weights, sizes):
    """Each query's mean row weight in float32 (LightGBM's query weights)."""
    sums = [np.float32(0)] * len(sizes)
    for query, rows in enumerate(np.split(np.float32(row_weights), np.cumsum(sizes)[:-1])):
        for weight in rows:  # added in row order, in float32
            sums[query] = np.float32(sums[query] + weight)
    return np.array(sums, dtype=np.float32) / np.float32(sizes)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "row_weights"])
def test_measures_at_every_round_are_evaluate_of_that_rounds_predictions(weighted):
    options = {"ties": "stable", "relevance_level": 2}
    metric = eval_metric(measures=MEASURES, **options)
    booster, history = record(dict(PARAMS, metric="None"), metric, rounds=4, weighted=weighted)
    _, _, valid = datasets(weighted)
    assert list(history["valid"]) == [f"fastndcg_{name}" for name in MEASURES]
    weights = None
    if weighted:
        rows = np.random.default_rng(81).random(lambdarank().grades.size) * 3
        weights = lightgbm_query_weights(rows[-valid.grades.size :], valid.sizes)
    for iteration in (1, 4):
        scores = booster.predict(valid.features, num_iteration=iteration, raw_score=True)
        result = fastndcg.evaluate(
            valid.grades, scores, offsets=valid.offsets, measures=MEASURES, **options
        )
        for j, name in enumerate(MEASURES):
            values = result.per_query[:, j]
            counted = ~np.isnan(values)
            expected = np.average(
                values[counted], weights=None if weights is None else weights[counted]
            )
            recorded = history["valid"][f"fastndcg_{name}"][iteration - 1]
            assert recorded == pytest.approx(expected, abs=1e-12), (name, iteration)
    assert len(set(history["valid"]["fastndcg_map@5"])) > 1  # the rounds changed the model


@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")  # LightGBM 4.7
def test_lgbm_ranker_early_stopping_on_map():
    train, valid = lambdarank().queries(0, 30), lambdarank().queries(30, 50)
    ranker = lgb.LGBMRanker(n_estimators=30, **dict(PARAMS, metric="None", learning_rate=0.5))
    ranker.fit(
        train.features,
        train.grades,
        group=train.sizes,
        eval_set=[(valid.features, valid.grades)],
        eval_group=[valid.sizes],
        eval_metric=eval_metric(measures="map@10", ties="stable"),
        callbacks=[lgb.early_stopping(3, verbose=False)],
    )
    values = ranker.evals_result_["valid_0"]["fastndcg_map@10"]
    assert ranker.best_iteration_ == int(np.argmax(values)) + 1 < len(values)
    scores = ranker.predict(valid.features, raw_score=True)  # the trees up to the best
    expected = fastndcg.evaluate(
        valid.grades, scores, offsets=valid.offsets, measures="map@10", ties="stable"
    )
    assert values[ranker.best_iteration_ - 1] == pytest.approx(expected.mean[0], abs=1e-12)


def test_measure_names_and_which_are_better_higher():
    metric = eval_metric(measures=["P.5,10", "Unjudged@5", "AP"])
    values = metric(np.array([0, 1, 2]), np.array([0.1, 0.2, 0.3]), None, np.array([3]))
    assert [(name, better) for name, _, better in values] == [
        ("fastndcg_P_5", True),
        ("fastndcg_P_10", True),
        ("fastndcg_Unjudged@5", False),
        ("fastndcg_AP", True),
    ]
    assert [value for _, value, _ in values] == [0.4, 0.2, 0.0, 1.0]
    assert repr(metric) == (
        "fastndcg.lightgbm.eval_metric(measures=['P.5,10', 'Unjudged@5', 'AP'])"
    )
    assert pickle.loads(pickle.dumps(metric))(np.array([1, 0]), np.array([0.1, 0.2]), None, [2])


def test_measure_errors():
    with pytest.raises(fastndcg.OptionTypeError, match="names its cutoff") as caught:
        eval_metric(k=10, measures=["map"])
    assert caught.value.option == "k"
    with pytest.raises(fastndcg.OptionError, match="unknown measure"):
        eval_metric(measures=["mapp@10"])
    with pytest.raises(fastndcg.OptionError, match="lightgbm"):  # NDCG only
        eval_metric(measures=["map@10"], preset="lightgbm")
