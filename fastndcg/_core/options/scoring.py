"""The scoring's options: every keyword of the entry points and every flag of ``fastndcg score``.

One :class:`~fastndcg._core.options.model.Option` record per option, in the order listings
show them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fastndcg._backends import backend_names
from fastndcg._core.measures import parse_measures
from fastndcg._core.options.model import (
    COMMAND,
    EVALUATE,
    EVALUATE_PARQUET,
    EVALUATE_RUN,
    EVALUATE_TABLE,
    NDCG,
    PARQUET,
    RUN,
    SCALEOUT,
    SCORER,
    STREAM,
    TABLE,
    Flag,
    Option,
    check_bool,
    check_column_name,
    check_int,
    check_max_docs,
    check_max_grade,
    check_optional_int,
)
from fastndcg._core.specs import parse_cutoffs, parse_discount, parse_gain
from fastndcg._core.vocabulary import (
    AGGREGATES,
    DISCOUNT_NAMES,
    ENGINES,
    FORMATS,
    GAIN_NAMES,
    GROUPINGS,
    IDEALS,
    KEYED_TIES,
    MISSING,
    SCORE_DTYPES,
    TIES,
    TOOL_AGGREGATES,
    VALIDATIONS,
    ZERO_IDCG,
)


class _BackendNames(Sequence[str]):
    """The choices of ``backend=``: ``"auto"`` and every registered backend, read when asked.

    The registry (:mod:`fastndcg._backends`) is their one source: a backend registered later
    is accepted by the keyword, the command line's ``--backend`` and the documentation alike.
    """

    def __getitem__(self, index):  # type: ignore[override]
        return ("auto", *backend_names())[index]

    def __len__(self) -> int:
        return 1 + len(backend_names())

    def __repr__(self) -> str:
        return repr(tuple(self))


_ARRAYS = frozenset({NDCG, TABLE})  # entry points that take every data option
_DEFINING = frozenset({NDCG, TABLE, PARQUET, RUN, STREAM, SCORER, SCALEOUT, COMMAND})
_CALLS = frozenset({NDCG, TABLE, PARQUET, RUN, STREAM, SCALEOUT, COMMAND})  # not Scorer
_PRESETS = frozenset({NDCG, TABLE, PARQUET, RUN, SCALEOUT, COMMAND})
_COLUMNS = frozenset({TABLE, PARQUET, STREAM, SCALEOUT, COMMAND, EVALUATE_TABLE, EVALUATE_PARQUET})
# the entry points of the measures beside NDCG
_MEASURES = frozenset(
    {EVALUATE, EVALUATE_RUN, EVALUATE_TABLE, EVALUATE_PARQUET, STREAM, SCALEOUT, COMMAND}
)

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
        check_max_grade,
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
        choices=_BackendNames(),
        flag=Flag(("--backend",), help="compute backend"),
    ),
    Option(
        "n_threads",
        "threads for this call (restored after); results do not depend on it",
        None,
        "runtime",
        _CALLS,
        check_optional_int("n_threads", 1, "a positive int `or None`"),
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
        _ARRAYS | {PARQUET, STREAM, SCALEOUT, EVALUATE_TABLE},
        values="None, array",
    ),
    Option(
        "ideal_qid",
        "query id of every judgment (with ideal_grades)",
        None,
        "input",
        _ARRAYS | {PARQUET, STREAM, SCALEOUT, EVALUATE_TABLE},
        values="None, array",
    ),
    Option(
        "ideal_offsets",
        "CSR offsets of the judgment lists, one per query (with ideal_grades)",
        None,
        "input",
        _ARRAYS | {EVALUATE_TABLE},
        values="None, array",
    ),
    Option(
        "qid",
        "query id column (None: the table is one query, in memory only; streaming, Dask and "
        "Spark need the column)",
        "qid",
        "input",
        _COLUMNS,
        check_column_name("qid", optional=True),
        flag=Flag(("--qid",), help="query id column"),
    ),
    Option(
        "grade",
        "relevance grade column",
        "grade",
        "input",
        _COLUMNS,
        check_column_name("grade"),
        flag=Flag(("--grade",), help="relevance grade column"),
    ),
    Option(
        "score",
        "model score column (None: rows come in ranked order)",
        "score",
        "input",
        _COLUMNS,
        check_column_name("score", optional=True),
        flag=Flag(("--score",), none="''", help="model score column ('' for ranked rows)"),
    ),
    # -- TREC runs ------------------------------------------------------------------------------
    Option(
        "missing",
        "judged queries absent from a run: an error (the default, whatever the preset), scored 0 "
        "(trec_eval -c), or left out (trec_eval without -c)",
        "error",
        "trec",
        frozenset({RUN, COMMAND}),
        choices=MISSING,
        preset=True,
        flag=Flag(
            ("--missing",),
            help="TREC: judged queries absent from a run: an error, whatever the preset; zero "
            "scores them 0 (trec_eval -c), skip leaves them out (trec_eval without -c)",
        ),
    ),
    Option(
        "judged_only",
        "drop unjudged documents before ranking (trec_eval -J)",
        False,
        "trec",
        frozenset({RUN, COMMAND}),
        check_bool("judged_only"),
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
        "score only the first N documents of each ranking (trec_eval -M); needs ties='docid_desc' "
        "or 'stable' (checked with the definition)",
        None,
        "trec",
        frozenset({RUN, COMMAND}),
        check_max_docs,
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
        "real_grades",
        "accept qrels grades that are not whole numbers (otherwise an error naming the line)",
        False,
        "trec",
        frozenset({RUN, COMMAND}),
        check_bool("real_grades"),
        values="False, True",
        flag=Flag(
            ("--real-grades",),
            action="store_true",
            help="TREC: accept qrels grades that are not whole numbers (default: an error "
            "naming the line; trec_eval reads 1.5 as 1)",
        ),
    ),
    Option(
        "decimals",
        "round per-query values to this many decimals before aggregating",
        None,
        "presets",
        _PRESETS,
        check_optional_int("decimals", 0, "an int >= 0 `or None`"),
        preset=True,
        values="None, int >= 0",
    ),
    # -- Parquet --------------------------------------------------------------------------------
    Option(
        "batch_rows",
        "rows per streamed batch",
        1 << 20,
        "parquet",
        frozenset({PARQUET, EVALUATE_PARQUET, COMMAND}),
        check_int("batch_rows", 1, "a positive int"),
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
        frozenset({PARQUET, EVALUATE_PARQUET, COMMAND}),
        choices=GROUPINGS,
        flag=Flag(("--group",), help="Parquet: stream query-grouped files, or group in memory"),
    ),
    Option(
        "progress",
        "show a progress bar; None: only on an interactive terminal",
        None,
        "parquet",
        frozenset({PARQUET, EVALUATE_PARQUET, COMMAND}),
        check_bool("progress", optional=True),
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
        "every partition (file) holds whole queries: no shuffle (checked). Rules that need the "
        "input order (ties='stable', score=None) need it on Dask and are refused on Spark; both "
        "refuse ties='random' (checked with the definition)",
        False,
        "scaleout",
        frozenset({SCALEOUT, COMMAND}),
        check_bool("colocated"),
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
    # -- the measures beside NDCG -------------------------------------------------------------
    Option(
        "measures",
        "the measures, by name in trec_eval's, ir_measures' or ranx's syntax (nDCG@10, P.5,10, "
        "map, mrr@10, P(rel=2)@10, ...)",
        None,
        "measures",
        _MEASURES,
        parse_measures,
        values="name, Measure, or a list of them",
        flag=Flag(
            ("-m", "--measure"),
            action="append",
            metavar="NAME",
            default=None,
            help="a measure besides NDCG, by name (P@10, map, P.5,10, recip_rank, mrr@10, ...); "
            "repeat it for several",
        ),
    ),
    Option(
        "relevance_level",
        "a grade at or above it is relevant, for the measures whose name sets none (trec_eval "
        "-l, ranx rel_lvl)",
        1,
        "measures",
        _MEASURES,
        check_int("relevance_level", 0, "an int >= 0"),
        values="int >= 0",
        flag=Flag(
            ("-l", "--relevance-level"),
            type=int,
            metavar="L",
            help="with -m: a grade at or above L is relevant (trec_eval -l) (default: 1)",
        ),
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
