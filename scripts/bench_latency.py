"""Latency for Python callers: start-up, compile, and small calls.

- cold compile: a fresh process with an empty ``NUMBA_CACHE_DIR`` runs ``fastndcg.warmup()``;
- first call, warm cache: a fresh process imports fastndcg and scores one small input (the
  compile cache already filled);
- per call: one query of 100 documents (through ``fastndcg.ndcg`` and through a prepared
  ``fastndcg.Scorer``), and a batch of 1,000 such queries, in a warm process.

Usage: ``python scripts/bench_latency.py [--json docs/benchmarks/latency.json]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import report

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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the table here (docs/benchmarks/)")
    args = parser.parse_args()
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
    rows = [
        [
            "cold compile of every kernel (`fastndcg.warmup()`, empty cache)",
            f"{cold:.1f} s",
            "<= 20 s",
        ],
        ["first call in a new process, warm cache, import included", f"{first:.2f} s", "<= 1 s"],
        ["one query of 100 documents, `ndcg(...)` per call", f"{one * 1e6:.0f} us", ""],
        [
            "one query of 100 documents, prepared `Scorer(k=10)` per call",
            f"{one_prepared * 1e6:.1f} us",
            "<= 20 us",
        ],
        [
            "1,000 queries of 100 documents, `ndcg(...)` per call",
            f"{batch * 1e3:.2f} ms",
            "<= 1 ms",
        ],
    ]
    columns = ["measure", "time", "target"]
    print("| " + " | ".join(columns) + " |")
    print("|---|--:|--:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.json:
        report.write(
            args.json,
            title="Latency: start-up, compile and small calls",
            command=report.command_line(),
            columns=columns,
            rows=rows,
            data="random int grades 0-4 and float64 scores (`numpy.random.default_rng(0)`); "
            "per-call times are the mean of 2,000 (`ndcg`), 20,000 (`Scorer`) and 200 (batch) "
            "calls in a warm process; the first call is the best of 3 fresh processes",
            seconds={
                "cold_compile": cold,
                "first_call": first,
                "ndcg_one": one,
                "scorer_one": one_prepared,
                "ndcg_batch_1000": batch,
            },
        )


if __name__ == "__main__":
    main()
