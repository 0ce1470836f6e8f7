"""The measures beside NDCG: :func:`evaluate` (arrays) and :func:`evaluate_run` (TREC runs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._core.definition import Definition
from fastndcg._core.layout import build_layout
from fastndcg._core.measures import Measure
from fastndcg._core.measures.definitions import MeasureRules, rules_of
from fastndcg._core.measures.engine import Judged, Scoring, compute, refuse_average_ties
from fastndcg._core.measures.trec_layout import summarize
from fastndcg._core.options import parse, split_options
from fastndcg._errors import OptionError, OptionTypeError
from fastndcg._presets.apply import resolve
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
        per_query = compute(definition, given.rules, given.measures, given.level, given.scoring)
    ranked = layout.scores is None
    return _result(
        given.rules,
        given.measures,
        per_query,
        layout.query_ids,
        definition,
        preset,
        given.level,
        ranked,
    )


@dataclass(frozen=True)
class MeasuresInput:
    """An input as the measures are computed on it (what :func:`compute` takes).

    ``prepared``: for a TREC run, the run joined with its judgments (document ids, the rows
    kept), else None.
    """

    definition: Definition
    rules: MeasureRules
    measures: tuple[Measure, ...]
    level: int
    scoring: Scoring
    prepared: Any = None


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
    merged, rules, chosen, level = _setup(
        "ndcg", preset, options, measures, relevance_level, ranked=scores is None
    )
    ours, _ = split_options(merged, "evaluate()")
    definition = Definition.create(**ours)
    definition = definition.for_inputs(grades, scores)
    definition.check_ideal_inputs(ideal_grades, ideal_qid, ideal_offsets)
    with definition.threads():
        layout = build_layout(
            grades, scores, qid=qid, offsets=offsets, mask=mask, backend=definition.backend
        )
        ideal = None
        if definition.ideal == "global":
            ideal = {
                "ideal_grades": ideal_grades,
                "ideal_qid": ideal_qid,
                "ideal_offsets": ideal_offsets,
            }
        labels = _host_labels(layout, layout.grades)
        judged = _judged_lists(definition, layout, labels, ideal)
    scoring = Scoring(layout, labels, judged, ideal=ideal)
    return MeasuresInput(definition, rules, chosen, level, scoring)


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
        per_query = compute(definition, given.rules, given.measures, given.level, given.scoring)
    query_ids = layout.query_ids
    reported = prepared.codes.reported(len(query_ids))
    if reported is not None:
        query_ids, per_query = query_ids[reported], per_query[reported]
    return _result(
        given.rules,
        given.measures,
        per_query,
        query_ids,
        definition,
        preset,
        given.level,
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
    merged, rules, chosen, level = _setup("ndcg_run", preset, options, measures, relevance_level)
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
    )
    return MeasuresInput(prepared.definition, rules, chosen, level, scoring, prepared)


def _setup(
    entry: str,
    preset: str | None,
    options: dict[str, Any],
    measures: Any,
    relevance_level: Any,
    ranked: bool = False,
) -> tuple[dict[str, Any], MeasureRules, tuple[Measure, ...], int]:
    """The options merged with the preset's settings, the tool's rules, the measures, the level.

    A measure the tool lacks, or one that needs a tie order under ``ties="average"`` (unless
    the rows come ``ranked``), is refused here, before any data is read.
    """
    chosen = parse("measures", measures)
    level = parse("relevance_level", relevance_level)
    rules = rules_of(preset)
    for measure in chosen:
        rules.provider(measure)
    for name in ("weights", "decimals"):
        if name in options:
            raise OptionTypeError(
                f"the measures take no `{name}`",
                option=name,
                value=options[name],
                fix="leave it out: each measure's summary is its mean over the queries (a sum "
                "for counts), and a tool's printed decimals come with its preset",
            )
    _, merged, tool = resolve(entry, preset, options)
    if tool.aggregate != "mean":
        raise OptionError(
            f"the measures are summarised by their mean, not `aggregate={tool.aggregate!r}`",
            option="aggregate",
            value=tool.aggregate,
            fix="leave `aggregate` out",
        )
    if not ranked:
        refuse_average_ties(chosen, parse("ties", merged.get("ties", "average")))
    return merged, rules, chosen, level


_RUN_DEFAULTS = {"judged_only": False, "missing": "error", "max_docs": None}


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


def _result(
    rules: MeasureRules,
    measures: tuple[Measure, ...],
    per_query: np.ndarray,
    query_ids: np.ndarray,
    definition: Definition,
    preset: str | None,
    level: int,
    ranked: bool = False,
    **extra: Any,
) -> MeasuresResult:
    """The result, with each measure's summary over the queries not skipped."""
    skipped = np.isnan(per_query)
    mean = np.full(len(measures), np.nan)
    for j, measure in enumerate(measures):
        if measure.kind == "GMAP" and rules.gm_per_query == "log":  # the logs are given
            kept = per_query[~skipped[:, j], j]
            mean[j] = np.exp(kept.mean()) if kept.size else np.nan
        else:
            mean[j] = summarize(measure, per_query[:, j], rules.gm_floor)
    shown = {"preset": preset} if preset is not None else {}
    shown.update(definition.options(ranked=ranked))
    shown["relevance_level"] = level
    return MeasuresResult(
        measures=tuple(measure.name for measure in measures),
        per_query=per_query,
        mean=mean,
        query_ids=query_ids,
        n_skipped=skipped.sum(axis=0).astype(np.int64),
        options=shown,
        **extra,
    )


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
    merged, _, chosen, _ = _setup("ndcg", preset, dict(options), measures, relevance_level)
    ours, _ = split_options(merged, caller)
    return chosen, merged, Definition.create(**ours)
