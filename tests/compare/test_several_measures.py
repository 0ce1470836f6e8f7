"""compare() over several measures: each measure a block, as each cutoff of NDCG is one."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from conftest import TEST_DATA
from hypothesis import given, settings
from hypothesis import strategies as st

import fastndcg
from fastndcg import InputError, OptionError, OptionTypeError

TREC = TEST_DATA / "real" / "trec_eval_test"
QRELS = TREC / "qrels.comment.test"
RUN = TREC / "results.comment.test"
MEASURES = ["nDCG@5", "P@3", "AP", "RR"]
TESTS = ["randomization", "t", "bootstrap", "wilcoxon"]


def systems(seed, n_queries, measures, **options):
    """Three systems of ``n_queries`` random lists, scored with ``fastndcg.evaluate``."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 8, size=n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    grades = rng.integers(0, 3, size=qid.size)
    results = {}
    for name, signal in (("a", 0.0), ("b", 0.5), ("c", 1.0)):
        scores = signal * grades + rng.random(qid.size)
        results[name] = fastndcg.evaluate(
            grades, scores, qid=qid, measures=measures, ties="stable", **options
        )
    return results


def one_measure(results, j):
    """The systems' results restricted to their ``j``-th measure."""
    return {
        name: fastndcg.MeasuresResult(
            measures=(r.measures[j],),
            per_query=r.per_query[:, j : j + 1].copy(),
            mean=r.mean[j : j + 1].copy(),
            query_ids=r.query_ids,
            n_skipped=r.n_skipped[j : j + 1].copy(),
            options=r.options,
        )
        for name, r in results.items()
    }


def same(a, b):
    """Bit-for-bit equal, NaN equal to NaN."""
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


@pytest.mark.parametrize("test", TESTS)
@settings(max_examples=8)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_queries=st.integers(1, 40),
    family=st.sampled_from(["measure", "all"]),
)
def test_each_measure_is_its_own_comparison(test, seed, n_queries, family):
    """Bit for bit: a comparison of 4 measures is 4 comparisons of one measure, block by block
    (the p-values before correction, and after it within each measure)."""
    results = systems(seed, n_queries, MEASURES, zero_idcg="skip")  # AP, nDCG: NaN for some
    options = dict(test=test, n_resamples=300, seed=seed % 1000)
    with warnings.catch_warnings():  # the bootstrap of fewer than 20 queries warns
        warnings.simplefilter("ignore")
        together = fastndcg.compare(results, family=family, **options)
        alone = [fastndcg.compare(one_measure(results, j), **options) for j in range(4)]
    assert together.measures == tuple(MEASURES) and together.of_measures
    assert together.cutoffs == (5, 3, None, None)
    m = len(together.pairs)
    for j, name in enumerate(MEASURES):
        block = together.rows[j * m : (j + 1) * m]
        assert len(block) == len(alone[j].rows)
        for got, expected in zip(block, alone[j].rows, strict=True):
            assert got["measure"] == name
            corrected = ("p_adjusted", "significant") if family == "all" else ()
            for key in set(expected) - set(corrected):
                assert same(got[key], expected[key]), (name, key, got[key], expected[key])
        means = [s for s in together.systems if s["measure"] == name]
        for got, expected in zip(means, alone[j].systems, strict=True):
            assert all(same(got[key], expected[key]) for key in expected)


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh", "by", "hommel", "holm-sidak"])
def test_family_all_equals_statsmodels_on_the_pooled_p_values(method):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    statsmodels_name = {"bh": "fdr_bh", "by": "fdr_by"}.get(method, method)
    results = systems(3, 25, MEASURES, zero_idcg="zero")
    comparison = fastndcg.compare(results, test="t", correction=method, family="all")
    p = np.array([r["p_value"] for r in comparison.rows])
    valid = ~np.isnan(p)  # a NaN p-value (no difference at all) is left out of the family
    assert p.size == len(MEASURES) * 3 and valid.sum() >= 10
    reject, adjusted, _, _ = multitest.multipletests(p[valid], method=statsmodels_name)
    got = np.array([r["p_adjusted"] for r in comparison.rows])
    np.testing.assert_allclose(got[valid], adjusted, rtol=1e-12, atol=1e-15)
    assert np.isnan(got[~valid]).all()
    assert [r["significant"] for r in comparison.rows] == list(
        np.isin(np.arange(p.size), np.flatnonzero(valid)[reject])
    )
    # within each measure (the default): one family per block of 3
    per_measure = fastndcg.compare(results, test="t", correction=method)
    for j in range(len(MEASURES)):
        block = slice(3 * j, 3 * j + 3)
        kept = valid[block]
        _, expected, _, _ = multitest.multipletests(p[block][kept], method=statsmodels_name)
        got = np.array([r["p_adjusted"] for r in per_measure.rows[block]])
        np.testing.assert_allclose(got[kept], expected, rtol=1e-12, atol=1e-15)
    assert comparison.family == "all" and per_measure.family == "measure"
    assert "one family of 12 across the 4 measure(s)" in comparison.family_description
    assert "(across every measure)" in repr(comparison)


