"""Time fastndcg.compare's randomization test against ranx and scipy on the same values.

One command times the target case of issue 29 — 1,000,000 queries, 5 systems against one
baseline, 10,000 randomization resamples — then, on the same per-query values, ranx's Fisher
randomization test and ``scipy.stats.permutation_test(..., permutation_type="samples")`` for
one pair each, and prints a Markdown table with the machine, the date and the command.

Usage::

    python scripts/bench_compare.py                      # the full case (a minute or two)
    python scripts/bench_compare.py --queries 100000 --out compare.md
    python scripts/bench_compare.py --json docs/benchmarks/compare.json   # the docs' table

Method
------
Data
    Synthetic per-query NDCG values in [0, 1] (``--seed``): a query difficulty ``u`` drawn from
    a Beta(0.6, 0.9) law; the baseline is ``clip(u + e0)`` and system ``s`` (1..5) is
    ``clip(u + 0.002 (s - 1) + e_s)``, with independent Normal(0, 0.15) noise ``e``, and equal
    to the baseline on 30% of the queries (ties, as rankers share many results). System 1 is
    thus no better than the baseline (a true null), the others increasingly better.
Timings
    ``time.perf_counter`` around the timed call; CPU time (all threads) beside it, since this
    machine is shared. Compile time is kept out: every target first runs on a small slice.
    fastndcg is timed end to end (``compare`` aligns the results, draws the sign vectors once
    for the p-values and the intervals of the 5 differences, and forms the t intervals of the
    6 means), its sign-flip p-values alone (the part ranx and scipy compute), and, for the cost
    of a bootstrap, ``compare(test="bootstrap")`` (paired bootstrap p-values and percentile
    intervals; ``--no-bootstrap`` leaves it out).
Scaling
    ranx and scipy cost time in proportion to queries x resamples; they run one pair on the
    first ``--ranx-queries`` / ``--scipy-queries`` queries with fewer resamples, and their time
    is scaled per query and per resample to the full case. fastndcg runs the full case itself;
    its per-pair time is its time divided by the number of pairs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shlex
import sys
import time
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from pathlib import Path

import numpy as np

import fastndcg
from fastndcg._backends import get_backend
from fastndcg._compare import significance as _tests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import report


def version(name: str) -> str:
    try:
        return dist_version(name)
    except PackageNotFoundError:
        return "not installed"


def load() -> str:
    with contextlib.suppress(OSError):
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    return "unknown"


def make_results(n: int, systems: int, seed: int) -> dict[str, fastndcg.NDCGResult]:
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(0.6, 0.9, n)
    base = np.clip(difficulty + rng.normal(0.0, 0.15, n), 0.0, 1.0)
    out = {"baseline": base}
    for s in range(systems):
        other = np.clip(difficulty + rng.normal(0.002 * s, 0.15, n), 0.0, 1.0)
        same = rng.random(n) < 0.3
        other[same] = base[same]
        out[f"system{s + 1}"] = other
    ids = np.arange(n)
    return {
        name: fastndcg.NDCGResult(
            k=(10,),
            per_query=v[:, None],
            dcg=v[:, None],
            idcg=np.ones((n, 1)),
            mean=np.array([v.mean()]),
            query_ids=ids,
            n_skipped=np.zeros(1, dtype=np.int64),
        )
        for name, v in out.items()
    }


def timed(function, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    value = function(*args, **kwargs)
    return time.perf_counter() - wall, time.process_time() - cpu, value


def prefix(results, n):
    return {
        name: fastndcg.NDCGResult(
            k=r.k,
            per_query=r.per_query[:n].copy(),
            dcg=r.dcg[:n],
            idcg=r.idcg[:n],
            mean=r.mean,
            query_ids=r.query_ids[:n],
            n_skipped=r.n_skipped,
        )
        for name, r in results.items()
    }


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--systems", type=int, default=5, help="systems besides the baseline")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--ranx-queries", type=int, default=20_000)
    parser.add_argument("--ranx-resamples", type=int, default=1000)
    parser.add_argument("--scipy-queries", type=int, default=5000)
    parser.add_argument("--scipy-resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-bootstrap", action="store_true", help='leave out compare(test="bootstrap")'
    )
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument("--json", type=Path, help="also write the table as JSON (bench/report.py)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    command = shlex.join(["python", *(sys.argv if argv is None else ["bench_compare.py", *argv])])
    import numba

    threads = numba.get_num_threads()
    n, systems, resamples = args.queries, args.systems, args.resamples
    results = make_results(n, systems, args.seed)
    names = list(results)
    base = results["baseline"].per_query[:, 0]
    first = results["system1"].per_query[:, 0]
    diffs = np.stack([results[s].per_query[:, 0] - base for s in names[1:]])
    load_before = load()

    # warm-up: compile (or load) every kernel on a slice
    wall, _, _ = timed(
        fastndcg.compare, prefix(results, 5000), baseline="baseline", n_resamples=256
    )
    warmup = wall
    _tests.randomization(diffs[:, :5000], args.seed, 256, get_backend("numba"))
    if not args.no_bootstrap:
        fastndcg.compare(
            prefix(results, 5000), baseline="baseline", test="bootstrap", n_resamples=256
        )

    rows = []
    wall, cpu, comparison = timed(
        fastndcg.compare, results, baseline="baseline", test="randomization", n_resamples=resamples
    )
    rows.append(
        (
            "fastndcg.compare",
            "end to end: alignment, sign-flip p-values and sign-flip intervals of the "
            f"{systems} differences (one pass), t CIs of the means",
            systems,
            wall,
            cpu,
            1.0,
        )
    )
    if not args.no_bootstrap:
        wall, cpu, _ = timed(
            fastndcg.compare,
            results,
            baseline="baseline",
            test="bootstrap",
            n_resamples=resamples,
        )
        rows.append(
            (
                'fastndcg.compare(test="bootstrap")',
                "end to end: paired bootstrap p-values and percentile intervals "
                f"of the {systems} differences",
                systems,
                wall,
                cpu,
                1.0,
            )
        )
    wall, cpu, _ = timed(_tests.randomization, diffs, args.seed, resamples, get_backend("numba"))
    rows.append(
        (
            "fastndcg sign flips",
            "the randomization p-values only "
            "(`_tests.randomization`, the part ranx and scipy compute)",
            systems,
            wall,
            cpu,
            1.0,
        )
    )

    peers = []
    agreement = ""
    try:
        from ranx.statistical_tests import fisher_randomization_test
    except ImportError:
        fisher_randomization_test = None
    if fisher_randomization_test is not None:
        m, k = min(args.ranx_queries, n), args.ranx_resamples
        control, treatment = base[:m].copy(), first[:m].copy()
        fisher_randomization_test(control[:100], treatment[:100], 10, 0.01, 42)
        wall, cpu, (ranx_p, _) = timed(fisher_randomization_test, control, treatment, k, 0.01, 42)
        ours, _, _ = _tests.randomization(
            (treatment - control)[None, :], args.seed, k, get_backend("numba")
        )
        agreement = (
            f"On ranx's {m:,} queries and {k:,} resamples (system1 against the baseline, a true "
            f"null): ranx p = {ranx_p:.4f} (hits / permutations), fastndcg p = {ours[0]:.4f} "
            "((1 + hits) / (1 + resamples))."
        )
        scale = (n / m) * (resamples / k)
        peers.append(
            (
                "ranx fisher_randomization_test",
                f"1 pair, {m:,} queries x {k:,} permutations, scaled x{scale:,.0f}",
                1,
                wall,
                cpu,
                scale,
            )
        )
    try:
        from scipy import stats
    except ImportError:
        stats = None
    if stats is not None:
        m, k = min(args.scipy_queries, n), args.scipy_resamples
        x, y = first[:m].copy(), base[:m].copy()

        def mean_difference(a, b, axis=-1):
            return np.mean(a - b, axis=axis)

        def scipy_test(a, b, resamples_):
            return stats.permutation_test(
                (a, b),
                mean_difference,
                permutation_type="samples",
                vectorized=True,
                n_resamples=resamples_,
                alternative="two-sided",
                rng=args.seed,
            )

        scipy_test(x[:50], y[:50], 9)
        wall, cpu, _ = timed(scipy_test, x, y, k)
        scale = (n / m) * (resamples / k)
        peers.append(
            (
                "scipy.stats.permutation_test",
                f'1 pair, permutation_type="samples", '
                f"{m:,} queries x {k:,} resamples, scaled x{scale:,.0f}",
                1,
                wall,
                cpu,
                scale,
            )
        )
    load_after = load()

    def per_pair(row):
        return row[3] * row[5] / row[2]

    def ratio(value):
        return f"{value:.2f}x" if value < 10 else f"{value:,.0f}x"

    ranx_pair = next((per_pair(r) for r in peers if r[0].startswith("ranx")), None)
    scipy_pair = next((per_pair(r) for r in peers if r[0].startswith("scipy")), None)
    lines = [
        f"## Paired randomization test: {n:,} queries, {systems} systems against a baseline, "
        f"{resamples:,} resamples",
        "",
        f"- Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- Command: `{command}`",
        f"- Machine: {report.cpu_model()}, {os.cpu_count()} logical CPUs, {platform.platform()}; "
        f"load average (1, 5, 15 min) {load_before} before, {load_after} after (a shared "
        "machine: wall time includes waiting for a CPU; CPU time does not)",
        f"- Software: Python {platform.python_version()}, numpy {np.__version__}, "
        f"numba {numba.__version__} ({threads} threads), fastndcg {fastndcg.__version__}, "
        f"ranx {version('ranx')}, scipy {version('scipy')}; fastndcg imported from "
        f"{Path(fastndcg.__file__).parent}",
        f"- Compile time kept out: warm-up {warmup:.1f} s on 5,000 queries before timing",
        "- Scaled rows: time x (queries / measured queries) x (resamples / measured "
        "resamples); per pair: the time of all pairs / pairs",
        "",
        "| implementation | what is timed | pairs | wall s (measured) | CPU s (measured) "
        "| wall s per pair, full case | ranx / this | scipy / this |",
        "|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    for row in rows + peers:
        name, what, pairs, wall, cpu, _ = row
        pair = per_pair(row)
        lines.append(
            f"| {name} | {what} | {pairs} | {wall:.2f} | {cpu:.2f} | {pair:.3g} | "
            + (ratio(ranx_pair / pair) if ranx_pair else "")
            + " | "
            + (ratio(scipy_pair / pair) if scipy_pair else "")
            + " |"
        )
    raw = ", ".join(f"{r['p_value']:.4g}" for r in comparison.rows)
    adjusted = ", ".join(f"{r['p_adjusted']:.4g}" for r in comparison.rows)
    lines += ["", f"fastndcg p-values, system1..{systems}: {raw} (Holm-adjusted: {adjusted})."]
    if agreement:
        lines += ["", agreement]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    if args.json:
        report.write(
            args.json,
            title=f"Comparing runs: {n:,} queries, {systems} systems against a baseline, "
            f"{resamples:,} resamples",
            command=report.command_line(),
            columns=[
                "implementation",
                "what is timed",
                "pairs",
                "wall s (measured)",
                "CPU s (measured)",
                "wall s per pair, full case",
                "ranx / this",
                "scipy / this",
            ],
            rows=[
                [
                    f"`{row[0]}`" if row[0].startswith(("fastndcg.", "scipy.")) else row[0],
                    row[1],
                    row[2],
                    f"{row[3]:.2f}",
                    f"{row[4]:.2f}",
                    f"{per_pair(row):.3g}",
                    ratio(ranx_pair / per_pair(row)) if ranx_pair else "",
                    ratio(scipy_pair / per_pair(row)) if scipy_pair else "",
                ]
                for row in rows + peers
            ],
            data="synthetic per-query NDCG values (see the script's docstring): system 1 no "
            "better than the baseline, the others increasingly better, 30% of queries tied; "
            f"{threads} numba threads; compile time kept out (warm-up {warmup:.1f} s)",
            notes=[
                "ranx and scipy run one pair on a prefix of the queries with fewer resamples; "
                "their times are scaled per query and per resample to the full case",
                f"load average (1, 5, 15 min) {load_before} before the run: wall time includes "
                "waiting for a CPU, CPU time does not",
                *([agreement] if agreement else []),
            ],
            tools=("ranx", "scipy"),
        )


if __name__ == "__main__":
    main()
