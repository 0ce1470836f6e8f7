"""The CPU kernel against the floor: NDCG@10 and its neighbours, measured in one process.

Usage::

    python bench/kernel.py                              # 300,000 queries, 1 and 2 threads
    python bench/kernel.py --queries 30000 --rounds 5 --json docs/benchmarks/kernel.json

Data: ``--queries`` lists with log-normal lengths (median 60, clipped to 1..1,000), grades
``min(geometric(0.55) - 1, 4)`` and scores ``0.5 * grade + N(0, 1)``, as float64 grades and
scores and as int8 grades with float32 scores; and 10,000-row lists of the same values.

Every round runs every target once, in turn, so that the machine's load reaches them alike;
a time is the best over the rounds (the plain kernel, the slowest by far, runs in the first
three only). Each ratio divides two such times measured in the same rounds: the call against
the floor of the same data and thread count (one parallel read of both arrays,
``bench/baselines.py``), against the plain Numba kernel, or one option against another.
Compile time is kept out: every target runs once before the rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

import fastndcg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report
from baselines import floor, plain_numba_kernel

PLAIN_ROUNDS = 3
PAUSE_S = 0.02  # before each timed call (see Target.time)
LONG_ROWS = 10_000
SEVEN = ["nDCG@10", "P@10", "R@10", "RR@10", "AP@10", "Success@10", "ERR@10"]  # issue 37


def issue_data(n_queries: int, length: int | None = None, seed: int = 0) -> dict[str, tuple]:
    """The lists in both layouts: ``{"float64": (offsets, grades, scores), "int8/float32": ...}``.

    ``length`` gives every list that many rows instead of log-normal lengths.
    """
    rng = np.random.default_rng(seed)
    if length is None:
        lengths = np.clip(np.rint(rng.lognormal(np.log(60.0), 0.9, n_queries)), 1, 1000)
    else:
        lengths = np.full(n_queries, length)
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(lengths.astype(np.int64), out=offsets[1:])
    rows = int(offsets[-1])
    grades = np.minimum(rng.geometric(0.55, rows) - 1, 4).astype(np.float64)
    scores = 0.5 * grades + rng.standard_normal(rows)
    return {
        "float64": (offsets, grades, scores),
        "int8/float32": (offsets, grades.astype(np.int8), scores.astype(np.float32)),
    }


@contextlib.contextmanager
def numba_threads(n: int) -> Iterator[None]:
    """Numba's thread count set to ``n`` for the block (the floor's and the plain kernel's)."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


class Target:
    """One timed call: ``run()`` under ``threads`` Numba threads, best time over its rounds."""

    def __init__(self, run: Callable[[], object], threads: int, rounds: int | None = None):
        self.run, self.threads, self.rounds = run, threads, rounds
        self.best = float("inf")

    def time(self) -> None:
        # the threads of a parallel kernel timed just before (the floor's, the plain kernel's)
        # spin for a few milliseconds once it returns, holding a core the next target needs
        # (fastndcg's two-thread call 6% slower right after the floor): each target starts
        # once they have gone idle
        time.sleep(PAUSE_S)
        with numba_threads(self.threads):
            start = time.perf_counter()
            self.run()
            self.best = min(self.best, time.perf_counter() - start)


