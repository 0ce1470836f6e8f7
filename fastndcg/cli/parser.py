"""The argument parser of the ``fastndcg`` command, and how its flags map to keywords."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from fastndcg._core.vocabulary import (
    AGGREGATES,
    BACKENDS,
    DISCOUNT_NAMES,
    ENGINES,
    GAIN_NAMES,
    GROUPINGS,
    IDEALS,
    KEYED_TIES,
    MISSING,
    SCORE_DTYPES,
    TIES,
    TOOL_AGGREGATES,
    ZERO_IDCG,
)
from fastndcg._presets import PRESETS

FORMATS = ("table", "json", "csv")


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
        "--ties", choices=(*TIES, *KEYED_TIES), default="average", help="order of tied scores"
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
        choices=MISSING,
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
        choices=GROUPINGS,
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
    score.add_argument("--backend", choices=BACKENDS, default="auto", help="compute backend")
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
ENGINE_OPTIONS = {
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


RUN_OPTIONS = {"judged_only": "judged_only", "missing": "missing", "max_docs": "max_docs"}


# command-line destination -> flags, of the options only prediction files take
PREDICTION_FLAGS = {
    "qid": "--qid",
    "grade": "--grade",
    "score": "--score",
    "batch_rows": "--batch-rows",
    "group": "--group",
    "progress": "--progress/--no-progress",
}


# option values only TREC runs can use, and what they need from them
RUN_VALUES = {
    "ideal": ("global", "the qrels' judgment lists"),
    "ties": ("docid_desc", "the run's document ids"),
}


# the Python keyword of each option -> its flag, to word the library's advice for the command
FLAGS = {
    name: "-k" if dest == "k" else "--" + dest.replace("_", "-")
    for dest, name in {
        **ENGINE_OPTIONS,
        **RUN_OPTIONS,
        **{dest: dest for dest in (*PREDICTION_FLAGS, "colocated", "cluster", "preset")},
    }.items()
}
