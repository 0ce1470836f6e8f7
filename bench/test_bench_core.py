"""In-memory benchmarks of ``fastndcg.ndcg`` against the floor and NumPy baselines.

Run: ``bash scripts/bench.sh`` (pytest-benchmark; size with ``FASTNDCG_BENCH_QUERIES``).
Compile time is kept out of every timing (each target runs once before it is measured), and
each group contains the floor, so the relative column is the ratio to one streaming read of the
same arrays measured in the same run.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from baselines import floor, lexsort_ndcg
from conftest import N_QUERIES, PEAK_MEMORY

import fastndcg

NUMBA = "numba" in fastndcg.available_backends()
needs_numba = pytest.mark.skipif(not NUMBA, reason="numba not installed")


def measure(benchmark, func, *args, rounds=3, **kwargs):
    func(*args, **kwargs)  # compile / warm caches outside the timing
    return benchmark.pedantic(func, args=args, kwargs=kwargs, rounds=rounds, iterations=1)


def skip_beyond_ceiling(threads):
    import numba

    if threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip(f"only {numba.config.NUMBA_NUM_THREADS} threads here")


def record_peak(benchmark, label, data, func, *args, **kwargs):
    """Peak bytes NumPy allocates during one untimed call, against the input's size.

    tracemalloc sees every NumPy buffer (results and temporaries); the kernels' per-thread
    scratch, allocated by Numba, is not counted (it holds the longest list a few times).
    """
    tracemalloc.start()
    try:
        func(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    offsets, grades, scores = data
    size = grades.nbytes + scores.nbytes
    benchmark.extra_info["peak_bytes"] = peak
    PEAK_MEMORY.append(
        f"{label}: {peak / 2**20:,.1f} MiB for {grades.size:,} rows, {offsets.size - 1:,} "
        f"queries ({peak / size:.1%} of the {size / 2**20:,.0f} MiB of grades and scores)"
    )


def score(data, **options):
    offsets, grades, scores = data
    return fastndcg.ndcg(grades, scores, offsets=offsets, **options)


CUTOFFS = {"k=10": 10, "k=100": 100, "k=1,3,5,10,20,100": [1, 3, 5, 10, 20, 100], "k=None": None}


@pytest.mark.parametrize("what", ["floor", *CUTOFFS])
def test_cutoffs(benchmark, data, what):
    benchmark.group = f"cutoffs ({N_QUERIES:,} queries)"
    if what == "floor":
        measure(benchmark, floor, data[1], data[2], rounds=5)
        return
    k = CUTOFFS[what]
    result = measure(benchmark, score, data, k=k)
    assert np.all((result.mean > 0) & (result.mean < 1))
    record_peak(benchmark, f"ndcg({what})", data, score, data, k=k)


@pytest.mark.parametrize("ties", ["floor", "average", "stable", "pessimistic", "random"])
def test_ties(benchmark, data, ties):
    benchmark.group = f"ties, k=10 ({N_QUERIES:,} queries)"
    if ties == "floor":
        measure(benchmark, floor, data[1], data[2], rounds=5)
        return
    extra = {"seed": 1} if ties == "random" else {}
    measure(benchmark, score, data, k=10, ties=ties, **extra)


def floor_on(threads, grades, scores):
    """The floor read by ``threads`` threads, as the kernels it is compared with."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return floor(grades, scores)
    finally:
        numba.set_num_threads(before)


@needs_numba
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("what", ["floor", "k=10"])
def test_threads(benchmark, data, what, threads):
    benchmark.group = f"{threads} thread(s), k=10 ({N_QUERIES:,} queries)"
    skip_beyond_ceiling(threads)
    if what == "floor":
        measure(benchmark, floor_on, threads, data[1], data[2], rounds=5)
        return
    measure(benchmark, score, data, k=10, n_threads=threads)


@needs_numba
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("what", ["floor", "k=10"])
def test_one_huge_query_among_small_ones(benchmark, one_huge_query, what, threads):
    benchmark.group = f"{threads} thread(s) with one 1M-document query, k=10"
    skip_beyond_ceiling(threads)
    if what == "floor":
        measure(benchmark, floor_on, threads, one_huge_query[1], one_huge_query[2], rounds=5)
        return
    measure(benchmark, score, one_huge_query, k=10, n_threads=threads)


@pytest.mark.parametrize("dtypes", ["floor", "int8 grades, float32 scores"])
def test_native_dtypes(benchmark, data_native, dtypes):
    benchmark.group = f"native dtypes, k=10 ({N_QUERIES:,} queries)"
    if dtypes == "floor":
        measure(benchmark, floor, data_native[1], data_native[2], rounds=5)
        return
    measure(benchmark, score, data_native, k=10)
    record_peak(
        benchmark, "ndcg(k=10), int8 grades, float32 scores", data_native, score, data_native, k=10
    )


@pytest.mark.parametrize("impl", ["floor", "fastndcg numpy backend", "numpy lexsort"])
def test_numpy_backend_against_lexsort(benchmark, data_small, impl):
    benchmark.group = f"NumPy implementations, k=10 ({len(data_small[0]) - 1:,} queries)"
    offsets, grades, scores = data_small
    if impl == "floor":
        measure(benchmark, floor, grades, scores, rounds=5)
    elif impl == "numpy lexsort":
        values = measure(benchmark, lexsort_ndcg, offsets, grades, scores, 10, rounds=1)
        expected = score(data_small, k=10, ties="stable", backend="numpy").per_query[:, 0]
        np.testing.assert_allclose(values, expected, rtol=1e-12)
    else:
        measure(benchmark, score, data_small, k=10, backend="numpy", rounds=1)
