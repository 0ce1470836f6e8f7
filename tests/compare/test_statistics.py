"""The comparison's statistics against scipy, statsmodels and enumeration: alternatives, the
bootstrap's intervals, Wilcoxon's options, the corrections; intervals that agree with their
tests and cover as often as their level; small samples; the bound on n_resamples; Ctrl-C."""

from __future__ import annotations

import itertools
import json
import math
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
from compare_data import result, three_runs
from conftest import BACKENDS, COMMAND
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import fastndcg
from fastndcg import OptionError
from fastndcg._backends import get_backend
from fastndcg._compare import rng as _rng
from fastndcg._compare import significance as _tests

ALTERNATIVES = ("two-sided", "greater", "less")
ENGINE = get_backend(BACKENDS[0])


def pair(d, base=None):
    """Two systems whose differences (second minus first) are ``d``."""
    d = np.asarray(d, dtype=float)
    base = np.zeros(d.size) if base is None else base  # zeros: the differences are d exactly
    return {"a": result(base), "b": result(base + d)}


def brute_force_p(d, alternative):
    """The sign-flip p-value by enumerating every sign vector (scipy's tolerance for ties)."""
    observed = sum(d)
    tolerance = 100 * np.finfo(float).eps * abs(observed)
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        flipped = sum(s * x for s, x in zip(signs, d, strict=True))
        if alternative == "greater":
            hits += flipped >= observed - tolerance
        elif alternative == "less":
            hits += flipped <= observed + tolerance
        else:
            hits += abs(flipped) >= abs(observed) - tolerance
    return hits / 2 ** len(d)


# ---- the tests against scipy ------------------------------------------------------------
@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n", [2, 9, 300])
def test_t_test_alternatives_equal_ttest_rel(alternative, n):
    rng = np.random.default_rng(n)
    base, other = rng.uniform(0, 1, n), rng.uniform(0, 1, n) + 0.02
    row = fastndcg.compare(
        {"b": result(base), "o": result(other)}, test="student", alternative=alternative, ci=0.9
    ).rows[0]
    expected = stats.ttest_rel(other, base, alternative=alternative)
    low, high = expected.confidence_interval(confidence_level=0.9)
    assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-14)
    assert row["statistic"] == pytest.approx(expected.statistic, rel=1e-14)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low, rel=1e-14), pytest.approx(high))


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("continuity", [False, True])
def test_wilcoxon_options_equal_scipy(alternative, zero_method, continuity):
    rng = np.random.default_rng(3)
    for n in (8, 40, 120):  # exact and normal approximations; ties and zeros
        d = np.round(rng.normal(0.03, 0.2, n), 1)
        row = fastndcg.compare(
            pair(d),
            test="wilcoxon",
            alternative=alternative,
            zero_method=zero_method,
            continuity=continuity,
            n_resamples=200,
        ).rows[0]
        expected = stats.wilcoxon(
            d, zero_method=zero_method, correction=continuity, alternative=alternative
        )
        assert row["p_value"] == expected.pvalue and row["statistic"] == expected.statistic
        zeros = int(np.count_nonzero(d == 0))
        assert row["ties"] == zeros and row["n_queries"] == n
        assert row["n_tested"] == (n - zeros if zero_method == "wilcox" else n)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@settings(max_examples=20)
@given(
    d=st.lists(st.sampled_from([-0.3, -0.1, 0.0, 0.1, 0.2, 0.3, 0.5]), min_size=1, max_size=9),
    alternative=st.sampled_from(ALTERNATIVES),
)
def test_wilcoxon_sign_flips_of_ties_and_zeros_equal_scipy(zero_method, d, alternative):
    """Ties or zeros in at most 13 differences: scipy enumerates the sign vectors in Python,
    fastndcg by one product of matrices, with the same bits."""
    d = np.array(d)
    got = _tests.wilcoxon(d, alternative, zero_method, continuity=False)
    if not np.any(d):
        assert all(math.isnan(x) for x in got)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = stats.wilcoxon(d, zero_method=zero_method, alternative=alternative)
    assert got == (expected.statistic, expected.pvalue)


