r"""Explain one query: its ranked list row by row, as the library scores it.

For a query whose items, ranked by score under the tie rule, have gains
:math:`G_1, G_2, \dots` and discounts :math:`D(1), D(2), \dots`, an explanation lists every
rank with its document (or input row), score, grade, gain, discount, contribution
:math:`G_r D(r)` and cumulative DCG :math:`\sum_{t \le r} G_t D(t)`. With ``ties="average"``
the items of a tie group each count the group's mean gain (McSherry and Najork's expected DCG),
so the gain used differs from the item's own. Beside it stands the ideal ranking with the
IDCG, and DCG@k, IDCG@k and NDCG@k as the library computed them.

How the rows are found: the explanation takes the plan the library scores (the same gains,
discounts, tie keys and random seeds; :meth:`fastndcg._core.definition.Definition.plan`) and
has the backend rank the one query's rows (``rank_query``, the ranking its scoring makes). The
cumulative sums are left-to-right sums of ``gain * discount``, which is how the backends sum
them; the DCG, IDCG
and NDCG shown are the library's own values for the query (the result compared, or the query
scored again), never recomputed from the rows.

Sources of rows (references to the inputs, read again on demand):

- :class:`TableSource`: a table and one of its score columns (:func:`fastndcg.compare_table`);
- :class:`RunSource`: the qrels (as read once) and a run (:func:`fastndcg.compare_runs`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._compare.explain_measures import (
    evaluated,
    explain_measure_query,
    explained_measure,
    measure_column,
    measure_explanation,
)
from fastndcg._compare.explanation import (
    ListExplanation,
    QueryExplanation,
    cut_at,
    json_value,
    tie_groups,
)
from fastndcg._compare.measure_explanation import MeasureExplanation, MeasureList
from fastndcg._contract import Backend, Plan
from fastndcg._contract import codes as C
from fastndcg._core.definition import Definition
from fastndcg._core.layout import Layout, build_layout
from fastndcg._core.options import TABLE, data_options, split_options
from fastndcg._core.options.comparing import compared_cutoff
from fastndcg._core.vocabulary import plain
from fastndcg._errors import InputError, OptionError
from fastndcg._io.arrow import as_arrow, table_layout
from fastndcg._presets.apply import resolve

# -- the arithmetic of one query ----------------------------------------------------------------


def explain_plan(
    plan: Plan,
    backend: Backend,
    q: int,
    k: int | None,
    *,
    grades: np.ndarray,
    ties: str,
    ideal_kind: str,
    values: tuple[float, float, float],
    docs: Sequence[Any] | None = None,
    ideal_docs: Sequence[Any] | None = None,
    system: str | None = None,
    notes: list[str] | None = None,
) -> ListExplanation:
    """The explanation of query ``q`` of ``plan`` at cutoff ``k``.

    ``backend`` ranks the query as it scores it. ``grades`` are the query's grades as given
    (the plan may hold precomputed gains),
    ``docs`` the document id of each of its rows, ``ideal_docs`` those of its judgment list
    (``ideal="global"``), ``values`` the library's (DCG, IDCG, NDCG).
    """
    s, e = int(plan.offsets[q]), int(plan.offsets[q + 1])
    n = e - s
    order, gains, ideal_gains = backend.rank_query(plan, q)
    ranked_gains = gains[order]
    ranked_scores = None if plan.scores is None else plan.scores[s:e].astype(np.float64)[order]
    group = np.arange(n) if ranked_scores is None else tie_groups(ranked_scores)  # ranked: no ties
    sizes = np.bincount(group, minlength=n) if n else np.zeros(0, dtype=np.int64)
    average = plan.scores is not None and plan.tie_mode == C.TIE_AVERAGE
    if average and n:
        sums = np.bincount(group, weights=ranked_gains, minlength=n)
        used = (sums / np.maximum(sizes, 1))[group]
    else:
        used = ranked_gains
    cut = cut_at(k, n)
    discount = plan.discount
    contribution = used[:cut] * discount[:cut]
    cumulative = np.cumsum(contribution)
    labels = _group_labels(group, sizes)
    rows = []
    for r in range(n):
        p = int(order[r])
        rows.append(
            {
                "rank": r + 1,
                "doc": None if docs is None else json_value(docs[p]),
                "score": None if ranked_scores is None else float(ranked_scores[r]),
                "grade": json_value(grades[p]),
                "gain": float(ranked_gains[r]),
                "tie": labels[r],
                "gain_used": float(used[r]),
                "discount": float(discount[r]) if r < discount.size else math.nan,
                "contribution": float(contribution[r]) if r < cut else 0.0,
                "cumulative": float(cumulative[r]) if r < cut else float(_last(cumulative)),
            }
        )
    groups = [
        {
            "label": labels[first],
            "score": float(ranked_scores[first]) if ranked_scores is not None else math.nan,
            "ranks": (first + 1, first + int(sizes[g])),
            "size": int(sizes[g]),
            "mean_gain": float(used[first])
            if average
            else float(np.mean(ranked_gains[group == g])),
        }
        for g, first in _group_starts(sizes)
    ]
    ideal = _ideal_rows(
        plan, q, k, ranked_gains, used, group, sizes, order, docs, ideal_docs, grades, ideal_gains
    )
    ideal_kind = "max" if plan.ideal_mode == C.IDEAL_MAX else ideal_kind
    return ListExplanation(
        system=system,
        ties=ties,
        rows=rows,
        ideal=ideal,
        dcg=values[0],
        idcg=values[1],
        ndcg=values[2],
        groups=groups,
        notes=list(notes or []),
        ideal_kind=ideal_kind,
    )


def _last(values: np.ndarray) -> float:
    return float(values[-1]) if values.size else 0.0


def _group_starts(sizes: np.ndarray) -> list[tuple[int, int]]:
    """(group, first rank index) of every group of two or more."""
    firsts = np.cumsum(sizes) - sizes
    return [(int(g), int(firsts[g])) for g in np.flatnonzero(sizes > 1)]


def _group_labels(group: np.ndarray, sizes: np.ndarray) -> list[str]:
    labels = [""] * group.size
    for number, (g, first) in enumerate(_group_starts(sizes), start=1):
        for r in range(first, first + int(sizes[g])):
            labels[r] = f"T{number}"
    return labels


def _ideal_rows(
    plan: Plan,
    q: int,
    k: int | None,
    ranked_gains: np.ndarray,
    used: np.ndarray,
    group: np.ndarray,
    sizes: np.ndarray,
    order: np.ndarray,
    docs: Sequence[Any] | None,
    ideal_docs: Sequence[Any] | None,
    shown: np.ndarray,
    ideal_gains: np.ndarray,
) -> list[dict[str, Any]]:
    """The ideal ranking of query ``q`` up to the cutoff, as the library forms the IDCG."""
    n = ranked_gains.size
    discount = plan.discount
    if plan.ideal_mode == C.IDEAL_MAX:
        slots = n if k is None else k
        prefix = plan.discount_prefix
        return [
            {
                "rank": r + 1,
                "doc": None,
                "grade": None,
                "gain": plan.max_gain,
                "discount": float(discount[r]),
                "contribution": plan.max_gain * float(discount[r]),
                # the library multiplies the gain by the summed discounts
                "cumulative": plan.max_gain * float(prefix[r + 1]),
            }
            for r in range(slots)
        ]
    if plan.ideal_mode == C.IDEAL_LOCAL:
        cut = cut_at(k, n)
        values = ranked_gains[:cut].copy()
        if plan.scores is not None and plan.tie_mode == C.TIE_AVERAGE and cut:
            # a tie group straddling the cutoff: each of its slots carries the group's mean
            ends = np.cumsum(sizes)[group[:cut]]
            values = np.where(ends > cut, used[:cut], values)
        best = np.argsort(-values, kind="stable")
        gains = values[best]
        names = None if docs is None else [docs[int(order[i])] for i in best]
        grades = [json_value(shown[int(order[i])]) for i in best]
    else:
        i0, i1 = int(plan.ideal_offsets[q]), int(plan.ideal_offsets[q + 1])
        judged = plan.ideal_grades[i0:i1]
        all_gains = ideal_gains
        best = np.argsort(-all_gains, kind="stable")
        cut = cut_at(k, best.size)
        best = best[:cut]
        gains = all_gains[best]
        source = ideal_docs if plan.ideal_mode == C.IDEAL_GLOBAL else docs
        names = None if source is None else [source[int(i)] for i in best]
        grades = [json_value(judged[int(i)]) for i in best]
    cumulative = np.cumsum(gains * discount[:cut])
    return [
        {
            "rank": r + 1,
            "doc": None if names is None else json_value(names[r]),
            "grade": grades[r],
            "gain": float(gains[r]),
            "discount": float(discount[r]),
            "contribution": float(gains[r] * discount[r]),
            "cumulative": float(cumulative[r]),
        }
        for r in range(cut)
    ]


# -- the standalone explain of one list ---------------------------------------------------------


def explain(
    grades: Any,
    scores: Any = None,
    *,
    k: int | None = None,
    docs: Any = None,
    preset: Any = None,
    measure: Any = None,
    relevance_level: int | None = None,
    **options: Any,
) -> QueryExplanation | MeasureExplanation:
    """Explain the NDCG, or another measure, of one ranked list, rank by rank.

    Without ``measure``, NDCG at ``k``: each rank's gain, discount and contribution, and the
    ideal ranking. With ``measure``, that measure as :func:`fastndcg.evaluate` computes it:
    each rank's grade, whether it is relevant, what the measure reads there and the rank's
    share of the value (P@k's ``rel / k``, AP's precision at each relevant rank over ``R``,
    RR's ``1 / rank`` at the first relevant rank, ERR's stopping probability, RBP's weight...),
    the denominator and the value. The measures explained are those that are sums over the
    ranks: P, R, AP, RR, Success, R-Prec, bpref, ERR, RBP, Judged, Unjudged, NumRet,
    NumRelRet, nDCG and DCG; the others (F1, GMAP, IPrec, RBPResid, NumQ, NumRel) are an
    OptionError.

    Parameters
    ----------
    grades : array-like
        The list's relevance grades (one query).
    scores : array-like, optional
        Its scores (None: the rows are in ranked order).
    k : int or None, default None
        The cutoff (one; None: the whole list).
    docs : array-like, optional
        A label for each row (document ids), shown beside it; default its row number.
    preset : str, optional
        A tool's definition by name, as :func:`fastndcg.ndcg` (or, with ``measure``,
        :func:`fastndcg.evaluate`) takes it.
    measure : str, optional
        One measure by name, as :func:`fastndcg.evaluate` takes it (``"AP@10"``, ``"P.5"``,
        ``"mrr@10"``, ``"ERR@20"``...); its cutoff is in the name, so ``k`` stays None.
    relevance_level : int, optional
        With ``measure``: a grade at or above it is relevant (default 1).
    **options
        Options of :func:`fastndcg.ndcg` (``gain``, ``discount``, ``ties``, ``seed``,
        ``ideal`` with ``ideal_grades`` for one judgment list, ``zero_idcg``, ...).

    Returns
    -------
    QueryExplanation or MeasureExplanation
        Printable. Without ``measure``, DCG, IDCG and NDCG are those :func:`fastndcg.ndcg`
        gives this list; with it, ``value`` is the one :func:`fastndcg.evaluate` gives
        (the same bits), and ``rows`` hold each rank's ``share``.

    Examples
    --------
    >>> import fastndcg
    >>> e = fastndcg.explain([3, 2, 0, 1], [0.9, 0.5, 0.5, 0.1], k=3)
    >>> [(row["rank"], row["tie"], row["gain_used"]) for row in e.rows]
    [(1, '', 7.0), (2, 'T1', 1.5), (3, 'T1', 1.5), (4, '', 1.0)]
    >>> bool(e.lists[0].dcg == fastndcg.ndcg([3, 2, 0, 1], [0.9, 0.5, 0.5, 0.1], k=3).dcg[0, 0])
    True
    >>> e = fastndcg.explain([0, 2, 0, 1], [0.9, 0.8, 0.7, 0.6], measure="AP")
    >>> [(row["rank"], row["relevant"], round(row["share"], 4)) for row in e.rows]
    [(1, False, 0.0), (2, True, 0.25), (3, False, 0.0), (4, True, 0.25)]
    >>> e.value
    0.5
    """
    if measure is not None:
        return _explain_measure(
            grades,
            scores,
            measure,
            k=k,
            docs=docs,
            preset=preset,
            relevance_level=relevance_level,
            **options,
        )
    if relevance_level is not None:
        raise OptionError(
            "`relevance_level` is the measures' relevance level; NDCG reads the grades",
            option="relevance_level",
            value=relevance_level,
            fix="name a measure (`measure='AP'`), or leave `relevance_level` out",
        )
    if isinstance(k, (list, tuple, np.ndarray)):
        raise OptionError(
            "explain shows one cutoff",
            option="k",
            value=k,
            fix="pass one int, or `k=None` for the whole list",
        )
    refuse_queries(options)
    _, merged, rules = resolve("ndcg", preset, {**options, "k": k})
    merged.pop("qid", None)
    merged.pop("offsets", None)
    weights = merged.pop("weights", None)
    ideal_inputs = {name: merged.pop(name) for name in list(merged) if name.startswith("ideal_")}
    ours, _ = split_options(merged, "explain()", ())
    definition = Definition.create(**ours)
    definition.check_ideal_inputs(**ideal_inputs)
    with definition.threads():
        layout = build_layout(grades, scores, backend=definition.backend)
        if layout.n_queries != 1:
            raise InputError(
                f"explain takes one list; these arrays hold {layout.n_queries}",
                value=layout.n_queries,
                fix="pass one query's grades and scores (1-D)",
            )
        held = definition.held_scores(layout)
        plan = definition.plan(held, **ideal_inputs)
        dcg, idcg, _ = definition.backend.score(plan)
    result = rules.finish(
        definition.finish(
            layout.query_ids, dcg, idcg, weights=weights, ranked=layout.scores is None
        )
    )
    labels = row_labels(docs, int(layout.offsets[-1]))
    values = (float(result.dcg[0, 0]), float(result.idcg[0, 0]), float(result.per_query[0, 0]))
    ties = "ranked input" if layout.scores is None else definition.ties
    listed = explain_plan(
        plan,
        definition.backend,
        0,
        definition.cutoffs[0],
        grades=np.asarray(held.grades),
        ties=ties,
        ideal_kind=definition.ideal,
        values=values,
        docs=labels,
    )
    return QueryExplanation(plain(layout.query_ids[0]), definition.cutoffs[0], (listed,))


def refuse_queries(options: dict[str, Any]) -> None:
    """``qid`` and ``offsets`` say where queries start: explain takes one query's arrays."""
    if options.get("qid") is not None or options.get("offsets") is not None:
        raise OptionError(
            "explain takes one query's arrays",
            option="qid" if options.get("qid") is not None else "offsets",
            value=None,
            fix="pass that query's grades and scores (or use PairedComparison.explain)",
        )


