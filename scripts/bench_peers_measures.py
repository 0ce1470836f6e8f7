"""The measures' case of the peers benchmark: one call per tool computing five measures.

The same data as ``scripts/bench_peers.py`` (its NDCG case), scored on nDCG@k, P@k, R@100, AP
and RR@k by pytrec_eval, ranx and ir_measures, each in its own names, and by fastndcg under
that tool's preset, so that each pair computes the same numbers. The table goes to the Markdown
printed and, with ``--json``, to the ``"measures"`` section of ``docs/benchmarks/peers.json``
(the NDCG table in that file is kept).

Usage::

    python scripts/bench_peers_measures.py                  # 100,000 queries
    python scripts/bench_peers_measures.py --queries 5000 --budget 5

Method (the NDCG case's, ``scripts/bench_peers.py``, where not said here)
-------------------------------------------------------------------------
The measures
    pytrec_eval: ``ndcg_cut.k``, ``P.k``, ``recall.100``, ``map``, ``recip_rank`` (trec_eval has
    no RR@k: its RR reads the whole list); ranx: ``ndcg@k``, ``precision@k``, ``recall@100``,
    ``map``, ``mrr@k``; ir_measures: ``nDCG@k``, ``P@k``, ``R@100``, ``AP``, ``RR@k`` through its
    default providers. fastndcg gets the same names with ``preset=`` the tool.
Checked before timed
    Each tool runs in a process of its own, once on the queries it is then timed on; on those
    queries its values must equal, per query and per measure (1e-9), those of both fastndcg
    calls under its preset: ``evaluate`` on the arrays (``ties="stable"``: the document ids of
    ``bench_peers.as_dicts`` decrease along a list, so trec_eval's order of tied scores, by id
    descending, is the input order) and ``evaluate_run`` on tables carrying those ids (which
    orders ties by id as each tool or ir_measures provider does). A measure that differs is
    reported (query, both values) and left out of every row of that tool, and the command
    exits with status 1: it is a fastndcg bug to file, not a figure. Not compared: the queries
    whose tie order a preset documents as not reproduced (ranx's quicksort of a list of over
    15 documents with tied scores: :data:`UNREPRODUCED`); the table says how many.
Timings
    Compile time is kept out (every call runs once first). The floor and the fastndcg calls run
    in the main process in rounds, every target once per round (the floor many times), best of
    the rounds, up to ``--repeat`` rounds within ``--budget`` seconds. A tool is timed in its
    process, the best of up to ``--repeat`` runs within ``--budget`` seconds, on the first N
    queries (N sized from a pilot run) and scaled to the full data per row. The tools' rows
    include building their input from the NumPy arrays (dicts of dicts, ``Qrels``/``Run``)
    unless they say "prebuilt"; fastndcg's ``evaluate`` reads the arrays as they are, and its
    ``evaluate_run`` row reads Arrow tables built before.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import bench_peers as peers
import numpy as np
from bench_peers import (
    F64_TOL,
    RESULT_TAG,
    SLOW_WARM_QUERIES,
    WARM_QUERIES,
    Context,
    Peer,
    Row,
    Target,
    as_dicts,
    floor_target,
    head,
    numba_threads_kept,
    subset_size,
    version,
)

import fastndcg
from fastndcg.synthetic import Synthetic

MEASURES = {  # each tool's names for nDCG@k, P@k, R@100, AP, RR@k ({k}: --k)
    "pytrec_eval": ("ndcg_cut.{k}", "P.{k}", "recall.100", "map", "recip_rank"),
    "ranx": ("ndcg@{k}", "precision@{k}", "recall@100", "map", "mrr@{k}"),
    "ir_measures": ("nDCG@{k}", "P@{k}", "R@100", "AP", "RR@{k}"),
}
TOOLS = {  # --peers names; the preset of each is its name
    "pytrec_eval": peers.PEERS["pytrec_eval"],
    "ranx": peers.PEERS["ranx"],
    "ir_measures": Peer("ir_measures", "ir-measures", "ir_measures"),
}
COLUMNS = [
    "implementation",
    "measures",
    "what is timed",
    "seconds",
    "relative to floor",
    "rows/s",
    "agreement with the tool (max abs diff; queries differing)",
]


def names_of(tool: str, k: int) -> tuple[str, ...]:
    """The tool's names of the five measures."""
    return tuple(name.format(k=k) for name in MEASURES[tool])


