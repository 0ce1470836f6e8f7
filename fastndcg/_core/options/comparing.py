"""The paired comparisons' options (:func:`fastndcg.compare`, ``fastndcg compare``/``explain``)."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import numpy as np

from fastndcg._core.options.model import Flag, Option, check_bool, check_optional_int
from fastndcg._core.vocabulary import (
    ALTERNATIVES,
    CI_METHODS,
    COMPARE_FORMATS,
    CORRECTION_ALIASES,
    CORRECTIONS,
    PAIRING,
    TEST_ALIASES,
    TESTS,
    ZERO_METHODS,
    choose,
    choose_named,
)
from fastndcg._errors import OptionError, OptionTypeError

COMPARE = "compare"  # fastndcg.compare, compare_runs, compare_table
COMPARE_COMMAND = "compare command"  # fastndcg compare
EXPLAIN_COMMAND = "explain command"  # fastndcg explain
DEFINITIONS = "compare_definitions"  # fastndcg.compare_definitions
PLOT = "plot"  # PairedComparison.plot and the figures of fastndcg._compare.plots
EXPLAIN = "explain"  # PairedComparison.explain
_COMPARING = frozenset({COMPARE, COMPARE_COMMAND})
MAX_SEED = 1 << 64
# More resamples only cost time: at 10**9 a p-value near 0.05 has a Monte Carlo standard error
# of 7e-6. The resampling's memory does not grow with the count (see fastndcg._compare.draws).
MAX_RESAMPLES = 10**9
ENTRY_POINT_NAMES = ("ndcg", "ndcg_table", "ndcg_parquet", "ndcg_run")  # compare_definitions
PLOT_KINDS = ("forest", "waterfall", "ndcg_at_k", "distribution")
# the families of a correction: each measure's comparisons (each cutoff's), or all together
FAMILIES = ("measure", "all")


def _refuse(error: type[OptionError], name: str, rule: str, value: Any) -> NoReturn:
    """Raise ``error`` saying that option ``name`` ``rule``, with the value got."""
    raise error(f"`{name}` {rule}", option=name, value=value, fix=f"got {value!r}")


def _compare_seed(value: Any) -> int:
    """The comparison's seed: an int in [0, 2**64) (None is no seed: draws must repeat)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        _refuse(OptionTypeError, "seed", "must be an int with 0 <= seed < 2**64", value)
    if not 0 <= value < MAX_SEED:
        _refuse(OptionError, "seed", "must be an int with 0 <= seed < 2**64", int(value))
    return int(value)


def _resamples(value: Any) -> int:
    """``n_resamples``: an int in [1, MAX_RESAMPLES]."""
    if value is None:
        _refuse(OptionTypeError, "n_resamples", "must be a positive int", value)
    checked = check_optional_int("n_resamples", 1, "a positive int")(value)
    assert checked is not None
    if checked > MAX_RESAMPLES:
        raise OptionError(
            f"`n_resamples` must be at most {MAX_RESAMPLES:,}",
            option="n_resamples",
            value=checked,
            fix=f"got {checked:,}; 10,000 give a p-value near 0.05 to within 0.005 (two "
            "standard errors), 1,000,000 to within 0.0005, and time grows with the count",
        )
    return checked


def _number(name: str, what: str, within: str, inside: Callable[[float], bool]) -> Callable:
    """A check of a real number (``what``, in words) for which ``inside`` holds (``within``)."""

    def check(value: Any) -> float:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            _refuse(OptionTypeError, name, f"must be {what}", value)
        if not inside(float(value)):  # NaN is never inside
            _refuse(OptionError, name, f"must be {within}", value)
        return float(value)

    return check


def _level(name: str) -> Callable[[Any], float]:
    """A check of a probability strictly between 0 and 1 (``alpha``, ``ci``)."""
    return _number(name, "a number in (0, 1)", "in (0, 1) (exclusive)", lambda x: 0.0 < x < 1.0)


def _correction(value: Any) -> str | None:
    if value is None:
        return None
    return choose_named(
        "correction", value, CORRECTIONS, CORRECTION_ALIASES, also="`None` (no correction)"
    )