def row_labels(docs: Any, n: int) -> list[Any]:
    """A label for each of ``n`` rows: ``docs``, or the row numbers."""
    labels = np.arange(n) if docs is None else np.asarray(docs, dtype=object)
    if labels.shape != (n,):
        raise InputError(
            f"docs must label each of the {n} rows", value=labels.shape, fix=f"got {labels.shape}"
        )
    return list(labels)


# -- sources of a comparison's rows -------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """One system's input as the library scores it: its definition, layout and plan."""

    definition: Definition
    layout: Layout
    plan: Plan
    docs: Any  # per layout row: a document id or an input row label
    ideal_docs: Any  # per query: callable(query_id) -> judged document ids, or None
    notes: list[str]


@dataclass(frozen=True)
class TableSource:
    """A table and one score column, as :func:`fastndcg.compare_table` scored it."""

    table: Any
    qid: str | None
    grade: str
    score: str | None
    options: dict[str, Any]

    def prepare(self) -> Prepared:
        """The table's layout and plan (a pass over its columns, without the kernel)."""
        _, merged, _ = resolve("ndcg_table", self.options.get("preset"), dict(self.options))
        merged.pop("preset", None)
        ours, data = split_options(merged, "compare_table()", data_options(TABLE))
        data.pop("weights", None)
        definition = Definition.create(**ours)
        with definition.threads():
            layout = table_layout(
                as_arrow(self.table), self.qid, self.grade, self.score, definition.backend
            )
            plan = definition.plan(definition.held_scores(layout), **data)

        def docs(row: int) -> str:
            return f"row {layout.input_row(row)}"

        return Prepared(definition, layout, plan, docs, None, [])


