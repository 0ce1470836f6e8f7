"""The argument parser of the ``fastndcg`` command, generated from the option tables.

Every flag of ``fastndcg score``, ``compare`` and ``explain`` is an option of
:mod:`fastndcg._core.options`: its name, default, choices and help come from there, and its
value lands in the namespace under the option's Python keyword. ``compare`` takes the scoring's
options and the comparison's (:data:`~fastndcg._core.options.COMPARE_OPTIONS`), whose ``--seed``
and ``--missing`` replace the scoring's (see there). This module adds only how text becomes a
value where argparse's own types do not do (cutoffs, gain tables, decimals, preset lists).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from typing import Any, NoReturn

from fastndcg._core.options import (
    COMMAND_OPTIONS,
    COMPARE_COMMAND,
    COMPARE_COMMAND_OPTIONS,
    COMPARE_OPTIONS,
    EXPLAIN_COMMAND,
    GROUPS,
    Option,
)
from fastndcg._core.vocabulary import GAIN_NAMES
from fastndcg._errors import NOT_GIVEN
from fastndcg._presets import PRESETS
from fastndcg._version import __version__


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


class _DefaultsFormatter(
    argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter
):
    """Adds ``(default: ...)`` to options that take a value and have one.

    Not to flags, to options without a default, or where the help already says the default
    (a default that is not the option's value, such as "all" for ``--threads``).
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.nargs == 0 or action.default in (None, []) or "default:" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


# how the command reads the text of options whose values are not plain strings or numbers
_TEXT: dict[str, Any] = {
    "k": parse_k,
    "gain": parse_gain,
    "digits": parse_digits,
    "compare_presets": parse_presets,
}
_CHOICES: dict[str, tuple[str, ...]] = {"preset": tuple(PRESETS)}
_EXCLUSIVE = (("preset", "compare_presets"),)  # options that cannot be given together
_EXAMPLES = """examples:
  fastndcg score predictions.parquet -k 1,3,10
  fastndcg score --qrels qrels.txt --run a.run --run b.run -k 10 --preset trec_eval
  fastndcg score predictions.parquet --compare-presets sklearn,lightgbm
  fastndcg score predictions.parquet --format json --per-query per_query.parquet
"""
_COMPARE_EXAMPLES = """examples:
  fastndcg compare --qrels qrels.txt --run bm25.run --run dense.run -k 10
  fastndcg compare --qrels qrels.txt --run prod.run --run new.run --baseline prod --fail-if-worse
  fastndcg compare predictions.parquet --grade label --scores A=score_a,B=score_b --test t
  fastndcg compare --qrels q.txt --run a.run --run b.run --format latex --plot forest.png
  fastndcg compare --qrels q.txt --run a.run --run b.run -m nDCG@10 -m P@10 -m map

systems are named after their run files (the stem: bm25.run is bm25); runs whose stems clash
take their whole file names (results.test, results.trunc), and directories where those clash
too (x/run.txt, y/run.txt). With prediction files, the
systems are the score columns of --scores (NAME=COLUMN, or COLUMN named after itself), or,
with several files, the files, named after them (their score column: --scores COLUMN, default
score).
"""
_EXPLAIN_EXAMPLES = """examples:
  fastndcg explain --qrels qrels.txt --run bm25.run --run dense.run --query 301 -k 10
  fastndcg explain predictions.parquet --grade label --scores A=score_a,B=score_b --query 17
  fastndcg explain --qrels qrels.txt --run bm25.run --run dense.run --query 301 -m map
"""
# options of `fastndcg score` that compare and explain do not take (the comparison's own seed
# and missing replace the scoring's; --scores replaces --score for prediction files)
_SCORE_ONLY = frozenset(
    {
        *("compare_presets", "engine", "cluster", "colocated", "per_query", "per_query_lines"),
        *("digits", "format"),
        *("batch_rows", "group", "progress"),  # files are read whole: every row is needed
    }
)


_FLAG = re.compile(r"--[a-z][a-z-]*")
_REMARKS = re.compile(r" ?\(([^()]*)\)")


def _help_for(text: str, flags: frozenset[str]) -> str:
    """``text`` without its remarks about flags a command does not take.

    A remark is a clause of a parenthesis, between semicolons: ``(default: all cores; one per
    task with --engine)`` is ``(default: all cores)`` where there is no ``--engine``, and a
    parenthesis left without a clause goes.
    """

    def kept(match: re.Match[str]) -> str:
        clauses = [
            clause for clause in match.group(1).split("; ") if set(_FLAG.findall(clause)) <= flags
        ]
        return f" ({'; '.join(clauses)})" if clauses else ""

    return _REMARKS.sub(kept, text)


def _flags(options: list[Option]) -> frozenset[str]:
    """Every flag that sets one of ``options``."""
    return frozenset(
        name
        for option in options
        if option.flag is not None
        for name in (*option.flag.names, option.flag.negative)
        if name
    )


def _add(group: Any, option: Option, flags: frozenset[str]) -> None:
    """One option of the table as an argparse argument (its value under the keyword).

    ``flags`` are those of the command: its help does not mention others.
    """
    flag = option.flag
    assert flag is not None
    kwargs: dict[str, Any] = {
        "dest": option.name,
        "default": option.default if flag.default is NOT_GIVEN else flag.default,
        "help": _help_for(flag.help or option.doc, flags),
    }
    if flag.action is not None:
        kwargs["action"] = flag.action
    else:
        kwargs["type"] = _TEXT.get(option.name, flag.type)
        choices = flag.choices or _CHOICES.get(option.name)
        if choices is None and option.choices and option.name not in _TEXT:
            choices = option.choices
        if choices:
            kwargs["choices"] = choices
        if flag.metavar is not None:
            kwargs["metavar"] = flag.metavar
    if option.name == "compare_presets":
        kwargs.update(nargs="?", const="all")
    if flag.negative is None:
        group.add_argument(*flag.names, **kwargs)
        return
    pair = group.add_mutually_exclusive_group()
    pair.add_argument(*flag.names, **kwargs)
    pair.add_argument(
        flag.negative, dest=option.name, action="store_false", help=flag.negative_help
    )


def _add_options(parser: argparse.ArgumentParser, options: list[Option]) -> None:
    """``options`` as flags of ``parser``, in the groups of :data:`GROUPS`."""
    exclusive = {name: group for group in _EXCLUSIVE for name in group}
    flags = _flags(options)
    made: dict[tuple[str, ...], Any] = {}
    for key, title in GROUPS.items():
        listed = [option for option in options if option.group == key and option.flag]
        if not listed:
            continue
        section = parser.add_argument_group(title)
        for option in listed:
            target = section
            if option.name in exclusive and all(
                any(o.name == other for o in options) for other in exclusive[option.name]
            ):
                pair = exclusive[option.name]
                if pair not in made:
                    made[pair] = section.add_mutually_exclusive_group()
                target = made[pair]
            _add(target, option, flags)


def comparing_options(command: str) -> list[Option]:
    """The options of ``fastndcg compare`` or ``fastndcg explain`` (``command``)."""
    own = [o for o in COMPARE_COMMAND_OPTIONS.values() if command in o.entries]
    taken = {o.name for o in own}
    if command == COMPARE_COMMAND:
        own += list(COMPARE_OPTIONS.values())
        taken |= set(COMPARE_OPTIONS)
    scoring = [
        option
        for name, option in COMMAND_OPTIONS.items()
        if name not in _SCORE_ONLY and name not in taken and name != "score"
    ]
    if command == EXPLAIN_COMMAND:
        scoring = [_explained(o) for o in scoring if o.name != "missing"]
    return scoring + own


def _explained(option: Option) -> Option:
    """``option`` as ``fastndcg explain`` takes it: one measure, not several."""
    if option.name != "measures" or option.flag is None:
        return option
    help = "the measure to explain, by name (P@10, map, recip_rank, mrr@10, ...); once"
    return dataclasses.replace(option, flag=dataclasses.replace(option.flag, help=help))


def build_parser(keep_defaults: bool = True) -> argparse.ArgumentParser:
    """The argument parser of the ``fastndcg`` command.

    ``keep_defaults=False`` leaves options not given out of the parsed namespace, which tells
    the options given from the defaults (those override a preset's settings).
    """
    parser = _Parser(
        prog="fastndcg",
        description="NDCG for millions of queries, under every definition in use.",
    )
    parser.add_argument("--version", action="version", version=f"fastndcg {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an error (also FASTNDCG_DEBUG=1)",
    )
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_IntermixedParser
    )
    score = commands.add_parser(
        "score",
        help="score predictions (Parquet/CSV) or TREC runs against qrels",
        description=(
            "Score a predictions file (Parquet file or directory, CSV/TSV) with one row per\n"
            "(query, item), or TREC runs against qrels (--qrels with one or more --run)."
        ),
        epilog=_EXAMPLES,
        formatter_class=_DefaultsFormatter,
    )
    score.add_argument(
        "predictions", nargs="*", help="Parquet file(s) or directory, or CSV/TSV files"
    )
    _add_options(score, list(COMMAND_OPTIONS.values()))
    compare = commands.add_parser(
        "compare",
        help="compare systems: paired tests, confidence intervals, corrections",
        description=(
            "Compare the per-query NDCG of several systems (TREC runs against qrels, or score\n"
            "columns of a predictions file) with paired significance tests, per cutoff."
        ),
        epilog=_COMPARE_EXAMPLES,
        formatter_class=_DefaultsFormatter,
    )
    compare.add_argument(
        "predictions", nargs="*", help="a predictions file (Parquet, CSV/TSV) with score columns"
    )
    _add_options(compare, comparing_options(COMPARE_COMMAND))
    explain = commands.add_parser(
        "explain",
        help="show why one query scored as it did (ranked lists, gains, discounts, ideal)",
        description=(
            "Show one query's ranked list for each system: rank, document, score, grade, gain,\n"
            "discount, contribution and cumulative DCG, tie groups, and the ideal ranking; with\n"
            "-m (TREC runs), one measure: each rank's grade, relevance and share of the value."
        ),
        epilog=_EXPLAIN_EXAMPLES,
        formatter_class=_DefaultsFormatter,
    )
    explain.add_argument(
        "predictions", nargs="*", help="a predictions file (Parquet, CSV/TSV) with score columns"
    )
    _add_options(explain, comparing_options(EXPLAIN_COMMAND))
    if not keep_defaults:
        for sub in (score, compare, explain):
            for action in sub._actions:
                action.default = argparse.SUPPRESS
    commands.add_parser("presets", help="the presets: each tool's definition and its settings")
    commands.add_parser("info", help="versions, backend, threading layer, threads, cache directory")
    warm = commands.add_parser("warmup", help="compile the kernels now (into the Numba cache)")
    warm.add_argument(
        "--compare",
        action="store_true",
        help="also the resampling kernels of fastndcg compare (10-20 s more on an empty cache)",
    )
    return parser


def flag_words(name: str) -> str:
    """How listings name option ``name`` on the command line (``--progress/--no-progress``)."""
    for table in (COMMAND_OPTIONS, COMPARE_OPTIONS, COMPARE_COMMAND_OPTIONS):
        if name in table:
            flag = table[name].flag
            return name if flag is None else flag.shown
    return name
