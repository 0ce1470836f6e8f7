"""The ``fastndcg`` command: score predictions or TREC runs, show runtime facts, warm up.

Exit status: 0 on success, 2 for bad input or options (one line on stderr), 1 otherwise.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastndcg._options import DISCOUNT_NAMES, GAIN_NAMES, IDEALS, TIES, ZERO_IDCG
from fastndcg._result import NDCGResult, cutoff_label

FORMATS = ("table", "json", "csv")


class InputError(Exception):
    """Bad input or options: reported in one line with exit status 2."""


def parse_k(text: str) -> list[int | None]:
    """``"1,3,10"`` -> [1, 3, 10]; ``all`` or ``none`` means the whole list."""
    cutoffs: list[int | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if part in ("all", "none", ""):
            cutoffs.append(None)
            continue
        try:
            cutoffs.append(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"-k takes comma-separated positive ints (or 'all'); got {text!r}"
            ) from None
    return cutoffs


def parse_gain(text: str) -> Any:
    """A gain name, or comma-separated gains of grades 0, 1, 2, ... (a lookup table)."""
    if text in GAIN_NAMES:
        return text
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--gain takes {' or '.join(GAIN_NAMES)} or comma-separated gains per grade; "
            f"got {text!r}"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fastndcg`` command."""
    parser = argparse.ArgumentParser(
        prog="fastndcg",
        description="NDCG for millions of queries, under every definition in use.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    defaults = argparse.ArgumentDefaultsHelpFormatter

    score = commands.add_parser(
        "score",
        help="score predictions (Parquet/CSV) or TREC runs against qrels",
        description=(
            "Score a predictions file (Parquet file or directory, CSV/TSV) with one row per "
            "(query, item), or TREC runs against qrels (--qrels with one or more --run)."
        ),
        formatter_class=defaults,
    )
    score.add_argument(
        "predictions", nargs="*", help="Parquet file(s) or directory, or CSV/TSV files"
    )
    score.add_argument("--qid", default="qid", help="query id column")
    score.add_argument("--grade", default="grade", help="relevance grade column")
    score.add_argument("--score", default="score", help="model score column ('' for ranked rows)")
    score.add_argument("--qrels", help="TREC qrels file (qid 0 docid grade)")
    score.add_argument("--run", action="append", default=[], help="TREC run file (repeatable)")
    score.add_argument(
        "-k", type=parse_k, default=[None], help="cutoffs, e.g. 1,3,5,10 ('all': whole list)"
    )
    score.add_argument(
        "--gain", type=parse_gain, default="exp2", help="exp2, linear, or gains per grade 0,1,2,..."
    )
    score.add_argument("--discount", choices=DISCOUNT_NAMES, default="log2", help="rank discount")
    score.add_argument(
        "--ideal",
        choices=tuple(IDEALS),
        default=None,
        help="ideal DCG (default: recall; global for TREC runs)",
    )
    score.add_argument(
        "--max-grade", type=float, default=None, help="grade of every slot for --ideal max"
    )
    score.add_argument(
        "--ties", choices=(*TIES, "docid_desc"), default="average", help="order of tied scores"
    )
    score.add_argument("--seed", type=int, default=None, help="seed for --ties random")
    score.add_argument(
        "--zero-idcg", choices=ZERO_IDCG, default="skip", help="queries without relevant items"
    )
    score.add_argument(
        "--aggregate", choices=("mean", "ratio"), default="mean", help="how queries combine"
    )
    score.add_argument(
        "--judged-only", action="store_true", help="TREC: drop unjudged documents before ranking"
    )
    score.add_argument(
        "--missing",
        choices=("zero", "skip", "error"),
        default="zero",
        help="TREC: judged queries absent from a run",
    )
    score.add_argument(
        "--batch-rows", type=int, default=1 << 17, help="Parquet: rows per streamed batch"
    )
    score.add_argument(
        "--group",
        choices=("stream", "memory"),
        default="stream",
        help="Parquet: stream query-grouped files, or group in memory",
    )
    progress = score.add_mutually_exclusive_group()
    progress.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="always show a progress bar",
    )
    progress.add_argument(
        "--no-progress", dest="progress", action="store_false", help="never show a progress bar"
    )
    score.add_argument(
        "--backend", choices=("auto", "numba", "numpy"), default="auto", help="compute backend"
    )
    score.add_argument("--threads", type=int, default=None, help="Numba threads (default: all)")
    score.add_argument("--format", choices=FORMATS, default="table", help="output format")
    score.add_argument(
        "--per-query", metavar="FILE", help="also write per-query values (.parquet or .csv)"
    )
    score.add_argument("--digits", type=int, default=4, help="decimals in table output")

    commands.add_parser("info", help="versions, backend, threading layer, threads, cache directory")
    commands.add_parser("warmup", help="compile the kernels now (into the Numba cache)")
    return parser


