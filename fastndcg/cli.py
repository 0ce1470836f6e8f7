"""The ``fastndcg`` command: score predictions or TREC runs, show runtime facts, warm up.

Exit status: 0 on success, 2 for bad input or options (one line on stderr), 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from fastndcg._engine import SCORE_DTYPES
from fastndcg._options import AGGREGATES, DISCOUNT_NAMES, GAIN_NAMES, IDEALS, TIES, ZERO_IDCG
from fastndcg._presets import PRESETS, TOOL_AGGREGATES
from fastndcg._result import NDCGResult, cutoff_label
from fastndcg._scaleout import ENGINES
from fastndcg.stream import GROUP_IN_MEMORY

FORMATS = ("table", "json", "csv")


class InputError(Exception):
    """Bad input or options: reported in one line with exit status 2."""


def parse_k(text: str) -> list[int | None]:
    """``"1,3,10"`` -> [1, 3, 10]; ``all`` or ``none`` means the whole list."""
    cutoffs: list[int | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            raise argparse.ArgumentTypeError(
                f"-k has an empty cutoff in {text!r}; give comma-separated positive ints, and "
                "'all' for the whole list"
            )
        cutoff: int | None = None
        if part not in ("all", "none"):
            try:
                cutoff = int(part)
            except ValueError:
                cutoff = 0
            if cutoff < 1:
                raise argparse.ArgumentTypeError(
                    f"-k takes comma-separated positive ints (or 'all'); got {text!r}"
                )
        if cutoff in cutoffs:
            raise argparse.ArgumentTypeError(
                f"-k lists the cutoff {part} more than once in {text!r}; give each cutoff once"
            )
        cutoffs.append(cutoff)
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


def parse_digits(text: str) -> int:
    """A number of decimals: an int >= 0."""
    try:
        digits = int(text)
    except ValueError:
        digits = -1
    if digits < 0:
        raise argparse.ArgumentTypeError(f"--digits takes an int >= 0; got {text!r}")
    return digits


def parse_presets(text: str) -> list[str]:
    """``"sklearn,lightgbm"`` -> the preset names; ``all`` -> every preset."""
    if text.strip().lower() == "all":
        return list(PRESETS)
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in PRESETS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown preset {unknown[0] if unknown else text!r}; valid presets are "
            f"{', '.join(PRESETS)} (comma-separated), or 'all'"
        )
    return names


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other error of the command."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"fastndcg: error: {message} (see {self.prog} --help)\n")


class _IntermixedParser(_Parser):
    """A command's parser that takes positional arguments after options too.

    ``fastndcg score a.parquet --qid q b.parquet`` scores both files (argparse's intermixed
    parsing, which the top-level parser with its subcommands cannot use itself).
    """

    _intermixing = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._intermixing:  # the intermixed parsing of older Pythons calls back in
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Adds ``(default: ...)`` to options that take a value and have one.

    Not to flags, to options without a default, or where the help already says the default
    (a default that is not the option's value, such as "all" for ``--threads``).
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.nargs == 0 or action.default in (None, []) or "default:" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def build_parser(keep_defaults: bool = True) -> argparse.ArgumentParser:
    """The argument parser of the ``fastndcg`` command.

    ``keep_defaults=False`` leaves options not given out of the parsed namespace, which tells
    the options given from the defaults (those override a preset's settings).
    """
    parser = _Parser(
        prog="fastndcg",
        description="NDCG for millions of queries, under every definition in use.",
    )
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_IntermixedParser
    )

    score = commands.add_parser(
        "score",
        help="score predictions (Parquet/CSV) or TREC runs against qrels",
        description=(
            "Score a predictions file (Parquet file or directory, CSV/TSV) with one row per "
            "(query, item), or TREC runs against qrels (--qrels with one or more --run)."
        ),
        formatter_class=_DefaultsFormatter,
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
        "-k",
        type=parse_k,
        default=[None],
        help="cutoffs, e.g. 1,3,5,10 ('all': the whole list) (default: all)",
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
        "--max-grade",
        type=float,
        default=None,
        help="grade of every slot for --ideal max (default: the largest grade in the data; "
        "required for Parquet streamed with --group stream, the default, or with --engine)",
    )
    score.add_argument(
        "--ties", choices=(*TIES, "docid_desc"), default="average", help="order of tied scores"
    )
    score.add_argument(
        "--seed", type=int, default=None, help="seed for --ties random (default: a fresh one)"
    )
    score.add_argument(
        "--zero-idcg", choices=ZERO_IDCG, default="skip", help="queries without relevant items"
    )
    score.add_argument(
        "--aggregate",
        choices=(*AGGREGATES, *TOOL_AGGREGATES),
        default="mean",
        help="how queries combine (or a tool's own rule)",
    )
    score.add_argument(
        "--score-dtype",
        choices=SCORE_DTYPES,
        default="float64",
        help="precision scores are held in before ranking",
    )
    definitions = score.add_mutually_exclusive_group()
    definitions.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        default=None,
        help="score as this tool does (options given explicitly override its settings)",
    )
    definitions.add_argument(
        "--compare-presets",
        type=parse_presets,
        nargs="?",
        const="all",
        default=None,
        metavar="NAMES",
        help="score under several presets (comma-separated; without NAMES: every preset that "
        "applies) and show how each differs from the first",
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
        "--max-docs",
        type=int,
        default=None,
        help="TREC: score only the first N documents of each ranking (trec_eval -M) (default: all)",
    )
    score.add_argument(
        "--batch-rows", type=int, default=1 << 20, help="Parquet: rows per streamed batch"
    )
    score.add_argument(
        "--group",
        choices=("stream", "memory"),
        default="stream",
        help="Parquet: stream query-grouped files, or group in memory",
    )
    score.add_argument(
        "--engine",
        choices=("local", *ENGINES),
        default="local",
        help="Parquet: score in this process, on a Dask cluster, or with Spark",
    )
    score.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="--engine dask: scheduler address (default: a local cluster); --engine spark: "
        "master URL (default: local[*]; sc://host:port for Spark Connect)",
    )
    score.add_argument(
        "--colocated",
        action="store_true",
        help="--engine dask|spark: every file holds whole queries, so skip the shuffle (checked)",
    )
    progress = score.add_mutually_exclusive_group()
    progress.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="always show a progress bar (default: only on an interactive terminal)",
    )
    progress.add_argument(
        "--no-progress", dest="progress", action="store_false", help="never show a progress bar"
    )
    score.add_argument(
        "--backend", choices=("auto", "numba", "numpy"), default="auto", help="compute backend"
    )
    score.add_argument(
        "--threads",
        type=int,
        default=None,
        help="Numba threads (default: all cores; one per task with --engine)",
    )
    score.add_argument("--format", choices=FORMATS, default="table", help="output format")
    score.add_argument(
        "--per-query", metavar="FILE", help="also write per-query values (.parquet or .csv)"
    )
    score.add_argument("--digits", type=parse_digits, default=4, help="decimals in table output")

    if not keep_defaults:
        for action in score._actions:
            action.default = argparse.SUPPRESS
    commands.add_parser("info", help="versions, backend, threading layer, threads, cache directory")
    commands.add_parser("warmup", help="compile the kernels now (into the Numba cache)")
    return parser


# command-line destination -> keyword of the Python functions
_ENGINE_OPTIONS = {
    "k": "k",
    "gain": "gain",
    "discount": "discount",
    "ideal": "ideal",
    "ties": "ties",
    "seed": "seed",
    "zero_idcg": "zero_idcg",
    "aggregate": "aggregate",
    "backend": "backend",
    "threads": "n_threads",
    "max_grade": "max_grade",
    "score_dtype": "score_dtype",
}
_RUN_OPTIONS = {"judged_only": "judged_only", "missing": "missing", "max_docs": "max_docs"}
# command-line destination -> flags, of the options only prediction files take
_PREDICTION_FLAGS = {
    "qid": "--qid",
    "grade": "--grade",
    "score": "--score",
    "batch_rows": "--batch-rows",
    "group": "--group",
    "progress": "--progress/--no-progress",
}
# option values only TREC runs can use, and what they need from them
_RUN_VALUES = {
    "ideal": ("global", "the qrels' judgment lists"),
    "ties": ("docid_desc", "the run's document ids"),
}
# the Python keyword of each option -> its flag, to word the library's advice for the command
_FLAGS = {
    name: "-k" if dest == "k" else "--" + dest.replace("_", "-")
    for dest, name in {
        **_ENGINE_OPTIONS,
        **_RUN_OPTIONS,
        **{dest: dest for dest in (*_PREDICTION_FLAGS, "colocated", "cluster", "preset")},
    }.items()
}
# Python values the command spells otherwise (another None is the option left out)
_SPELLED = {("k", "None"): "all", ("score", "None"): "''"}
# name=value, name='value' or a bare name= (not inside a path such as a hive directory's k=1)
# with the values listed after it (", 'zero' or 'one'"); or a bare name (not inside a path, a
# quoted value or a call) with the quoted value that may follow it
_NAMES = re.compile(
    r"(?<![\w/.=-])([a-z][a-z_]*)=('[^']*'|[\w.+-]+)?((?:,? (?:or )?'[^']*')*)"
    r"|(?<![\w/.=@'(-])([a-z][a-z_]*)(?![\w/=@'(-]|\.\w)( '[^']*')?"
)
# where a bare name that is also a word (seed, ties, grade...) is the option: at the start of
# a clause, before "must" or its value ("seed must be ...", "preset 'x' orders ...")
_SUBJECT = re.compile(r"(?:^|[:.] )$")
# the library's fix for a column held in hive directory names, which the command cannot follow
_HIVE = re.compile(r"(?P<name>'[^']*') names directories of the files \(hive partitioning\).*$")
# the library's advice that names Python calls -> the command's way
_ADVICE = {
    GROUP_IN_MEMORY: "group it in memory (--group memory)",
    "with fastndcg.ndcg_run": "with --qrels and --run",
}
_RUNS = "TREC runs (--qrels/--run)"
_FILES = "prediction files"


def command_wording(message: str) -> str:
    """The library's ``name='value'`` in ``message`` as the command's ``--name value``.

    Only the names of the command's options change (``k=None`` reads ``-k all``); a flag
    given alone stands for ``True``, and the values listed after it lose their quotes. A bare
    name changes too: always when it is not a word (``n_threads``, ``k``), otherwise as the
    subject of a clause (``seed must be``), whose ``or None`` then goes (the option left out).
    Advice that names a Python call (grouping rows in memory, scoring a TREC run) names the
    flags instead; a column held in hive directory names gets advice the command can follow.
    """
    hive = _HIVE.search(message)
    advice = ""
    if hive is not None:
        name = hive["name"]
        message = message[: hive.start()]
        advice = (
            f"{name} names directories of the files (hive partitioning), which the command "
            f"does not read: write {name} into the files as a column, or score them from "
            "Python with fastndcg.ndcg_parquet(pyarrow.dataset.dataset(path, "
            "partitioning='hive'), group='memory')"
        )
    for python, command in _ADVICE.items():
        message = message.replace(python, command)
    return "; ".join(_clause_wording(clause) for clause in message.split("; ")) + advice


def _clause_wording(clause: str) -> str:
    """One clause of a message (up to a semicolon) with the command's flags."""
    subject: list[str] = []  # the clause's bare subject, if a flag

    def as_flag(match: re.Match[str]) -> str:
        keyword, value, listed, bare, quoted = match.groups()
        name = keyword or bare
        flag = _FLAGS.get(name)
        if flag is None:
            return match.group(0)
        if bare is not None:
            first = _SUBJECT.search(clause[: match.start()]) is not None
            word = "_" not in name and len(name) > 1
            if word and not (first and (quoted or clause.startswith(" must ", match.end()))):
                return match.group(0)
            if first:
                subject.append(name)
            return flag + (quoted or "").replace("'", "")
        if value is None or value == "True":
            return flag
        plain = value.strip("'")
        listed = re.sub(r"'([^']*)'", lambda v: _SPELLED.get((name, v[1]), v[1]), listed)
        return f"{flag} {_SPELLED.get((name, plain), plain)}{listed}"

    worded = _NAMES.sub(as_flag, clause)
    if subject:
        none = _SPELLED.get((subject[0], "None"))
        worded = re.sub(r" or None\b", f" or {none}" if none else "", worded, count=1)
    return worded


def _check_inputs(args: argparse.Namespace, given: set[str]) -> None:
    """Refuse inputs of both kinds, options of the other kind, and an input given twice."""
    trec = bool(args.qrels or args.run)
    if trec and args.predictions:
        raise InputError("give either prediction files or --qrels/--run, not both")
    if trec:
        flags = [_PREDICTION_FLAGS[dest] for dest in _PREDICTION_FLAGS if dest in given]
        belongs, used = _FILES, _RUNS
    else:
        flags = [_FLAGS[name] for dest, name in _RUN_OPTIONS.items() if dest in given]
        belongs, used = _RUNS, _FILES
    if flags:
        verb = "applies" if len(flags) == 1 else "apply"
        raise InputError(f"{', '.join(flags)} {verb} to {belongs}, not to {used}")
    for dest, (value, needs) in _RUN_VALUES.items():
        if not trec and dest in given and getattr(args, dest) == value:
            raise InputError(
                f"--{dest} {value} applies to {_RUNS}: it needs {needs}; choose another "
                f"--{dest} for {_FILES}"
            )
    if args.cluster is not None and not args.cluster.strip():
        raise InputError("--cluster is empty; give the address, or leave --cluster out")
    sources = args.run if trec else args.predictions
    repeated = [source for i, source in enumerate(sources) if source in sources[:i]]
    if repeated:
        raise InputError(f"{repeated[0]} is given twice; give each input once")


def _options(args: argparse.Namespace, given: set[str], trec: bool) -> dict[str, Any]:
    """Keyword options for the Python functions.

    With a preset (or presets to compare) only the options given on the command line are
    passed, so that the preset's settings stand for the rest.
    """
    names = {**_ENGINE_OPTIONS, **(_RUN_OPTIONS if trec else {})}
    presets_used = args.preset is not None or args.compare_presets is not None
    options = {
        name: getattr(args, dest)
        for dest, name in names.items()
        if dest in given or not presets_used
    }
    if options.get("ideal", "") is None:
        if trec:
            del options["ideal"]
        else:
            options["ideal"] = "recall"
    if args.preset is not None:
        options["preset"] = args.preset
    return options


def _jobs(args: argparse.Namespace) -> list[tuple[str, str, tuple[Any, ...], dict[str, Any]]]:
    """(source, entry point, inputs, data options) of everything to score."""
    if args.qrels or args.run:
        if not (args.qrels and args.run):
            raise InputError("TREC scoring needs --qrels and at least one --run")
        from fastndcg.trec import _read_once

        qrels = _read_once(args.qrels, "qrels")  # parsed once for every run
        return [(run, "ndcg_run", (qrels, run), {}) for run in args.run]
    if not args.predictions:
        raise InputError("nothing to score: give a predictions file, or --qrels and --run")
    columns = dict(qid=args.qid, grade=args.grade, score=args.score or None)
    jobs = []
    for source in args.predictions:
        path = Path(source)
        delimiter = _delimiter(path)
        if delimiter is not None:
            jobs.append((source, "ndcg_table", (_read_delimited(path, delimiter),), columns))
        else:
            _check_parquet(path)
            parquet = dict(
                columns, batch_rows=args.batch_rows, progress=args.progress, group=args.group
            )
            jobs.append((source, "ndcg_parquet", (path,), parquet))
    return jobs


def _score_sources(args: argparse.Namespace, given: set[str]) -> list[tuple[str, NDCGResult]]:
    import fastndcg

    if args.engine != "local":
        return _score_on_engine(args, given)
    if args.cluster is not None or args.colocated:
        raise InputError("--cluster and --colocated go with --engine dask or --engine spark")
    results = []
    for source, entry, inputs, data in _jobs(args):
        options = _options(args, given, trec=entry == "ndcg_run")
        with _naming(source, args.qrels):
            results.append((source, getattr(fastndcg, entry)(*inputs, **data, **options)))
    return results


@contextlib.contextmanager
def _naming(source: str, qrels: str | None = None) -> Iterator[None]:
    """Errors about the data of ``source`` say which input it was (several may be given).

    With TREC runs, an error that names the ``qrels`` file is left as it is.
    """
    try:
        yield
    except (ValueError, TypeError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        if source in message or (qrels is not None and str(Path(qrels)) in message):
            raise
        raise InputError(f"{source}: {message}") from exc


def _compare_sources(args: argparse.Namespace, given: set[str]) -> list[dict[str, Any]]:
    """Summary rows of every source scored under the presets of ``--compare-presets``."""
    import fastndcg

    if args.per_query:
        raise InputError("--per-query writes one definition's values; drop --compare-presets")
    if args.engine != "local":
        raise InputError("--compare-presets scores in this process; drop --engine")
    rows = []
    for source, entry, inputs, data in _jobs(args):
        options = _options(args, given, trec=entry == "ndcg_run")
        names = args.compare_presets
        if entry != "ndcg_run" and "ties" not in options:
            # presets that break ties by document id need a TREC run (document ids)
            names = [n for n in names if PRESETS[n].options.get("ties") != "docid_desc"]
            if not names:
                raise InputError(
                    "the presets given order ties by document id, which needs --qrels and "
                    "--run (or an explicit --ties)"
                )
        with _naming(source, args.qrels):
            comparison = fastndcg.compare_definitions(
                *inputs, definitions=names, using=entry, **data, **options
            )
        shown = comparison.shown_rows() if args.format == "table" else comparison.rows
        rows.extend({"source": source, **row} for row in shown)
    return rows


def _score_on_engine(args: argparse.Namespace, given: set[str]) -> list[tuple[str, Any]]:
    """Parquet predictions scored on Dask or Spark (``--engine``): aggregates, not per query."""
    from fastndcg._scaleout import score_on_engine

    if args.qrels or args.run:
        raise InputError(f"--engine {args.engine} scores Parquet predictions, not TREC runs")
    if not args.predictions:
        raise InputError("nothing to score: give a Parquet file or directory")
    if args.per_query:
        raise InputError(
            f"--per-query is not available with --engine {args.engine}: per-query results stay "
            f"on the cluster; write fastndcg.{args.engine}.per_query(...) to Parquet from Python"
        )
    for source in args.predictions:
        if _delimiter(Path(source)) is not None:
            raise InputError(
                f"--engine {args.engine} reads Parquet; convert {source} to Parquet first, or "
                "score it without --engine"
            )
        _check_parquet(Path(source))
    options = _options(args, given, trec=False)
    columns = dict(qid=args.qid, grade=args.grade, score=args.score or None)
    where = dict(cluster=args.cluster, colocated=args.colocated)
    return [
        (source, score_on_engine(args.engine, source, **where, **columns, **options))
        for source in args.predictions
    ]


# how files are read, by name (pyarrow's CSV reader decompresses the compressed ones itself)
_DELIMITERS = {".csv": ",", ".tsv": "\t", ".txt": "\t"}
_COMPRESSIONS = (".gz", ".bz2", ".lz4", ".zst")
_NAMING = (
    "files are read by name: .csv as comma-separated, .tsv and .txt as tab-separated "
    f"(compressed when the name then ends in {', '.join(_COMPRESSIONS)}), anything else as "
    "Parquet; rename the file after its format"
)


def _delimiter(path: Path) -> str | None:
    """The delimiter of a file named as CSV/TSV (compressed or not); None for other names."""
    named = path.with_suffix("") if path.suffix.lower() in _COMPRESSIONS else path
    return _DELIMITERS.get(named.suffix.lower())


def _check_parquet(path: Path) -> None:
    """Refuse a file that is not Parquet (by its first bytes), saying how names pick readers."""
    if path.is_file():
        with path.open("rb") as file:
            if file.read(4) not in (b"PAR1", b"PARE"):  # PARE: encrypted footer
                raise InputError(f"{path} is not a Parquet file; {_NAMING}")


def _read_delimited(path: Path, delimiter: str) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    try:
        table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter))
    except pa.ArrowInvalid as exc:  # Arrow's message does not name the file
        raise ValueError(f"{path}: {exc}") from exc
    other = "," if delimiter == "\t" else "\t"
    if table.num_columns == 1 and other in table.column_names[0]:
        kind = "tab" if delimiter == "\t" else "comma"
        raise InputError(
            f"{path} was read as {kind}-separated, but its header {table.column_names[0]!r} "
            f"is not; {_NAMING}"
        )
    return table


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


