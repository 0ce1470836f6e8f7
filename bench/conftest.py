"""Benchmark fixtures: generated data, sized by FASTNDCG_BENCH_QUERIES (default 1,000,000)."""

from __future__ import annotations

import os

import pytest

from fastndcg.synthetic import make_synthetic

N_QUERIES = int(os.environ.get("FASTNDCG_BENCH_QUERIES", "1000000"))


@pytest.fixture(scope="session")
def data():
    return make_synthetic(N_QUERIES, seed=0)


@pytest.fixture(scope="session")
def data_f64(data):
    """The same data with float64 grades and scores (no dtype work inside the timings)."""
    return data.offsets, data.grades.astype("float64"), data.scores.astype("float64")