def _options(args: argparse.Namespace, trec: bool) -> dict[str, Any]:
    options = dict(
        k=args.k,
        gain=args.gain,
        discount=args.discount,
        ties=args.ties,
        seed=args.seed,
        zero_idcg=args.zero_idcg,
        aggregate=args.aggregate,
        backend=args.backend,
        n_threads=args.threads,
        max_grade=args.max_grade,
    )
    if args.ideal is not None:
        options["ideal"] = args.ideal
    elif not trec:
        options["ideal"] = "recall"
    return options


def _score_sources(args: argparse.Namespace) -> list[tuple[str, NDCGResult]]:
    import fastndcg

    if args.qrels or args.run:
        if not (args.qrels and args.run):
            raise InputError("TREC scoring needs --qrels and at least one --run")
        if args.predictions:
            raise InputError("give either prediction files or --qrels/--run, not both")
        options = _options(args, trec=True)
        return [
            (
                run,
                fastndcg.ndcg_run(
                    args.qrels, run, judged_only=args.judged_only, missing=args.missing, **options
                ),
            )
            for run in args.run
        ]
    if not args.predictions:
        raise InputError("nothing to score: give a predictions file, or --qrels and --run")
    options = _options(args, trec=False)
    score_column = args.score or None
    results = []
    for source in args.predictions:
        path = Path(source)
        if path.suffix.lower() in (".csv", ".tsv", ".txt"):
            table = _read_delimited(path)
            result = fastndcg.ndcg_table(
                table, qid=args.qid, grade=args.grade, score=score_column, **options
            )
        else:
            result = fastndcg.ndcg_parquet(
                path,
                qid=args.qid,
                grade=args.grade,
                score=score_column,
                batch_rows=args.batch_rows,
                progress=args.progress,
                group=args.group,
                **options,
            )
        results.append((source, result))
    return results


def _read_delimited(path: Path) -> Any:
    import pyarrow.csv as pacsv

    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".txt") else ","
    return pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter))


def _summary_rows(results: list[tuple[str, NDCGResult]], trec: bool) -> list[dict[str, Any]]:
    rows = []
    for source, result in results:
        row: dict[str, Any] = {"source": source, "queries": result.n_queries}
        for j, k in enumerate(result.k):
            row[f"ndcg{cutoff_label(k)}"] = float(result.mean[j])
        row["skipped"] = int(result.n_skipped.max()) if result.n_skipped.size else 0
        if trec:
            row["missing"] = result.n_missing
            row["unjudged"] = result.n_unjudged
        rows.append(row)
    return rows


def format_rows(rows: list[dict[str, Any]], fmt: str, digits: int = 4) -> str:
    """Summary rows as an aligned table, JSON or CSV."""
    if fmt == "json":
        return json.dumps(rows if len(rows) != 1 else rows[0], indent=2)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")

    def cell(value: Any) -> str:
        return f"{value:.{digits}f}" if isinstance(value, float) else str(value)

    cells = [[cell(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]

    def line(values: list[str]) -> str:
        pairs = enumerate(zip(values, widths, strict=True))
        return "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in pairs).rstrip()

    return "\n".join([line(columns), *(line(r) for r in cells)])


def _write_per_query(path: str, results: list[tuple[str, NDCGResult]]) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    tables = []
    for source, result in results:
        table = result.to_arrow()
        if table.column("query_id").type != pa.string():
            table = table.set_column(0, "query_id", table.column("query_id").cast(pa.string()))
        tables.append(
            table.add_column(0, "source", pa.array([source] * table.num_rows, pa.string()))
        )
    combined = pa.concat_tables(tables)
    target = Path(path)
    if target.suffix.lower() == ".parquet":
        pq.write_table(combined, target)
    elif target.suffix.lower() == ".csv":
        pacsv.write_csv(combined, target)
    else:
        raise InputError(f"--per-query writes .parquet or .csv files; got {path!r}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "info":
            from fastndcg._runtime import info

            for key, value in info().items():
                print(f"{key + ':':34s} {value}")
            return 0
        if args.command == "warmup":
            from fastndcg._runtime import cache_dir, warmup

            seconds = warmup()
            print(f"kernels ready in {seconds:.2f} s (cache: {cache_dir()})")
            return 0
        results = _score_sources(args)
        if args.per_query:
            _write_per_query(args.per_query, results)
        rows = _summary_rows(results, trec=bool(args.qrels))
        print(format_rows(rows, args.format, args.digits))
        return 0
    except (InputError, ValueError, TypeError, KeyError, FileNotFoundError, ImportError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"fastndcg: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
