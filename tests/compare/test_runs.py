"""fastndcg.compare: alignment, families and corrections, counts, tables and errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from compare_data import result, three_runs
from scipy import stats

import fastndcg
from fastndcg import InputError, InputTypeError, OptionError, OptionTypeError


# ---- families ---------------------------------------------------------------------------
def test_all_pairs_in_the_given_order():
    runs = three_runs()
    comparison = fastndcg.compare(runs, test="t")
    pairs = [(r["baseline"], r["system"]) for r in comparison.rows]
    assert pairs == [("bm25", "dense"), ("bm25", "hybrid"), ("dense", "hybrid")]
    row = comparison.rows[2]
    expected = runs["hybrid"].per_query[:, 0] - runs["dense"].per_query[:, 0]
    assert row["delta"] == pytest.approx(expected.mean(), rel=1e-14)
    described = comparison.family_description
    assert comparison.family == "measure"
    assert "all pairs" in described and "3 comparisons per measure" in described


def test_baseline_against_each_other_system():
    runs = three_runs()
    comparison = fastndcg.compare(runs, baseline="hybrid", test="t")
    pairs = [(r["baseline"], r["system"]) for r in comparison.rows]
    assert pairs == [("hybrid", "bm25"), ("hybrid", "dense")]
    expected = runs["bm25"].per_query[:, 0] - runs["hybrid"].per_query[:, 0]
    assert comparison.rows[0]["delta"] == pytest.approx(expected.mean(), rel=1e-14)
    assert "baseline 'hybrid'" in comparison.family_description


# ---- counts, skipped and missing queries -------------------------------------------------
def test_wins_ties_losses_effect_size_and_skipped_queries():
    a = [0.5, 0.2, np.nan, 0.7, 0.1, 0.3]
    b = [0.6, 0.2, 0.4, 0.5, np.nan, 0.9]
    comparison = fastndcg.compare({"a": result(a), "b": result(b)}, test="t")
    row = comparison.rows[0]
    # used: queries 0, 1, 3, 5 -> differences 0.1, 0, -0.2, 0.6
    assert (row["wins"], row["ties"], row["losses"]) == (2, 1, 1)
    assert row["n_queries"] == 4 and row["n_skipped"] == 2
    d = np.array([0.6 - 0.5, 0.0, 0.5 - 0.7, 0.9 - 0.3])
    assert row["delta"] == pytest.approx(d.mean(), rel=1e-14)
    assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-13)
    assert row["mean_baseline"] == pytest.approx(np.mean([0.5, 0.2, 0.7, 0.3]), rel=1e-15)
    assert row["mean_system"] == pytest.approx(np.mean([0.6, 0.2, 0.5, 0.9]), rel=1e-15)
    systems = {s["system"]: s for s in comparison.systems}
    assert systems["a"]["n_queries"] == 5 and systems["a"]["n_skipped"] == 1
    assert systems["b"]["mean"] == pytest.approx(np.mean([0.6, 0.2, 0.4, 0.5, 0.9]))


def test_effect_size_is_nan_without_spread():
    comparison = fastndcg.compare(
        {"a": result([0.25, 0.5, 0.75]), "b": result([0.5, 0.75, 1.0])}, test="randomization"
    )
    row = comparison.rows[0]
    assert math.isnan(row["effect_size"]) and row["wins"] == 3


def test_missing_error_names_counts_and_ids():
    runs = {
        "a": result([0.1, 0.2, 0.3, 0.4], ids=["q1", "q2", "q3", "q4"]),
        "b": result([0.1, 0.2], ids=["q2", "q9"]),
    }
    with pytest.raises(InputError, match="missing='error'") as info:
        fastndcg.compare(runs)
    assert info.value.option is None and info.value.value == {"a": 1, "b": 3}
    message = str(info.value)
    assert "'a' lacks 1 (first: 'q9')" in message
    assert "'b' lacks 3 (first: 'q1', 'q3', 'q4')" in message
    assert "missing='zero'" in message and "missing='intersection'" in message


def test_missing_zero_scores_absent_queries_zero():
    runs = {
        "a": result([0.5, 0.2, 0.3], ids=["q1", "q2", "q3"]),
        "b": result([0.4, 0.9], ids=["q3", "q4"]),
    }
    comparison = fastndcg.compare(runs, missing="zero", test="t")
    assert list(comparison.query_ids) == ["q1", "q2", "q3", "q4"]
    np.testing.assert_array_equal(comparison.values[0, :, 0], [0.5, 0.2, 0.3, 0.0])
    np.testing.assert_array_equal(comparison.values[1, :, 0], [0.0, 0.0, 0.4, 0.9])
    assert comparison.n_missing == {"a": 1, "b": 2}
    row = comparison.rows[0]
    assert row["n_queries"] == 4
    assert row["delta"] == pytest.approx(np.mean([-0.5, -0.2, 0.1, 0.9]), rel=1e-14)
    assert "scored 0 where missing: 'a' 1, 'b' 2" in repr(comparison)


def test_missing_intersection_keeps_common_queries():
    runs = {
        "a": result([0.5, 0.2, 0.3, 0.8], ids=[1, 2, 3, 4]),
        "b": result([0.4, 0.9, 0.1], ids=[4, 3, 7]),
    }
    comparison = fastndcg.compare(runs, missing="intersection", test="t")
    assert list(comparison.query_ids) == [3, 4]
    np.testing.assert_array_equal(comparison.values[:, :, 0], [[0.3, 0.8], [0.9, 0.4]])
    assert comparison.n_dropped == 3 and comparison.rows[0]["n_queries"] == 2
    assert "3 dropped" in repr(comparison)
    assert json.loads(comparison.to_json())["n_dropped"] == 3


def test_queries_are_paired_by_id_not_position():
    ids = np.array([10, 20, 30, 40, 50])
    a = np.array([0.1, 0.5, 0.2, 0.9, 0.4])
    order = np.array([3, 0, 4, 1, 2])
    b = a + np.array([0.01, 0.02, 0.03, 0.04, 0.05])
    runs = {"a": result(a, ids=ids), "b": result(b[order], ids=ids[order])}
    row = fastndcg.compare(runs, test="t").rows[0]
    assert row["delta"] == pytest.approx(0.03, rel=1e-12) and row["wins"] == 5


def test_caller_arrays_are_not_modified():
    runs = three_runs(40)
    runs["bm25"].per_query[3, 0] = np.nan
    before = {name: r.per_query.copy() for name, r in runs.items()}
    flags = {name: r.per_query.flags.writeable for name, r in runs.items()}
    comparison = fastndcg.compare(runs, n_resamples=200)
    comparison.values[:] = -1.0
    for name, r in runs.items():
        np.testing.assert_array_equal(r.per_query, before[name])
        assert r.per_query.flags.writeable == flags[name]


# ---- the tests and their outputs --------------------------------------------------------
def shifted_pair(n, shift, seed):
    """A baseline and a system shifted by ``shift`` plus noise; a tenth of the queries tied."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.0, 1.0, n)
    other = base + rng.normal(shift, 0.1, n)
    other[: n // 10] = base[: n // 10]
    return base, other


@pytest.mark.parametrize(
    ("n", "shift", "ci"),
    [(2, 0.05, 0.95), (3, 0.0, 0.5), (12, 0.02, 0.99), (1000, 0.01, 0.95), (4000, 0.055, 0.9)],
)
def test_t_test_equals_ttest_rel(n, shift, ci):
    """statistic, p-value (down to 1e-200) and interval of test="t": scipy's ttest_rel."""
    base, other = shifted_pair(n, shift, seed=n)
    row = fastndcg.compare({"b": result(base), "o": result(other)}, test="t", ci=ci).rows[0]
    expected = stats.ttest_rel(other, base)
    low, high = expected.confidence_interval(confidence_level=ci)
    close = dict(rel=1e-15, abs=0)
    assert row["statistic"] == pytest.approx(expected.statistic, **close)
    assert row["p_value"] == pytest.approx(expected.pvalue, **close)
    assert row["ci_low"] == pytest.approx(low, **close)
    assert row["ci_high"] == pytest.approx(high, **close)
    assert row["delta"] == pytest.approx(np.mean(other - base), **close)
    if n == 4000:
        assert 0 < row["p_value"] < 1e-200


def test_system_means_carry_the_t_interval_of_ttest_1samp():
    values = np.random.default_rng(4).uniform(0, 1, 77)
    runs = {"a": result(values), "b": result(values[::-1].copy())}
    system = fastndcg.compare(runs, test="t", ci=0.9).systems[0]
    low, high = stats.ttest_1samp(values, 0.0).confidence_interval(0.9)
    assert system["system"] == "a" and system["n_queries"] == 77
    assert (system["ci_low"], system["ci_high"]) == (pytest.approx(low), pytest.approx(high))


def test_import_fastndcg_leaves_scipy_to_the_comparison():
    """scipy is a dependency, imported when a test needs it, not by ``import fastndcg``."""
    code = "import sys, fastndcg; print('scipy' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"


def test_wilcoxon_equals_scipy():
    runs = three_runs(50)
    comparison = fastndcg.compare(runs, baseline="bm25", test="wilcoxon", n_resamples=300)
    for row in comparison.rows:
        d = runs[row["system"]].per_query[:, 0] - runs["bm25"].per_query[:, 0]
        assert row["p_value"] == stats.wilcoxon(d).pvalue
        assert row["ci_low"] < row["delta"] < row["ci_high"]


@pytest.mark.parametrize("test", ["randomization", "wilcoxon"])
def test_randomization_and_wilcoxon_share_the_sign_flip_interval(test):
    runs = three_runs(90)
    reference = fastndcg.compare(runs, test="randomization", n_resamples=400, seed=3)
    other = fastndcg.compare(runs, test=test, n_resamples=400, seed=3)
    bootstrap = fastndcg.compare(runs, test="bootstrap", n_resamples=400, seed=3)
    for r, o, b in zip(reference.rows, other.rows, bootstrap.rows, strict=True):
        assert (o["ci_low"], o["ci_high"]) == (r["ci_low"], r["ci_high"])
        assert (b["ci_low"], b["ci_high"]) != (r["ci_low"], r["ci_high"])
        assert o["ci_low"] < o["delta"] < o["ci_high"]


def test_sign_flip_interval_covers_a_shift_about_as_often_as_its_level():
    """Coverage under the shift model (symmetric errors): 95% intervals of 200 experiments."""
    rng = np.random.default_rng(8)
    covered = 0
    for experiment in range(200):
        base = rng.uniform(0.2, 0.8, 60)
        other = base + 0.03 + rng.laplace(0, 0.05, 60)
        comparison = fastndcg.compare(
            {"a": result(base), "b": result(other)}, n_resamples=400, seed=experiment
        )
        row = comparison.rows[0]
        covered += row["ci_low"] <= 0.03 <= row["ci_high"]
    assert 180 <= covered <= 199  # 0.95 * 200 = 190, binomial sd 3.1


def test_seed_changes_and_reproduces_the_draws():
    runs = three_runs(200)
    one = fastndcg.compare(runs, n_resamples=300, seed=1)
    again = fastndcg.compare(runs, n_resamples=300, seed=1)
    other = fastndcg.compare(runs, n_resamples=300, seed=2)
    assert [r["p_value"] for r in one.rows] == [r["p_value"] for r in again.rows]
    assert [r["ci_low"] for r in one.rows] != [r["ci_low"] for r in other.rows]


def test_randomization_p_value_bounds():
    runs = three_runs(200)
    comparison = fastndcg.compare(runs, baseline="bm25", n_resamples=999)
    row = comparison.rows[0]  # dense is far better: no sign vector reaches it
    assert row["p_value"] == 1 / 1000 and not row["exact"] and row["resamples"] == 999
    assert row["statistic"] == pytest.approx(row["delta"] * row["n_queries"], rel=1e-12)


def test_docstring_examples():
    import doctest

    from fastndcg._compare import runs as _compare

    failures, tried = doctest.testmod(_compare, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


# ---- errors -------------------------------------------------------------------------------
BAD_OPTIONS = [
    (
        {"test": "x"},
        OptionError,
        "unknown test='x'; valid values are 'randomization', 't', 'bootstrap', 'wilcoxon' "
        "\\(aliases: 'student', 'fisher'\\)$",
    ),
    (
        {"correction": "sidack"},
        OptionError,
        "unknown correction='sidack'; valid values are 'holm', 'bonferroni', 'bh', 'by', "
        "'sidak', 'holm-sidak', 'hommel' \\(aliases: 'fdr_bh', 'fdr_by'\\), or None "
        "\\(no correction\\); nearest: 'sidak'",
    ),
    ({"alternative": 1}, OptionError, "unknown alternative=1"),
    ({"continuity": "yes"}, OptionTypeError, "continuity must be True or False"),
    ({"n_resamples": 10**9 + 1}, OptionError, "n_resamples must be at most 1,000,000,000"),
    (
        {"missing": "drop"},
        OptionError,
        "unknown missing='drop'; valid values are 'error', 'zero', 'intersection'",
    ),
    ({"backend": "gpu"}, OptionError, "unknown backend='gpu'; valid values are"),
    ({"n_resamples": 0}, OptionError, "n_resamples must be a positive int; got 0"),
    ({"n_resamples": -5}, OptionError, "n_resamples must be a positive int; got -5"),
    ({"n_resamples": 10.0}, OptionTypeError, "n_resamples must be a positive int; got 10.0"),
    ({"n_resamples": True}, OptionTypeError, "n_resamples must be a positive int; got True"),
    ({"n_resamples": None}, OptionTypeError, "n_resamples must be a positive int; got None"),
    ({"alpha": 0}, OptionError, r"alpha must be in \(0, 1\) \(exclusive\); got 0"),
    ({"alpha": 1.0}, OptionError, r"alpha must be in \(0, 1\)"),
    ({"alpha": "0.05"}, OptionTypeError, "alpha must be a number in"),
    ({"alpha": True}, OptionTypeError, "alpha must be a number in"),
    ({"ci": 1.5}, OptionError, r"ci must be in \(0, 1\) \(exclusive\); got 1.5"),
    ({"ci": -0.1}, OptionError, r"ci must be in \(0, 1\)"),
    ({"ci": None}, OptionTypeError, "ci must be a number in"),
    ({"seed": -1}, OptionError, r"seed must be an int with 0 <= seed < 2\*\*64; got -1"),
    ({"seed": 2**64}, OptionError, r"seed must be an int with 0 <= seed < 2\*\*64"),
    ({"seed": 1.5}, OptionTypeError, "seed must be an int"),
    ({"seed": None}, OptionTypeError, "seed must be an int"),
    ({"n_threads": 0}, OptionError, "n_threads must be a positive int"),
    (
        {"baseline": "nope"},
        OptionError,
        "unknown baseline='nope'; the systems are 'bm25', 'dense', 'hybrid'",
    ),
    ({"baseline": 0}, OptionTypeError, "baseline must be a system name"),
]


@pytest.mark.parametrize(("options", "error", "message"), BAD_OPTIONS)
def test_bad_options(options, error, message):
    with pytest.raises(error, match=message) as info:
        fastndcg.compare(three_runs(10), **options)
    option = next(iter(options))
    assert info.value.option == option
    if error is OptionTypeError:
        assert isinstance(info.value, TypeError)
    assert "`" in info.value.message  # the option is marked for each front end


def test_largest_seed_is_accepted():
    runs = three_runs(10)
    one = fastndcg.compare(runs, seed=2**64 - 1, n_resamples=20)
    again = fastndcg.compare(runs, seed=2**64 - 1, n_resamples=20)
    p_values = [r["p_value"] for r in one.rows]
    assert all(0 < p <= 1 for p in p_values) and one.seed == 2**64 - 1
    assert p_values == [r["p_value"] for r in again.rows]


def test_bad_results():
    with pytest.raises(InputError, match="results is empty"):
        fastndcg.compare({})
    with pytest.raises(InputError, match="at least 2 systems; got 1 \\('a'\\)"):
        fastndcg.compare({"a": result([0.1])})
    with pytest.raises(InputTypeError, match="results must be a mapping"):
        fastndcg.compare([result([0.1]), result([0.2])])
    with pytest.raises(InputTypeError, match=r"results\['b'\] must be an NDCGResult"):
        fastndcg.compare({"a": result([0.1]), "b": [0.2]})
    with pytest.raises(InputTypeError, match="system names must be strings; got 3"):
        fastndcg.compare({"a": result([0.1]), 3: result([0.2])})
    with pytest.raises(InputError, match=r"same cutoffs .*'a': k=\(10,\); 'b': k=\(5,\)") as info:
        fastndcg.compare({"a": result([0.1]), "b": result([0.2], k=(5,))})
    assert info.value.option is None and info.value.where == "results['b']"
    with pytest.raises(InputError, match="list a query id more than once \\('q1'\\)"):
        fastndcg.compare(
            {"a": result([0.1, 0.2], ids=["q1", "q1"]), "b": result([0.2, 0.3], ids=["q1", "q2"])}
        )
    with pytest.raises(InputTypeError, match="query ids have different types"):
        fastndcg.compare({"a": result([0.1], ids=["1"]), "b": result([0.2], ids=[1])})


def test_empty_results_give_nan_rows():
    comparison = fastndcg.compare({"a": result([]), "b": result([])}, n_resamples=10)
    row = comparison.rows[0]
    assert row["n_queries"] == 0 and math.isnan(row["p_value"]) and not row["significant"]
