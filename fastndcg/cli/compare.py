"""``fastndcg compare`` and ``fastndcg explain``: systems compared, one query explained.

The systems are TREC runs (``--qrels`` with several ``--run``, named after the files: see
:func:`fastndcg._compare.conveniences.system_names`) or prediction files: one file whose score
columns are the systems (``--scores A=score_a,B=score_b``), or several files holding one system each
(named after the files, their score column ``--scores COLUMN``, default ``score``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fastndcg._compare.conveniences import (
    compare_scored,
    score_runs,
    score_tables,
    system_names,
)
from fastndcg._compare.explain import explain_systems
from fastndcg._compare.explain_measures import explained_measure
from fastndcg._compare.explanation import render
from fastndcg._compare.measure_explanation import render_measure
from fastndcg._compare.report import COLUMNS, PairedComparison
from fastndcg._compare.runs import comparison_options
from fastndcg._core.options import COMPARE_OPTIONS, DEFINITION
from fastndcg._io.paths import check_output, plot_formats, write_whole
from fastndcg._result import format_rows
from fastndcg.cli.sources import (
    RUN_ONLY,
    UsageError,
    check_parquet,
    delimiter_of,
    naming,
    read_delimited,
)

_SCORING_NAMES = tuple(name for name in DEFINITION if name != "seed")  # seed: the comparison's


def _systems_of_files(args: argparse.Namespace) -> dict[str, tuple[Any, str]]:
    """(table, score column) of every system given as prediction files."""
    if not args.predictions:
        raise UsageError(
            "nothing to compare: give a predictions file with --scores, or --qrels and "
            "several --run"
        )
    tables = {}
    for source in args.predictions:
        path = Path(source)
        delimiter = delimiter_of(path)
        with naming(source):
            if delimiter is not None:
                tables[source] = read_delimited(path, delimiter)
            else:
                check_parquet(path)
                import pyarrow.parquet as pq

                tables[source] = pq.read_table(path)
    columns = _parse_scores(args.scores)
    if len(tables) == 1:
        table = next(iter(tables.values()))
        if columns is None:
            raise UsageError(
                "one predictions file: name the systems' score columns with --scores "
                "(e.g. --scores A=score_a,B=score_b)"
            )
        return {name: (table, column) for name, column in columns.items()}
    if columns is not None and len(columns) != 1:
        raise UsageError(
            "several predictions files are one system each: --scores names their one score "
            f"column; got {args.scores!r}"
        )
    column = next(iter(columns.values())) if columns else "score"
    names = system_names(list(tables))
    return {name: (table, column) for name, table in zip(names, tables.values(), strict=True)}


def _parse_scores(text: str | None) -> dict[str, str] | None:
    """``A=score_a,B=score_b`` (or ``score_a,score_b``) as {system: column}."""
    if text is None:
        return None
    columns: dict[str, str] = {}
    for part in text.split(","):
        name, equals, column = part.strip().partition("=")
        if not equals:
            name = column = name
        name, column = name.strip(), column.strip()
        if not name or not column:
            raise UsageError(f"--scores takes NAME=COLUMN,... or COLUMN,...; got {text!r}")
        if name in columns:
            raise UsageError(f"--scores names the system {name!r} twice; give each system once")
        columns[name] = column
    return columns


def _scoring(args: argparse.Namespace, given: set[str], trec: bool) -> dict[str, Any]:
    """The scoring's keyword options (a preset's settings stand for those not given)."""
    names = (*_SCORING_NAMES, *(RUN_ONLY[1:] if trec else ()))  # missing: the comparison's
    options = {
        name: getattr(args, name)
        for name in names
        if hasattr(args, name) and (name in given or args.preset is None)
    }
    if options.get("ideal", "") is None:
        if trec:
            del options["ideal"]
        else:
            options["ideal"] = "recall"
    if not trec:
        options.update(qid=args.qid, grade=args.grade)
    return options


def _check(args: argparse.Namespace) -> bool:
    """Refuse inputs of both kinds, an input given twice, or a plot path it cannot write.

    True for TREC runs.
    """
    trec = bool(args.qrels or args.run)
    if trec and args.predictions:
        raise UsageError("give either a predictions file or --qrels/--run, not both")
    if trec and not (args.qrels and args.run):
        raise UsageError("TREC runs need --qrels and --run (one per system)")
    if trec and args.scores is not None:
        raise UsageError("--scores names columns of a predictions file, not of TREC runs")
    sources = args.run if trec else args.predictions
    repeated = [source for i, source in enumerate(sources) if source in sources[:i]]
    if repeated:
        raise UsageError(f"{repeated[0]} is given twice; give each input once")
    if getattr(args, "plot", None):  # before the work: a path it cannot write, or an input
        check_output(args.plot, "plot", [*sources, *([args.qrels] if trec else [])], plot_formats())
    return trec


def _score(
    args: argparse.Namespace, given: set[str], seed: int, missing: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every system's result, and where to read its rows again."""
    trec = _check(args)
    options = _scoring(args, given, trec)
    preset = args.preset
    measures = getattr(args, "measures", None)
    if measures:
        if not trec:
            raise UsageError("-m compares measures of TREC runs: give --qrels and --run")
        if "k" in given:
            raise UsageError("-k is nDCG's cutoff: with -m, name nDCG@k (or ndcg_cut.k) instead")
        options.pop("k", None)
        if "relevance_level" in given:
            options["relevance_level"] = args.relevance_level
    elif "relevance_level" in given:
        raise UsageError("-l is the measures' relevance level: give it with -m")
    if trec:
        names = system_names(args.run)  # errors in the files name their lines
        return score_runs(
            args.qrels,
            dict(zip(names, args.run, strict=True)),
            seed=seed,
            missing=missing,
            preset=preset,
            measures=list(measures) if measures else None,
            **options,
        )
    systems = _systems_of_files(args)
    qid, grade = options.pop("qid"), options.pop("grade")
    return score_tables(systems, qid=qid, grade=grade, seed=seed, preset=preset, **options)