def _named(name: str, valid: tuple[str, ...], aliases: Mapping[str, str]) -> Callable:
    """A check of one of the names ``valid`` or of ``aliases`` (returns the name meant)."""
    return lambda value: choose_named(name, value, valid, aliases)


def _words(
    valid: tuple[str, ...], aliases: Mapping[str, str] | None = None, spell: Callable = repr
) -> str:
    """The accepted values in words: quoted for the documentation, bare (``str``) for --help."""
    text = ", ".join(spell(v) for v in valid)
    if aliases:
        text += " (also " + ", ".join(f"{spell(a)} = {spell(v)}" for a, v in aliases.items()) + ")"
    return text


def _system_name(name: str) -> Callable[[Any], str | None]:
    """A check of a system's name or None (``baseline``; the plots' ``system``)."""

    def check(value: Any) -> str | None:
        if value is not None and not isinstance(value, str):
            _refuse(OptionTypeError, name, "must be a system name (str) or None", value)
        return value

    return check


_COMPARE_TABLE = (
    Option(
        "baseline",
        "the system every other one is compared with; None: every unordered pair once",
        None,
        "comparison",
        _COMPARING,
        _system_name("baseline"),
        values="None, a system name",
        flag=Flag(
            ("--baseline",),
            metavar="NAME",
            help="compare every other system with this one (default: every pair once)",
        ),
    ),
    Option(
        "test",
        "the paired test: sign flips of the differences, Student's t, bootstrap, Wilcoxon",
        "randomization",
        "comparison",
        _COMPARING,
        _named("test", TESTS, TEST_ALIASES),
        values=_words(TESTS, TEST_ALIASES),
        flag=Flag(
            ("--test",),
            metavar="TEST",
            help=f"the paired test: {_words(TESTS, TEST_ALIASES, str)}",
        ),
    ),
    Option(
        "alternative",
        "the alternative hypothesis about the mean difference (system - baseline)",
        "two-sided",
        "comparison",
        _COMPARING,
        _named("alternative", ALTERNATIVES, {}),
        values=_words(ALTERNATIVES),
        flag=Flag(
            ("--alternative",),
            metavar="H1",
            help="two-sided, greater (the system better) or less; one-sided intervals go with "
            "one-sided tests",
        ),
    ),
    Option(
        "n_resamples",
        "random sign vectors or bootstrap samples (all 2**n sign vectors when they fit)",
        10_000,
        "comparison",
        _COMPARING,
        _resamples,
        values=f"int in [1, {MAX_RESAMPLES:_}]",
        flag=Flag(
            ("--resamples",),
            type=int,
            metavar="N",
            help=f"random sign vectors or bootstrap samples (at most {MAX_RESAMPLES:,})",
        ),
    ),
    Option(
        "ci_method",
        "the bootstrap's interval, as scipy.stats.bootstrap's method",
        "percentile",
        "comparison",
        _COMPARING,
        _named("ci_method", CI_METHODS, {"BCa": "bca"}),
        values=_words(CI_METHODS),
        flag=Flag(
            ("--ci-method",),
            metavar="METHOD",
            help="the bootstrap's interval: percentile, basic or bca",
        ),
    ),
    Option(
        "zero_method",
        "Wilcoxon: what zero differences do, as scipy.stats.wilcoxon's zero_method",
        "wilcox",
        "comparison",
        _COMPARING,
        _named("zero_method", ZERO_METHODS, {}),
        values=_words(ZERO_METHODS),
        flag=Flag(
            ("--zero-method",),
            metavar="METHOD",
            help="Wilcoxon's zero differences: wilcox (dropped), pratt or zsplit",
        ),
    ),
    Option(
        "continuity",
        "Wilcoxon: continuity correction of the normal approximation (scipy's correction)",
        False,
        "comparison",
        _COMPARING,
        check_bool("continuity"),
        values="True, False",
        flag=Flag(
            ("--continuity",),
            action="store_true",
            help="Wilcoxon: continuity correction of the normal approximation",
        ),
    ),
    Option(
        "correction",
        "adjustment of the p-values of each family of comparisons (see family)",
        "holm",
        "comparison",
        _COMPARING,
        _correction,
        values=_words(CORRECTIONS, CORRECTION_ALIASES) + ", None",
        flag=Flag(
            ("--correction",),
            metavar="METHOD",
            none="none",
            help="multiple-comparison correction within each family (--family): "
            f"{_words(CORRECTIONS, CORRECTION_ALIASES, str)}, or none",
        ),
    ),
    Option(
        "family",
        "the comparisons each correction covers: each measure's (each cutoff's) own, or every "
        "measure's together",
        "measure",
        "comparison",
        _COMPARING,
        choices=FAMILIES,
        values=_words(FAMILIES),
        flag=Flag(
            ("--family",),
            help="the comparisons corrected together: those of each measure (each cutoff), or "
            "all of them",
        ),
    ),
    Option(
        "alpha",
        "significance level, on the adjusted p-values",
        0.05,
        "comparison",
        _COMPARING,
        _level("alpha"),
        values="number in (0, 1)",
        flag=Flag(("--alpha",), type=float, metavar="ALPHA", help="significance level"),
    ),
    Option(
        "ci",
        "level of the confidence intervals",
        0.95,
        "comparison",
        _COMPARING,
        _level("ci"),
        values="number in (0, 1)",
        flag=Flag(("--ci",), type=float, metavar="LEVEL", help="confidence level"),
    ),
    Option(
        "seed",
        "seed of the resampling (compare_runs, compare_table: also of ties='random')",
        0,
        "comparison",
        _COMPARING,
        _compare_seed,
        values="int in [0, 2**64)",
        flag=Flag(
            ("--seed",),
            type=int,
            metavar="SEED",
            help="seed of the resampling, and of --ties random",
        ),
    ),
    Option(
        "missing",
        "queries some systems lack: an error, scored 0 (trec_eval -c), or left out",
        "error",
        "comparison",
        _COMPARING,
        choices=PAIRING,
        flag=Flag(
            ("--missing",),
            help="queries some systems lack: an error, scored 0 (trec_eval -c), or dropped",
        ),
    ),
)
COMPARE_OPTIONS: Mapping[str, Option] = {option.name: option for option in _COMPARE_TABLE}
"""The options of the paired comparisons, a table of their own.

Two of their names, ``seed`` and ``missing``, are already options of the scoring with other
meanings: the seed of ``ties='random'``, and what a judged query absent from a TREC run gets.
:func:`fastndcg.compare_runs` and :func:`fastndcg.compare_table` take the scoring's keywords and
the comparison's in one call, so there each of the two names means the comparison's option
(``seed`` also seeds ``ties='random'``; ``missing`` decides how the runs are scored, see
:mod:`fastndcg._compare.conveniences`). A separate table keeps each record with one meaning,
and lets the ``fastndcg compare`` command take ``--seed`` and ``--missing`` in the comparison's
sense.
"""