# -- the tools: their timed calls, values as (queries x measures) --------------------------------


def pytrec_eval_targets(ctx: Context, names: tuple[str, ...]) -> list[Target]:
    """pytrec_eval end to end: dicts from the arrays, ``RelevanceEvaluator``, ``evaluate``."""
    import pytrec_eval

    keys = [name.replace(".", "_") for name in names]  # how it reports ndcg_cut.10 (ndcg_cut_10)

    def run(data: Synthetic) -> dict[str, dict[str, float]]:
        qrels, ranking = as_dicts(data)
        return pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(ranking)

    def values(data: Synthetic, out: dict[str, dict[str, float]]) -> np.ndarray:
        return np.array(
            [[out[qid][key] for key in keys] for qid in peers._query_ids(data.n_queries)]
        )

    return [
        Target(
            f"pytrec_eval {version('pytrec-eval-terrier')}",
            "dicts from the arrays, `RelevanceEvaluator`, `evaluate`",
            run,
            values=values,
            slow=True,
        )
    ]


def ranx_targets(ctx: Context, names: tuple[str, ...]) -> list[Target]:
    """ranx end to end from the arrays, and ``evaluate`` on ``Qrels``/``Run`` built before."""
    import ranx

    def build(data: Synthetic) -> tuple[Any, Any]:
        qrels, ranking = as_dicts(data)
        return ranx.Qrels(qrels), ranx.Run(ranking)

    def evaluate(qrels: Any, ranking: Any) -> Any:
        with numba_threads_kept():  # ranx sets Numba's thread count and leaves it
            return ranx.evaluate(
                qrels, ranking, list(names), return_mean=False, threads=ctx.threads
            )

    def values(state: Any, out: Any) -> np.ndarray:
        return np.column_stack([out[name] for name in names] if len(names) > 1 else [out])

    name = f"ranx {version('ranx')}"
    return [
        Target(
            f"{name} end to end",
            "dicts from the arrays, `Qrels`, `Run`, `evaluate`",
            lambda data: evaluate(*build(data)),
            values=values,
            slow=True,
        ),
        Target(
            f"{name} prebuilt",
            "`evaluate` on `Qrels` and `Run` built before",
            lambda objects: evaluate(*objects),
            build,
            values,
            slow=True,
        ),
    ]


def ir_measures_targets(ctx: Context, names: tuple[str, ...]) -> list[Target]:
    """ir_measures end to end: dicts from the arrays, ``iter_calc`` (per-query values)."""
    import ir_measures

    parsed = [ir_measures.parse_measure(name) for name in names]
    column = {str(measure): j for j, measure in enumerate(parsed)}

    def values(data: Synthetic, out: list[Any]) -> np.ndarray:
        row = {qid: i for i, qid in enumerate(peers._query_ids(data.n_queries))}
        table = np.full((data.n_queries, len(names)), np.nan)
        for metric in out:
            table[row[metric.query_id], column[str(metric.measure)]] = metric.value
        return table

    return [
        Target(
            f"ir_measures {version('ir-measures')}",
            "dicts from the arrays, `iter_calc` (default providers)",
            lambda data: list(ir_measures.iter_calc(parsed, *as_dicts(data))),
            values=values,
            slow=True,
        )
    ]


ADAPTERS: dict[str, Callable[[Context, tuple[str, ...]], list[Target]]] = {
    "pytrec_eval": pytrec_eval_targets,
    "ranx": ranx_targets,
    "ir_measures": ir_measures_targets,
}


# -- fastndcg under a tool's preset ---------------------------------------------------------------


