"""The ``fastndcg`` command: score, compare systems, explain a query, runtime facts, warm up.

Exit status: 0 on success, 2 for bad input or options (one line on stderr), 130 when
interrupted, 1 for a fault of fastndcg itself (``--debug`` shows its traceback), and 1 from
``fastndcg compare --fail-if-worse`` when a system is significantly worse than the baseline
(one line on stderr naming them).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from fastndcg._core.measures.kinds import TREC_OFFICIAL
from fastndcg._errors import FastNDCGError, InputError
from fastndcg._result import NDCGResult, format_rows
from fastndcg.cli.messages import render
from fastndcg.cli.output import (
    definition_line,
    definition_of,
    per_query_rows,
    query_lines,
    summary_rows,
    write_per_query,
)
from fastndcg.cli.parser import build_parser
from fastndcg.cli.sources import (
    UsageError,
    call_options,
    check_inputs,
    compare_sources,
    measure_sources,
    naming,
    score_sources,
    trec_eval_order,
)

__all__ = ["main"]


# errors that are the user's to fix: exit status 2, one line (a missing file or optional
# package is one too)
_USER_ERRORS = (FastNDCGError, OSError, ImportError)
ENV_DEBUG = "FASTNDCG_DEBUG"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    0 on success; 2 for bad input or options (one line on stderr); 130 when interrupted; 1
    for anything else, which is a fault of fastndcg: it says so, and ``--debug`` (or
    ``FASTNDCG_DEBUG=1``) shows the traceback.
    """
    args = build_parser().parse_args(argv)
    debug = args.debug or os.environ.get(ENV_DEBUG, "") not in ("", "0")
    notes = _Notes()
    logger = logging.getLogger("fastndcg")
    level = logger.level
    logger.addHandler(notes)
    logger.setLevel(logging.INFO)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line
            return _run(args, argv)
    except KeyboardInterrupt:
        if debug:
            raise
        print("fastndcg: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader stopped early (| head): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except _USER_ERRORS as exc:
        if debug:
            raise
        print(f"fastndcg: error: {render(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:
        if debug:
            raise
        print(
            f"fastndcg: internal error: {type(exc).__name__}: {exc}. This is a fault of "
            f"fastndcg, not of your input: rerun with --debug (or {ENV_DEBUG}=1) for the "
            "traceback, and please report it",
            file=sys.stderr,
        )
        return 1
    finally:
        logger.removeHandler(notes)
        logger.setLevel(level)


class _Notes(logging.Handler):
    """fastndcg's log records (a compile that took long) as one line each on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"fastndcg: note: {record.getMessage()}", file=sys.stderr, flush=True)


def _one_line(message: Warning | str, *args: object, **kwargs: object) -> None:
    """A warning as the command shows it: one line on stderr."""
    text = str(message).removeprefix("fastndcg: ")
    print(f"fastndcg: warning: {text}", file=sys.stderr)


def _run(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """The command ``args`` asks for."""
    if args.command == "info":
        from fastndcg._runtime import info

        for key, value in info().items():
            print(f"{key + ':':34s} {value}")
        return 0
    if args.command == "warmup":
        from fastndcg._runtime import cache_dir, warmup

        seconds = warmup(compare=args.compare)
        print(f"kernels ready in {seconds:.2f} s (cache: {cache_dir()})")
        return 0
    if args.command == "presets":
        print(preset_listing(), flush=True)
        return 0
    given = set(vars(build_parser(keep_defaults=False).parse_args(argv))) - {"debug"}
    trec_eval_order(args)
    if args.command in ("compare", "explain"):
        from fastndcg.cli.compare import compare_command, explain_command

        run = compare_command if args.command == "compare" else explain_command
        return run(args, given)
    check_inputs(args, given)
    names = measure_names(args, given)
    if names:
        return _measures(args, given, names)
    if args.compare_presets is not None:
        rows = compare_sources(args, given)
        print(format_rows(rows, args.format, args.digits), flush=True)
        return 0
    _announce_a_compile(args)
    results = score_sources(args, given)
    for source, result in results:
        if result.n_queries == 0:
            judged = ", or no judged query" if args.qrels else ""
            raise InputError(
                f"{source}: no query to score (no rows{judged})",
                where=source,
                fix="give a file with rows",
            )
    _note_trec_eval(args, given)
    lines = args.per_query_lines or args.per_query == "-"
    if args.per_query and args.per_query != "-":
        write_per_query(args.per_query, results)
    called = {"preset": args.preset, **call_options(args, given, trec=bool(args.qrels))}
    definitions = [definition_of(result, called) for _, result in results]
    definition = definitions[0] if all(d == definitions[0] for d in definitions) else None
    if lines and args.format == "table":
        trec_eval = (args.preset or "").startswith("trec_eval")  # its names for its numbers
        print(query_lines(results, args.digits, trec_eval), flush=True)
        return 0
    rows = per_query_rows(results) if lines else summary_rows(results, trec=bool(args.qrels))
    if args.format == "csv":  # the definition in columns of every row
        each = _each(definitions, results, lines)
        rows = [{**row, **_settings(d)} for row, d in zip(rows, each, strict=True)]
    elif args.format == "table" and definition is not None:
        print(definition_line(definition))
    print(format_rows(rows, args.format, args.digits, definition), flush=True)
    return 0


def measure_names(args: argparse.Namespace, given: set[str]) -> list[str]:
    """The measures of ``-m`` (none: NDCG, as always).

    Under ``--preset trec_eval`` on TREC runs without ``-m`` or ``-k``: trec_eval's default
    ones, as ``trec_eval Q R`` prints them.
    """
    if args.measures:
        return list(args.measures)
    trec_eval = (args.preset or "") in ("trec_eval", "trec_eval9")
    if trec_eval and args.qrels and "k" not in given and args.compare_presets is None:
        return list(TREC_OFFICIAL)
    return []


def _measures(args: argparse.Namespace, given: set[str], names: list[str]) -> int:
    """``fastndcg score ... -m NAME ...``: the measures of every TREC run or prediction file."""
    from fastndcg._core.measures import parse_measures

    if "k" in given:
        raise UsageError("-k is nDCG's cutoff: with -m, name nDCG@k (or ndcg_cut.k) instead")
    if args.compare_presets is not None:
        raise UsageError("-m goes with one --preset, not --compare-presets")
    measures = parse_measures(names)
    trec = bool(args.qrels or args.run)
    options = call_options(args, given, trec=trec)
    options.pop("k", None)
    if "relevance_level" in given:
        options["relevance_level"] = args.relevance_level
    if not trec:
        results = measure_sources(args, given, measures, options)
    elif args.engine != "local":
        raise UsageError(f"--engine {args.engine} scores Parquet predictions, not TREC runs")
    else:
        results = _measures_of_runs(args, measures, options)
    if args.per_query and args.per_query != "-":
        write_per_query(args.per_query, results)
    lines = args.per_query_lines or args.per_query == "-"
    rows: list[dict[str, Any]] = []
    label = "run" if trec else "source"
    for source, result in [] if trec and _trec_eval_layout(args) else results:
        if lines:
            for q, query in enumerate(result.query_ids):
                values = dict(zip(result.measures, result.per_query[q].tolist(), strict=True))
                rows.append({label: source, "query_id": str(query), **values})
        else:
            values = dict(zip(result.measures, result.mean.tolist(), strict=True))
            rows.append({label: source, "queries": result.n_queries, **values})
    if rows:
        print(format_rows(rows, args.format, args.digits), flush=True)
    return 0


def _measures_of_runs(
    args: argparse.Namespace, measures: tuple[Any, ...], options: dict[str, Any]
) -> list[tuple[str, Any]]:
    """The measures of every TREC run; in trec_eval's layout, printed as trec_eval does."""
    from fastndcg._core.measures.trec_layout import format_trec_eval
    from fastndcg._evaluate import evaluate_run
    from fastndcg._io.trec_text import read_once

    if not (args.qrels and args.run):
        raise UsageError("TREC scoring needs --qrels and at least one --run")
    qrels = read_once(args.qrels, "qrels")
    lines = args.per_query_lines or args.per_query == "-"
    results = []
    for run in args.run:
        with naming(run, args.qrels):
            result = evaluate_run(qrels, run, measures=list(measures), **options)
        results.append((run, result))
        if not _trec_eval_layout(args):
            continue
        # trec_eval's own layout: queries in byte order, the run's id first
        order = sorted(range(result.n_queries), key=lambda q: str(result.query_ids[q]).encode())
        text = format_trec_eval(
            measures,
            [str(result.query_ids[q]) for q in order],
            result.per_query[order],
            run_id=_run_id(run),
            queries=lines,
            summary=list(result.mean),
        )
        print(text, end="", flush=True)
    return results


def _trec_eval_layout(args: argparse.Namespace) -> bool:
    """Whether the measures of TREC runs are printed as trec_eval prints them."""
    return (args.preset or "").startswith("trec_eval") and args.format == "table"


def _run_id(path: str) -> str | None:
    """The run's id as trec_eval prints it: the tag column of its first line."""
    with open(path, "rb") as file:
        for line in file:
            fields = line.split()
            if len(fields) >= 6 and not line.startswith(b"#"):
                return fields[5].decode(errors="replace")
    return None


def _settings(definition: dict[str, Any]) -> dict[str, Any]:
    """A definition as CSV columns (the cutoffs name the value columns already).

    The rule for judged queries absent from a run is ``missing_rule``: ``missing`` counts them.
    """
    return {
        "missing_rule" if name == "missing" else name: value
        for name, value in definition.items()
        if name != "k"
    }


def _each(
    definitions: list[dict[str, Any]], results: list[tuple[str, NDCGResult]], per_query: bool
) -> list[dict[str, Any]]:
    """The definition of each output row: one row per source, or per query of each source."""
    return [
        definition
        for definition, (_, result) in zip(definitions, results, strict=True)
        for _ in range(result.n_queries if per_query else 1)
    ]


def _note_trec_eval(args: argparse.Namespace, given: set[str]) -> None:
    """On TREC runs without a preset: one line on how the number differs from trec_eval's."""
    if not args.qrels or args.preset is not None or {"gain", "ties"} <= given:
        return
    print(
        "fastndcg: note: these are fastndcg's defaults (gain exp2, ties average unless given); "
        "trec_eval's ndcg and ndcg_cut use gain linear and ties by document id: --preset "
        "trec_eval reproduces them",
        file=sys.stderr,
    )


def _announce_a_compile(args: argparse.Namespace) -> None:
    """On a terminal, say in one line that the first call compiles the kernels."""
    if not sys.stderr.isatty():
        return
    from fastndcg._backends import resolve_backend
    from fastndcg._contract import CompiledBackend, capable

    try:
        backend = resolve_backend(args.backend)
    except (ValueError, ImportError):  # the command itself reports it
        return
    if capable(backend, CompiledBackend) and not backend.compiled():
        print(
            "fastndcg: compiling the kernels on first use (once, 10-60 s; `fastndcg warmup` "
            "does it ahead of time)",
            file=sys.stderr,
            flush=True,
        )


def preset_listing() -> str:
    """Every preset with the tool it reproduces and its settings (``fastndcg presets``)."""
    from fastndcg._presets import PRESETS
    from fastndcg._presets.registry import _short

    blocks = []
    for name, preset in PRESETS.items():
        settings = ", ".join(f"{key} {_short(value)}" for key, value in preset.options.items())
        blocks.append(f"{name}: {preset.tool}\n  {settings}")
    return "\n".join(blocks)