# options of the compare and explain commands alone
COMPARE_COMMAND_ONLY = (
    Option(
        "scores",
        "prediction files: the systems' score columns, NAME=COLUMN,... (or COLUMN,...)",
        None,
        "parquet",
        frozenset({COMPARE_COMMAND, EXPLAIN_COMMAND}),
        flag=Flag(
            ("--scores",),
            metavar="SYSTEMS",
            help="prediction files: the score column of each system, NAME=COLUMN,... or "
            "COLUMN,... (the name is the column)",
        ),
    ),
    Option(
        "format",
        "output format (explain: not csv)",
        "table",
        "output",
        frozenset({COMPARE_COMMAND, EXPLAIN_COMMAND}),
        choices=COMPARE_FORMATS,
        flag=Flag(("--format",), help="output format"),
    ),
    Option(
        "plot",
        "also draw the comparison to this image file (needs matplotlib)",
        None,
        "output",
        frozenset({COMPARE_COMMAND}),
        flag=Flag(
            ("--plot",),
            metavar="FILE",
            help="also draw a plot to FILE (.png, .pdf, .svg; needs matplotlib)",
        ),
    ),
    Option(
        "plot_kind",
        "the plot --plot draws",
        "forest",
        "output",
        frozenset({COMPARE_COMMAND}),
        choices=PLOT_KINDS,
        flag=Flag(("--plot-kind",), help="the plot --plot draws"),
    ),
    Option(
        "fail_if_worse",
        "exit with status 1 when a system is significantly worse than the baseline",
        False,
        "output",
        frozenset({COMPARE_COMMAND}),
        flag=Flag(
            ("--fail-if-worse",),
            action="store_true",
            help="exit with status 1 when any system is significantly worse than the "
            "baseline (a regression gate for CI)",
        ),
    ),
    Option(
        "query",
        "the query to explain",
        None,
        "explain",
        frozenset({EXPLAIN_COMMAND}),
        flag=Flag(("--query",), metavar="QID", help="the query to explain (required)"),
    ),
    Option(
        "system",
        "the systems to show (repeatable; default: all)",
        None,
        "explain",
        frozenset({EXPLAIN_COMMAND}),
        flag=Flag(
            ("--system",),
            action="append",
            metavar="NAME",
            help="a system to show (repeatable; default: every system)",
        ),
    ),
)
COMPARE_COMMAND_OPTIONS: Mapping[str, Option] = {
    option.name: option for option in COMPARE_COMMAND_ONLY
}