@pytest.mark.parametrize("n", [13, 14])  # the last sample scipy enumerates, the first it does not
def test_wilcoxon_enumerates_as_far_as_scipy(n):
    d = np.round(np.random.default_rng(n).normal(0.05, 0.2, n), 1)
    assert np.any(d == 0) or np.unique(np.abs(d)).size < n  # ties or zeros
    expected = stats.wilcoxon(d, alternative="greater")
    assert _tests.wilcoxon(d, "greater") == (expected.statistic, expected.pvalue)


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_bootstrap_intervals_equal_scipy_on_the_same_draws(method, alternative):
    """scipy.stats.bootstrap, handed fastndcg's bootstrap means (bootstrap_result, no draws
    of its own), computes the same percentile, basic and BCa intervals."""
    d = np.random.default_rng(4).gamma(2.0, 0.05, 60) - 0.08  # skewed: BCa moves
    resamples, seed = 3000, 7
    values = np.ascontiguousarray(d[None, :])
    key, bounds = _rng.bootstrap_key(seed), _rng.poisson_bounds(d.size)
    means = ENGINE.bootstrap_sums(values, key, bounds, resamples)[:, 0] / d.size
    previous = stats._resampling.BootstrapResult(
        confidence_interval=None, bootstrap_distribution=means, standard_error=None
    )
    expected = stats.bootstrap(
        (d,),
        np.mean,
        n_resamples=0,
        bootstrap_result=previous,
        method=method,
        alternative=alternative,
        confidence_level=0.9,
    ).confidence_interval
    row = fastndcg.compare(
        pair(d),
        test="bootstrap",
        ci_method=method,
        alternative=alternative,
        ci=0.9,
        n_resamples=resamples,
        seed=seed,
    ).rows[0]
    assert row["ci_low"] == pytest.approx(expected.low, rel=1e-12, abs=1e-15)
    assert row["ci_high"] == pytest.approx(expected.high, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_randomization_equals_permutation_test_and_enumeration(alternative):
    """Exact (2**n <= n_resamples): scipy's paired permutation test, and every sign vector."""
    rng = np.random.default_rng(5)
    for n in (2, 4, 9):
        base = rng.uniform(0, 1, n)
        other = base + np.round(rng.normal(0.05, 0.2, n), 2)
        row = fastndcg.compare(
            {"a": result(base), "b": result(other)}, alternative=alternative, n_resamples=1024
        ).rows[0]
        expected = stats.permutation_test(
            (other, base),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            alternative=alternative,
            n_resamples=1024,
        )
        assert row["exact"] and row["resamples"] == 2**n
        assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-12)
        assert row["p_value"] == brute_force_p(list(other - base), alternative)


# ---- corrections: statsmodels ----------------------------------------------------------
@pytest.mark.parametrize(
    ("ours", "statsmodels_name"),
    [
        ("sidak", "sidak"),
        ("holm-sidak", "holm-sidak"),
        ("hommel", "hommel"),
        ("by", "fdr_by"),
        ("fdr_by", "fdr_by"),
        ("fdr_bh", "fdr_bh"),
        ("holm", "holm"),
        ("bonferroni", "bonferroni"),
    ],
)
def test_corrections_equal_multipletests(ours, statsmodels_name):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(6)
    base = rng.uniform(0, 1, 80)
    runs = {"base": result(base)}
    for s in range(6):
        runs[f"s{s}"] = result(np.clip(base + rng.normal(0.01 * s, 0.1, 80), 0, 1))
    comparison = fastndcg.compare(runs, baseline="base", test="t", correction=ours)
    raw = np.array([r["p_value"] for r in comparison.rows])
    expected = multitest.multipletests(raw, alpha=0.05, method=statsmodels_name)
    np.testing.assert_allclose([r["p_adjusted"] for r in comparison.rows], expected[1], rtol=1e-12)
    assert [r["significant"] for r in comparison.rows] == list(expected[0])
    assert comparison.correction == ours.removeprefix("fdr_")


# ---- names: aliases and the nearest ones ------------------------------------------------
def test_other_tools_names_are_aliases():
    runs = three_runs(30)
    student = fastndcg.compare(runs, test="student")
    assert student.test == "t" and student.rows == fastndcg.compare(runs, test="t").rows
    fisher = fastndcg.compare(runs, test="fisher", n_resamples=100)
    assert fisher.test == "randomization"
    assert fastndcg.compare(runs, test="bootstrap", ci_method="BCa").ci_method == "bca"


