"""Two checkouts of fastndcg against each other, alternated in fresh processes.

    python scripts/bench_ab.py --old ../old-checkout [--new .] [--rounds 5] [--threads 1]

Each round runs every case once for the old and once for the new code (in alternating order),
each in a new Python process that imports fastndcg from its checkout. A case reports the best
of 5 timings inside its process (compile time kept out by a warm-up call), except the cold
compile (``fastndcg warmup`` on an empty cache) and the first call of a process, which are one
timing each. The table gives, per case, the best and the median over the rounds for each side,
and new/old of the medians. A shared machine is noisy: alternation puts the noise on both sides.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = """
import numpy as np, time, fastndcg
from fastndcg.synthetic import make_synthetic
data = make_synthetic({queries})
g, s, o = data.grades, data.scores, data.offsets
"""

TABLES = """
import pyarrow as pa
qid = data.qid()
rows = pa.table({{"qid": qid, "docid": np.arange(g.size).astype(str), "score": s}})
judged = pa.table({{"qid": qid, "docid": np.arange(g.size).astype(str), "grade": g}})
"""


def option_case(options: str, data: str = DATA, call: str = "g, s, offsets=o") -> tuple[str, str]:
    """A case of ``fastndcg.ndcg`` with these options (k=10 unless they say otherwise)."""
    return data, f"fastndcg.ndcg({call}, {options})"


CASES = {
    "k=10": (DATA, "fastndcg.ndcg(g, s, offsets=o, k=10)"),
    "k=1,3,5,10,20,100": (DATA, "fastndcg.ndcg(g, s, offsets=o, k=[1, 3, 5, 10, 20, 100])"),
    "k=None": (DATA, "fastndcg.ndcg(g, s, offsets=o, k=None)"),
    # every option family, at k=10 (the defaults elsewhere: exp2, average ties, recall ideal)
    "gain='linear'": option_case("k=10, gain='linear'"),
    "gain=table": option_case("k=10, gain=[0.0, 1.0, 3.0, 7.0, 15.0]"),
    "gain=dict": option_case("k=10, gain={0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0, 4: 15.0}"),
    "gain=callable": option_case("k=10, gain=lambda x: 2.0**x - 1.0"),
    "ties='stable'": option_case("k=10, ties='stable'"),
    "ties='pessimistic'": option_case("k=10, ties='pessimistic'"),
    "ties='optimistic'": option_case("k=10, ties='optimistic'"),
    "ties='random'": option_case("k=10, ties='random', seed=1"),
    "ties='docid_desc' (ndcg_run on tables)": (
        DATA + TABLES,
        "fastndcg.ndcg_run(judged, rows, k=10, ties='docid_desc')",
    ),
    "ideal='local'": option_case("k=10, ideal='local'"),
    "ideal='global'": option_case("k=10, ideal='global', ideal_grades=g, ideal_offsets=o"),
    "ideal='max'": option_case("k=10, ideal='max'"),
    "float64 grades and scores": option_case("k=10", DATA + "g, s = g * 1.0, s * 1.0\n"),
    "fractional grades (gain='linear')": option_case("k=10, gain='linear'", DATA + "g = g * 0.5\n"),
    "zero_idcg='zero'": option_case("k=10, zero_idcg='zero'"),
    "ranked lists (no scores)": option_case("k=10", call="g, None, offsets=o"),
    "Scorer(k=10) per call, 100 documents": (
        """
import numpy as np, time, fastndcg
rng = np.random.default_rng(0)
g, s = rng.integers(0, 5, 100), rng.random(100)
score = fastndcg.Scorer(k=10)
""",
        "[score(g, s) for _ in range(10_000)]",
    ),
}
TIMED = """
{setup}
{call}
best = float("inf")
for _ in range(5):
    start = time.perf_counter()
    {call}
    best = min(best, time.perf_counter() - start)
print(best * {scale})
"""
FIRST_CALL = """
import time
start = time.perf_counter()
import numpy as np, fastndcg
fastndcg.ndcg(np.array([3, 2, 0]), np.array([0.3, 0.2, 0.1]), k=2)
print(time.perf_counter() - start)
"""


def run(root: Path, code: str, env: dict[str, str] | None = None) -> float:
    """The last line a fresh process importing fastndcg from ``root`` prints, as a float."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def cold_compile(root: Path, env: dict[str, str]) -> float:
    """Seconds of ``fastndcg warmup`` on an empty compile cache."""
    with tempfile.TemporaryDirectory() as cache:
        code = "import time, fastndcg; start = time.perf_counter(); fastndcg.warmup(); "
        code += "print(time.perf_counter() - start)"
        return run(root, code, {**env, "NUMBA_CACHE_DIR": cache})


def measure(root: Path, case: str, queries: int, env: dict[str, str]) -> float:
    if case == "cold compile (warmup, empty cache)":
        return cold_compile(root, env)
    if case == "first call, warm cache (import included)":
        run(root, FIRST_CALL, env)  # the cache of this checkout is warm after this
        return run(root, FIRST_CALL, env)
    setup, call = CASES[case]
    scale = 1e6 / 10_000 if case.startswith("Scorer") else 1e3  # us per call, or ms
    code = TIMED.format(setup=setup.format(queries=queries), call=call, scale=scale)
    return run(root, code, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--new", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument(
        "--threads", type=int, help="the thread count of every call (default: every core)"
    )
    parser.add_argument("--json", type=Path, help="also write the timings here")
    parser.add_argument(
        "--case",
        action="append",
        help="run only the cases whose name contains this text (repeatable; default: all)",
    )
    args = parser.parse_args()
    cases = [
        *CASES,
        "first call, warm cache (import included)",
        "cold compile (warmup, empty cache)",
    ]
    if args.case:
        cases = [case for case in cases if any(text in case for text in args.case)]
        if not cases:
            parser.error(f"no case contains {' or '.join(map(repr, args.case))}")
    env = {"NUMBA_NUM_THREADS": str(args.threads)} if args.threads else {}
    times: dict[str, dict[str, list[float]]] = {c: {"old": [], "new": []} for c in cases}
    for round_ in range(args.rounds):
        for case in cases:
            sides = ("old", "new") if round_ % 2 == 0 else ("new", "old")
            for side in sides:
                root = args.old if side == "old" else args.new
                times[case][side].append(measure(root.resolve(), case, args.queries, env))
        print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr)
    units = {c: ("us" if c.startswith("Scorer") else "ms") for c in CASES}
    print(f"## {args.old} (old) against {args.new} (new)\n")
    print(f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC")
    print(f"- Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    print(f"- Threads: {args.threads or 'every core'}")
    print(f"- Command: python {' '.join(sys.argv)}")
    print(
        f"- Data: make_synthetic({args.queries:,}); best of 5 per process, {args.rounds} rounds\n"
    )
    print("| case | old best | old median | new best | new median | new/old (medians) |")
    print("|---|--:|--:|--:|--:|--:|")
    for case in cases:
        unit = units.get(case, "s")
        old, new = times[case]["old"], times[case]["new"]
        ratio = statistics.median(new) / statistics.median(old)
        cells = [
            f"{f(values):.4g} {unit}" for values in (old, new) for f in (min, statistics.median)
        ]
        print(f"| {case} | " + " | ".join(cells) + f" | {ratio:.3f} |")
    if args.json:
        args.json.write_text(json.dumps(times, indent=2))


if __name__ == "__main__":
    main()
