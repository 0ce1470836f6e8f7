"""fastndcg.ndcg at 1M queries against the floor and vectorised NumPy baselines.

Run: ``bash scripts/bench.sh`` (or ``pytest bench --benchmark-enable``). Compile time is kept out
of every timing: each target runs once before it is measured.
"""

from __future__ import annotations

import numpy as np
import pytest
from baselines import floor, lexsort_ndcg
from conftest import N_QUERIES

import fastndcg

BACKENDS = fastndcg.available_backends()
GROUP = f"ndcg@10, {N_QUERIES:,} queries"


def measure(benchmark, func, *args, rounds=3, **kwargs):
    func(*args, **kwargs)  # compile / warm caches outside the timing
    return benchmark.pedantic(func, args=args, kwargs=kwargs, rounds=rounds, iterations=1)


def test_floor(benchmark, data_f64):
    benchmark.group = GROUP
    _, grades, scores = data_f64
    measure(benchmark, floor, grades, scores, rounds=5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fastndcg(benchmark, data_f64, backend):
    benchmark.group = GROUP
    offsets, grades, scores = data_f64
    rounds = 3 if backend == "numba" else 1
    result = measure(
        benchmark,
        fastndcg.ndcg,
        grades,
        scores,
        offsets=offsets,
        k=10,
        backend=backend,
        rounds=rounds,
    )
    assert 0.0 < float(result) < 1.0


def test_numpy_lexsort(benchmark, data_f64):
    benchmark.group = GROUP
    offsets, grades, scores = data_f64
    values = measure(benchmark, lexsort_ndcg, offsets, grades, scores, 10, rounds=1)
    reference = fastndcg.ndcg(grades, scores, offsets=offsets, k=10, ties="stable")
    np.testing.assert_allclose(values, reference.per_query[:, 0], rtol=1e-12)
