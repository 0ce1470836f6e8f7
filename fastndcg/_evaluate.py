"""The measures beside NDCG: :func:`evaluate`, :func:`evaluate_table`, :func:`evaluate_run`.

:class:`Measuring` is what every entry point of the measures shares (streams, Parquet, Dask and
Spark too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._core.definition import Definition
from fastndcg._core.layout import build_layout
from fastndcg._core.measures import KINDS, Measure
from fastndcg._core.measures.definitions import MeasureRules, rules_of
from fastndcg._core.measures.engine import Judged, Scoring, compute, refuse_average_ties
from fastndcg._core.measures.trec_layout import summarize
from fastndcg._core.options import data_options, parse, split_options
from fastndcg._core.options.model import EVALUATE_TABLE
from fastndcg._errors import OptionError, OptionTypeError
from fastndcg._io.arrow import as_arrow, table_layout
from fastndcg._presets.apply import IDEAL_DATA, resolve
from fastndcg._result import MeasuresResult

MeasureNames = str | Measure | list[str | Measure] | tuple[str | Measure, ...]


def evaluate(
    grades: Any,
    scores: Any = None,
    *,
    measures: MeasureNames,
    qid: Any = None,
    offsets: Any = None,
    mask: Any = None,
    relevance_level: int = 1,
    ideal_grades: Any = None,
    ideal_qid: Any = None,
    ideal_offsets: Any = None,
    preset: str | None = None,
    **options: Any,
) -> MeasuresResult:
    """Several measures (nDCG, P, R, AP, RR, ...) of many ranked lists, from one ranking each.

    Parameters
    ----------
    grades, scores, qid, offsets, mask
        The lists, as :func:`fastndcg.ndcg` takes them. Every row is a judged document.
    measures : str, Measure or list of them
        The measures by name, in trec_eval's, ir_measures' or ranx's syntax (``"nDCG@10"``,
        ``"P.5,10"``, ``"map"``, ``"mrr@10"``, ``"P(rel=2)@10"``...; see the measures page).
        An unknown name is an :class:`~fastndcg.OptionError` naming the nearest valid ones.
    relevance_level : int, default=1
        A grade at or above it is relevant (trec_eval's ``-l``, ranx's ``rel_lvl``), for the
        measures whose name sets none.
    ideal_grades, ideal_qid, ideal_offsets : array-like, optional
        Every judgment of each query (with ``ideal="global"``): the number of relevant
        judgments ``R`` counts them, retrieved or not. Otherwise the lists' own rows.
    preset : str, optional
        A tool's definitions (``"trec_eval"``, ``"trec_eval9"``, ``"pytrec_eval"``,
        ``"ir_measures"``, ``"ranx"``, ``"gdeval"``): its choices for every measure, and its NDCG
        options. A measure the tool lacks is an OptionError.
    **options
        The options of :func:`fastndcg.ndcg` (``gain``, ``ties``, ``zero_idcg``, ``backend``...).
        ``zero_idcg`` also says what the measures dividing by the number of relevant judgments
        give a query without any (presets: 0). ``ties="average"`` (the mean over every order of
        tied scores) is computed for nDCG, DCG, P, R, F1, AP, R-Prec, RR, Success, RBP, Judged
        and the counts; GMAP, ERR, bpref and IPrec need a tie order (``ties="stable"``...).

    Returns
    -------
    MeasuresResult
        ``measures``, ``per_query`` (n_queries x n_measures), ``mean``, ``query_ids``,
        ``to_pandas()``, ``to_arrow()``.

    Examples
    --------
    >>> import fastndcg
    >>> result = fastndcg.evaluate(
    ...     [2, 0, 1, 0], [0.9, 0.8, 0.7, 0.6], measures=["P@2", "RR", "AP"], ties="stable"
    ... )
    >>> [round(float(v), 4) for v in result.mean]
    [0.5, 1.0, 0.8333]
    """
    given = measures_input(
        grades,
        scores,
        measures=measures,
        qid=qid,
        offsets=offsets,
        mask=mask,
        relevance_level=relevance_level,
        ideal_grades=ideal_grades,
        ideal_qid=ideal_qid,
        ideal_offsets=ideal_offsets,
        preset=preset,
        **options,
    )
    definition, layout = given.definition, given.scoring.layout
    with definition.threads():
        per_query = given.measuring.compute(definition, given.scoring)
    return given.measuring.result(
        per_query, layout.query_ids, definition, ranked=layout.scores is None
    )


@dataclass(frozen=True)
class MeasuresInput:
    """An input as the measures are computed on it: the call checked, the input laid out.

    ``prepared``: for a TREC run, the run joined with its judgments (document ids, the rows
    kept), else None. (:func:`fastndcg.explain` computes one query's measure from it.)
    """

    definition: Definition
    measuring: Measuring
    scoring: Scoring
    prepared: Any = None

    @property
    def rules(self) -> MeasureRules:
        return self.measuring.rules

    @property
    def measures(self) -> tuple[Measure, ...]:
        return self.measuring.measures

    @property
    def level(self) -> int:
        return self.measuring.level


def measures_input(
    grades: Any,
    scores: Any = None,
    *,
    measures: MeasureNames,
    qid: Any = None,
    offsets: Any = None,
    mask: Any = None,
    relevance_level: int = 1,
    ideal_grades: Any = None,
    ideal_qid: Any = None,
    ideal_offsets: Any = None,
    preset: str | None = None,
    **options: Any,
) -> MeasuresInput:
    """The arrays of :func:`evaluate` checked and laid out, with the measures' definitions."""
    merged, measuring = Measuring.create(
        "ndcg", preset, options, measures, relevance_level, ranked=scores is None
    )
    ours, _ = split_options(merged, "evaluate()")
    definition = Definition.create(**ours)
    definition = definition.for_inputs(grades, scores)
    definition.check_ideal_inputs(ideal_grades, ideal_qid, ideal_offsets)
    given = {"ideal_grades": ideal_grades, "ideal_qid": ideal_qid, "ideal_offsets": ideal_offsets}
    ideal = _judgment_lists(definition, given)
    with definition.threads():
        layout = build_layout(
            grades, scores, qid=qid, offsets=offsets, mask=mask, backend=definition.backend
        )
        scoring = measuring.scoring(definition, layout, ideal)
    return MeasuresInput(definition, measuring, scoring)


def evaluate_table(
    table: Any,
    *,
    measures: MeasureNames,
    qid: str | None = "qid",
    grade: str = "grade",
    score: str | None = "score",
    relevance_level: int = 1,
    preset: str | None = None,
    **options: Any,
) -> MeasuresResult:
    """Several measures (nDCG, P, R, AP, RR, ...) of every query of a table.

    The table as :func:`fastndcg.ndcg_table` takes it, the measures as :func:`evaluate` takes
    them: the values are those :func:`evaluate` gives for the same rows as arrays.

    Parameters
    ----------
    table : pyarrow.Table, RecordBatch, RecordBatchReader, DataFrame or Arrow-capsule object
        One row per (query, judged item); rows of a query need not be contiguous.
    measures : str, Measure or list of them
        The measures by name, in trec_eval's, ir_measures' or ranx's syntax (``"nDCG@10"``,
        ``"P.5,10"``, ``"map"``, ``"mrr@10"``, ``"P(rel=2)@10"``...; see the measures page).
    qid, grade, score : str
        Column names. ``qid=None``: the whole table is one query; ``score=None``: rows are
        already in ranked order.
    relevance_level : int, default=1
        A grade at or above it is relevant, for the measures whose name sets none.
    preset : str, optional
        A tool's definitions (``"trec_eval"``, ``"ranx"``, ...), as for :func:`evaluate`.
    **options
        The options of :func:`evaluate` (``ties``, ``gain``, ``zero_idcg``, ``backend``...),
        ``ideal_grades``/``ideal_qid``/``ideal_offsets`` included.

    Returns
    -------
    MeasuresResult
        One row per query, in order of first appearance.

    Examples
    --------
    >>> import pyarrow as pa, fastndcg
    >>> t = pa.table({"qid": [1, 1, 2, 2], "grade": [2, 0, 0, 1], "score": [.9, .1, .8, .7]})
    >>> result = fastndcg.evaluate_table(t, measures=["P@1", "RR", "nDCG@2"])
    >>> [round(float(v), 4) for v in result.mean]
    [0.5, 0.75, 0.8155]
    """
    merged, measuring = Measuring.create(
        "ndcg_table", preset, options, measures, relevance_level, ranked=score is None
    )
    ours, ideal = split_options(merged, "evaluate_table()", data_options(EVALUATE_TABLE))
    definition = Definition.create(**ours)
    definition.check_ideal_inputs(**ideal)
    arrow = as_arrow(table)
    with definition.threads():
        layout = table_layout(arrow, qid, grade, score, definition.backend)
        judgments = _judgment_lists(definition, ideal)
        per_query = measuring.of_layout(definition, layout, judgments)
    return measuring.result(per_query, layout.query_ids, definition, ranked=score is None)


def evaluate_run(
    qrels: Any,
    run: Any,
    *,
    measures: MeasureNames,
    relevance_level: int = 1,
    judged_only: bool = False,
    missing: str = "error",
    max_docs: int | None = None,
    real_grades: bool = False,
    preset: str | None = None,
    **options: Any,
) -> MeasuresResult:
    """Several measures (nDCG, P, R, AP, RR, ...) of a TREC run against relevance judgments.

    Parameters
    ----------
    qrels, run
        As :func:`fastndcg.ndcg_run` takes them: TREC files or tables.
    measures : str, Measure or list of them
        The measures by name, in trec_eval's, ir_measures' or ranx's syntax (``"nDCG@10"``,
        ``"P.5,10"``, ``"map"``, ``"recip_rank"``, ``"mrr@10"``, ``"P(rel=2)@10"``...).
    relevance_level : int, default=1
        A grade at or above it is relevant (trec_eval's ``-l``, ranx's ``rel_lvl``), for the
        measures whose name sets none. ``R`` counts the judgments at or above it, retrieved or
        not.
    judged_only, missing, max_docs, real_grades
        As for :func:`fastndcg.ndcg_run` (trec_eval's ``-J``, ``-c``, ``-M``).
    preset : str, optional
        A tool's definitions: ``"trec_eval"`` (10.0), ``"trec_eval9"``, ``"pytrec_eval"``,
        ``"ir_measures"``, ``"ranx"``, ``"gdeval"``. A measure the tool lacks is an OptionError.
    **options
        The options of :func:`fastndcg.ndcg` (``ties``, ``gain``, ``zero_idcg``, ``backend``...),
        as :func:`fastndcg.ndcg_run` takes them (the default ideal is every judgment).

    Returns
    -------
    MeasuresResult
        One row per judged query (run order, then missing queries in judgment order).

    Examples
    --------
    >>> import fastndcg
    >>> result = fastndcg.evaluate_run(
    ...     "tests/data/real/trec_eval_test/qrels.test",
    ...     "tests/data/real/trec_eval_test/results.test",
    ...     measures=["map", "P.10"],
    ...     preset="trec_eval",
    ... )  # doctest: +SKIP
    """
    given = run_measures_input(
        qrels,
        run,
        measures=measures,
        relevance_level=relevance_level,
        judged_only=judged_only,
        missing=missing,
        max_docs=max_docs,
        real_grades=real_grades,
        preset=preset,
        **options,
    )
    definition, layout, prepared = given.definition, given.scoring.layout, given.prepared
    with definition.threads():
        per_query = given.measuring.compute(definition, given.scoring)
    query_ids = layout.query_ids
    reported = prepared.codes.reported(len(query_ids))
    if reported is not None:
        query_ids, per_query = query_ids[reported], per_query[reported]
    return given.measuring.result(
        per_query,
        query_ids,
        definition,
        n_missing=len(prepared.absent),
        n_unjudged=prepared.codes.n_unjudged,
    )


def run_measures_input(
    qrels: Any,
    run: Any,
    *,
    measures: MeasureNames,
    relevance_level: int = 1,
    judged_only: bool = False,
    missing: str = "error",
    max_docs: int | None = None,
    real_grades: bool = False,
    preset: str | None = None,
    **options: Any,
) -> MeasuresInput:
    """The run of :func:`evaluate_run` joined with its judgments, with the measures' definitions."""
    from fastndcg.trec import _prepare

    given = {"judged_only": judged_only, "missing": missing, "max_docs": max_docs}
    options.update({name: value for name, value in given.items() if value != _RUN_DEFAULTS[name]})
    merged, measuring = Measuring.create("ndcg_run", preset, options, measures, relevance_level)
    chosen_run = {name: merged.pop(name, default) for name, default in _RUN_DEFAULTS.items()}
    prepared = _prepare(
        qrels,
        run,
        chosen_run["judged_only"],
        chosen_run["missing"],
        chosen_run["max_docs"],
        real_grades,
        merged,
        measures=True,
    )
    layout = prepared.layout
    assert prepared.labels is not None and prepared.judgments is not None
    offsets, grades = prepared.judgments
    n_run = len(prepared.codes.queries)
    absent = np.arange(layout.n_queries) >= n_run
    scoring = Scoring(
        layout,
        prepared.labels,
        Judged(offsets, grades),
        tie_key=prepared.tie_key,
        ideal=prepared.ideal,
        absent=absent,
        rows_judged=False,
    )
    return MeasuresInput(prepared.definition, measuring, scoring, prepared)


_RUN_DEFAULTS = {"judged_only": False, "missing": "error", "max_docs": None}


@dataclass(frozen=True)
class Measuring:
    """The measures of one call, checked: the tool's rules, the measures, the level, the preset.

    What every entry point of the measures shares (arrays, tables, Parquet, TREC runs, streams
    and the Dask and Spark tasks): :meth:`create` checks the call before any data is read,
    :meth:`of_layout` (or :meth:`compute`) gives the per-query values of a layout, and
    :meth:`result` their :class:`MeasuresResult` with each measure's summary.
    """

    rules: MeasureRules
    measures: tuple[Measure, ...]
    level: int
    preset: str | None

    @classmethod
    def create(
        cls,
        entry: str,
        preset: str | None,
        options: dict[str, Any],
        measures: Any,
        relevance_level: Any,
        ranked: bool = False,
    ) -> tuple[dict[str, Any], Measuring]:
        """The options merged with the preset's settings, and the measures of the call.

        A measure the tool lacks, or one that needs a tie order under ``ties="average"``
        (unless the rows come ``ranked``), is refused here, before any data is read.
        """
        chosen = parse("measures", measures)
        level = parse("relevance_level", relevance_level)
        rules = rules_of(preset)
        for measure in chosen:
            rules.provider(measure)
        for name in ("weights", "decimals", "k"):
            if name in options:
                raise OptionTypeError(
                    f"the measures take no `{name}`",
                    option=name,
                    value=options[name],
                    fix=_NOT_TAKEN[name],
                )
        _, merged, tool = resolve(entry, preset, options)
        merged.pop("k", None)  # a preset's NDCG cutoffs: the measures name their own
        if tool.aggregate != "mean":
            raise OptionError(
                f"the measures are summarised by their mean, not `aggregate={tool.aggregate!r}`",
                option="aggregate",
                value=tool.aggregate,
                fix="leave `aggregate` out",
            )
        if not ranked:
            refuse_average_ties(chosen, parse("ties", merged.get("ties", "average")))
        return merged, cls(rules, chosen, level, preset)

    @property
    def names(self) -> tuple[str, ...]:
        """The measures' names as given: the result's columns."""
        return tuple(measure.name for measure in self.measures)

    def compute(self, definition: Definition, scoring: Scoring) -> np.ndarray:
        """Every measure of every query of ``scoring`` (inside ``definition.threads()``)."""
        return compute(definition, self.rules, self.measures, self.level, scoring)

    def of_layout(
        self, definition: Definition, layout: Any, ideal: dict[str, Any] | None = None
    ) -> np.ndarray:
        """Every measure of every query of ``layout``, every row of which is judged.

        ``ideal``: the judgment lists (``ideal_grades``, ``ideal_qid``, ``ideal_offsets``) for
        ``ideal="global"``; otherwise each query's judgments are its own rows.
        """
        return self.compute(definition, self.scoring(definition, layout, ideal))

    def scoring(
        self, definition: Definition, layout: Any, ideal: dict[str, Any] | None = None
    ) -> Scoring:
        """``layout`` as the measures are computed on it (see :meth:`of_layout`)."""
        labels = _host_labels(layout, layout.grades)
        judged = _judged_lists(definition, layout, labels, ideal)
        return Scoring(layout, labels, judged, ideal=ideal)

    def summary(self, j: int) -> str:
        """How measure ``j`` is summarised over the queries not skipped.

        ``"sum"`` (counts), ``"geometric"`` (GMAP: the values are APs, floored at the tool's
        ``gm_floor``), ``"exp_mean"`` (GMAP whose per-query values are the logs), or ``"mean"``.
        """
        measure = self.measures[j]
        if measure.kind == "GMAP" and self.rules.gm_per_query == "log":
            return "exp_mean"
        return KINDS[measure.kind].aggregate

    def result(
        self,
        per_query: np.ndarray,
        query_ids: np.ndarray,
        definition: Definition,
        ranked: bool = False,
        **extra: Any,
    ) -> MeasuresResult:
        """The result, with each measure's summary over the queries not skipped."""
        skipped = np.isnan(per_query)
        mean = np.full(len(self.measures), np.nan)
        for j, measure in enumerate(self.measures):
            if self.summary(j) == "exp_mean":  # the logs are given
                kept = per_query[~skipped[:, j], j]
                mean[j] = np.exp(kept.mean()) if kept.size else np.nan
            else:
                mean[j] = summarize(measure, per_query[:, j], self.rules.gm_floor)
        shown = {"preset": self.preset} if self.preset is not None else {}
        shown.update(definition.options(ranked=ranked))
        shown["relevance_level"] = self.level
        return MeasuresResult(
            measures=self.names,
            per_query=per_query,
            mean=mean,
            query_ids=query_ids,
            n_skipped=skipped.sum(axis=0).astype(np.int64),
            options=shown,
            **extra,
        )


# why the measures take no such option, and what to do instead
_SUMMARIES = (
    "leave it out: each measure's summary is its mean over the queries (a sum for counts), and "
    "a tool's printed decimals come with its preset"
)
_NOT_TAKEN = {
    "weights": _SUMMARIES,
    "decimals": _SUMMARIES,
    "k": "name the cutoff in the measure instead: nDCG@10 (or ndcg_cut.10)",
}


def _judgment_lists(definition: Definition, given: dict[str, Any]) -> dict[str, Any] | None:
    """The judgment lists of ``ideal="global"`` (every judgment of each query), else None."""
    if definition.ideal != "global":
        return None
    return {name: given.get(name) for name in IDEAL_DATA}


def _host_labels(layout: Any, grades: Any) -> np.ndarray:
    """Each row's grade as float64 on the host (every row of an array input is judged)."""
    columns = layout.columns
    host = grades if columns is None else columns.host(grades)
    return np.asarray(host, dtype=np.float64)


def _judged_lists(
    definition: Definition, layout: Any, labels: np.ndarray, ideal: dict[str, Any] | None
) -> Judged:
    """Every judgment of each query: the judgment lists given, else the lists' own rows."""
    if ideal is None:
        return Judged(layout.offsets, labels)
    from fastndcg._core.layout import align_ideal

    offsets, grades, _ = align_ideal(
        layout,
        ideal["ideal_grades"],
        ideal["ideal_qid"],
        ideal["ideal_offsets"],
        definition.backend,
    )
    return Judged(offsets, _host_labels(layout, grades))


def checked_options(
    caller: str,
    measures: MeasureNames,
    relevance_level: Any,
    preset: str | None,
    options: dict[str, Any],
) -> tuple[tuple[Measure, ...], dict[str, Any], Definition]:
    """What :func:`evaluate` checks before it reads data, for metrics made before they score.

    Returns the measures, the options merged with the preset's settings, and the definition;
    an unknown option is an OptionTypeError naming ``caller``.
    """
    merged, measuring = Measuring.create("ndcg", preset, dict(options), measures, relevance_level)
    ours, _ = split_options(merged, caller)
    return measuring.measures, merged, Definition.create(**ours)
