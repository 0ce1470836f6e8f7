"""Latency for Python callers: start-up, compile, and small calls.

- cold compile: a fresh process with an empty ``NUMBA_CACHE_DIR`` runs ``fastndcg.warmup()``;
- first call, warm cache: a fresh process imports fastndcg and scores one small input (the
  compile cache already filled);
- per call: one query of 100 documents (through ``fastndcg.ndcg`` and through a prepared
  ``fastndcg.Scorer``), and a batch of 1,000 such queries, in a warm process.

Usage: ``python scripts/bench_latency.py``
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

FIRST_CALL = (
    "import time; t = time.perf_counter(); import fastndcg, numpy as np; "
    "fastndcg.ndcg(np.array([3, 1, 0, 2]), np.array([0.4, 0.3, 0.2, 0.1]), k=3); "
    "print(time.perf_counter() - t)"
)
COLD_COMPILE = "import fastndcg; print(fastndcg.warmup())"


def in_fresh_process(code: str, cache_dir: str) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def per_call(func, repeat: int) -> float:
    func()
    start = time.perf_counter()
    for _ in range(repeat):
        func()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    import fastndcg

    with tempfile.TemporaryDirectory(prefix="fastndcg-cache-") as cache:
        cold = in_fresh_process(COLD_COMPILE, cache)
        first = min(in_fresh_process(FIRST_CALL, cache) for _ in range(3))
    rng = np.random.default_rng(0)
    grades, scores = rng.integers(0, 5, 100), rng.random(100)
    one = per_call(lambda: fastndcg.ndcg(grades, scores, k=10), 2000)
    scorer = fastndcg.Scorer(k=10)
    one_prepared = per_call(lambda: scorer(grades, scores), 20000)
    many_grades, many_scores = rng.integers(0, 5, 100_000), rng.random(100_000)
    offsets = np.arange(0, 100_001, 100)
    batch = per_call(lambda: fastndcg.ndcg(many_grades, many_scores, offsets=offsets, k=10), 200)
    print("| measure | time | target |")
    print("|---|---|---|")
    print(
        f"| cold compile of all kernels (fastndcg.warmup(), empty cache) | {cold:.1f} s | <= 20 s |"
    )
    print(f"| first call in a new process, warm cache, import included | {first:.2f} s | <= 1 s |")
    print(f"| one query of 100 documents, `ndcg(...)` per call | {one * 1e6:.0f} us | <= 20 us |")
    print(
        f"| one query of 100 documents, prepared `Scorer(k=10)` per call | "
        f"{one_prepared * 1e6:.1f} us | <= 20 us |"
    )
    print(f"| 1,000 queries of 100 documents, per call | {batch * 1e3:.2f} ms | <= 1 ms |")


if __name__ == "__main__":
    main()
