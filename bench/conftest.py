"""Benchmark fixtures: generated data, sized by FASTNDCG_BENCH_QUERIES (default 1,000,000).

Every group of benchmarks includes the floor (one streaming read of the same arrays), so the
relative column pytest-benchmark prints is the ratio to the floor measured in the same run.
"""

from __future__ import annotations

import os
import re
import shlex

import numpy as np
import pytest

from fastndcg.synthetic import make_synthetic

N_QUERIES = int(os.environ.get("FASTNDCG_BENCH_QUERIES", "1000000"))

# lines for the "peak memory" section printed after the timings
PEAK_MEMORY: list[str] = []


def pytest_addoption(parser):
    parser.addoption(
        "--json",
        dest="docs_json",
        default=None,
        metavar="PATH",
        help="also write the timings as one table here (docs/benchmarks/kernels.json)",
    )


def pytest_terminal_summary(terminalreporter):
    if PEAK_MEMORY:
        terminalreporter.section("peak memory allocated during one call (tracemalloc)")
        for line in PEAK_MEMORY:
            terminalreporter.write_line(line)


def _case(name: str) -> str:
    """``test_ties[floor-...]`` -> its parameters, as the table names the case."""
    found = re.search(r"\[(.*)\]$", name)
    return found.group(1).replace("-", ", ") if found else name


def _milliseconds(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms" if seconds < 10 else f"{seconds:,.2f} s"


def pytest_sessionfinish(session):
    """With ``--json PATH``: every group's timings and their ratio to the group's floor."""
    path = session.config.getoption("docs_json")
    benchmarks = getattr(getattr(session.config, "_benchmarksession", None), "benchmarks", [])
    if not path or not benchmarks:
        return
    import report

    groups: dict[str, list] = {}
    for bench in benchmarks:
        if bench.stats is not None and not bench.has_error:
            groups.setdefault(bench.group or "", []).append(bench)
    rows = []
    for group, members in groups.items():
        floor = next((b for b in members if _case(b.name).startswith("floor")), None)
        for bench in members:
            best = bench.stats.min
            ratio = "1x" if bench is floor else f"{best / floor.stats.min:.2f}x" if floor else ""
            peak = bench.extra_info.get("peak_bytes")
            rows.append(
                [
                    group,
                    _case(bench.name),
                    _milliseconds(best),
                    _milliseconds(bench.stats.median),
                    ratio,
                    f"{peak / 2**20:,.1f} MiB" if peak is not None else "",
                ]
            )
    report.write(
        path,
        title=f"Kernels: {N_QUERIES:,} queries in memory",
        command=os.environ.get("FASTNDCG_BENCH_COMMAND")
        or shlex.join(["python", "-m", "pytest", *session.config.invocation_params.args]),
        columns=["group", "case", "min", "median", "relative to the group's floor", "peak memory"],
        rows=rows,
        data=f"`make_synthetic({N_QUERIES})` (mean list length about 100), float64 grades and "
        'scores unless the case says otherwise; the default `ties="average"`',
        notes=[
            "Every group times its own floor (one streaming read of the same arrays, on as "
            "many threads as the kernel it is compared with) in the same run; *min* is the "
            "best of the rounds, compile time kept out. *peak memory*: what NumPy allocates "
            "during one call (tracemalloc; the kernels' scratch is not counted).",
        ],
    )


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
