"""The resampling tests: exact enumeration, Monte Carlo accuracy, the documented random
streams, bit-identical results for every backend, thread count and chunking, and the order
statistics of the intervals found exactly in bounded memory."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from conftest import BACKENDS

import fastndcg
from fastndcg._backends import get_backend
from fastndcg._compare import draws
from fastndcg._compare import rng as _rng
from fastndcg._compare import significance as _tests

MASK = (1 << 64) - 1
_ALTERNATIVES = ("two-sided", "greater", "less")
GOLDEN = 0x9E3779B97F4A7C15


def signflip(d, seed, n_resamples, backend, n_chunks=None):
    """Sign-flipped sums through the backend operation (as compare draws them), and exact."""
    exact = _tests.is_exact(d.shape[1], n_resamples)
    count = (1 << d.shape[1]) if exact else n_resamples
    d = np.ascontiguousarray(d, dtype=np.float64)
    sums = get_backend(backend).signflip_sums(d, _rng.sign_key(seed), exact, count, n_chunks)
    return sums, exact


def bootstrap(values, seed, n_resamples, backend, n_chunks=None):
    """Bootstrap sums through the backend operation (as compare draws them)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    key = _rng.bootstrap_key(seed)
    thresholds = _rng.poisson_bounds(values.shape[1])
    return get_backend(backend).bootstrap_sums(values, key, thresholds, n_resamples, n_chunks)


# ---- a plain Python reading of the generator documented in fastndcg._compare.rng ---------
def mix(z):
    z &= MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def stream(key, i):
    return mix(key + (i + 1) * GOLDEN)