def per_call(call: Callable[[], object], calls: int) -> Callable[[], object]:
    """``call`` repeated ``calls`` times (a target timing many small calls)."""

    def run() -> None:
        for _ in range(calls):
            call()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300_000)
    parser.add_argument("--long-queries", type=int, default=1_000, help="10,000-row lists")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--json", type=Path, help="also write the table here")
    args = parser.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]
    data = issue_data(args.queries)
    long_lists = issue_data(args.long_queries, LONG_ROWS, seed=1)["float64"]
    plain = plain_numba_kernel()

    def ndcg(lists: tuple, threads: int, **options: object) -> Callable[[], object]:
        offsets, grades, scores = lists
        return lambda: fastndcg.ndcg(
            grades, scores, offsets=offsets, n_threads=threads, backend="numba", **options
        )

    targets: dict[tuple, Target] = {}
    for t in thread_counts:
        for layout, (offsets, grades, scores) in data.items():
            targets[layout, t, "floor"] = Target(lambda g=grades, s=scores: floor(g, s), t)
            targets[layout, t, "k=10"] = Target(ndcg(data[layout], t, k=10, ties="stable"), t)
            targets[layout, t, "plain"] = Target(
                lambda o=offsets, g=grades, s=scores: plain(o, g, s, 10), t, PLAIN_ROUNDS
            )
    one = thread_counts[0]
    lists = data["float64"]
    for name, options in {
        "average": dict(k=10, ties="average"),
        "k=100": dict(k=100, ties="stable"),
        "six cutoffs": dict(k=[1, 3, 5, 10, 20, 100], ties="stable"),
        "k=None": dict(k=None, ties="stable"),
    }.items():
        targets["float64", one, name] = Target(ndcg(lists, one, **options), one)
    offsets, grades, scores = lists
    targets["float64", one, "seven measures"] = Target(
        lambda: fastndcg.evaluate(
            grades, scores, offsets=offsets, measures=SEVEN, ties="stable", n_threads=one
        ),
        one,
    )
    targets["long", one, "floor"] = Target(lambda: floor(*long_lists[1:]), one)
    for name, k in (("k=10", 10), ("k=None", None)):
        targets["long", one, name] = Target(ndcg(long_lists, one, k=k, ties="stable"), one)
    small = (np.array([3, 0, 2, 1, 0, 0, 4, 1, 0, 2]), np.linspace(1.0, 0.1, 10))
    targets["small", one, "ndcg"] = Target(per_call(lambda: fastndcg.ndcg(*small, k=10), 1000), one)
    rng = np.random.default_rng(0)
    hundred = (rng.integers(0, 5, 100), rng.random(100))
    scorer = fastndcg.Scorer(k=10)
    targets["small", one, "Scorer"] = Target(per_call(lambda: scorer(*hundred), 10_000), one)

    for target in targets.values():  # compile and warm up
        with numba_threads(target.threads):
            target.run()
    for round_ in range(args.rounds):
        for target in targets.values():
            if target.rounds is None or round_ < target.rounds:
                target.time()
        print(f"round {round_ + 1} of {args.rounds}", file=sys.stderr)

    best = {key: target.best for key, target in targets.items()}
    rows = []

    def row(what: str, threads: int, layout: str, seconds: float, ratio: float, target: str):
        rows.append([what, str(threads), layout, f"{seconds * 1e3:.4g}", f"{ratio:.2f}x", target])

    for t in thread_counts:
        for layout in data:
            floor_s, call_s = best[layout, t, "floor"], best[layout, t, "k=10"]
            goal = {"float64": "<= 3.5x", "int8/float32": "<= 3.0x"}[layout] if t == 1 else ""
            row("floor", t, layout, floor_s, 1.0, "")
            row("`ndcg(k=10)`: vs floor", t, layout, call_s, call_s / floor_s, goal)
            plain_s = best[layout, t, "plain"]
            row("plain Numba kernel: vs `ndcg`", t, layout, plain_s, plain_s / call_s, ">= 20x")
    stable = best["float64", one, "k=10"]
    floor_one = best["float64", one, "floor"]
    row("`ties='average'`: vs stable", one, "float64", best["float64", one, "average"],
        best["float64", one, "average"] / stable, "<= 1.3x")  # fmt: skip
    six, hundred_s = best["float64", one, "six cutoffs"], best["float64", one, "k=100"]
    row("`k=100`: vs floor", one, "float64", hundred_s, hundred_s / floor_one, "")
    row("six cutoffs: vs `k=100`", one, "float64", six, six / hundred_s, "<= 1.2x")
    seven = best["float64", one, "seven measures"]
    row(f"{', '.join(SEVEN)} in one `evaluate`: vs `ndcg(k=10)`", one, "float64", seven,
        seven / stable, "<= 1.5x")  # fmt: skip
    whole = best["float64", one, "k=None"]
    row("`k=None`: vs floor", one, "float64", whole, whole / floor_one, "no slower")
    long_floor = best["long", one, "floor"]
    for name in ("k=10", "k=None"):
        seconds = best["long", one, name]
        row(f"10,000-row lists, `{name}`: vs floor", one, "float64", seconds,
            seconds / long_floor, "no slower")  # fmt: skip
    fixed, per_list = best["small", one, "ndcg"] / 1000, best["small", one, "Scorer"] / 10_000
    rows.append(["`ndcg` on one 10-row list, per call", str(one), "int64/float64",
                 f"{fixed * 1e3:.4g}", "", ""])  # fmt: skip
    rows.append(["`Scorer(k=10)` on one 100-row list, per call", str(one), "int64/float64",
                 f"{per_list * 1e3:.4g}", "", ""])  # fmt: skip

    offsets = data["float64"][0]
    described = (
        f"{offsets.size - 1:,} queries, {offsets[-1]:,} rows (log-normal lengths, median 60, "
        "1-1,000), grades `min(geometric(0.55) - 1, 4)`, scores `0.5 * grade + N(0, 1)`; "
        f"{args.long_queries:,} lists of {LONG_ROWS:,} rows; best of {args.rounds} rounds "
        f"({PLAIN_ROUNDS} for the plain kernel), every target once per round"
    )
    columns = ["what", "threads", "layout", "ms", "ratio", "target"]
    command = report.command_line()
    machine = report.machine()
    print(f"## The CPU kernel against the floor\n\n- Command: {command}")
    print(f"- Machine: {machine['description']}; {machine['software']}")
    print(f"- Load: {machine['load']}\n- Data: {described}\n")
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for cells in rows:
        print("| " + " | ".join(cells) + " |")
    if args.json:
        report.write(
            args.json,
            title="NDCG@10 against the floor, the plain kernel and other options",
            command=command,
            columns=columns,
            rows=rows,
            data=described,
        )


if __name__ == "__main__":
    main()
