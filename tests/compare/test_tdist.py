"""Student's t without scipy: p-values and intervals equal scipy's to 1e-12."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from compare_data import result

import fastndcg
from fastndcg._compare import tdist as _tdist

scipy_stats = pytest.importorskip("scipy.stats")
scipy_special = pytest.importorskip("scipy.special")

RTOL = 1e-12


# scipy.special.stdtr is itself off by up to 4e-11 for df=1 and |t| < 1e-4 (the Cauchy case;
# checked against mpmath below), so the grid compared with scipy leaves that corner out.
DFS = [1, 2, 3, 4, 5, 9, 10, 11, 29, 30, 99, 100, 199, 200, 201, 999, 1e4, 99_999, 999_999, 4e6]
TS = [1e-3, 0.05, 0.3, 0.9, 1.0, 1.7, 1.96, 2.5, 3.3, 5.0, 8.0, 13.0, 30.0, 60.0, 200.0, 1e4, 1e9]


@pytest.mark.parametrize("df", DFS)
def test_two_sided_p_equals_scipy(df):
    for t in TS:
        expected = 2.0 * scipy_special.stdtr(df, -t)
        if expected < 1e-300:
            continue
        assert _tdist.two_sided_p(t, float(df)) == pytest.approx(expected, rel=RTOL, abs=0)
        assert _tdist.two_sided_p(-t, float(df)) == pytest.approx(expected, rel=RTOL, abs=0)


def test_tiny_p_values_equal_scipy():
    """p-values down to 1e-300: their relative error stays at 1e-12."""
    smallest = 1.0
    for df in (3, 30, 300, 3000, 30_000, 300_000, 3e6):
        for t in np.geomspace(5, 1e150, 60):
            expected = 2.0 * scipy_special.stdtr(df, -t)
            if expected < 1e-300:
                break
            assert _tdist.two_sided_p(float(t), float(df)) == pytest.approx(expected, rel=RTOL)
            smallest = min(smallest, expected)
    assert smallest < 1e-290


def test_random_grid_equals_scipy():
    rng = np.random.default_rng(7)
    for _ in range(3000):
        df = float(np.floor(10 ** rng.uniform(0.3, 7)))  # df >= 2
        t = float(10 ** rng.uniform(-5, 2.5))
        expected = 2.0 * scipy_special.stdtr(df, -t)
        if expected < 1e-300:
            continue
        assert _tdist.two_sided_p(t, df) == pytest.approx(expected, rel=RTOL), (df, t)


def test_cauchy_corner_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    for t in (1e-12, 1e-8, 1e-6, 3e-5):
        exact = 1 - 2 * mpmath.atan(mpmath.mpf(t)) / mpmath.pi  # df = 1: Cauchy
        assert _tdist.two_sided_p(t, 1.0) == pytest.approx(float(exact), rel=1e-15)


def test_special_values():
    assert _tdist.two_sided_p(0.0, 5.0) == 1.0
    assert _tdist.two_sided_p(math.inf, 5.0) == 0.0
    assert _tdist.two_sided_p(-math.inf, 5.0) == 0.0
    assert math.isnan(_tdist.two_sided_p(math.nan, 5.0))
    assert math.isnan(_tdist.two_sided_p(1.0, 0.0))
    assert _tdist.sf(0.0, 3.0) == 0.5
    assert _tdist.sf(-2.0, 3.0) == pytest.approx(1.0 - _tdist.sf(2.0, 3.0), rel=1e-15)
    assert math.isnan(_tdist.isf(0.0, 3.0)) and math.isnan(_tdist.isf(1.0, 3.0))
    assert _tdist.isf(0.5, 3.0) == 0.0


@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 30, 100, 1000, 1e5, 999_999, 3e6])
def test_quantiles_equal_scipy(df):
    for q in (0.4, 0.25, 0.1, 0.05, 0.025, 0.01, 0.005, 5e-4, 1e-6, 1e-10, 1e-20, 1e-50):
        expected = -scipy_special.stdtrit(df, q)
        assert _tdist.isf(q, float(df)) == pytest.approx(expected, rel=RTOL), (df, q)
        if q >= 1e-3:  # 1 - q is exact enough for the lower quantile to be compared
            lower = scipy_special.stdtrit(df, 1.0 - q)
            assert _tdist.isf(1.0 - q, float(df)) == pytest.approx(-lower, rel=RTOL)


def pair(n, shift, rng, ties=0):
    base = rng.uniform(0.0, 1.0, n)
    other = base + rng.normal(shift, 0.1, n)
    other[:ties] = base[:ties]
    return base, other


@pytest.mark.parametrize(
    ("n", "shift"),
    [
        (2, 0.05),
        (3, 0.0),
        (5, 0.1),
        (12, 0.02),
        (50, 0.03),
        (200, 0.0),
        (1000, 0.01),
        (1000, 0.2),
        (20_000, 0.003),
        (100_000, 0.05),
        (300_000, 0.2),
    ],
)
@pytest.mark.parametrize("ci", [0.95, 0.99, 0.5])
def test_compare_t_equals_ttest_rel(n, shift, ci):
    """p-values and CI bounds of test="t" equal scipy.stats.ttest_rel's (down to p ~ 1e-300)."""
    rng = np.random.default_rng(n + int(shift * 1000))
    base, other = pair(n, shift, rng, ties=n // 10)
    comparison = fastndcg.compare({"base": result(base), "other": result(other)}, test="t", ci=ci)
    row = comparison.rows[0]
    expected = scipy_stats.ttest_rel(other, base)
    assert row["statistic"] == pytest.approx(expected.statistic, rel=1e-13)
    assert row["p_value"] == pytest.approx(expected.pvalue, rel=RTOL, abs=0)
    low, high = expected.confidence_interval(confidence_level=ci)
    # a bound is mean +- q * se: compare it on the scale of its two terms (a bound near zero
    # has no relative precision in either implementation)
    scale = abs(row["delta"]) + abs(high - low)
    assert row["ci_low"] == pytest.approx(low, rel=RTOL, abs=RTOL * scale)
    assert row["ci_high"] == pytest.approx(high, rel=RTOL, abs=RTOL * scale)
    assert row["delta"] == pytest.approx(np.mean(other - base), rel=1e-13)


def test_tiny_p_value_of_a_large_difference_equals_scipy():
    rng = np.random.default_rng(3)
    base, other = pair(4000, 0.055, rng)
    comparison = fastndcg.compare({"base": result(base), "other": result(other)}, test="t")
    expected = scipy_stats.ttest_rel(other, base).pvalue
    assert 0 < expected < 1e-200
    assert comparison.rows[0]["p_value"] == pytest.approx(expected, rel=RTOL)


def test_system_means_carry_the_t_interval():
    rng = np.random.default_rng(4)
    values = rng.uniform(0, 1, 77)
    comparison = fastndcg.compare(
        {"a": result(values), "b": result(values[::-1].copy())}, test="t", ci=0.9
    )
    low, high = scipy_stats.ttest_1samp(values, 0.0).confidence_interval(0.9)
    row = comparison.systems[0]
    assert row["system"] == "a" and row["n_queries"] == 77
    assert row["ci_low"] == pytest.approx(low, rel=RTOL)
    assert row["ci_high"] == pytest.approx(high, rel=RTOL)


def test_t_needs_no_scipy():
    """test="t" runs with scipy blocked; test="wilcoxon" names the install command."""
    code = textwrap.dedent(
        """
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "scipy":
                    raise ImportError(f"No module named {name!r}")
        sys.meta_path.insert(0, Block())
        import numpy as np, fastndcg
        def result(v):
            v = np.asarray(v, float).reshape(-1, 1)
            return fastndcg.NDCGResult(k=(10,), per_query=v, dcg=v, idcg=v, mean=v.mean(0),
                                       query_ids=np.arange(len(v)), n_skipped=np.zeros(1))
        runs = {"a": result([0.1, 0.5, 0.3, 0.9]), "b": result([0.2, 0.6, 0.2, 1.0])}
        print(fastndcg.compare(runs, test="t").rows[0]["p_value"])
        try:
            fastndcg.compare(runs, test="wilcoxon")
        except ImportError as exc:
            print(exc)
        print("scipy" in sys.modules)
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    p, message, loaded = run.stdout.strip().splitlines()
    a, b = np.array([0.1, 0.5, 0.3, 0.9]), np.array([0.2, 0.6, 0.2, 1.0])
    assert float(p) == pytest.approx(scipy_stats.ttest_rel(b, a).pvalue, rel=RTOL)
    assert "pip install scipy" in message
    assert loaded == "False"