def plain_signflip_sum(d, seed, i):
    key_i = stream(mix(seed ^ 0x5349474E464C4950), i)
    total = 0.0
    for j, x in enumerate(d):
        negate = (mix(key_i + (j // 64 + 1) * GOLDEN) >> (j % 64)) & 1
        total += -x if negate else x
    return total


def plain_bootstrap_sum(v, seed, i):
    """Sum of ``v`` over the n draws of bootstrap resample ``i``, as documented."""
    n = len(v)
    kb = mix(seed ^ 0x424F4F5453545250)
    total, drawn = 0.0, 0
    rate = 0.0 if n < 1024 else 1.0 - 3.0 / math.sqrt(n)
    if rate > 0:
        table = [int(t) for t in _rng.poisson_thresholds(n)]
        attempt = 0
        while True:
            key_i = stream(mix(kb ^ (0x504F4953534F4E00 + attempt)), i)
            counts = []
            for j in range(n):
                word = mix(key_i + (j // 2 + 1) * GOLDEN)
                u = word & 0xFFFFFFFF if j % 2 == 0 else word >> 32
                counts.append(sum(u >= t for t in table))
            if sum(counts) <= n:
                break
            attempt += 1
        for c, x in zip(counts, v, strict=True):
            total += float(c) * x
        drawn = sum(counts)
    key_i = stream(mix(kb ^ 0x544F505550445257), i)
    for r in range(n - drawn):
        total += v[(mix(key_i + (r + 1) * GOLDEN) * n) >> 64]
    return total


# ---- exact randomisation ----------------------------------------------------------------
def brute_force_p(d):
    """Two-sided sign-flip p-value by enumerating every sign vector."""
    observed = abs(sum(d))
    tolerance = 100 * np.finfo(float).eps * observed
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        if abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed - tolerance:
            hits += 1
    return hits / 2 ** len(d)


EXACT_CASES = [
    [0.3],
    [0.0],
    [0.1, -0.1],
    [0.2, 0.1, 0.4],
    [0.1, 0.1, 0.1, 0.1, -0.1],
    [0.0, 0.0, 0.25, -0.5, 0.25, 0.125],
    [0.3, 0.1, 0.2, 0.6, -0.2, 0.1, 0.05, 0.0, 0.7],
    [0.1, 0.2, 0.30000000000000004, -0.6, 0.1, 0.2, 0.3, 0.4, 0.5, -0.1],
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("d", EXACT_CASES)
def test_exact_randomization_equals_brute_force(d, backend):
    d = np.array(d)
    p, exact, count = _tests.randomization(d[None, :], 0, 1 << len(d), get_backend(backend))
    assert exact and count == 2 ** len(d)
    assert p[0] == brute_force_p(list(d))


@pytest.mark.parametrize("backend", BACKENDS)
def test_exact_when_all_sign_vectors_fit(backend):
    d = np.array([[0.1, 0.25, -0.05, 0.3, 0.2, 0.15, 0.05]])
    p_exact, exact, count = _tests.randomization(d, 5, 128, get_backend(backend))
    assert exact and count == 128
    p_mc, exact, count = _tests.randomization(d, 5, 127, get_backend(backend))
    assert not exact and count == 127
    assert p_mc[0] != p_exact[0]


def exact_p_vectorised(d):
    n = d.size
    signs = 1.0 - 2.0 * ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1)
    observed = abs(d.sum())
    return np.mean(np.abs(signs @ d) >= observed * (1 - 1e-12))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_monte_carlo_p_within_four_standard_errors_of_exact(seed):
    rng = np.random.default_rng(seed)
    resamples = 2000
    for shift in (0.0, 0.04, 0.08):
        d = rng.normal(shift, 0.1, 15)
        exact = exact_p_vectorised(d)
        p, was_exact, _ = _tests.randomization(
            d[None, :], seed, resamples, get_backend(BACKENDS[0])
        )
        assert not was_exact
        se = math.sqrt(max(exact * (1 - exact), 1e-4) / resamples)
        assert abs(p[0] - exact) <= 4 * se + 1 / resamples, (shift, p[0], exact)


def test_bootstrap_p_within_four_standard_errors_of_a_large_run():
    backend = get_backend(BACKENDS[0])
    rng = np.random.default_rng(11)
    for shift in (0.0, 0.02, 0.05):
        d = rng.normal(shift, 0.1, 40)[None, :]
        p = _tests.bootstrap_test(d, 1, 200_000, backend).p_values[0]
        small = _tests.bootstrap_test(d, 2, 2000, backend).p_values[0]
        se = math.sqrt(max(p * (1 - p), 1e-4) / 2000) + math.sqrt(max(p * (1 - p), 1e-4) / 200_000)
        assert abs(small - p) <= 4 * se + 1 / 2000, (shift, small, p)


# ---- the documented streams -------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [70, 130])
def test_sign_flips_follow_the_documented_stream(backend, n):
    d = np.random.default_rng(n).normal(0, 1, n)
    sums, exact = signflip(d[None, :], 42, 90, backend)
    assert not exact
    for i in (0, 1, 63, 64, 89):
        assert sums[i, 0] == plain_signflip_sum(list(d), 42, i)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 7, 300, 1100])
def test_bootstrap_follows_the_documented_stream(backend, n):
    v = np.random.default_rng(n).normal(0, 1, n)
    sums = bootstrap(v[None, :], 9, 70, backend)
    for i in (0, 5, 64, 69):
        assert sums[i, 0] == plain_bootstrap_sum(list(v), 9, i)


def test_poisson_tables_match_scipy():
    from scipy import stats

    for n in (1024, 5000, 10**6, 10**9):
        table = _rng.poisson_thresholds(n)
        rate = _rng.poisson_rate(n)
        expected = np.floor(stats.poisson.cdf(np.arange(table.size), rate) * 2.0**32)
        assert np.all(np.abs(table.astype(float) - expected) <= 1)
        # counts stop at table.size, which takes P(X >= table.size): what is lumped is tiny
        assert stats.poisson.sf(table.size, rate) < 2.0**-32
    assert _rng.poisson_thresholds(1023).size == 0


def test_bootstrap_draws_n_queries_with_replacement():
    """A column of ones sums to n in every resample (rejected Poisson draws included);
    indicator columns count one query's draws: mean 1, variance 1 - 1/n."""
    for n in (50, 1500):
        cols = np.zeros((3, n))
        cols[0] = 1.0
        cols[1, 0] = 1.0
        cols[2, n // 2] = 1.0
        sums = bootstrap(cols, 3, 20_000, BACKENDS[0])
        assert np.all(sums[:, 0] == n)
        for c in (1, 2):
            assert sums[:, c].mean() == pytest.approx(1.0, abs=4 * math.sqrt(1 / 20_000))
            assert sums[:, c].var() == pytest.approx(1 - 1 / n, rel=0.05)


def test_rejected_poisson_draws_are_drawn_again():
    from fastndcg._backends.numpy import resample as resample_numpy

    n = 1030
    v = np.random.default_rng(0).normal(0, 1, n)
    lanes = np.arange(3000, dtype=np.uint64)
    key = _rng.poisson_key(_rng.bootstrap_key(4), 0)
    _, totals = resample_numpy._poisson_pass(v[None, :], key, lanes, _rng.poisson_bounds(n))
    rejected = np.flatnonzero(totals > n)
    assert rejected.size > 0  # this seed exercises the redraw
    for backend in BACKENDS:
        sums = bootstrap(np.stack([v, np.ones(n)]), 4, 3000, backend)
        assert np.all(sums[:, 1] == n)
        for i in rejected[:2]:
            assert sums[i, 0] == plain_bootstrap_sum(list(v), 4, int(i))


# ---- identical for every backend, thread count and chunking ----------------------------
SHAPES = [(1, 5), (3, 63), (2, 64), (5, 65), (4, 1023), (6, 1024), (5, 9000)]


@pytest.mark.numba
@pytest.mark.parametrize(("columns", "n"), SHAPES)
def test_kernels_bit_identical_across_backends_threads_and_chunks(columns, n):
    import numba

    d = np.random.default_rng(n).normal(0.01, 0.2, (columns, n))
    reference_flip, _ = signflip(d, 77, 300, "numpy")
    reference_boot = bootstrap(d, 77, 300, "numpy")
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            for chunks in (None, 1, 3, 7):
                flip, _ = signflip(d, 77, 300, "numba", n_chunks=chunks)
                boot = bootstrap(d, 77, 300, "numba", n_chunks=chunks)
                assert np.array_equal(flip, reference_flip)
                assert np.array_equal(boot, reference_boot)
    finally:
        numba.set_num_threads(before)


def runs(n, systems=3, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, (n, 2))
    base[::17] = np.nan
    out = {}
    for s in range(systems):
        values = np.clip(base + rng.normal(0.01 * s, 0.1, (n, 2)), 0, 1)
        values[::17] = np.nan
        out[f"s{s}"] = fastndcg.NDCGResult(
            k=(5, None),
            per_query=values,
            dcg=values,
            idcg=np.ones_like(values),
            mean=np.nanmean(values, axis=0),
            query_ids=np.arange(n),
            n_skipped=np.isnan(values).sum(axis=0),
        )
    return out


def comparable(comparison):
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        for r in comparison.rows
    ]


@pytest.mark.numba
@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_compare_identical_across_backends_and_threads(test):
    import numba

    data = runs(1500)
    reference = comparable(fastndcg.compare(data, test=test, n_resamples=500, backend="numpy"))
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            got = fastndcg.compare(data, test=test, n_resamples=500, backend="numba")
            assert comparable(got) == reference
    finally:
        numba.set_num_threads(before)


def test_warmup_compiles_the_resampling_kernels_on_request(monkeypatch):
    """warmup(compare=True) runs both resampling operations (their compile, on a fresh cache)."""
    from fastndcg import _runtime

    backend = get_backend("numba") if "numba" in BACKENDS else None
    if backend is None:
        assert fastndcg.warmup(compare=True) == 0.0
        return
    called = []
    for name in ("signflip_sums", "bootstrap_sums"):
        original = getattr(backend, name)

        def record(*args, _name=name, _original=original, **kwargs):
            called.append((_name, args[0].flags.c_contiguous))
            return _original(*args, **kwargs)

        monkeypatch.setattr(backend, name, record)
    monkeypatch.setattr(_runtime, "compiled_backends", lambda: [backend])
    fastndcg.warmup()
    assert called == []
    fastndcg.warmup(compare=True)
    assert {name for name, _ in called} == {"signflip_sums", "bootstrap_sums"}
    assert all(contiguous for _, contiguous in called)  # the layout compare passes


# ---- order statistics in bounded memory -------------------------------------------------
def test_order_statistics_selected_in_passes_equal_a_sort():
    """Radix selection over replayed blocks (tiny memory) gives each rank's exact value,
    infinities, -0.0, repeated values and one-value blocks included."""
    rng = np.random.default_rng(0)
    for _ in range(60):
        m = int(rng.integers(1, 400))
        x = np.round(rng.normal(0, 1, (m, 2)), int(rng.integers(0, 4)))
        x[rng.random((m, 2)) < 0.05] = -np.inf
        x[rng.random((m, 2)) < 0.05] = np.inf
        x[rng.random((m, 2)) < 0.05] = -0.0
        parts = np.array_split(x, int(rng.integers(1, 6)))
        statistics = draws.OrderStatistics(m, 2, keep=3)
        assert not statistics.keeping
        for part in parts:
            statistics.add(part)
        wanted = [(int(rng.integers(0, 2)), int(rng.integers(0, m))) for _ in range(4)]
        replays = []

        def replay(consume, parts=parts, replays=replays):
            replays.append(1)
            for part in parts:
                consume(part)

        got = statistics.select(wanted, replay)
        assert got == [np.sort(x[:, c])[r] for c, r in wanted]
        assert 1 <= len(replays) <= 4  # 16 bits a pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_intervals_alike_whether_values_are_kept_or_selected_in_passes(monkeypatch, backend):
    engine = get_backend(backend)
    rng = np.random.default_rng(1)
    for n in (7, 40):
        d = np.round(rng.normal(0.02, 0.1, (3, n)), 2)
        cases = [("signflip", alternative, None) for alternative in _ALTERNATIVES]
        cases += [("bootstrap", "two-sided", method) for method in ("percentile", "basic", "bca")]
        cases += [("bootstrap", "greater", "bca")]
        for kind, alternative, method in cases:

            def run(kind=kind, alternative=alternative, method=method, d=d):
                if kind == "signflip":
                    return _tests.signflip_test(d, 3, 1500, engine, alternative, 0.9)
                return _tests.bootstrap_test(d, 3, 1500, engine, alternative, 0.9, method)

            kept = run()
            monkeypatch.setattr(draws, "KEEP_VALUES", 40)
            selected = run()
            monkeypatch.undo()
            np.testing.assert_array_equal(selected.low, kept.low)
            np.testing.assert_array_equal(selected.high, kept.high)
            np.testing.assert_array_equal(selected.p_values, kept.p_values)


@pytest.mark.numba
def test_memory_does_not_grow_with_the_resamples(monkeypatch):
    """4 million sign vectors of 3 comparisons: the intervals' order statistics would take
    8 bytes x 2 bounds x 3 x 4M = 192 MB kept whole; selected in passes, a few MB."""
    import tracemalloc

    monkeypatch.setattr(draws, "KEEP_VALUES", 1 << 16)
    monkeypatch.setattr(draws, "MAX_BLOCK", 1 << 14)
    d = np.random.default_rng(2).normal(0.01, 0.1, (3, 24))
    engine = get_backend("numba")
    tracemalloc.start()
    try:
        result = _tests.signflip_test(d, 0, 4_000_000, engine, "two-sided", 0.95)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 24 * 2**20, peak
    assert result.count == 4_000_000 and np.all(result.low < result.high)