def as_tables(data: Synthetic) -> tuple[Any, Any]:
    """Arrow qrels (qid, docid, grade) and run (qid, docid, score), ids as in ``as_dicts``."""
    import pyarrow as pa

    lengths = np.diff(data.offsets)
    query = np.repeat(np.arange(data.n_queries), lengths)
    position = np.arange(data.n_rows) - np.repeat(data.offsets[:-1], lengths)
    qid = pa.array(peers._query_ids(data.n_queries)).take(pa.array(query))
    docid = pa.array(peers._doc_ids(data)).take(pa.array(position))
    qrels = pa.table({"qid": qid, "docid": docid, "grade": data.grades})
    return qrels, pa.table({"qid": qid, "docid": docid, "score": data.scores})


def fastndcg_calls(ctx: Context, tool: str, names: tuple[str, ...]) -> list[Target]:
    """``evaluate`` on the arrays and ``evaluate_run`` on tables, under the tool's preset."""
    shown = ", ".join(names)

    def on_arrays(data: Synthetic) -> np.ndarray:
        return fastndcg.evaluate(
            data.grades,
            data.scores,
            offsets=data.offsets,
            measures=list(names),
            preset=tool,
            ties="stable",
            n_threads=ctx.threads,
        ).per_query

    def on_tables(tables: tuple[Any, Any]) -> np.ndarray:
        return fastndcg.evaluate_run(
            *tables, measures=list(names), preset=tool, n_threads=ctx.threads
        ).per_query

    return [
        Target(
            f"fastndcg, preset={tool!r}",
            f"`evaluate(grades, scores, offsets=..., measures=[{shown}], preset={tool!r}, "
            "ties='stable')` on the arrays",
            on_arrays,
        ),
        Target(
            f"fastndcg run, preset={tool!r}",
            f"`evaluate_run(qrels, run, measures=[{shown}], preset={tool!r})` on Arrow tables "
            "of string ids built before",
            on_tables,
            as_tables,
        ),
    ]


# -- the check ------------------------------------------------------------------------------------

# the lists where a tool's order of tied scores is not reproduced, as its preset documents
# (fastndcg/_core/measures/definitions.py): ranx's Numba quicksort scrambles tied scores in lists
# of more than 15 documents, which AP and R@100 read
UNREPRODUCED = {"ranx": "tied scores in lists over 15 documents, ranx's quicksort orders them"}
RANX_ORDERED = 15


def unreproduced(tool: str, data: Synthetic) -> np.ndarray:
    """Which queries the tool's preset does not claim to reproduce (see UNREPRODUCED)."""
    if tool not in UNREPRODUCED:
        return np.zeros(data.n_queries, dtype=bool)
    return peers.tied_queries(data)[1] & (np.diff(data.offsets) > RANX_ORDERED)


def compare(
    tool_values: np.ndarray, ours: np.ndarray, names: tuple[str, ...], query_ids: list[str]
) -> tuple[str, list[dict[str, Any]]]:
    """The agreement cell over every measure, and one entry per measure that differs.

    ``tool_values`` and ``ours``: one row per query of ``query_ids``, one column per measure.
    """
    diff = np.abs(tool_values - ours)
    both_nan = np.isnan(tool_values) & np.isnan(ours)
    diff = np.where(both_nan, 0.0, np.where(np.isnan(diff), np.inf, diff))
    differs = diff > F64_TOL
    mismatches = []
    for j in np.flatnonzero(differs.any(axis=0)):
        q = int(np.argmax(differs[:, j]))
        mismatches.append(
            {
                "measure": names[j],
                "query": query_ids[q],
                "tool": float(tool_values[q, j]),
                "fastndcg": float(ours[q, j]),
                "queries": int(differs[:, j].sum()),
            }
        )
    cell = (
        f"{diff.max(initial=0.0):.1e}; {int(differs.any(axis=1).sum()):,} of "
        f"{len(query_ids):,} > {F64_TOL:.0e}"
    )
    return cell, mismatches


