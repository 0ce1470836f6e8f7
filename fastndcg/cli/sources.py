"""What the command scores: its inputs checked, read and handed to the library's entry points."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from fastndcg._compare.definitions import ENTRY_POINTS, compare_definitions
from fastndcg._core.options import COMMAND_OPTIONS, DEFINITION, PARQUET, RUN, RUN_ONLY
from fastndcg._errors import FastNDCGError, InputError, OptionError
from fastndcg._io.paths import check_output
from fastndcg._io.trec_text import read_once
from fastndcg._presets import PRESETS
from fastndcg._result import NDCGResult
from fastndcg.cli.messages import render
from fastndcg.cli.parser import flag_words

RUNS = "TREC runs (--qrels/--run)"
PER_QUERY_FORMATS = ("parquet", "csv")  # what --per-query writes
FILES = "prediction files"
# options of prediction files only: the columns, and how Parquet is read
PREDICTION_OPTIONS = tuple(
    name
    for name, option in COMMAND_OPTIONS.items()
    if PARQUET in option.entries and RUN not in option.entries and option.flag is not None
)
# option values only TREC runs can use, and what they need from them
RUN_VALUES = {
    "ideal": ("global", "the qrels' judgment lists"),
    "ties": ("docid_desc", "the run's document ids"),
}


class UsageError(OptionError):
    """A misuse of the command itself (inputs of both kinds, an input given twice ...)."""


def trec_eval_order(args: argparse.Namespace) -> None:
    """Positional TREC files read as trec_eval takes them: ``QRELS RUN [RUN ...]``.

    Files are told apart by their content, whatever their names: ``fastndcg score qrels.txt
    run.txt`` is ``--qrels qrels.txt --run run.txt``, and with ``--qrels`` the positional files
    may be its runs. TREC files in another order, or beside prediction files, are an error that
    says which file is out of place.
    """
    if not args.predictions or args.run:
        return
    kinds = [trec_kind(Path(path)) for path in args.predictions]
    if not {"qrels", "run"} & set(kinds):
        return
    runs = len(kinds) - (args.qrels is None)
    expected = [*([] if args.qrels else ["qrels"]), *["run"] * runs]
    order = (
        "give TREC files in trec_eval's order, QRELS RUN [RUN ...], or as --qrels QRELS --run RUN"
    )
    wrong = [kind not in (wanted, "empty") for kind, wanted in zip(kinds, expected, strict=True)]
    if any(wrong):
        place = wrong.index(True)
        kind = kinds[place]
        found = f"looks like {_TREC_FILES[kind]}" if kind else "is not a TREC file"
        raise UsageError(
            f"{args.predictions[place]} {found}, where {_TREC_FILES[expected[place]]} is "
            f"expected: {order}"
        )
    if runs == 0:
        raise UsageError(
            f"{args.predictions[0]} looks like a TREC qrels file, with no run: {order}"
        )
    if not args.qrels:
        args.qrels = args.predictions[0]
    args.run, args.predictions = args.predictions[len(kinds) - runs :], []


_TREC_FILES = {"qrels": "a TREC qrels file", "run": "a TREC run"}


def trec_kind(path: Path) -> str | None:
    """What ``path``'s first data line is: a TREC "qrels" or "run" line, "empty", or None.

    A qrels line has four fields, the last a number (``qid iteration docid grade``); a run
    line at least six, the fourth and fifth numbers (``qid Q0 docid rank score tag``). A file
    without a data line (empty, or comments only) is "empty".
    """
    if not path.is_file():
        return None
    try:
        with path.open("rb") as file:
            head = file.read(1 << 16)
    except OSError:
        return None
    if head.startswith(b"PAR1"):
        return None
    for raw in head.splitlines()[:-1] or head.splitlines():
        line = raw.strip()
        if not line or line.startswith(b"#"):
            continue
        fields = line.split()
        if len(fields) == 4 and _number(fields[3]):
            return "qrels"
        if len(fields) >= 6 and _number(fields[3]) and _number(fields[4]):
            return "run"
        return None
    return "empty"


def _number(field: bytes) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def check_inputs(args: argparse.Namespace, given: set[str]) -> None:
    """Refuse inputs of both kinds, options of the other kind, and an input given twice."""
    trec = bool(args.qrels or args.run)
    if trec and args.predictions:
        raise UsageError("give either prediction files or --qrels/--run, not both")
    if trec:
        flags = [flag_words(name) for name in PREDICTION_OPTIONS if name in given]
        belongs, used = FILES, RUNS
    else:
        flags = [flag_words(name) for name in RUN_ONLY if name in given]
        belongs, used = RUNS, FILES
    if flags:
        verb = "applies" if len(flags) == 1 else "apply"
        raise UsageError(f"{', '.join(flags)} {verb} to {belongs}, not to {used}")
    for name, (value, needs) in RUN_VALUES.items():
        if not trec and name in given and getattr(args, name) == value:
            flag = flag_words(name)
            raise UsageError(
                f"{flag} {value} applies to {RUNS}: it needs {needs}; choose another "
                f"{flag} for {FILES}"
            )
    if args.cluster is not None and not args.cluster.strip():
        raise UsageError("--cluster is empty; give the address, or leave --cluster out")
    sources = args.run if trec else args.predictions
    repeated = [source for i, source in enumerate(sources) if source in sources[:i]]
    if repeated:
        raise UsageError(f"{repeated[0]} is given twice; give each input once")
    if args.per_query and args.per_query != "-":
        inputs = [*sources, *([args.qrels] if args.qrels else [])]
        check_output(args.per_query, "per_query", inputs, PER_QUERY_FORMATS)


def call_options(args: argparse.Namespace, given: set[str], trec: bool) -> dict[str, Any]:
    """Keyword options for the Python functions.

    With a preset (or presets to compare) only the options given on the command line are
    passed, so that the preset's settings stand for the rest.
    """
    names = (*DEFINITION, *(RUN_ONLY if trec else ()))
    presets_used = args.preset is not None or args.compare_presets is not None
    options = {name: getattr(args, name) for name in names if name in given or not presets_used}
    if options.get("ideal", "") is None:
        if trec:
            del options["ideal"]
        else:
            options["ideal"] = "recall"
    if args.preset is not None:
        options["preset"] = args.preset
    return options


def jobs(args: argparse.Namespace) -> list[tuple[str, str, tuple[Any, ...], dict[str, Any]]]:
    """(source, entry point, inputs, data options) of everything to score."""
    if args.qrels or args.run:
        if not (args.qrels and args.run):
            raise UsageError("TREC scoring needs --qrels and at least one --run")
        qrels = read_once(args.qrels, "qrels")  # parsed once for every run
        return [(run, "ndcg_run", (qrels, run), {}) for run in args.run]
    if not args.predictions:
        raise UsageError("nothing to score: give a predictions file, or --qrels and --run")
    columns = dict(qid=args.qid, grade=args.grade, score=args.score or None)
    jobs = []
    for source in args.predictions:
        path = Path(source)
        delimiter = delimiter_of(path)
        if delimiter is not None:
            jobs.append((source, "ndcg_table", (read_delimited(path, delimiter),), columns))
        else:
            check_parquet(path)
            parquet = dict(
                columns, batch_rows=args.batch_rows, progress=args.progress, group=args.group
            )
            jobs.append((source, "ndcg_parquet", (path,), parquet))
    return jobs


def score_sources(args: argparse.Namespace, given: set[str]) -> list[tuple[str, NDCGResult]]:
    """Score every source in this process (or hand them to Dask or Spark with ``--engine``)."""
    if args.engine != "local":
        return score_on_engine_sources(args, given)
    if args.cluster is not None or args.colocated:
        raise UsageError("--cluster and --colocated go with --engine dask or --engine spark")
    results = []
    for source, entry, inputs, data in jobs(args):
        options = call_options(args, given, trec=entry == "ndcg_run")
        with naming(source, args.qrels):
            results.append((source, ENTRY_POINTS[entry](*inputs, **data, **options)))
    return results


def measure_sources(
    args: argparse.Namespace, given: set[str], measures: tuple[Any, ...], options: dict[str, Any]
) -> list[tuple[str, Any]]:
    """The measures of every prediction file (``-m``), in this process or on ``--engine``.

    ``options`` are the call's (:func:`call_options`, with the relevance level). On Dask or
    Spark each source gives the totals of its measures (per-query values stay there).
    """
    from fastndcg._evaluate import evaluate_table
    from fastndcg._parquet import evaluate_parquet

    options = {**options, "measures": list(measures)}
    if args.engine != "local":
        return score_on_engine_sources(args, given, options)
    if args.cluster is not None or args.colocated:
        raise UsageError("--cluster and --colocated go with --engine dask or --engine spark")
    entries = {"ndcg_table": evaluate_table, "ndcg_parquet": evaluate_parquet}
    results = []
    for source, entry, inputs, data in jobs(args):
        with naming(source):
            results.append((source, entries[entry](*inputs, **data, **options)))
    return results


@contextlib.contextmanager
def naming(source: str, qrels: str | None = None) -> Iterator[None]:
    """Errors about the data of ``source`` say which input it was (several may be given).

    With TREC runs, an error that names the ``qrels`` file is left as it is.
    """
    try:
        yield
    except FastNDCGError as exc:
        if _names(render(exc), source, qrels):
            raise
        raise exc.extended(before=f"{source}: ") from exc
    except pa.ArrowException as exc:  # a malformed file, as Arrow reports it
        if _names(str(exc), source, qrels):
            raise InputError(str(exc), where=source) from exc
        raise InputError(f"{source}: {exc}", where=source) from exc


def _names(message: str, source: str, qrels: str | None) -> bool:
    """Whether ``message`` names ``source`` (or the ``qrels`` file) already."""
    return source in message or (qrels is not None and str(Path(qrels)) in message)


def compare_sources(args: argparse.Namespace, given: set[str]) -> list[dict[str, Any]]:
    """Summary rows of every source scored under the presets of ``--compare-presets``."""
    if args.per_query or args.per_query_lines:
        raise UsageError("--per-query writes one definition's values; drop --compare-presets")
    if args.engine != "local":
        raise UsageError("--compare-presets scores in this process; drop --engine")
    rows = []
    for source, entry, inputs, data in jobs(args):
        options = call_options(args, given, trec=entry == "ndcg_run")
        names = args.compare_presets
        if entry != "ndcg_run" and "ties" not in options:
            # presets that break ties by document id need a TREC run (document ids)
            names = [n for n in names if PRESETS[n].options.get("ties") != "docid_desc"]
            if not names:
                raise UsageError(
                    "the presets given order ties by document id, which needs --qrels and "
                    "--run (or an explicit --ties)"
                )
        with naming(source, args.qrels):
            comparison = compare_definitions(
                *inputs, definitions=names, using=entry, **data, **options
            )
        shown = comparison.shown_rows() if args.format == "table" else comparison.rows
        rows.extend({"source": source, **row} for row in shown)
    return rows


def score_on_engine_sources(
    args: argparse.Namespace, given: set[str], options: dict[str, Any] | None = None
) -> list[tuple[str, Any]]:
    """Parquet predictions scored on Dask or Spark (``--engine``): aggregates, not per query.

    ``options``: the call's (default: :func:`call_options`), with ``measures`` for theirs.
    """
    from fastndcg._scaleout import score_on_engine

    if args.qrels or args.run:
        raise UsageError(f"--engine {args.engine} scores Parquet predictions, not TREC runs")
    if not args.predictions:
        raise UsageError("nothing to score: give a Parquet file or directory")
    if args.per_query or args.per_query_lines:
        raise UsageError(
            f"--per-query is not available with --engine {args.engine}: per-query results stay "
            f"on the cluster; write fastndcg.{args.engine}.per_query(...) to Parquet from Python"
        )
    for source in args.predictions:
        if delimiter_of(Path(source)) is not None:
            raise UsageError(
                f"--engine {args.engine} reads Parquet; convert {source} to Parquet first, or "
                "score it without --engine"
            )
        check_parquet(Path(source))
    if options is None:
        options = call_options(args, given, trec=False)
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


def delimiter_of(path: Path) -> str | None:
    """The delimiter of a file named as CSV/TSV (compressed or not); None for other names."""
    named = path.with_suffix("") if path.suffix.lower() in _COMPRESSIONS else path
    return _DELIMITERS.get(named.suffix.lower())


def check_parquet(path: Path) -> None:
    """Refuse a file that is not Parquet (by its first bytes), saying how names pick readers."""
    if path.is_file():
        with path.open("rb") as file:
            if file.read(4) not in (b"PAR1", b"PARE"):  # PARE: encrypted footer
                raise UsageError(f"{path} is not a Parquet file; {_NAMING}")


def read_delimited(path: Path, delimiter: str) -> Any:
    """A CSV or TSV file as an Arrow table; errors name the file."""
    import pyarrow.csv as pacsv

    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    try:
        table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter))
    except pa.ArrowInvalid as exc:  # Arrow's message does not name the file
        raise InputError(f"{path}: {exc}", where=str(path)) from exc
    other = "," if delimiter == "\t" else "\t"
    if table.num_columns == 1 and other in table.column_names[0]:
        kind = "tab" if delimiter == "\t" else "comma"
        raise UsageError(
            f"{path} was read as {kind}-separated, but its header {table.column_names[0]!r} "
            f"is not; {_NAMING}"
        )
    return table
