"""The option table: every option of fastndcg, declared once.

Each :class:`Option` says its name (the Python keyword), a one-line doc, its default, how a
value is checked and parsed, its choices, the command-line flag that sets it (:class:`Flag`),
which entry points take it, and whether a preset may set it. From the table come:

- validation (:func:`parse`, used by :meth:`fastndcg._core.definition.Definition.create`
  and the entry points);
- the settings a preset may make (:data:`PRESET_SETTINGS`) and those only TREC runs take;
- how keyword options are split between the definition and an entry point's data options
  (:func:`split_options`), with the list of valid names an unknown option gets;
- the command line's parser and ``--help`` (:mod:`fastndcg.cli.parser`), and the spelling of
  option references in messages (``k=None`` in Python, ``-k all`` on the command line);
- the options table of the documentation, which a test compares with it.

The paired comparisons (:func:`fastndcg.compare`, ``fastndcg compare``) have a table of their
own, :data:`COMPARE_OPTIONS` (see :data:`COMPARE` for why).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._backends import backend_names
from fastndcg._core.specs import parse_cutoffs, parse_discount, parse_gain
from fastndcg._core.vocabulary import (
    AGGREGATES,
    BACKENDS,
    COMPARE_FORMATS,
    CORRECTIONS,
    DISCOUNT_NAMES,
    ENGINES,
    FORMATS,
    GAIN_NAMES,
    GROUPINGS,
    IDEALS,
    KEYED_TIES,
    MISSING,
    PAIRING,
    SCORE_DTYPES,
    TESTS,
    TIES,
    TOOL_AGGREGATES,
    VALIDATIONS,
    ZERO_IDCG,
    choose,
)
from fastndcg._errors import NOT_GIVEN, OptionError, OptionTypeError

# The entry points, as the table names them.
NDCG = "ndcg"
TABLE = "ndcg_table"
PARQUET = "ndcg_parquet"
RUN = "ndcg_run"
STREAM = "StreamScorer"
SCORER = "Scorer"
SCALEOUT = "scaleout"  # fastndcg.dask and fastndcg.spark
COMMAND = "command"  # fastndcg score

# The groups options are listed in (the command's --help, the documentation).
GROUPS = {
    "input": "Input",
    "definition": "NDCG definition",
    "presets": "Presets",
    "trec": "TREC runs (--qrels/--run)",
    "scaleout": "Dask and Spark (--engine)",
    "parquet": "Prediction files (Parquet, CSV/TSV)",
    "runtime": "Computation",
    "output": "Output",
    "comparison": "Paired comparison",
    "explain": "Explain one query",
}


@dataclass(frozen=True)
class Flag:
    """How the ``fastndcg`` command takes an option.

    ``names`` are the flags (the first is the one messages use); ``type`` parses the text;
    ``action`` is argparse's (``"store_true"``, ``"append"``); ``default`` is the command's
    default where it differs from the keyword's; ``none`` is how the command spells the
    keyword's None (``-k all``); ``help`` replaces the option's doc where the command needs
    other words; ``choices`` replaces the option's where the command takes more.
    """

    names: tuple[str, ...]
    type: Callable[[str], Any] | None = None
    action: str | None = None
    metavar: str | None = None
    default: Any = NOT_GIVEN
    none: str | None = None
    help: str | None = None
    choices: tuple[str, ...] | None = None
    negative: str | None = None  # a second flag that sets the option to False
    negative_help: str | None = None

    @property
    def name(self) -> str:
        """The flag messages use."""
        return self.names[0]

    @property
    def shown(self) -> str:
        """The flag as listings show it (with its negative form, if any)."""
        return f"{self.name}/{self.negative}" if self.negative else self.name


@dataclass(frozen=True)
class Option:
    """One option of fastndcg: its keyword, meaning, default, check and where it is taken."""

    name: str
    doc: str
    default: Any
    group: str
    entries: frozenset[str]
    parse: Callable[[Any], Any] | None = None  # checks a value; returns it parsed
    choices: tuple[str, ...] = ()
    preset: bool = False  # a preset may set it
    flag: Flag | None = None
    values: str = ""  # the accepted values in words, for the documentation

    def check(self, value: Any) -> Any:
        """``value`` checked (an OptionError names the option) and parsed."""
        if self.parse is not None:
            return self.parse(value)
        if self.choices:
            return choose(self.name, value, self.choices)
        return value


def _choice(name: str, valid: tuple[str, ...]) -> Callable[[Any], str]:
    return lambda value: choose(name, value, valid)


def _optional_int(name: str, low: int, what: str) -> Callable[[Any], int | None]:
    """A check of an int >= ``low`` or None; other types are an OptionTypeError."""

    def check(value: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise OptionTypeError(
                f"`{name}` must be {what}", option=name, value=value, fix=f"got {value!r}"
            )
        if value < low:
            raise OptionError(
                f"`{name}` must be {what}", option=name, value=value, fix=f"got {value!r}"
            )
        return int(value)

    return check


def _flag_bool(name: str) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise OptionTypeError(
                f"`{name}` must be True or False", option=name, value=value, fix=f"got {value!r}"
            )
        return bool(value)

    return check


def _column_name(role: str, optional: bool = False) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise OptionTypeError(
                f"`{role}=` must be a column name (str)",
                option=role,
                value=value,
                fix=f"got {value!r}",
            )
        return value

    return check


def _max_grade(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise OptionTypeError(
            "`max_grade` must be a number (the grade that fills every slot)",
            option="max_grade",
            value=value,
            fix=f"got {value!r}",
        )
    if not np.isfinite(float(value)):
        raise OptionError(
            "`max_grade` must be finite", option="max_grade", value=value, fix=f"got {value!r}"
        )
    return float(value)


_ARRAYS = frozenset({NDCG, TABLE})  # entry points that take every data option
_DEFINING = frozenset({NDCG, TABLE, PARQUET, RUN, STREAM, SCORER, SCALEOUT, COMMAND})
_CALLS = frozenset({NDCG, TABLE, PARQUET, RUN, STREAM, SCALEOUT, COMMAND})  # not Scorer
_PRESETS = frozenset({NDCG, TABLE, PARQUET, RUN, SCALEOUT, COMMAND})
_COLUMNS = frozenset({TABLE, PARQUET, STREAM, SCALEOUT, COMMAND})

_TABLE = (
    # -- the NDCG definition ------------------------------------------------------------------
    Option(
        "k",
        "cutoff(s); None: the whole list. Several cutoffs are computed in one pass",
        None,
        "definition",
        _DEFINING,
        parse_cutoffs,
        preset=True,
        values="None, int, list of ints (and None)",
        flag=Flag(
            ("-k",),
            metavar="K",
            default=[None],
            none="all",
            help="cutoffs, e.g. 1,3,5,10 ('all': the whole list) (default: all)",
        ),
    ),
    Option(
        "gain",
        "gain of a grade: 2**g - 1, g, a table by integer grade, a dict or a callable",
        "exp2",
        "definition",
        _DEFINING,
        parse_gain,
        choices=GAIN_NAMES,
        preset=True,
        values="'exp2', 'linear', sequence, dict, callable",
        flag=Flag(("--gain",), metavar="GAIN", help="exp2, linear, or gains per grade 0,1,2,..."),
    ),
    Option(
        "discount",
        "discount of a rank: 1/log2(r+1), Jarvelin's, 1/r, an array or a callable",
        "log2",
        "definition",
        _DEFINING,
        parse_discount,
        choices=DISCOUNT_NAMES,
        preset=True,
        values="'log2', 'jarvelin', 'reciprocal', array, callable",
        flag=Flag(("--discount",), help="rank discount"),
    ),
    Option(
        "ideal",
        "where IDCG comes from: the list's grades, the returned top k, judgment lists, max_grade",
        "recall",
        "definition",
        _DEFINING,
        choices=tuple(IDEALS),
        preset=True,
        flag=Flag(
            ("--ideal",),
            default=None,
            help="ideal DCG (default: recall; global for TREC runs)",
        ),
    ),
    Option(
        "max_grade",
        "grade of every slot for ideal='max' (default: the largest grade in the data)",
        None,
        "definition",
        _DEFINING,
        _max_grade,
        values="None, number",
        flag=Flag(
            ("--max-grade",),
            type=float,
            metavar="GRADE",
            help="grade of every slot for --ideal max (default: the largest grade in the data; "
            "required for Parquet streamed with --group stream, the default, or with --engine)",
        ),
    ),
    Option(
        "ties",
        "order of tied scores",
        "average",
        "definition",
        _DEFINING,
        choices=(*TIES, *KEYED_TIES),
        preset=True,
        flag=Flag(("--ties",), help="order of tied scores"),
    ),
    Option(
        "seed",
        "seed for ties='random' (reproducible); None draws one",
        None,
        "definition",
        _DEFINING,
        values="None, int in [0, 2**64)",
        flag=Flag(
            ("--seed",),
            type=int,
            metavar="SEED",
            help="seed for --ties random (default: a fresh one)",
        ),
    ),
    Option(
        "zero_idcg",
        "NDCG of a query without relevant items: NaN and skipped, 0, 1, or an error",
        "skip",
        "definition",
        _DEFINING,
        choices=ZERO_IDCG,
        preset=True,
        flag=Flag(("--zero-idcg",), help="queries without relevant items"),
    ),
    Option(
        "aggregate",
        "how per-query values combine: their mean, sum(DCG)/sum(IDCG), or a tool's rule",
        "mean",
        "definition",
        _CALLS,
        choices=AGGREGATES,
        preset=True,
        flag=Flag(
            ("--aggregate",),
            help="how queries combine (or a tool's own rule)",
            choices=(*AGGREGATES, *TOOL_AGGREGATES),
        ),
    ),
    Option(
        "score_dtype",
        "precision scores are held in before ranking",
        "float64",
        "definition",
        _DEFINING,
        choices=SCORE_DTYPES,
        preset=True,
        flag=Flag(("--score-dtype",), help="precision scores are held in before ranking"),
    ),
    # -- computation ----------------------------------------------------------------------------
    Option(
        "backend",
        "what computes: numba kernels, the NumPy twin, numba-cuda kernels on a GPU (cuda), or "
        "auto (numba when importable; cuda for inputs in GPU memory)",
        "auto",
        "runtime",
        _DEFINING,
        lambda value: choose("backend", value, ("auto", *backend_names())),
        choices=BACKENDS,
        flag=Flag(("--backend",), help="compute backend"),
    ),
    Option(
        "n_threads",
        "threads for this call (restored after); results do not depend on it",
        None,
        "runtime",
        _CALLS,
        _optional_int("n_threads", 1, "a positive int `or None`"),
        values="None, int >= 1",
        flag=Flag(
            ("--threads",),
            type=int,
            metavar="N",
            help="Numba threads (default: all cores; one per task with --engine)",
        ),
    ),
    # -- presets --------------------------------------------------------------------------------
    Option(
        "preset",
        "a tool's definition by name; options given explicitly override its settings",
        None,
        "presets",
        _PRESETS,
        values="None, a preset name, a Preset",
        flag=Flag(
            ("--preset",),
            help="score as this tool does (options given explicitly override its settings)",
        ),
    ),
    # -- data options of the entry points -------------------------------------------------------
    Option(
        "weights",
        "non-negative weight per query for the aggregate, in result order",
        None,
        "input",
        _ARRAYS,
        values="None, array of n_queries numbers",
    ),
    Option(
        "ideal_grades",
        "judgment grades for ideal='global'",
        None,
        "input",
        _ARRAYS | {PARQUET, STREAM, SCALEOUT},
        values="None, array",
    ),
    Option(
        "ideal_qid",
        "query id of every judgment (with ideal_grades)",
        None,
        "input",
        _ARRAYS | {PARQUET, STREAM, SCALEOUT},
        values="None, array",
    ),
    Option(
        "ideal_offsets",
        "CSR offsets of the judgment lists, one per query (with ideal_grades)",
        None,
        "input",
        _ARRAYS,
        values="None, array",
    ),
    Option(
        "qid",
        "query id column",
        "qid",
        "input",
        _COLUMNS,
        _column_name("qid", optional=True),
        flag=Flag(("--qid",), help="query id column"),
    ),
    Option(
        "grade",
        "relevance grade column",
        "grade",
        "input",
        _COLUMNS,
        _column_name("grade"),
        flag=Flag(("--grade",), help="relevance grade column"),
    ),
    Option(
        "score",
        "model score column (None: rows come in ranked order)",
        "score",
        "input",
        _COLUMNS,
        _column_name("score", optional=True),
        flag=Flag(("--score",), none="''", help="model score column ('' for ranked rows)"),
    ),
    # -- TREC runs ------------------------------------------------------------------------------
    Option(
        "missing",
        "judged queries absent from a run: scored 0, skipped, or an error",
        "zero",
        "trec",
        frozenset({RUN, COMMAND}),
        choices=MISSING,
        preset=True,
        flag=Flag(("--missing",), help="TREC: judged queries absent from a run"),
    ),
    Option(
        "judged_only",
        "drop unjudged documents before ranking (trec_eval -J)",
        False,
        "trec",
        frozenset({RUN, COMMAND}),
        _flag_bool("judged_only"),
        preset=True,
        values="False, True",
        flag=Flag(
            ("--judged-only",),
            action="store_true",
            help="TREC: drop unjudged documents before ranking",
        ),
    ),
    Option(
        "max_docs",
        "score only the first N documents of each ranking (trec_eval -M)",
        None,
        "trec",
        frozenset({RUN, COMMAND}),
        preset=True,
        values="None, int >= 1",
        flag=Flag(
            ("--max-docs",),
            type=int,
            metavar="N",
            help="TREC: score only the first N documents of each ranking (trec_eval -M) "
            "(default: all)",
        ),
    ),
    Option(
        "decimals",
        "round per-query values to this many decimals before aggregating",
        None,
        "presets",
        _PRESETS,
        _optional_int("decimals", 0, "an int >= 0 `or None`"),
        preset=True,
        values="None, int >= 0",
    ),
    # -- Parquet --------------------------------------------------------------------------------
    Option(
        "batch_rows",
        "rows per streamed batch",
        1 << 20,
        "parquet",
        frozenset({PARQUET, COMMAND}),
        _optional_int("batch_rows", 1, "a positive int"),
        values="int >= 1",
        flag=Flag(
            ("--batch-rows",), type=int, metavar="ROWS", help="Parquet: rows per streamed batch"
        ),
    ),
    Option(
        "group",
        "stream query-grouped files batch by batch, or group all rows in memory",
        "stream",
        "parquet",
        frozenset({PARQUET, COMMAND}),
        choices=GROUPINGS,
        flag=Flag(("--group",), help="Parquet: stream query-grouped files, or group in memory"),
    ),
    Option(
        "progress",
        "show a progress bar; None: only on an interactive terminal",
        None,
        "parquet",
        frozenset({PARQUET, COMMAND}),
        values="None, False, True",
        flag=Flag(
            ("--progress",),
            action="store_true",
            default=None,
            negative="--no-progress",
            negative_help="never show a progress bar",
            help="always show a progress bar (default: only on an interactive terminal)",
        ),
    ),
    # -- Dask and Spark -------------------------------------------------------------------------
    Option(
        "colocated",
        "every partition (file) holds whole queries: no shuffle (checked)",
        False,
        "scaleout",
        frozenset({SCALEOUT, COMMAND}),
        _flag_bool("colocated"),
        values="False, True",
        flag=Flag(
            ("--colocated",),
            action="store_true",
            help="--engine dask|spark: every file holds whole queries, so skip the shuffle "
            "(checked)",
        ),
    ),
    Option(
        "validate",
        "how colocated=True is checked: query-id ranges, or every query id",
        "ranges",
        "scaleout",
        frozenset({SCALEOUT}),
        choices=VALIDATIONS,
    ),
)
OPTIONS: Mapping[str, Option] = {option.name: option for option in _TABLE}

# Options of the command alone (no Python keyword takes them).
COMMAND_ONLY = (
    Option(
        "qrels",
        "TREC qrels file (qid 0 docid grade)",
        None,
        "trec",
        frozenset({COMMAND}),
        flag=Flag(("--qrels",), metavar="QRELS", help="TREC qrels file (qid 0 docid grade)"),
    ),
    Option(
        "run",
        "TREC run file (repeatable)",
        [],
        "trec",
        frozenset({COMMAND}),
        flag=Flag(("--run",), action="append", metavar="RUN", help="TREC run file (repeatable)"),
    ),
    Option(
        "compare_presets",
        "score under several presets and show how each differs from the first",
        None,
        "presets",
        frozenset({COMMAND}),
        flag=Flag(
            ("--compare-presets",),
            metavar="NAMES",
            help="score under several presets (comma-separated; without NAMES: every preset "
            "that applies) and show how each differs from the first",
        ),
    ),
    Option(
        "engine",
        "where prediction files are scored: this process, a Dask cluster or Spark",
        "local",
        "scaleout",
        frozenset({COMMAND}),
        choices=("local", *ENGINES),
        flag=Flag(
            ("--engine",),
            help="Parquet: score in this process, on a Dask cluster, or with Spark",
        ),
    ),
    Option(
        "cluster",
        "the Dask scheduler address or the Spark master URL",
        None,
        "scaleout",
        frozenset({COMMAND}),
        flag=Flag(
            ("--cluster",),
            metavar="ADDRESS",
            help="--engine dask: scheduler address (default: a local cluster); --engine spark: "
            "master URL (default: local[*]; sc://host:port for Spark Connect)",
        ),
    ),
    Option(
        "format",
        "output format",
        "table",
        "output",
        frozenset({COMMAND}),
        choices=FORMATS,
        flag=Flag(("--format",), help="output format"),
    ),
    Option(
        "per_query",
        "also write per-query values (.parquet or .csv)",
        None,
        "output",
        frozenset({COMMAND}),
        flag=Flag(
            ("--per-query",),
            metavar="FILE",
            help="also write per-query values (.parquet or .csv; '-': to stdout, as -q)",
        ),
    ),
    Option(
        "per_query_lines",
        "print per-query values on stdout, as trec_eval -q does, then the summary",
        False,
        "output",
        frozenset({COMMAND}),
        flag=Flag(
            ("-q",),
            action="store_true",
            help="print per-query values on stdout (trec_eval -q: measure, query, value), then "
            "the means; --per-query - does the same",
        ),
    ),
    Option(
        "digits",
        "decimals in table output",
        4,
        "output",
        frozenset({COMMAND}),
        flag=Flag(("--digits",), metavar="N", help="decimals in table output"),
    ),
)
COMMAND_OPTIONS: Mapping[str, Option] = {  # the command's own options first in each group
    **{option.name: option for option in COMMAND_ONLY},
    **{name: option for name, option in OPTIONS.items() if COMMAND in option.entries},
}


# -- paired comparisons ----------------------------------------------------------------------------

COMPARE = "compare"  # fastndcg.compare, compare_runs, compare_table
COMPARE_COMMAND = "compare command"  # fastndcg compare
EXPLAIN_COMMAND = "explain command"  # fastndcg explain
_COMPARING = frozenset({COMPARE, COMPARE_COMMAND})
MAX_SEED = 1 << 64


def _compare_seed(value: Any) -> int:
    """The comparison's seed: an int in [0, 2**64) (None is no seed: draws must repeat)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise OptionTypeError(
            "`seed` must be an int with 0 <= seed < 2**64",
            option="seed",
            value=value,
            fix=f"got {value!r}",
        )
    if not 0 <= value < MAX_SEED:
        raise OptionError(
            "`seed` must be an int with 0 <= seed < 2**64",
            option="seed",
            value=int(value),
            fix=f"got {int(value)}",
        )
    return int(value)