def check(tool: str, ctx: Context, data: Synthetic) -> dict[str, Any]:
    """Run the tool once on the queries it will be timed on; compare with both fastndcg calls.

    Returns the measures kept (those every call agrees on), the agreement of each fastndcg
    call (by row name), and the mismatches (each with the call that gave it).
    """
    names = names_of(tool, ctx.k)
    target = ADAPTERS[tool](ctx, names)[0]
    target.run(target.prepare(head(data, SLOW_WARM_QUERIES)))
    subset = head(data, subset_size(target, data, ctx))
    state = target.prepare(subset)
    compared = ~unreproduced(tool, subset)
    query_ids = np.array(peers._query_ids(subset.n_queries))[compared].tolist()
    tool_values = target.values(state, target.run(state))[compared]
    ours = {
        call.name: call.run(call.prepare(subset))[compared]
        for call in fastndcg_calls(ctx, tool, names)
    }
    mismatches = [
        {**entry, "call": name}
        for name, values in ours.items()
        for entry in compare(tool_values, values, names, query_ids)[1]
    ]
    left_out = {entry["measure"] for entry in mismatches}
    kept = [j for j, name in enumerate(names) if name not in left_out]
    skipped = int(subset.n_queries - compared.sum())
    agreement = {  # over the measures timed
        name: compare(tool_values[:, kept], values[:, kept], names, query_ids)[0]
        + (f" ({skipped:,} queries not compared: {UNREPRODUCED[tool]})" if skipped else "")
        for name, values in ours.items()
    }
    return {"kept": [names[j] for j in kept], "agreement": agreement, "mismatches": mismatches}


# -- measuring ------------------------------------------------------------------------------------


def worker(args: argparse.Namespace) -> None:
    """Check and time one tool in this (fresh) process; print the result as one tagged line."""
    ctx, data = peers.setup(args)
    label = TOOLS[args.worker].label
    try:
        checked = check(args.worker, ctx, data)
        rows = [Row(label, "", agreement="every measure differs from fastndcg: not timed")]
        if checked["kept"]:
            timed = ADAPTERS[args.worker](ctx, tuple(checked["kept"]))
            rows = [peers.measure_safely(target, data, ctx) for target in timed]
    except Exception as error:  # installed but cannot be imported, set up or run
        checked = {"kept": [], "agreement": {}, "mismatches": []}
        rows = [Row(label, "", agreement=f"failed: {type(error).__name__}: {error}")]
    payload = {
        "data": peers.fingerprint(data),
        "rows": [dataclasses.asdict(row) for row in rows],
        **checked,
    }
    print(RESULT_TAG + json.dumps(payload), flush=True)


def run_worker(tool: str, args: argparse.Namespace, ctx: Context, data: Synthetic) -> dict:
    """Check and time a tool in a child process of its own; a failure as a row."""
    failed = {"kept": [], "agreement": {}, "mismatches": []}
    label = TOOLS[tool].label
    if importlib.util.find_spec(TOOLS[tool].module) is None:
        return {**failed, "rows": [Row(label, "", agreement="not installed")]}
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", tool]
    for option in ("queries", "k", "seed", "budget", "repeat"):
        command += [f"--{option}", str(getattr(args, option))]
    command += ["--threads", str(ctx.threads)]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    results = [line for line in done.stdout.splitlines() if line.startswith(RESULT_TAG)]
    if done.returncode != 0 or not results:
        reason = f"failed: worker exit status {done.returncode}"
        return {**failed, "rows": [Row(label, "", agreement=reason)]}
    payload = json.loads(results[-1][len(RESULT_TAG) :])
    if payload["data"] != peers.fingerprint(data):
        reason = "failed: the worker generated different data"
        return {**failed, "rows": [Row(label, "", agreement=reason)]}
    payload["rows"] = [Row(**row) for row in payload["rows"]]
    return payload