@dataclass(frozen=True)
class RunSource:
    """The qrels (as read) and one run, as :func:`fastndcg.compare_runs` scored it."""

    qrels: Any
    run: Any
    options: dict[str, Any]

    def prepare(self) -> Prepared:
        """The run joined with the qrels (the run read again when it is a path)."""
        from fastndcg.trec import prepare_run, read_qrels

        prepared = prepare_run(self.qrels, self.run, **self.options)
        definition, layout = prepared.definition, prepared.layout
        plan = definition.plan(
            definition.held_scores(layout), tie_key=prepared.tie_key, **prepared.ideal
        )
        docs = run_docs(prepared)
        judgments = read_qrels(self.qrels)

        def ideal_docs(query_id: Any) -> list[Any]:
            import pyarrow as pa
            import pyarrow.compute as pc

            ids = judgments.column("qid")
            value = pa.scalar(query_id, type=ids.type) if ids.type != pa.null() else None
            mask = pc.equal(ids, value)
            return judgments.filter(mask).column("docid").to_pylist()

        return Prepared(definition, layout, plan, docs, ideal_docs, self.notes())

    def notes(self) -> list[str]:
        """What the options left out of the rankings."""
        notes = []
        options = self.options
        if options.get("judged_only"):
            notes.append("judged_only: unjudged documents were removed before ranking")
        if options.get("max_docs") is not None:
            notes.append(f"max_docs: only the first {options['max_docs']} documents were kept")
        return notes

    def measures_input(self, measure: Any) -> Any:
        """The run joined with the qrels as :func:`fastndcg.evaluate_run` computes ``measure``."""
        from fastndcg._evaluate import run_measures_input

        return run_measures_input(self.qrels, self.run, measures=[measure], **self.options)