def test_family_all_on_ndcg_cutoffs_pools_the_cutoffs():
    rng = np.random.default_rng(5)
    grades = rng.integers(0, 4, size=(40, 10))
    results = {
        name: fastndcg.ndcg(grades, grades * w + rng.random((40, 10)), k=[3, 10])
        for name, w in (("a", 0.0), ("b", 0.2), ("c", 0.4))
    }
    pooled = fastndcg.compare(results, baseline="a", test="t", family="all", correction="bh")
    p = np.array([r["p_value"] for r in pooled.rows])
    from fastndcg._compare.multitest import adjust

    assert [r["p_adjusted"] for r in pooled.rows] == list(adjust(p, "bh"))
    assert [r["measure"] for r in pooled.rows] == ["NDCG@3", "NDCG@3", "NDCG@10", "NDCG@10"]


def test_a_family_that_is_not_one_is_refused_with_the_nearest():
    results = systems(0, 10, ["P@3"])
    with pytest.raises(OptionError, match="family") as caught:
        fastndcg.compare(results, family="measures")
    assert caught.value.option == "family" and "measure" in str(caught.value)


def test_different_measures_are_refused_naming_them():
    results = systems(0, 10, ["P@3", "AP"])
    results["c"] = systems(0, 10, ["P@3", "RR"])["c"]
    with pytest.raises(InputError, match="same measures") as caught:
        fastndcg.compare(results)
    error = caught.value
    assert error.value == {"a": ["P@3", "AP"], "b": ["P@3", "AP"], "c": ["P@3", "RR"]}
    assert "['AP']" in str(error) and "['RR']" in str(error)
    assert "measures=['P@3', 'AP']" in error.fix and error.where == "results['c']"
    reordered = systems(0, 10, ["AP", "P@3"])["c"]
    results["c"] = reordered
    with pytest.raises(InputError, match="in another order"):
        fastndcg.compare(results)


def test_ndcg_and_measures_results_are_not_mixed():
    results = systems(0, 10, ["nDCG@10"])
    results["c"] = fastndcg.ndcg([[1, 0, 2]], [[0.3, 0.2, 0.1]], k=10)
    with pytest.raises(InputError, match="mix NDCGResults and MeasuresResults") as caught:
        fastndcg.compare(results)
    assert caught.value.value["c"] == "NDCGResult"
    assert "evaluate" in caught.value.fix


def test_every_output_names_each_measure_and_its_definition():
    pd = pytest.importorskip("pandas")
    results = systems(4, 30, ["P(rel=2)@3", "map", "num_ret", "gm_map"], relevance_level=1)
    comparison = fastndcg.compare(results, baseline="a", test="t")
    text = repr(comparison)
    for piece in (
        "P(rel=2)@3 (precision)",
        "map (average precision)",
        "num_ret (number of documents retrieved; compared on the mean of per-query values, "
        "its summary the sum)",
        "gm_map (average precision, averaged geometrically; compared on the mean of per-query "
        "values, its summary the geometric mean)",
        "relevance_level 1",
        "ties stable",
    ):
        assert piece in text, piece
    assert "\n  num_ret " in text  # a row of the table
    assert "measure" in comparison.to_markdown().splitlines()[2]
    assert "P(rel=2)@3 (precision)" in comparison.to_markdown().splitlines()[0]
    latex = comparison.to_latex()
    assert r"map & a & b" in latex and r"num\_ret (number" in latex
    data = json.loads(comparison.to_json())
    assert data["measures"] == ["P(rel=2)@3", "map", "num_ret", "gm_map"]
    assert [r["measure"] for r in data["comparisons"]][::2] == data["measures"]
    frame = comparison.to_pandas()
    assert isinstance(frame, pd.DataFrame) and frame["measure"].tolist()[:2] == ["P(rel=2)@3"] * 2
    assert frame.attrs["measure"] == comparison.measure
    table = comparison.per_query()
    assert set(table.column("measure").to_pylist()) == set(data["measures"])
    assert comparison.rows[4]["mean_baseline"] == pytest.approx(  # num_ret: 2 rows a measure
        np.nanmean(results["a"].per_query[:, 2])
    )