def _finite(value: Any) -> Any:
    """``value``, or None for a float that is not finite."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def format_rows(rows: list[dict[str, Any]], fmt: str, digits: int = 4) -> str:
    """Summary rows as an aligned table, JSON or CSV."""
    if fmt == "json":  # JSON has no NaN (every query skipped, no query) or infinity: null
        rows = [{key: _finite(value) for key, value in row.items()} for row in rows]
        return json.dumps(rows if len(rows) != 1 else rows[0], indent=2, allow_nan=False)
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


def _text_ids(ids: Any) -> Any:
    """Query ids as a string column; None for bytes that are not UTF-8 text."""
    import pyarrow as pa

    try:
        return ids.cast(pa.string())
    except pa.ArrowInvalid:
        return None


def _byte_ids(ids: Any) -> Any:
    """Query ids as a binary column (ids that are not bytes: their text's UTF-8 bytes)."""
    import pyarrow as pa

    if not (pa.types.is_binary(ids.type) or pa.types.is_large_binary(ids.type)):
        ids = ids.cast(pa.string())
    return ids.cast(pa.binary())


def _write_per_query(path: str, results: list[tuple[str, NDCGResult]]) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise InputError(f"--per-query writes .parquet or .csv files; got {path!r}")
    tables = [result.to_arrow() for _, result in results]
    # one query id type for every run: text, or bytes where some ids are not UTF-8 text
    ids = [_text_ids(table.column("query_id")) for table in tables]
    if any(column is None for column in ids):
        if suffix == ".csv":
            raise InputError(
                "query ids are bytes that are not UTF-8 text, which a CSV file cannot hold; "
                "write --per-query to a .parquet file (it keeps them as bytes)"
            )
        ids = [_byte_ids(table.column("query_id")) for table in tables]
    combined = pa.concat_tables(
        table.set_column(0, "query_id", column).add_column(
            0, "source", pa.array([source] * table.num_rows, pa.string())
        )
        for (source, _), table, column in zip(results, tables, ids, strict=True)
    )
    if suffix == ".parquet":
        pq.write_table(combined, target)
    else:
        pacsv.write_csv(combined, target)


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
        given = set(vars(build_parser(keep_defaults=False).parse_args(argv)))
        _check_inputs(args, given)
        if args.compare_presets is not None:
            print(format_rows(_compare_sources(args, given), args.format, args.digits), flush=True)
            return 0
        results = _score_sources(args, given)
        if args.per_query:
            _write_per_query(args.per_query, results)
        rows = _summary_rows(results, trec=bool(args.qrels))
        print(format_rows(rows, args.format, args.digits), flush=True)  # a closed pipe: here
        return 0
    except BrokenPipeError:  # the reader stopped early (| head): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (InputError, ValueError, TypeError, KeyError, OSError, ImportError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"fastndcg: error: {command_wording(message)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