@pytest.mark.parametrize(
    ("options", "nearest"),
    [
        ({"test": "boostrap"}, "nearest: 'bootstrap'"),
        ({"test": "Student"}, "nearest: 'student'"),
        ({"correction": "holm_sidak"}, "nearest: 'holm-sidak', 'sidak'"),
        ({"correction": "fdr-bh"}, "nearest: 'fdr_bh', 'fdr_by'"),
        ({"alternative": "two.sided"}, "nearest: 'two-sided'"),
        ({"ci_method": "bcaa"}, "nearest: 'bca'"),
        ({"zero_method": "zsplt"}, "nearest: 'zsplit'"),
    ],
)
def test_unknown_names_are_answered_with_the_nearest_valid_ones(options, nearest):
    with pytest.raises(OptionError, match="valid values are") as info:
        fastndcg.compare(three_runs(10), **options)
    error = info.value
    assert error.option == next(iter(options)) and error.value == next(iter(options.values()))
    assert str(error).endswith(nearest)


def test_n_resamples_is_bounded_and_memory_is_not_asked_for():
    with pytest.raises(OptionError, match="n_resamples must be at most 1,000,000,000") as info:
        fastndcg.compare(three_runs(10), n_resamples=10**12)
    assert info.value.option == "n_resamples" and info.value.value == 10**12
    assert "10,000 give a p-value" in info.value.fix
    with pytest.raises(OptionError, match="n_resamples"):
        fastndcg.compare_runs({}, {}, n_resamples=10**9 + 1)  # before any file is read


# ---- intervals that agree with their tests ----------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_sign_flip_interval_excludes_zero_exactly_when_the_test_rejects(backend):
    """Every n (exact and Monte Carlo), level and alternative, with ties and zero differences
    that put sign vectors on the boundary."""
    rng = np.random.default_rng(7)
    engine = get_backend(backend)
    checked = rejected = 0
    for trial in range(120):
        n = int(rng.integers(1, 13)) if trial % 2 else int(rng.integers(13, 150))
        alternative = ALTERNATIVES[trial % 3]
        ci = (0.5, 0.8, 0.9, 0.95, 0.99)[trial % 5]
        d = np.round(rng.normal(rng.choice([0.0, 0.05, 0.1]), 0.2, (3, n)), int(rng.integers(1, 3)))
        tested = _tests.signflip_test(d, trial, 999, engine, alternative, ci)
        excludes = (tested.low > 0) | (tested.high < 0)
        np.testing.assert_array_equal(excludes, tested.p_values <= 1 - ci)
        assert np.all(tested.low <= tested.high)
        checked += 3
        rejected += int(excludes.sum())
    assert 0 < rejected < checked  # both outcomes were met


def test_sign_flip_interval_is_the_set_of_shifts_the_test_does_not_reject():
    """By enumeration: just inside each finite bound the test of d - delta does not reject,
    just outside it does."""
    rng = np.random.default_rng(8)
    for trial in range(60):
        n = int(rng.integers(2, 10))
        alternative = ALTERNATIVES[trial % 3]
        ci = (0.5, 0.8, 0.9)[trial % 3]
        d = np.round(rng.normal(0.1, 0.3, n), 2)
        if np.all(d == d[0]):
            continue  # the interval is one point: no inside
        tested = _tests.signflip_test(d[None, :], trial, 1 << 12, ENGINE, alternative, ci)
        assert tested.exact
        assert tested.p_values[0] == brute_force_p(list(d), alternative)
        step = 1e-9 * np.abs(d).max()
        for bound, outward in ((tested.low[0], -1.0), (tested.high[0], 1.0)):
            if math.isfinite(bound):
                inside = brute_force_p(list(d - (bound - outward * step)), alternative)
                outside = brute_force_p(list(d - (bound + outward * step)), alternative)
                assert inside > 1 - ci >= outside, (d, alternative, ci, bound)