def run_docs(prepared: Any) -> Any:
    """The document id of each row of a run's layout (a callable of the row)."""
    layout, column, rows = prepared.layout, prepared.run_table.column("docid"), prepared.run_rows

    def docs(row: int) -> Any:
        kept = layout.input_row(row)
        return column[int(kept if rows is None else rows[kept])].as_py()

    return docs


def _position(ids: np.ndarray, query_id: Any) -> int:
    """Where ``query_id`` is in ``ids`` (-1: absent); a text id also matches its number."""
    ids = np.asarray(ids)
    with warnings.catch_warnings():  # comparing ids of another type is "not equal", not an error
        warnings.simplefilter("ignore")
        try:
            hits = np.flatnonzero(ids == query_id)
        except (TypeError, ValueError):
            hits = np.zeros(0, dtype=np.int64)
    if hits.size:
        return int(hits[0])
    text = str(query_id)
    for i, value in enumerate(ids):
        shown = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        if shown == text:
            return i
    return -1


def chosen_systems(
    results: dict[str, Any], query_id: Any, systems: Any
) -> tuple[list[str], list[int], Any]:
    """The systems shown, where ``query_id`` is in each one's result (-1: not), and its id."""
    names = list(results)
    if systems is None:
        chosen = names
    else:
        chosen = [systems] if isinstance(systems, str) else list(systems)
        unknown = [name for name in chosen if name not in names]
        if unknown or not chosen:
            raise OptionError(
                f"unknown system {unknown[0] if unknown else chosen!r}",
                option="systems",
                value=systems,
                fix=f"the systems are {', '.join(map(repr, names))}",
            )
    where = [_position(results[name].query_ids, query_id) for name in chosen]
    if all(q < 0 for q in where):
        raise InputError(
            f"query {query_id!r} is not among the compared queries",
            value=query_id,
            fix="pass one of the comparison's query_ids",
        )
    shown_id = next(
        plain(results[name].query_ids[q]) for name, q in zip(chosen, where, strict=True) if q >= 0
    )
    return chosen, where, shown_id