def in_rounds(targets: list[Target], data: Synthetic, ctx: Context) -> list[Row]:
    """Every target once per round (the floor several times), best of up to --repeat rounds."""
    states = []
    for target in targets:
        target.run(target.prepare(head(data, WARM_QUERIES)))  # compile time kept out
        states.append(target.prepare(data))
    best = [float("inf")] * len(targets)
    spent = 0.0
    for _ in range(ctx.repeat):
        started = time.perf_counter()
        for i, (target, state) in enumerate(zip(targets, states, strict=True)):
            for _ in range(max((target.repeat or ctx.repeat) // ctx.repeat, 1)):
                start = time.perf_counter()
                target.run(state)
                best[i] = min(best[i], time.perf_counter() - start)
        took = time.perf_counter() - started
        spent += took
        if spent + took > ctx.budget:
            break
    return [
        Row(
            target.name,
            target.timed,
            seconds=seconds,
            measured_seconds=seconds,
            n_queries=data.n_queries,
            n_rows=data.n_rows,
        )
        for target, seconds in zip(targets, best, strict=True)
    ]


# -- report ---------------------------------------------------------------------------------------


def cells(rows: list[Row], measures: dict[str, str], data: Synthetic) -> list[list[str]]:
    """The bench_peers cells with the measures' column second."""
    table = peers.table_cells(rows, data)
    return [[row[0], measures.get(row[0], ""), *row[1:]] for row in table]


def notes(mismatches: list[dict[str, Any]], ctx: Context) -> list[str]:
    """What the table's columns mean, and every measure left out."""
    out = [
        "*relative to floor*: seconds over those of one parallel streaming read of grades and "
        "scores. The floor and fastndcg's calls ran in the same process in alternated rounds "
        f"(best of up to {ctx.repeat} rounds within {ctx.budget:g} s); each tool in a fresh "
        f"process of its own, best of up to {ctx.repeat} runs within {ctx.budget:g} s, on the "
        "first N queries and scaled to the full data per row; compile time kept out.",
        "*included*: the tools' rows time building their input from the NumPy arrays (dicts "
        "of dicts, ranx's `Qrels` and `Run`) unless they say prebuilt; fastndcg's `evaluate` "
        "reads the arrays as they are; its `evaluate_run` row reads Arrow tables built before.",
        "*agreement*: before timing, per query and per measure, on the queries the tool ran on, "
        "fastndcg's values under the tool's preset against the tool's (NaN equals NaN), "
        "except on queries whose order of tied scores the preset documents as not reproduced "
        "(ranx's quicksort of lists over 15 documents). trec_eval has no RR@k: pytrec_eval's "
        "`recip_rank` reads the whole list.",
    ]
    out += [
        f"**left out**: {entry['measure']} under {entry['call']}: query {entry['query']} "
        f"gives {entry['fastndcg']!r}, the tool {entry['tool']!r} (queries differing: "
        f"{entry['queries']:,}); a fastndcg bug to fix, not timed."
        for entry in mismatches
    ]
    return out


def markdown(table: list[list[str]], title: str, facts: dict[str, Any], notes: list[str]) -> str:
    """Header, table and notes as one Markdown document."""
    lines = [
        f"## {title}",
        "",
        f"- Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- Command: `{facts['command']}`",
        *peers.machine_lines([])[:2],  # the machine and fastndcg's software
        f"- Tools: {', '.join(facts['tools'])}",
        f"- Data: {facts['data']}",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|---|---|---|--:|--:|--:|---|",
        *("| " + " | ".join(row) + " |" for row in table),
        "",
        *(f"- {note}" for note in notes),
    ]
    return "\n".join(lines) + "\n"


# -- main -----------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Time fastndcg's measures against pytrec_eval, ranx and ir_measures."
    )
    parser.add_argument("--queries", type=int, default=100_000, help="queries (default 100000)")
    parser.add_argument("--k", type=int, default=10, help="cutoff of nDCG, P, RR (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="data seed (default 0)")
    parser.add_argument("--threads", type=int, default=None, help="threads (default all)")
    parser.add_argument("--peers", default=",".join(TOOLS), help="comma-separated tools")
    parser.add_argument(
        "--budget", type=float, default=60.0, help="seconds for one run of a tool (default 60)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs or rounds (default 5)")
    parser.add_argument("--out", type=Path, help="also write the Markdown to this file")
    parser.add_argument(
        "--json", type=Path, help="also write the table into this file's 'measures' section"
    )
    parser.add_argument("--worker", choices=list(TOOLS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.peers = [name.strip() for name in args.peers.split(",") if name.strip()]
    unknown = sorted(set(args.peers) - set(TOOLS))
    if unknown:
        parser.error(f"unknown tools {unknown}; choose from {', '.join(TOOLS)}")
    if min(args.queries, args.k, args.repeat) < 1 or args.budget <= 0:
        parser.error("--queries, --k, --repeat and --budget must be positive")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    """Check and time every tool, then fastndcg's calls; print (and write) the table."""
    args = parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    script = ["python", "scripts/bench_peers_measures.py"]
    command = shlex.join([*script, *(sys.argv[1:] if argv is None else argv)])
    print(f"generating {args.queries:,} queries ...", file=sys.stderr, flush=True)
    ctx, data = peers.setup(args)
    fastndcg.warmup()
    checked = {}
    for tool in args.peers:
        print(f"checking and timing {tool} ...", file=sys.stderr, flush=True)
        checked[tool] = run_worker(tool, args, ctx, data)
    calls = {  # a tool's measures that could not be checked are not timed
        tool: fastndcg_calls(ctx, tool, tuple(result["kept"])) if result["kept"] else []
        for tool, result in checked.items()
    }
    print("timing the floor and fastndcg in rounds ...", file=sys.stderr, flush=True)
    ours = [floor_target(ctx), *(call for group in calls.values() for call in group)]
    timed = {row.name: row for row in in_rounds(ours, data, ctx)}
    rows, measures = [timed["floor"]], {}
    for tool, result in checked.items():
        group = [timed[call.name] for call in calls[tool]]
        for row in group:
            row.agreement = result["agreement"][row.name]
        for row in result["rows"]:
            row.agreement = row.agreement or "the reference of the two rows above"
        rows += group + result["rows"]
        measures.update({row.name: ", ".join(result["kept"]) for row in group + result["rows"]})
    mismatches = [entry for result in checked.values() for entry in result["mismatches"]]
    for entry in mismatches:
        print(f"MISMATCH, left out of the timing: {entry}", file=sys.stderr, flush=True)
    lengths = np.diff(data.offsets)
    ties = peers.tied_rows(data)
    n_measures = len(MEASURES["ranx"])
    title = (
        f"{n_measures} measures on {data.n_queries:,} queries: fastndcg under each tool's preset"
    )
    facts = {
        "command": command,
        "tools": [
            f"{TOOLS[tool].label} {version(TOOLS[tool].distribution)}" for tool in args.peers
        ],
        "data": f"`make_synthetic({data.n_queries}, seed={args.seed})` (the NDCG table's at 100,000): "
        f"{data.n_rows:,} rows (lists of 1-{lengths.max()}), int8 grades 0-4 (relevant: 1 and "
        f"above), float32 scores; {ties[0]:,} rows in {ties[1]:,} queries tie with another "
        f"score of their query; {ctx.threads} threads for fastndcg, the floor and ranx, one "
        "for pytrec_eval and ir_measures",
    }
    table = cells(rows, measures, data)
    text = markdown(table, title, facts, notes(mismatches, ctx))
    print(text)
    if args.out:
        args.out.write_text(text)
    if args.json:
        peers.bench_report.write(
            args.json,
            section="measures",
            title=title,
            command=command,
            columns=COLUMNS,
            rows=table,
            data=facts["data"],
            notes=notes(mismatches, ctx),
            tools=tuple(TOOLS[tool].distribution for tool in args.peers),
        )
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