def _positive_int(name: str) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if value is None:
            raise OptionTypeError(
                f"`{name}` must be a positive int", option=name, value=value, fix="got None"
            )
        checked = _optional_int(name, 1, "a positive int")(value)
        assert checked is not None
        return checked

    return check


def _level(name: str) -> Callable[[Any], float]:
    """A check of a probability strictly between 0 and 1 (``alpha``, ``ci``)."""

    def check(value: Any) -> float:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise OptionTypeError(
                f"`{name}` must be a number in (0, 1)",
                option=name,
                value=value,
                fix=f"got {value!r}",
            )
        if not 0.0 < float(value) < 1.0:
            raise OptionError(
                f"`{name}` must be in (0, 1) (exclusive)",
                option=name,
                value=value,
                fix=f"got {value!r}",
            )
        return float(value)

    return check


def _correction(value: Any) -> str | None:
    if value is None:
        return None
    return choose("correction", value, CORRECTIONS, also="`None` (no correction)")


def _baseline(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise OptionTypeError(
            "`baseline` must be a system name (str) `or None`",
            option="baseline",
            value=value,
            fix=f"got {value!r}",
        )
    return value


_COMPARE_TABLE = (
    Option(
        "baseline",
        "the system every other one is compared with; None: every unordered pair once",
        None,
        "comparison",
        _COMPARING,
        _baseline,
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
        choices=TESTS,
        flag=Flag(("--test",), help="the paired test"),
    ),
    Option(
        "n_resamples",
        "random sign vectors or bootstrap samples (all 2**n sign vectors when they fit)",
        10_000,
        "comparison",
        _COMPARING,
        _positive_int("n_resamples"),
        values="int >= 1",
        flag=Flag(
            ("--resamples",),
            type=int,
            metavar="N",
            help="random sign vectors or bootstrap samples",
        ),
    ),
    Option(
        "correction",
        "adjustment of the p-values of each cutoff's comparisons (the family)",
        "holm",
        "comparison",
        _COMPARING,
        _correction,
        choices=CORRECTIONS,
        values="'holm', 'bonferroni', 'bh', None",
        flag=Flag(
            ("--correction",),
            none="none",
            help="multiple-comparison correction within each cutoff",
            choices=(*CORRECTIONS, "none"),
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
:mod:`fastndcg._compare.runs`). A separate table keeps each record with one meaning, and lets
the ``fastndcg compare`` command take ``--seed`` and ``--missing`` in the comparison's sense.
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
        "output format (explain: table or json)",
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
        choices=("forest", "waterfall", "ndcg_at_k", "distribution"),
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


def parse_compare(name: str, value: Any) -> Any:
    """``value`` of the comparison's option ``name`` checked and parsed."""
    return COMPARE_OPTIONS[name].check(value)


# the options a Definition takes (the rest belong to entry points)
DEFINITION = tuple(
    name for name, option in OPTIONS.items() if option.group in ("definition", "runtime")
)
# what a preset may set, in the order listings show them
PRESET_SETTINGS = tuple(name for name, option in OPTIONS.items() if option.preset)
# options only fastndcg.ndcg_run takes
RUN_ONLY = tuple(name for name, option in OPTIONS.items() if option.group == "trec")


def option(name: str) -> Option:
    """The option called ``name`` (of the Python API, of the command, or of a comparison)."""
    for table in (OPTIONS, COMMAND_OPTIONS, COMPARE_OPTIONS, COMPARE_COMMAND_OPTIONS):
        if name in table:
            return table[name]
    raise KeyError(name)


def option_named(name: str) -> Option | None:
    """The option called ``name`` in any table (the scoring's first), or None."""
    for table in (OPTIONS, COMMAND_OPTIONS, COMPARE_OPTIONS, COMPARE_COMMAND_OPTIONS):
        if name in table:
            return table[name]
    return None


def parse(name: str, value: Any) -> Any:
    """``value`` of option ``name`` checked and parsed (an OptionError names the option)."""
    return OPTIONS[name].check(value)


def flag_of(name: str) -> Flag | None:
    """The command-line flag of option ``name``, or None when the command has none."""
    found = OPTIONS.get(name) or COMMAND_OPTIONS.get(name)
    return None if found is None else found.flag


def data_options(entry: str) -> tuple[str, ...]:
    """The options entry point ``entry`` takes besides the definition's (its data options)."""
    return tuple(
        name
        for name, option in OPTIONS.items()
        if entry in option.entries and name not in DEFINITION
    )


def split_options(
    options: dict[str, Any], caller: str, data: tuple[str, ...] = ()
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split keyword options into the definition's and the data options in ``data``.

    ``caller`` is how an error names the function called. An unknown name is an
    OptionTypeError (as Python's own for an unexpected keyword) listing the valid ones.
    """
    definition = set(DEFINITION)
    unknown = sorted(set(options) - definition - set(data))
    if unknown:
        valid = ", ".join(sorted(definition | set(data)))
        raise OptionTypeError(
            f"{caller} got unknown option(s) {', '.join(unknown)}",
            option=unknown[0],
            value=options[unknown[0]],
            fix=f"valid options: {valid}",
        )
    ours = {name: value for name, value in options.items() if name in definition}
    theirs = {name: value for name, value in options.items() if name not in definition}
    return ours, theirs


def defaults(names: tuple[str, ...] = DEFINITION) -> dict[str, Any]:
    """The defaults of the options ``names`` (by default, the definition's)."""
    return {name: OPTIONS[name].default for name in names}


__all__ = [
    "COMMAND_OPTIONS",
    "COMPARE_COMMAND_OPTIONS",
    "COMPARE_OPTIONS",
    "DEFINITION",
    "GROUPS",
    "OPTIONS",
    "PRESET_SETTINGS",
    "RUN_ONLY",
    "Flag",
    "Option",
    "data_options",
    "defaults",
    "flag_of",
    "option",
    "option_named",
    "parse",
    "parse_compare",
    "split_options",
]
