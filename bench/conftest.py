"""Benchmark fixtures: generated data, sized by FASTNDCG_BENCH_QUERIES (default 1,000,000).

Every group of benchmarks includes the floor (one streaming read of the same arrays), so the
relative column pytest-benchmark prints is the ratio to the floor measured in the same run.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from fastndcg.synthetic import make_synthetic

N_QUERIES = int(os.environ.get("FASTNDCG_BENCH_QUERIES", "1000000"))

# lines for the "peak memory" section printed after the timings
PEAK_MEMORY: list[str] = []


def pytest_terminal_summary(terminalreporter):
    if PEAK_MEMORY:
        terminalreporter.section("peak memory allocated during one call (tracemalloc)")
        for line in PEAK_MEMORY:
            terminalreporter.write_line(line)


def _as_float64(generated):
    """(offsets, grades, scores) of generated data, grades and scores as float64."""
    return (
        generated.offsets,
        generated.grades.astype(np.float64),
        generated.scores.astype(np.float64),
    )


@pytest.fixture(scope="session")
def data():
    """Skewed synthetic lists (mean length about 100) with float64 grades and scores."""
    return _as_float64(make_synthetic(N_QUERIES, seed=0))


@pytest.fixture(scope="session")
def data_small():
    """A tenth of the queries, for the slow NumPy baselines."""
    return _as_float64(make_synthetic(max(N_QUERIES // 10, 1000), seed=1))


@pytest.fixture(scope="session")
def data_native():
    """The generator's own dtypes (int8 grades, float32 scores), as a Parquet file would give."""
    generated = make_synthetic(N_QUERIES, seed=0)
    return generated.offsets, generated.grades, generated.scores


@pytest.fixture(scope="session")
def one_huge_query():
    """One query of 1,000,000 documents among many small ones: the threads must stay balanced."""
    small = make_synthetic(max(N_QUERIES // 2, 1000), seed=2, mean_len=10, max_len=50)
    rng = np.random.default_rng(3)
    huge = 1_000_000
    offsets = np.concatenate(([0, huge], huge + small.offsets[1:]))
    grades = np.concatenate((rng.integers(0, 5, huge), small.grades)).astype(np.float64)
    scores = np.concatenate((rng.random(huge), small.scores)).astype(np.float64)
    return offsets, grades, scores