def compare_command(args: argparse.Namespace, given: set[str]) -> int:
    """``fastndcg compare``: the comparison printed; 1 with ``--fail-if-worse`` and a regression."""
    results, sources = _score(args, given, args.seed, args.missing)
    if len(results) < 2:
        raise UsageError("compare needs at least 2 systems (several --run, or --scores A=..,B=..)")
    options = {**vars(args), "correction": None if args.correction == "none" else args.correction}
    if args.fail_if_worse and args.baseline is None:
        options["baseline"] = next(iter(results))  # the gate compares with the first system
    comparison = compare_scored(results, sources, comparison_options(options), vars(args))
    print(render_comparison(comparison, args.format), flush=True)
    if args.plot:
        write_whole(args.plot, lambda partial: comparison.plot(args.plot_kind, partial))
    worse = comparison.worse()
    if args.fail_if_worse and worse:
        listed = ", ".join(
            f"{r['system']} ({r['measure']} {r['delta']:+.4f}, adjusted p {r['p_adjusted']:.3g})"
            for r in worse
        )
        print(
            f"fastndcg: significantly worse than the baseline {comparison.baseline!r}: {listed}",
            file=sys.stderr,
        )
        return 1
    return 0


def render_comparison(comparison: PairedComparison, fmt: str) -> str:
    """The comparison in one of the command's formats."""
    if fmt == "json":
        return comparison.to_json(indent=2)
    if fmt == "markdown":
        return comparison.to_markdown()
    if fmt == "latex":
        return comparison.to_latex()
    if fmt == "csv":
        return format_rows([_csv_row(comparison, row) for row in comparison.rows], "csv")
    return repr(comparison)


def _csv_row(comparison: PairedComparison, row: dict[str, Any]) -> dict[str, Any]:
    """One comparison's CSV row: its columns, then what was compared and how (every row)."""
    cells = {column: row[column] for column in COLUMNS}
    cells["cutoff"] = "all" if row["cutoff"] is None else row["cutoff"]
    correction = comparison.correction
    return {
        **cells,
        "definition": comparison.measure,
        "test": row["test"],
        "alternative": comparison.alternative,
        "ci": comparison.ci,
        "interval": comparison.interval,
        "n_resamples": comparison.n_resamples,
        "resamples": row["resamples"],
        "seed": comparison.seed,
        "correction": "none" if correction is None else correction,
        "family": comparison.family,
        "alpha": comparison.alpha,
    }


def explain_command(args: argparse.Namespace, given: set[str]) -> int:
    """``fastndcg explain``: one query's ranked lists (with ``-m``, for one measure)."""
    if args.query is None:
        raise UsageError("explain needs --query QID (the query to show)")
    if args.measures and len(args.measures) != 1:
        raise UsageError(f"explain shows one measure: give one -m, not {len(args.measures)}")
    if args.measures:
        explained_measure(args.measures[0])  # before the runs are read
    if len(args.k) != 1:
        raise UsageError("explain shows one cutoff: give one -k (or -k all)")
    if args.format == "csv":
        raise UsageError("explain writes --format table, json, markdown or latex, not csv")
    seed = args.seed if args.seed is not None else COMPARE_OPTIONS["seed"].default
    results, sources = _score(args, given, seed, "zero")
    if args.measures:
        explanation: Any = explain_systems(
            results, sources, args.query, systems=args.system, measure=args.measures[0]
        )
        show: Any = render_measure
    else:
        explanation = explain_systems(
            results, sources, args.query, k=args.k[0], systems=args.system
        )
        show = render
    text = explanation.to_json() if args.format == "json" else show(explanation, args.format)
    print(text, flush=True)
    return 0


__all__ = ["compare_command", "explain_command", "render_comparison"]