def test_a_preset_is_stated():
    comparison = fastndcg.compare_runs(
        QRELS, {"x": RUN, "y": RUN}, measures=["map", "P.10"], preset="trec_eval", test="t"
    )
    assert "preset trec_eval" in comparison.measure
    assert "P.10 (precision)" in comparison.measure


def test_explain_of_measures_takes_a_measure_and_the_ndcg_plots_are_refused():
    results = systems(0, 10, ["P@3", "AP"])
    comparison = fastndcg.compare(results, test="t")
    with pytest.raises(InputError, match="comparison is of measures"):
        comparison.explain(0, k=3)
    with pytest.raises(InputError, match="not the rows"):  # results alone: explain reads runs
        comparison.explain(0, measure="AP")
    with pytest.raises(OptionError, match="comparison is of measures"):
        comparison.plot("waterfall")


def test_compare_runs_with_measures_equals_compare_of_evaluate_run(tmp_path):
    second = tmp_path / "second.run"
    rng = np.random.default_rng(0)
    lines = []
    for line in RUN.read_text().splitlines():
        fields = line.split()
        fields[4] = f"{float(fields[4]) + rng.normal(0, 0.05):.5f}"
        lines.append(" ".join(fields[:6]))
    second.write_text("\n".join(lines) + "\n")
    measures = ["nDCG@10", "P@5", "AP", "recip_rank"]
    got = fastndcg.compare_runs(
        QRELS, {"rag": RUN, "second": second}, measures=measures, n_resamples=400, seed=3
    )
    by_hand = {
        name: fastndcg.evaluate_run(QRELS, run, measures=measures, missing="skip")
        for name, run in (("rag", RUN), ("second", second))
    }
    expected = fastndcg.compare(by_hand, n_resamples=400, seed=3)
    assert got.measures == tuple(measures)
    for a, b in zip(got.rows, expected.rows, strict=True):
        assert all(same(a[key], b[key]) for key in a)
    # the ndcg@10 block is the very comparison of compare_runs(k=10)
    ndcg = fastndcg.compare_runs(
        QRELS, {"rag": RUN, "second": second}, k=10, n_resamples=400, seed=3
    )
    row, ndcg_row = got.rows[0], ndcg.rows[0]
    assert row["delta"] == ndcg_row["delta"] and row["wins"] == ndcg_row["wins"]


def test_compare_runs_measures_options_are_checked_before_reading():
    with pytest.raises(OptionError, match="ndgc@10"):
        fastndcg.compare_runs("no-such-qrels", ["x.run", "y.run"], measures=["ndgc@10"])
    with pytest.raises(OptionTypeError, match="k is NDCG's cutoff") as caught:
        fastndcg.compare_runs("no-such-qrels", ["x.run", "y.run"], measures=["P@5"], k=10)
    assert caught.value.option == "k"
    with pytest.raises(OptionTypeError, match="unknown option"):
        fastndcg.compare_runs("no-such-qrels", ["x.run", "y.run"], relevance_level=2)
    level = fastndcg.compare_runs(
        QRELS, {"x": RUN, "y": RUN}, measures=["P@5"], relevance_level=2, test="t"
    )
    assert "relevance_level 2" in level.measure


def test_compare_table_refuses_measures_saying_what_to_do():
    table = {"qid": [1, 1], "grade": [1, 0], "a": [0.2, 0.1], "b": [0.1, 0.2]}
    with pytest.raises(OptionTypeError, match="it takes no measures") as caught:
        fastndcg.compare_table(table, scores=["a", "b"], measures=["P@1"])
    assert caught.value.option == "measures" and "fastndcg.evaluate" in caught.value.fix


def test_the_forest_plot_draws_every_measure(tmp_path):
    pytest.importorskip("matplotlib")
    comparison = fastndcg.compare(systems(1, 30, ["P@3", "AP"]), baseline="a", test="t")
    figure = comparison.plot("forest", tmp_path / "forest.png")
    labels = [label.get_text() for label in figure.axes[0].get_yticklabels()]
    assert labels == ["b vs a  P@3", "c vs a  P@3", "b vs a  AP", "c vs a  AP"]
    assert (tmp_path / "forest.png").stat().st_size > 0
