"""Computing measures: the plan a backend's measure kernel reads, and the per-query values.

nDCG and DCG go through the scoring kernels (:meth:`Definition.score`), so that they are the
bits :func:`fastndcg.ndcg` gives under the same definition; every other measure goes through
the backend's measure kernel (:class:`~fastndcg._contract.MeasuresBackend`), all of one call's
measures from one ranking per query: where the backend shares rankings, the one nDCG's kernel
made (:func:`_shared_rankings`). A tool whose providers rank differently (ir_measures'
msmarco, judged and cwl_eval providers) gets one ranking per provider.

The measure kernel counts, per query, the judgments a ranking cannot show (``R``: those at or
above a relevance level, retrieved or not; bpref's ``N``; the largest grade). The core then
applies the definition's rules to the kernels' values: the no-relevant rule (the kernels give
NaN where ``R = 0``), GMAP's per-query value, absent queries scored 0 for every measure
(ir_measures), and a provider's printed decimals.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fastndcg._contract import (
    Layout,
    MeasurePlan,
    MeasuresBackend,
    SharedRanking,
    capable,
    readonly,
)
from fastndcg._contract import codes as C
from fastndcg._core.aggregate import round_half_even
from fastndcg._core.definition import Definition
from fastndcg._core.layout import check_scores
from fastndcg._core.measures.definitions import CHOICES, MeasureRules, Provider
from fastndcg._core.measures.model import Measure
from fastndcg._core.options import parse
from fastndcg._core.vocabulary import KEYED_TIES, TIES, plain
from fastndcg._errors import BackendUnavailableError, InputError, OptionError

_SCORED = ("nDCG", "DCG")  # through the scoring kernels
_KIND_CODES = {
    "NumQ": C.M_NUM_Q,
    "NumRet": C.M_NUM_RET,
    "NumRel": C.M_NUM_REL,
    "NumRelRet": C.M_NUM_REL_RET,
    "AP": C.M_AP,
    "GMAP": C.M_AP,
    "Rprec": C.M_RPREC,
    "Bpref": C.M_BPREF,
    "RR": C.M_RR,
    "IPrec": C.M_IPREC,
    "P": C.M_P,
    "R": C.M_R,
    "Success": C.M_SUCCESS,
    "F1": C.M_F1,
    "RBP": C.M_RBP,
    "RBPResid": C.M_RBP_RESID,
    "Unjudged": C.M_UNJUDGED,
    "Judged": C.M_JUDGED,
    "ERR": C.M_ERR,
}
_BY_DOCID = (*KEYED_TIES, "docid_asc")
# under ties="average" (the mean over every order of tied rows) the kernels compute the measures
# linear in what each rank holds (a tie group's rank holds the group's mean), RR and Success
# (from the first group holding a relevant row) and AP (McSherry and Najork); not these (GMAP:
# the mean of a log over the orders is not the log of AP's mean)
_NOT_AVERAGED = ("GMAP", "ERR", "Bpref", "IPrec")
# the grade levels a scoring kernel counts for the measures (those of PRESUMED_GRADES, 0..7)
_LEVEL_COLUMNS = 8


@dataclass(frozen=True)
class Judged:
    """Every judgment of every query, as CSR aligned with a layout's queries.

    ``grades`` are float64 as judged (a negative grade: in the pool, not judged).
    """

    offsets: np.ndarray
    grades: np.ndarray


@dataclass(frozen=True)
class Scoring:
    """One input as the measures are computed on it.

    ``labels``: each layout row's judgment grade, NaN where it has none. ``ideal``: what
    :meth:`Definition.score` takes for nDCG (judgment lists). ``tie_key``: document id places
    in descending order (trec_eval's ties), when known. ``absent``: the queries absent from the
    run (scored as empty rankings), when known. ``rows_judged``: every row is one of its query's
    judgments (arrays and tables; a TREC run's unjudged documents are not).
    """

    layout: Layout
    labels: np.ndarray
    judged: Judged
    tie_key: np.ndarray | None = None
    ideal: dict[str, Any] | None = None
    absent: np.ndarray | None = None
    rows_judged: bool = True

    @property
    def rows_are_judgments(self) -> bool:
        """Whether the judgments are the rows themselves (arrays): their labels, in place."""
        judged = self.judged
        return judged.grades is self.labels and judged.offsets is self.layout.offsets


def compute(
    definition: Definition,
    rules: MeasureRules,
    measures: tuple[Measure, ...],
    relevance_level: int,
    scoring: Scoring,
) -> np.ndarray:
    """Every measure of every query of ``scoring``: shape (n_queries, len(measures)).

    Call inside ``definition.threads()``. NaN where a query is skipped (the no-relevant rule
    ``"skip"``).
    """
    n_queries = scoring.layout.n_queries
    out = np.empty((n_queries, len(measures)), order="F")  # written and read column by column
    no_relevant = rules.no_relevant or definition.zero_idcg
    scored: dict[tuple, list[int]] = {}  # nDCG and DCG: one call per gain and ranking
    groups: dict[tuple[str, str], list[int]] = {}  # the others: one call per ranking
    for j, measure in enumerate(measures):
        provider = rules.provider(measure)
        ties = ranking_ties(provider, definition, scoring)
        dtype = provider.score_dtype or definition.score_dtype
        if measure.kind in _SCORED:
            level = relevance_level if measure.rel is None else measure.rel
            below = level if rules.ndcg_level and level > 1 else None  # ranx -lN
            scored.setdefault((measure.gain, below, ties, dtype), []).append(j)
        else:
            groups.setdefault((ties, dtype), []).append(j)
    rankings = _shared_rankings(definition, scoring, measures, scored, groups)
    ranking: set[str] = set()  # the dtypes whose ranking an nDCG call writes
    for (gain, below, ties, dtype), columns in scored.items():
        chosen = [measures[j] for j in columns]
        shared = None if dtype in ranking else rankings.get(dtype)
        ranking.add(dtype)
        out[:, columns] = _scored(
            definition, rules, chosen, scoring, gain, below, ties, dtype, shared
        )
    for (ties, dtype), columns in groups.items():
        chosen = [measures[j] for j in columns]
        shared = rankings.get(dtype)
        if ties == "average" or not 0 < _depth(chosen) <= C.TOP_PATH_DEPTH:
            shared = None
        values, relevant = _measured(
            definition, rules, chosen, relevance_level, scoring, ties, dtype, shared
        )
        for place, j in enumerate(columns):
            empty = np.isnan(values[:, place])
            if empty.any():  # (a NaN where R = 0: the no-relevant rule's; others stay)
                empty &= relevant[place] == 0
            out[:, j] = _finish(rules, chosen[place], values[:, place], empty, no_relevant, scoring)
    for j, measure in enumerate(measures):
        decimals = rules.provider(measure).decimals
        if decimals is not None:
            out[:, j] = round_half_even(out[:, j], decimals)
    if rules.absent == "zero" and scoring.absent is not None and scoring.absent.any():
        out[scoring.absent] = 0.0
    return out


def ranking_ties(provider: Provider, definition: Definition, scoring: Scoring) -> str:
    """The tie order of ``provider`` (the call's where the provider leaves it to the call).

    Where the provider orders by document ids and the input has none (arrays), or the call
    asked for another order than trec_eval's (the ids' places are then not computed), the
    call's order applies.
    """
    if provider.ties is None:
        return definition.ties
    if provider.ties in _BY_DOCID and scoring.tie_key is None:
        return definition.ties
    return provider.ties


def _shared_rankings(
    definition: Definition,
    scoring: Scoring,
    measures: tuple[Measure, ...],
    scored: dict[tuple, list[int]],
    groups: dict[tuple[str, str], list[int]],
) -> dict[str, SharedRanking]:
    """Where nDCG's scoring kernel writes its ranking for the other measures to read.

    Per score dtype of a group of other measures reading short cutoffs: a buffer of best rows
    (:class:`SharedRanking`, which says where a query is not ranked there), as wide as the deepest
    cutoff the measures or the dtype's first nDCG call read, when the backend shares rankings
    and that is short enough for its short path (which gives a query's best rows when no tie
    is among them: then they are every tie rule's ranking, and the measure kernel ranks the
    other queries itself). Where the rows are the judgments (arrays), their grades and each
    query's rows by grade level too: then the measure kernel reads no label of such a query.
    Without an nDCG call of the dtype, the scoring kernel runs for the ranking alone
    (:func:`_rank_only`): its short path ranks faster than the measure kernel.
    """
    backend = definition.backend
    shares = capable(backend, MeasuresBackend) and backend.shares_rankings
    if scoring.layout.scores is None or not shares:
        return {}
    ndcg_depth: dict[str, int] = {}
    for (_, _, _, dtype), columns in scored.items():
        if dtype not in ndcg_depth:  # the first nDCG call of a dtype writes the ranking
            cutoffs = [measures[j].cutoff for j in columns]
            ndcg_depth[dtype] = C.TOP_PATH_DEPTH + 1 if None in cutoffs else max(cutoffs)
    widths: dict[str, int] = {}
    for (ties, dtype), columns in groups.items():
        depth = _depth([measures[j] for j in columns])
        width = max(depth, ndcg_depth.get(dtype, 0), widths.get(dtype, 0))
        if ties != "average" and 0 < depth and width <= C.TOP_PATH_DEPTH:
            widths[dtype] = width
    n_queries = scoring.layout.n_queries
    judged = scoring.rows_are_judgments
    rankings = {}
    for dtype, width in widths.items():
        rows = np.empty((n_queries, width), np.int32)
        level_counts = np.empty((n_queries, _LEVEL_COLUMNS if judged else 0), np.int16)
        (level_counts if judged else rows)[:, :1] = -1  # what says a query is not ranked there
        grades = np.empty((n_queries, width if judged else 0), np.int8)
        rankings[dtype] = SharedRanking(rows, grades, level_counts)
        if dtype not in ndcg_depth:
            _rank_only(definition, scoring, dtype, rankings[dtype])
    return rankings


def _rank_only(definition: Definition, scoring: Scoring, dtype: str, shared: SharedRanking) -> None:
    """The scoring kernel run for its ranking into ``shared`` (its DCG is not read).

    Under a linear gain, the ideal from the ranked rows and ties in input order, which take any
    grades and need no document ids.
    """
    chosen = replace(
        definition,
        cutoffs=(shared.rows.shape[1],),
        gain=parse("gain", "linear"),
        ideal="local",
        ties="stable",
        score_dtype=dtype,
    )
    try:
        chosen.score(scoring.layout, shared=shared)
    except OptionError:  # gains whose sums could overflow, refused by the plan before the
        pass  # kernel wrote anything: the measure kernel ranks every query


def refuse_average_ties(measures: tuple[Measure, ...], ties: str) -> None:
    """Refuse ``ties="average"`` for the measures it is not computed for.

    It is computed for those linear in what each rank holds (nDCG, DCG, P, R, F1, R-Prec,
    RBP, Judged, the counts), and RR, Success and AP; the others need a tie order.
    """
    if ties != "average":
        return
    ordered = [measure.name for measure in measures if measure.kind in _NOT_AVERAGED]
    if ordered:
        raise OptionError(
            f"`ties='average'` (the mean over every order of tied scores) is computed for nDCG, "
            f"P, R, F1, AP, R-Prec, RR, Success, RBP and Judged, not for {ordered[0]!r}",
            option="ties",
            value="average",
            fix="pass a tie order: `ties='stable'` (input order), `'docid_desc'` (TREC runs: "
            "trec_eval's), `'random'`, or a tool's preset",
        )


# -- nDCG and DCG ----------------------------------------------------------------------------


def _scored(
    definition: Definition,
    rules: MeasureRules,
    measures: list[Measure],
    scoring: Scoring,
    gain: str | None,
    below: int | None,
    ties: str,
    score_dtype: str,
    shared: SharedRanking | None,
) -> np.ndarray:
    """The nDCG and DCG of ``measures``, their cutoffs in one call of the scoring kernels.

    A value at a cutoff does not depend on the other cutoffs asked (see the kernels), so each
    is the number :func:`fastndcg.ndcg` gives for it alone. ``gain``: the one the names spell
    (None: the call's); ``below``: grades below it gain 0 (ranx's ``-lN``). ``shared``: where
    the kernel writes its ranking for the other measures (a cutoff as deep is added).
    """
    cutoffs = list(dict.fromkeys(measure.cutoff for measure in measures))
    if shared is not None and shared.rows.shape[1] not in cutoffs:
        cutoffs.append(shared.rows.shape[1])  # its values are not read
    chosen = scored_definition(definition, rules, tuple(cutoffs), gain, below, ties, score_dtype)
    dcg, idcg = chosen.score(
        scoring.layout,
        tie_key=scoring.tie_key,
        shared=shared,
        rows_judged=scoring.rows_judged,
        **(scoring.ideal or {}),
    )
    ndcg = dcg  # zero_idcg="error" is about nDCG: DCG alone never raises
    if any(measure.kind == "nDCG" for measure in measures):
        ndcg = chosen.per_query(scoring.layout.query_ids, dcg, idcg)
    out = np.empty((dcg.shape[0], len(measures)))
    for place, measure in enumerate(measures):
        column = cutoffs.index(measure.cutoff)
        out[:, place] = (dcg if measure.kind == "DCG" else ndcg)[:, column]
    return out


def scored_definition(
    definition: Definition,
    rules: MeasureRules,
    cutoffs: tuple[int | None, ...],
    gain: str | None,
    below: int | None,
    ties: str,
    score_dtype: str,
) -> Definition:
    """The definition nDCG and DCG are scored with: the call's, with the names' gain and cutoffs.

    ``gain``: the one the names spell (None: the call's); ``below``: grades below it gain 0
    (ranx's ``-lN``).
    """
    changes: dict[str, Any] = {"cutoffs": cutoffs, "ties": ties, "score_dtype": score_dtype}
    if gain is not None:
        changes["gain"] = parse("gain", gain)
    if below is not None:
        kind = gain or definition.gain.kind
        if kind not in ("exp2", "linear"):
            raise OptionError(
                f"{rules.tool} removes grades below the relevance level from nDCG, which "
                f"fastndcg does with the gains 'exp2' and 'linear' only, not {kind!r}",
                option="gain",
                value=kind,
                fix="pass `gain='linear'` or `gain='exp2'`",
            )
        changes["gain"] = parse("gain", _LevelGain(below, kind == "exp2"))
    return replace(definition, **changes)


class _LevelGain:
    """A gain of 0 below a relevance level (ranx's ``-lN``), ``g`` or ``2**g - 1`` above it."""

    def __init__(self, level: int, exp2: bool) -> None:
        self.level, self.exp2 = level, exp2

    def __call__(self, grades: np.ndarray) -> np.ndarray:
        grades = np.asarray(grades, dtype=np.float64)
        gains = np.exp2(grades) - 1.0 if self.exp2 else grades
        return np.where(grades >= self.level, gains, 0.0)


# -- the measure kernels ---------------------------------------------------------------------


def _measured(
    definition: Definition,
    rules: MeasureRules,
    measures: list[Measure],
    relevance_level: int,
    scoring: Scoring,
    ties: str,
    score_dtype: str,
    shared: SharedRanking | None,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The kernel's values of ``measures`` (ties by ``ties``, scores held as ``score_dtype``).

    And each query's ``R`` for each of them. ``shared``: nDCG's ranking, where it made one.
    """
    backend = definition.backend
    if not capable(backend, MeasuresBackend):
        raise BackendUnavailableError(
            f"the {backend.name} backend computes nDCG only, not {measures[0].name!r}",
            option="backend",
            value=backend.name,
            fix="pass `backend='numba'` (or 'numpy') for the other measures",
        )
    layout = scoring.layout
    scores = None
    if layout.scores is not None:
        scores = replace(definition, score_dtype=score_dtype).held(layout.scores, layout)
        scores = readonly(np.asarray(scores, dtype=np.float64))
    tie_key = tie_key_of(ties, scoring.tie_key)
    levels = [relevance_level if m.rel is None else m.rel for m in measures]
    negative = CHOICES["bpref_negative"].index(rules.bpref_negative)
    columns = sorted(set(levels))  # one counts column per relevance level
    rows = np.zeros((len(measures), C.M_FIELDS), dtype=np.int64)
    params = np.zeros((len(measures), 2))
    for j, measure in enumerate(measures):
        rows[j] = _codes(rules, measure, columns.index(levels[j]), negative)
        params[j] = (measure_param(rules, measure), levels[j])
    err_stop = np.zeros(0)
    if any(m.kind == "ERR" for m in measures):
        err_stop = err_stops(rules.err_max_grade)
    plan = MeasurePlan(
        offsets=readonly(layout.offsets),
        scores=scores,
        labels=readonly(scoring.labels),
        tie_mode=C.TIE_KEY if tie_key is not None else TIES[ties],
        tie_key=readonly(np.zeros(0, np.int64) if tie_key is None else tie_key),
        seed=definition.seed,
        measures=readonly(rows),
        params=readonly(params),
        judged_offsets=readonly(scoring.judged.offsets),
        judged_grades=readonly(scoring.judged.grades),
        levels=readonly(np.array(columns, dtype=np.float64)),
        skip_negative=negative == 0,
        err_stop=readonly(err_stop),
        depth=-1 if ties == "average" else _depth(measures),  # tie groups: the whole ranking
        shared=shared,
    )
    found = backend.measures(plan)
    if (found.nonfinite or found.bad_err_label >= 0) and not layout.scores_checked:
        check_scores(layout, backend)  # raises on the first NaN or infinite score (input order)
    if found.bad_err_label >= 0:
        raise _err_label_error(rules.err_max_grade, scoring, found.bad_err_label)
    return found.values, [found.relevant[:, columns.index(level)] for level in levels]


def _depth(measures: list[Measure]) -> int:
    """The most ranks the measures read: their largest cutoff, or -1 for the whole ranking."""
    reads_none = ("NumQ", "NumRel")
    if any(m.cutoff is None and m.kind not in reads_none for m in measures):
        return -1
    return max([1, *(m.cutoff for m in measures if m.cutoff is not None)])


def tie_key_of(ties: str, descending: np.ndarray | None) -> np.ndarray | None:
    if ties not in _BY_DOCID:
        return None
    if descending is None:
        raise OptionError(
            f"`ties={ties!r}` orders ties by document id, which only TREC runs carry "
            "(fastndcg.evaluate_run)",
            option="ties",
            value=ties,
            fix="pass another tie rule",
        )
    return descending if ties == "docid_desc" else -descending  # distinct ids in a query


def _codes(rules: MeasureRules, measure: Measure, counts: int, negative: int) -> list[int]:
    kind = measure.kind
    cutoff = C.WHOLE_LIST if measure.cutoff is None else measure.cutoff
    choice = choice2 = 0
    if kind in ("P", "F1"):
        choice = CHOICES["precision_denominator"].index(rules.precision_denominator)
        choice2 = CHOICES["recall_denominator"].index(rules.recall_denominator)
    elif kind == "R":
        choice = CHOICES["recall_denominator"].index(rules.recall_denominator)
    elif kind == "AP":
        choice = CHOICES["ap_denominator"].index(rules.ap_denominator)
    elif kind == "Judged":
        choice = CHOICES["judged_denominator"].index(rules.judged_denominator)
        choice2 = CHOICES["judged_labels"].index(rules.judged_labels)
    elif kind == "Bpref":
        choice = CHOICES["bpref_no_nonrelevant"].index(rules.bpref_no_nonrelevant)
        choice2 = negative
    elif kind == "RBP":
        choice = CHOICES["rbp_gain"].index(rules.rbp_gain)
    elif kind == "IPrec":
        choice = CHOICES["iprec_rounding"].index(rules.iprec_rounding)
    return [_KIND_CODES[kind], cutoff, counts, choice, choice2]


def measure_param(rules: MeasureRules, measure: Measure) -> float:
    if measure.kind not in ("RBP", "RBPResid"):
        return 0.0 if measure.param is None else measure.param
    p = measure.param if measure.param is not None else rules.rbp_p
    if measure.kind == "RBPResid" and p is None:
        p = 0.9
    if p is None:
        raise OptionError(
            f"{rules.tool} needs RBP's persistence p: {measure.name!r} gives none",
            option="measures",
            value=measure.name,
            fix="name it, e.g. rbp.95 (p = 0.95) or RBP(p=0.8)",
        )
    return p


def err_stops(max_grade: int) -> np.ndarray:
    """ERR's stopping probability ``(2**g - 1) / 2**max_grade`` of each grade 0..max_grade."""
    grades = np.arange(max_grade + 1, dtype=np.float64)
    return (np.exp2(grades) - 1.0) / 2.0**max_grade


def _err_label_error(max_grade: int, scoring: Scoring, row: int) -> InputError:
    """ERR's stopping probability takes integer grades 0..max_grade: row ``row`` has another."""
    layout = scoring.layout
    label = scoring.labels[row]
    where = layout.where(layout.input_row(row))
    return InputError(
        f"ERR's stopping probability (2**g - 1) / 2**{max_grade} takes integer grades "
        f"0..{max_grade}; {where} has {label:g}",
        value=plain(label),
        where=where,
        fix=f"map the grades onto 0..{max_grade} first",
    )


def _finish(
    rules: MeasureRules,
    measure: Measure,
    values: np.ndarray,
    empty: np.ndarray,
    no_relevant: str,
    scoring: Scoring,
) -> np.ndarray:
    """The no-relevant rule where ``empty`` (R = 0), and GMAP's per-query value.

    Other NaN values (ranx's bpref without a judged non-relevant document) stay.
    """
    if empty.any():
        if no_relevant == "error":
            row = int(np.argmax(empty))
            query = plain(scoring.layout.query_ids[row])
            raise InputError(
                f"query {query!r} has no relevant judgment, so {measure.name} is 0/0, and "
                "`zero_idcg='error'`",
                where=f"query {query!r}",
                fix="pass `zero_idcg='skip'`, `'zero'` or `'one'` to score such queries",
            )
        if no_relevant in ("zero", "one"):
            values = np.where(empty, 0.0 if no_relevant == "zero" else 1.0, values)
    if measure.kind == "GMAP" and rules.gm_per_query == "log":
        values = np.log(np.maximum(values, rules.gm_floor))
    return values