def test_one_query_or_too_few_for_the_level_give_the_whole_line():
    """No shift can be rejected with 5 queries at 95% (smallest two-sided p: 2/32)."""
    for d in ([0.3], [0.1, 0.2], [0.1, 0.2, 0.3, 0.4, 0.5]):
        for test in ("randomization", "wilcoxon", "bootstrap"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the bootstrap's: too few queries
                row = fastndcg.compare(pair(d), test=test).rows[0]
            assert (row["ci_low"], row["ci_high"]) == (-math.inf, math.inf)
    comparison = fastndcg.compare(pair([0.3]))
    assert "[-inf, +inf]" in repr(comparison)
    shown = json.loads(comparison.to_json())["comparisons"][0]
    assert shown["ci_low"] is None and shown["ci_high"] is None and shown["p_value"] == 1.0
    row = fastndcg.compare(pair([0.1] * 6)).rows[0]  # 2/64 <= 0.05: now it can
    assert row["p_value"] == 2 / 64 and row["ci_low"] > 0


# ---- coverage ---------------------------------------------------------------------------
def _coverage(interval, n, experiments, seed):
    """Share of ``experiments`` 95% intervals that cover the true shift 0.05.

    The experiments of one call share their sign vectors or bootstrap draws (one row each);
    the bootstrap below ``MIN_BOOTSTRAP_QUERIES`` is what compare uses there, the exact
    sign-flip test.
    """
    rng = np.random.default_rng(seed)
    d = 0.05 + rng.laplace(0.0, 0.1, (experiments, n))  # symmetric errors
    if interval == "t":
        low, high = np.array([_tests.t_test(row, 0.95)[2:] for row in d]).T
    elif interval == "sign-flip" or n < _tests.MIN_BOOTSTRAP_QUERIES:
        tested = _tests.signflip_test(d, seed, 999, ENGINE, "two-sided", 0.95, n < 20)
        low, high = tested.low, tested.high
    else:
        tested = _tests.bootstrap_test(d, seed, 999, ENGINE, "two-sided", 0.95, interval)
        low, high = tested.low, tested.high
    return float(np.mean((low <= 0.05) & (0.05 <= high)))


@pytest.mark.parametrize("interval", ["t", "sign-flip", "percentile", "basic", "bca"])
@pytest.mark.parametrize("n", [5, 10, 20])
def test_intervals_cover_the_mean_about_as_often_as_their_level(interval, n):
    """95% intervals, 200 experiments each (binomial sd 1.5 points): at least 85% coverage
    (the old sign-flip interval covered 82% at n = 5; the bootstrap's intervals, 89% to 93%
    here at n = 20, are known to cover less than their level at small n), and below 100%
    from 10 queries on (the whole line, or an interval too wide, would cover always). The
    bootstrap at n < 20 is the exact sign-flip test's interval."""
    covered = _coverage(interval, n, 200, seed=n)
    assert covered >= 0.85, covered
    if n >= 10:
        assert covered <= 0.995, covered


# ---- small samples ----------------------------------------------------------------------
def test_bootstrap_of_a_few_queries_is_the_exact_sign_flip_test():
    """1, 2, 3 queries better in the same direction: p = 1, 0.5, 0.25, not significant."""
    for d, p in (([0.2], 1.0), ([0.2, 0.1], 0.5), ([0.2, 0.1, 0.3], 0.25)):
        with pytest.warns(UserWarning, match="fewer than 20 queries.*test='randomization'"):
            comparison = fastndcg.compare(pair(d), test="bootstrap")
        row = comparison.rows[0]
        assert row["p_value"] == p and not row["significant"]
        assert row["test"] == "randomization" and row["exact"] and row["resamples"] == 2 ** len(d)
        assert "the exact sign-flip test instead" in repr(comparison)


def test_bootstrap_never_more_significant_than_the_exact_test_at_small_n():
    """On a centred population the bootstrap rejected 14% at n = 5 (nominal 5%)."""
    rng = np.random.default_rng(9)
    rejected = 0
    for _ in range(100):
        d = rng.normal(0.0, 0.1, 5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            row = fastndcg.compare(pair(d), test="bootstrap", n_resamples=500).rows[0]
        assert row["p_value"] == brute_force_p(list(d), "two-sided")
        rejected += row["significant"]
    assert rejected == 0  # 2/32 is the smallest p at n = 5


@pytest.mark.subprocess
def test_fail_if_worse_does_not_fail_on_a_single_query(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\n")
    args = ["--qrels", str(qrels), "--run", str(tmp_path / "a.run"), "--run"]
    args += [str(tmp_path / "b.run"), "--test", "bootstrap", "--fail-if-worse"]
    run = subprocess.run([*COMMAND, "compare", *args], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "exact sign-flip test instead" in run.stdout


# ---- Ctrl-C ----------------------------------------------------------------------------
def _interruptible() -> None:
    """Ctrl-C's default disposition in the child: a suite started in the background
    (``bash scripts/test.sh &``) ignores SIGINT, and a child inheriting that never sees it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


_INTERRUPTED = """
import os, signal, threading, time
import numpy as np, fastndcg
n = 20000
v = np.random.default_rng(0).uniform(0, 1, (n, 1))
def result(values):
    return fastndcg.NDCGResult(k=(10,), per_query=values, dcg=values, idcg=np.ones_like(values),
                               mean=values.mean(0), query_ids=np.arange(n), n_skipped=np.zeros(1))
runs = {{"a": result(v), "b": result(v + 0.001)}}
fastndcg.compare(runs, test={test!r}, n_resamples=200, backend={backend!r})  # compiled
sent = []
def interrupt():
    time.sleep(1.0)
    sent.append(time.perf_counter())
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=interrupt, daemon=True).start()
try:
    fastndcg.compare(runs, test={test!r}, n_resamples=10**9, backend={backend!r}, n_threads={threads})
    print("not interrupted")
except KeyboardInterrupt:
    print("latency", time.perf_counter() - sent[0])
cpu = time.process_time()
time.sleep(0.5)
print("cpu", time.process_time() - cpu)
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_stops_the_resampling_within_a_second_and_no_thread_computes(test, backend):
    threads = 2 if backend == "numba" else 1
    code = textwrap.dedent(_INTERRUPTED).format(test=test, backend=backend, threads=threads)
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_interruptible,
    )
    assert run.returncode == 0, run.stderr
    lines = dict(line.split() for line in run.stdout.splitlines())
    assert "latency" in lines, run.stdout
    assert float(lines["latency"]) < 1.5  # about a second, on a shared machine
    assert float(lines["cpu"]) < 0.1  # nothing left computing


@pytest.mark.subprocess
def test_the_command_exits_130_on_ctrl_c(tmp_path):
    rng = np.random.default_rng(1)
    qrels, a, b = [], [], []
    for q in range(2000):
        for doc in range(5):
            qrels.append(f"q{q} 0 d{doc} {int(rng.integers(0, 3))}")
            a.append(f"q{q} Q0 d{doc} {doc + 1} {rng.random():.6f} a")
            b.append(f"q{q} Q0 d{doc} {doc + 1} {rng.random():.6f} b")
    for name, lines in (("qrels.txt", qrels), ("a.run", a), ("b.run", b)):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    command = [*COMMAND, "compare", "--qrels", "qrels.txt"]
    command += ["--run", "a.run", "--run", "b.run", "--resamples", "1000000000"]
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,
    )
    try:
        time.sleep(6.0)  # imports, reading, scoring, then resampling
        assert process.poll() is None
        sent = time.perf_counter()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        assert process.returncode == 130
        assert time.perf_counter() - sent < 3.0
    finally:  # never leave a billion resamples running
        process.kill()
        process.wait()


def test_interrupted_pool_threads_stop_after_their_chunk():
    """run_chunks: a KeyboardInterrupt in this thread starts no new chunk and waits for the
    pool's running ones."""
    import threading

    from fastndcg._backends import parallel

    started, finished = [], []

    def work(c):
        started.append(c)
        if threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt  # Ctrl-C, as this thread ends a chunk
        time.sleep(0.05)
        finished.append(c)
        return c

    with pytest.raises(KeyboardInterrupt):
        parallel.run_chunks(work, 100, 2)
    done = len(finished)
    time.sleep(0.2)
    assert len(finished) == done == len(started) - 1 and len(started) < 5