def _definitions(value: Any) -> Any:
    """At least one definition, each a preset name or a mapping of options."""
    if not value:
        raise OptionError(
            "`definitions` is empty",
            option="definitions",
            value=value,
            fix="give preset names and/or dicts of options",
        )
    for spec in value.values() if isinstance(value, Mapping) else value:
        if not isinstance(spec, (str, Mapping)):
            raise OptionTypeError(
                "a definition is a preset name or a dict of options",
                option="definitions",
                value=spec,
                fix=f"got {type(spec).__name__}",
            )
    return value


def _using(value: Any) -> Any:
    if callable(value):
        return value
    return choose("using", value, ENTRY_POINT_NAMES, also="a function returning an NDCGResult")


def _shown_cutoff(value: Any) -> Any:
    """``...`` (the first cutoff compared), None (the whole list) or an int >= 1."""
    return value if value is ... else check_optional_int("k", 1, "an int >= 1 or None")(value)


_DEFINITIONS, _PLOT = frozenset({DEFINITIONS}), frozenset({PLOT})
# options of compare_definitions and of a comparison's plots (in no command's parser)
_VIEW_TABLE = (
    Option(
        "definitions",
        "presets and/or dicts of options",
        None,
        "comparison",
        _DEFINITIONS,
        _definitions,
    ),
    Option(
        "using",
        "the entry point that scores the inputs",
        "ndcg",
        "comparison",
        _DEFINITIONS,
        _using,
        ENTRY_POINT_NAMES,
    ),
    Option(
        "tolerance",
        "per-query values closer than this count as equal",
        1e-12,
        "comparison",
        _DEFINITIONS,
        _number("tolerance", "a number >= 0", "a number >= 0", lambda x: x >= 0),
    ),
    Option("kind", "the figure drawn", "forest", "output", _PLOT, choices=PLOT_KINDS),
    Option(
        "k",
        "the cutoff shown (default: the first compared)",
        ...,
        "output",
        frozenset({PLOT, EXPLAIN}),
        _shown_cutoff,
    ),
    Option(
        "system",
        "the system of the comparison shown",
        None,
        "output",
        _PLOT,
        _system_name("system"),
    ),
)
VIEW_OPTIONS: Mapping[str, Option] = {option.name: option for option in _VIEW_TABLE}


def parse_compare(name: str, value: Any) -> Any:
    """``value`` of the comparison's option ``name`` checked and parsed."""
    return COMPARE_OPTIONS[name].check(value)


def parse_view(name: str, value: Any) -> Any:
    """``value`` of option ``name`` of :data:`VIEW_OPTIONS` checked and parsed."""
    return VIEW_OPTIONS[name].check(value)


def compared_cutoff(k: Any, cutoffs: tuple[int | None, ...]) -> int | None:
    """The cutoff ``k`` a plot or an explanation shows: one of ``cutoffs`` (``...``: the first)."""
    k = parse_view("k", k)
    if k is ...:
        return cutoffs[0]
    if k not in cutoffs:
        raise OptionError(
            f"`k={k!r}` was not compared",
            option="k",
            value=k,
            fix=f"the cutoffs are {', '.join('None' if c is None else str(c) for c in cutoffs)}",
        )
    return k