def explain_systems(
    results: dict[str, Any],
    sources: dict[str, Any],
    query_id: Any,
    *,
    k: Any = ...,
    systems: Any = None,
    measure: Any = None,
) -> QueryExplanation | MeasureExplanation:
    """Explain ``query_id`` for the systems of ``results`` (scored at the same cutoffs).

    ``sources`` tells where each system's rows can be read again (:class:`TableSource`,
    :class:`RunSource`). With ``measure`` (results of measures), that measure.
    """
    if measure is not None:
        return _explain_measure_systems(results, sources, query_id, measure, systems=systems)
    cutoffs = next(iter(results.values())).k
    k = compared_cutoff(k, cutoffs)
    j = cutoffs.index(k)
    chosen, where, shown_id = chosen_systems(results, query_id, systems)
    lists = []
    for name, q in zip(chosen, where, strict=True):
        result = results[name]
        prepared = sources[name].prepare()
        p = _position(prepared.layout.query_ids, shown_id)
        if p < 0 or q < 0:
            nothing = (prepared.definition.ties, [], [], math.nan, math.nan, math.nan)
            note = f"{name!r} has no list for this query"
            lists.append(ListExplanation(name, *nothing, found=False, notes=[note]))
            continue
        s, e = int(prepared.layout.offsets[p]), int(prepared.layout.offsets[p + 1])
        docs = [prepared.docs(row) for row in range(s, e)]
        ideal_docs = None
        if prepared.ideal_docs is not None and prepared.definition.ideal == "global":
            ideal_docs = prepared.ideal_docs(shown_id)
            i0, i1 = int(prepared.plan.ideal_offsets[p]), int(prepared.plan.ideal_offsets[p + 1])
            if len(ideal_docs) != i1 - i0:
                ideal_docs = None  # not the judgment list the plan holds: shown without ids
        values = (float(result.dcg[q, j]), float(result.idcg[q, j]), float(result.per_query[q, j]))
        ties = "ranked input" if prepared.layout.scores is None else prepared.definition.ties
        lists.append(
            explain_plan(
                prepared.plan,
                prepared.definition.backend,
                p,
                k,
                grades=np.asarray(prepared.layout.grades[s:e]),
                ties=ties,
                ideal_kind=prepared.definition.ideal,
                values=values,
                docs=docs,
                ideal_docs=ideal_docs,
                system=name,
                notes=prepared.notes,
            )
        )
    return QueryExplanation(shown_id, k, tuple(lists))


# -- a measure beside NDCG ---------------------------------------------------------------------


def _explain_measure(
    grades: Any,
    scores: Any,
    measure: Any,
    *,
    k: Any,
    docs: Any,
    preset: Any,
    relevance_level: int | None,
    **options: Any,
) -> MeasureExplanation:
    """``fastndcg.explain(grades, scores, measure=...)``: one list's value of ``measure``."""
    from fastndcg._evaluate import measures_input

    chosen = explained_measure(measure)
    if k is not None:
        raise OptionError(
            "with `measure`, the cutoff is the measure's: `k` is NDCG's",
            option="k",
            value=k,
            fix=f"name the cutoff in the measure (e.g. '{chosen.kind}@{k}') and leave `k` out",
        )
    refuse_queries(options)
    level = 1 if relevance_level is None else relevance_level
    given = measures_input(
        grades, scores, measures=[chosen], relevance_level=level, preset=preset, **options
    )
    layout = given.scoring.layout
    if layout.n_queries != 1:
        raise InputError(
            f"explain takes one list; these arrays hold {layout.n_queries}",
            value=layout.n_queries,
            fix="pass one query's grades and scores (1-D)",
        )
    labels = row_labels(docs, int(layout.offsets[-1]))
    listed_ = explain_measure_query(given, 0, evaluated(given), docs=labels)
    return measure_explanation(layout.query_ids[0], chosen, [listed_])


def _explain_measure_systems(
    results: dict[str, Any],
    sources: dict[str, Any],
    query_id: Any,
    measure: Any,
    *,
    systems: Any = None,
) -> MeasureExplanation:
    """Explain ``measure`` for ``query_id`` in the systems of ``results`` (of measures).

    ``sources``: where each system's run can be read again (:class:`RunSource`); the values
    are the results' own.
    """
    chosen_measure = explained_measure(measure)
    chosen, where, shown_id = chosen_systems(results, query_id, systems)
    lists = []
    for name, q in zip(chosen, where, strict=True):
        result, source = results[name], sources[name]
        j = measure_column(result, chosen_measure)
        given = source.measures_input(chosen_measure)
        layout = given.scoring.layout
        p = _position(layout.query_ids, shown_id)
        if p < 0 or q < 0:
            note = f"{name!r} has no list for this query"
            lists.append(
                MeasureList(name, "", [], (), float("nan"), None, "", found=False, notes=[note])
            )
            continue
        docs = run_docs(given.prepared)
        s, e = int(layout.offsets[p]), int(layout.offsets[p + 1])
        value = float(result.per_query[q, j])
        lists.append(
            explain_measure_query(
                given,
                p,
                value,
                docs=[docs(row) for row in range(s, e)],
                system=name,
                notes=source.notes(),
            )
        )
    return measure_explanation(shown_id, chosen_measure, lists)
