r"""Explain one query's value of a measure beside NDCG, rank by rank.

The measures explained are sums over the ranks: each rank of the ranking has a share and the
value is their sum. A share is what the rank adds, divided by the measure's denominator:

- P@k: :math:`rel_i / k` (or :math:`/\min(k, n)`, the tool's choice); R@k: :math:`rel_i / R`
  (or :math:`/\min(R, k)`); R-Prec: :math:`rel_i / R` over the top R ranks;
- AP: the precision :math:`h_i / i` at each relevant rank :math:`i` (:math:`h_i` the relevant
  documents up to it), divided by :math:`R` (or :math:`\min(R, k)`);
- RR: :math:`1 / i` at the first relevant rank; Success: 1 there;
- ERR: the stopping probability :math:`s_i` of the rank's grade times the chance to reach it
  :math:`\prod_{j<i}(1 - s_j)`, over :math:`i`;
- RBP: the rank's gain times its weight :math:`(1 - p) p^{i-1}`;
- bpref: at each judged relevant rank, :math:`1 - \min(n_i, R) / \min(N, R)` (:math:`n_i` the
  judged non-relevant documents above it; the fraction capped at 1), divided by :math:`R`;
- Judged@k and Unjudged@k: 1 for each (un)judged rank over the tool's denominator;
  NumRet@k and NumRelRet@k: 1 for each rank (relevant rank) counted;
- nDCG and DCG: each rank's gain times its discount (divided by the IDCG for nDCG), as
  :func:`fastndcg.explain` shows without ``measure``.

With ``ties="average"`` a rank of a tie group holds the group's mean of what it adds (the mean
over every order of the group), and AP's share is its expected precision there; RR and Success
over a tie group holding a relevant document are not a sum over one ranking's ranks: their
shares are not shown, only the value.

How the rows are found: the ranking is the backend's (``rank_query``) on a plan with the
measure's tie rule and score precision (the tool's provider, else the call's), the gains being
the grades, as the measure kernels rank; the denominators and choices are the tool's
definitions (:mod:`fastndcg._core.measures.definitions`) and the counts ``R``, ``N`` and the
largest grade the engine's. The value shown is the engine's (:func:`fastndcg.evaluate`'s bits),
never the sum of the shares, which may differ from it in the last bits.

Not explained (an OptionError names those explained): F1 (a harmonic mean of P and R), GMAP
(a log of AP), IPrec (a maximum over ranks), RBPResid, NumQ and NumRel (no ranks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from fastndcg._compare.explanation import cut_at, json_value, tie_groups
from fastndcg._compare.measure_explanation import MeasureExplanation, MeasureList
from fastndcg._core.measures import KINDS, Measure
from fastndcg._core.measures.definitions import CHOICES, MeasureRules
from fastndcg._core.measures.engine import (
    Judged,
    compute,
    err_stops,
    measure_param,
    ranking_ties,
    scored_definition,
    tie_key_of,
)
from fastndcg._core.options import parse
from fastndcg._core.vocabulary import KEYED_TIES, listed, plain
from fastndcg._errors import OptionError

EXPLAINED = (
    *("P", "R", "AP", "RR", "Success", "Rprec", "Bpref", "ERR", "RBP"),
    *("Judged", "Unjudged", "NumRet", "NumRelRet", "nDCG", "DCG"),
)


def explained_measure(measures: Any) -> Measure:
    """The one measure of ``measures`` (a name or a record); an OptionError unless explained."""
    chosen = parse("measures", measures)
    if len(chosen) != 1:
        raise OptionError(
            f"explain shows one measure, not {len(chosen)}",
            option="measure",
            value=measures,
            fix="name one measure (e.g. AP@10)",
        )
    measure = chosen[0]
    if measure.kind not in EXPLAINED:
        raise OptionError(
            f"explain shows the measures that are sums over the ranks; {measure.name!r} "
            f"({KINDS[measure.kind].title}) is not",
            option="measure",
            value=measure.name,
            fix=f"explain one of {listed(EXPLAINED)} (fastndcg.evaluate computes {measure.name!r})",
        )
    return measure


def evaluated(given: Any) -> float:
    """The engine's value of ``given``'s one measure for its first query (the bits of evaluate)."""
    with given.definition.threads():
        values = compute(given.definition, given.rules, given.measures, given.level, given.scoring)
    return float(values[0, 0])


def explain_measure_query(
    given: Any,
    q: int,
    value: float,
    *,
    docs: Sequence[Any] | None = None,
    system: str | None = None,
    notes: Sequence[str] = (),
) -> MeasureList:
    """The explanation of query ``q`` of ``given`` (a :class:`~fastndcg._evaluate.MeasuresInput`).

    ``value``: the engine's value of the measure for the query; ``docs``: the document id of
    each of its rows.
    """
    definition, rules, scoring = given.definition, given.rules, given.scoring
    measure = given.measures[0]
    layout = scoring.layout
    provider = rules.provider(measure)
    ties = ranking_ties(provider, definition, scoring)
    dtype = provider.score_dtype or definition.score_dtype
    level = given.level if measure.rel is None else measure.rel
    notes = list(notes)
    scored = measure.kind in ("nDCG", "DCG")
    if scored:  # the definition the engine scores them with
        below = level if rules.ndcg_level and level > 1 else None  # ranx -lN
        ranker = scored_definition(
            definition, rules, (measure.cutoff,), measure.gain, below, ties, dtype
        )
        inputs = {"tie_key": scoring.tie_key, **(scoring.ideal or {})}
    else:  # the measure kernels' ranking: pessimistic and optimistic ties order by the grades
        ranker = replace(
            definition,
            ties="docid_desc" if ties in (*KEYED_TIES, "docid_asc") else ties,
            gain=parse("gain", "linear"),
            ideal="recall",
            score_dtype=dtype,
        )
        inputs = {"tie_key": tie_key_of(ties, scoring.tie_key)}
    with definition.threads():
        plan = ranker.plan(ranker.held_scores(layout), **inputs)
        order, gains, _ = definition.backend.rank_query(plan, q)
        dcg, idcg = (
            ranker.score(layout, rows_judged=scoring.rows_judged, **inputs)
            if scored
            else (None, None)
        )
    s, e = int(layout.offsets[q]), int(layout.offsets[q + 1])
    labels = np.asarray(scoring.labels[s:e], dtype=np.float64)[order]
    ranked_scores = None if plan.scores is None else plan.scores[s:e].astype(np.float64)[order]
    group = np.arange(e - s) if ranked_scores is None else tie_groups(ranked_scores)
    average = ranked_scores is not None and ties == "average"
    facts = _facts(rules, measure, scoring.judged, q, level)
    if scored:
        facts.update(DCG=float(dcg[q, 0]), IDCG=float(idcg[q, 0]))
        facts.update(gains=gains[order], discount=plan.discount)
    elif measure.kind == "ERR":
        facts["stop"] = err_stops(rules.err_max_grade)  # (the engine checked the grades)
    terms = _Terms(measure, rules, labels, level, facts, group if average else None)
    columns, share, denominator, divides_by = terms.compute()
    notes += terms.notes
    if provider.decimals is not None:
        notes.append(
            f"{rules.tool} prints {provider.decimals} decimals: the value is the shares' sum "
            "rounded to them"
        )
    labels_of = _tie_labels(group)
    cumulative = np.cumsum(share)
    rows = []
    for r in range(e - s):
        p = int(order[r])
        label = labels[r]
        rows.append(
            {
                "rank": r + 1,
                "doc": json_value(docs[p]) if docs is not None else p,
                "score": None if ranked_scores is None else float(ranked_scores[r]),
                "grade": None if np.isnan(label) else json_value(label),
                "relevant": bool(label >= level),
                "tie": labels_of[r],
                **{name: float(values[r]) for name, values in columns.items()},
                "share": float(share[r]),
                "cumulative": float(cumulative[r]),
            }
        )
    return MeasureList(
        system=system,
        ties="ranked input" if ranked_scores is None else ties,
        rows=rows,
        columns=tuple(columns),
        value=value,
        denominator=denominator,
        divides_by=divides_by,
        facts={key: v for key, v in facts.items() if key in terms.shown},
        notes=notes,
    )


def measure_column(result: Any, measure: Measure) -> int:
    """Where ``measure`` is among the measures of ``result`` (by name, else by meaning)."""
    names = list(getattr(result, "measures", ()) or ())
    if measure.name in names:
        return names.index(measure.name)
    for j, name in enumerate(names):
        if parse("measures", name)[0].canonical == measure.canonical:
            return j
    raise OptionError(
        f"the comparison has no measure {measure.name!r}",
        option="measure",
        value=measure.name,
        fix=f"its measures are {listed(names)}"
        if names
        else "compare measures (compare_runs(..., measures=[...])) to explain one",
    )


def measure_explanation(query_id: Any, measure: Measure, lists: Sequence[MeasureList]) -> Any:
    """The explanation of ``measure`` for ``query_id`` over ``lists``."""
    return MeasureExplanation(
        plain(query_id), measure.name, KINDS[measure.kind].title, tuple(lists)
    )


def _tie_labels(group: np.ndarray) -> list[str]:
    """``T1``, ``T2``... for the ranks of each tie group of two or more; ``""`` alone."""
    sizes = np.bincount(group) if group.size else np.zeros(0, dtype=np.int64)
    labels, number = [""] * group.size, 0
    for r in range(group.size):
        if sizes[group[r]] > 1:
            if r == 0 or group[r] != group[r - 1]:
                number += 1
            labels[r] = f"T{number}"
    return labels


def _facts(
    rules: MeasureRules, measure: Measure, judged: Judged, q: int, level: int
) -> dict[str, Any]:
    """What the value reads besides the ranking: R, bpref's N, the largest grade, k, p, level."""
    grades = judged.grades[int(judged.offsets[q]) : int(judged.offsets[q + 1])]
    below = grades < level
    if rules.bpref_negative == CHOICES["bpref_negative"][0]:  # negative grades left out
        below &= grades >= 0
    facts: dict[str, Any] = {
        "k": measure.cutoff,
        "relevance_level": level,
        "R": int(np.count_nonzero(grades >= level)),
        "N": int(np.count_nonzero(below)),
        "largest_grade": float(np.maximum(grades, 0.0).max(initial=0.0)),
    }
    if measure.kind == "RBP":
        facts["p"] = measure_param(rules, measure)
    return facts


class _Terms:
    """Each rank's share of one measure of one ranked list (``labels``: grades, NaN unjudged).

    ``group``: each rank's tie group under ``ties="average"`` (None: one order). ``facts``
    holds the counts, and ERR's stopping probability of each grade (``stop``), or nDCG's ranked
    gains, discounts and IDCG.
    """

    def __init__(self, measure, rules, labels, level, facts, group) -> None:
        self.measure, self.rules, self.labels, self.level = measure, rules, labels, level
        self.facts, self.group = facts, group
        n = labels.size
        self.n = n
        self.k = measure.cutoff
        self.depth = cut_at(self.k, n)
        self.within = np.arange(n) < self.depth
        self.relevant = labels >= level  # NaN: False
        self.ranks = np.arange(1, n + 1, dtype=np.float64)
        self.notes: list[str] = []
        self.shown = ["k", "relevance_level"]

    def mean(self, values: np.ndarray) -> np.ndarray:
        """``values``, or under ``ties="average"`` each rank's tie-group mean."""
        if self.group is None:
            return values
        totals = np.bincount(self.group, weights=values, minlength=self.n)
        sizes = np.bincount(self.group, minlength=self.n)
        return (totals / np.maximum(sizes, 1))[self.group]

    def tied(self) -> bool:
        return self.group is not None and bool(np.any(np.bincount(self.group) > 1))

    def by_r(self, denominator: float) -> tuple[float | None, str]:
        """``denominator`` when R > 0; else None, with a note on the no-relevant rule."""
        self.shown.append("R")
        if self.facts["R"] == 0:
            self.notes.append(
                "no relevant judgment (R = 0): the value is the no-relevant rule's (`zero_idcg`, "
                "or the preset's), not a sum of the shares"
            )
            return None, "R"
        return denominator, "R"

    def compute(self) -> tuple[dict[str, np.ndarray], np.ndarray, float | None, str]:
        """The measure's own columns, the shares, the denominator and its name."""
        kind, rules, k, n = self.measure.kind, self.rules, self.k, self.n
        within, relevant = self.within, self.relevant
        hit = self.mean(relevant.astype(np.float64))
        columns: dict[str, np.ndarray] = {}
        if kind in ("NumRet", "NumRelRet"):
            return columns, np.where(within, 1.0 if kind == "NumRet" else hit, 0.0), None, ""
        if kind == "P":
            if k is None or rules.precision_denominator == "min(k,n)":
                slots, name = self.depth, ("n" if k is None else "min(k, n)")
            else:
                slots, name = k, "k"
            return columns, _divided(np.where(within, hit, 0.0), slots), float(slots), name
        if kind in ("Judged", "Unjudged"):
            judged = self.labels >= 0.0
            if kind == "Judged" and rules.judged_labels == "any":
                judged |= ~np.isnan(self.labels)
            counted = self.mean((judged if kind == "Judged" else ~judged).astype(np.float64))
            if kind == "Judged" and rules.judged_denominator == "min(k,n)":
                slots, name = self.depth, ("n" if k is None else "min(k, n)")
            else:
                slots, name = (n, "n") if k is None else (k, "k")
            return columns, _divided(np.where(within, counted, 0.0), slots), float(slots), name
        if kind in ("R", "AP"):
            choice = rules.recall_denominator if kind == "R" else rules.ap_denominator
            r = self.facts["R"]
            capped = k is not None and choice == "min(R,k)"
            denominator, name = self.by_r(float(min(r, k) if capped else r))
            name = "min(R, k)" if capped else name
            if kind == "R":
                return columns, _divided(np.where(within, hit, 0.0), denominator), denominator, name
            precision = self._precisions()
            columns["precision"] = precision
            terms = np.where(within, precision, 0.0)
            return columns, _divided(terms, denominator), denominator, name
        if kind == "Rprec":
            r = self.facts["R"]
            denominator, name = self.by_r(float(r))
            top = np.arange(n) < min(r, n)
            return columns, _divided(np.where(top, hit, 0.0), denominator), denominator, name
        if kind in ("RR", "Success"):
            return columns, self._first_relevant(kind), None, ""
        if kind == "ERR":
            return self._err()
        if kind == "RBP":
            return self._rbp()
        if kind in ("nDCG", "DCG"):
            return self._dcg()
        return self._bpref()

    def _dcg(self) -> tuple[dict[str, np.ndarray], np.ndarray, float | None, str]:
        """Each rank's gain (under ``ties="average"`` its group's mean) times its discount."""
        gains = self.mean(self.facts["gains"])
        discount = np.full(self.n, np.nan)
        known = min(self.n, self.facts["discount"].size)
        discount[:known] = self.facts["discount"][:known]
        contribution = np.where(self.within, gains * discount, 0.0)
        columns = {"gain": gains, "discount": discount, "contribution": contribution}
        self.shown += ["DCG", "IDCG"] if self.measure.kind == "nDCG" else []
        if self.measure.kind == "DCG":
            return columns, contribution, None, ""
        ideal = self.facts["IDCG"]
        name = "IDCG" + ("" if self.k is None else f"@{self.k}")
        if not ideal:
            self.notes.append(
                "no relevant judgment (IDCG = 0): the value is the `zero_idcg` rule's, not a sum "
                "of the shares"
            )
            return columns, np.full(self.n, np.nan), None, name
        return columns, contribution / ideal, ideal, name

    def _precisions(self) -> np.ndarray:
        """AP's term at each rank: the precision there at a relevant rank (its expectation)."""
        relevant = self.relevant
        hits = np.cumsum(relevant)
        if not self.tied():
            return np.where(relevant, hits / self.ranks, 0.0)
        # McSherry and Najork: a rank j of a group of `size` holding `found` relevant rows
        group = self.group
        sizes = np.bincount(group)[group]
        found = np.bincount(group, weights=relevant)[group]
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])[group]
        before = np.r_[0, hits][starts]
        j = np.arange(self.n) - starts + 1
        inner = np.where(sizes == 1, 0.0, (j - 1) * (found - 1) / np.maximum(sizes - 1, 1))
        self.notes.append(
            "ties='average': each rank of a tie group holds the expected precision of AP's sum "
            "over every order of the group"
        )
        return np.where(found > 0, (found / sizes) * (before + 1 + inner) / self.ranks, 0.0)

    def _first_relevant(self, kind: str) -> np.ndarray:
        share = np.zeros(self.n)
        holding = self.relevant
        if self.tied():  # a rank above the cut whose tie group holds a relevant document
            holding = np.bincount(self.group, weights=self.relevant)[self.group] > 0
        first = np.flatnonzero(holding & self.within)
        if first.size and self.tied() and np.sum(self.group == self.group[first[0]]) > 1:
            self.notes.append(
                f"ties='average': the first relevant document is in a tie group, so {kind} is "
                "the mean over every order of the group, not a sum of the shares of one ranking"
            )
            return np.full(self.n, np.nan)
        if first.size:
            share[first[0]] = 1.0 / (first[0] + 1) if kind == "RR" else 1.0
        return share

    def _err(self) -> tuple[dict[str, np.ndarray], np.ndarray, None, str]:
        labels = self.labels
        positive = labels > 0.0
        table = self.facts["stop"]
        stop = np.where(positive, table[np.where(positive, labels, 0.0).astype(np.int64)], 0.0)
        reach = np.cumprod(np.r_[1.0, 1.0 - stop[:-1]])[: self.n]
        columns = {"stop": stop, "reach": reach}
        return columns, np.where(self.within, reach * stop / self.ranks, 0.0), None, ""

    def _rbp(self) -> tuple[dict[str, np.ndarray], np.ndarray, None, str]:
        labels, level, rule = self.labels, self.level, self.rules.rbp_gain
        judged = labels >= 0.0
        if rule == "scaled":
            top = self.facts["largest_grade"]
            gains = np.where(judged, labels / (top if top > 1.0 else 1.0), 0.0)
            self.shown.append("largest_grade")
        elif rule == "raw":
            gains = np.where(judged & (labels >= level), labels, 0.0)
        else:
            gains = np.where(judged & (labels >= level), 1.0, 0.0)
        p = self.facts["p"]
        self.shown.append("p")
        weight = (1.0 - p) * np.cumprod(np.r_[1.0, np.full(self.n, p)])[: self.n]
        gains = self.mean(gains)
        columns = {"gain": gains, "weight": weight}
        return columns, np.where(self.within, gains * weight, 0.0), None, ""

    def _bpref(self) -> tuple[dict[str, np.ndarray], np.ndarray, float | None, str]:
        labels, level, r = self.labels, self.level, self.facts["R"]
        big_n = self.facts["N"]
        self.shown.append("N")
        considered = ~np.isnan(labels)
        if self.rules.bpref_negative == "skip":
            considered &= labels >= 0.0
        above = np.cumsum(considered & (labels < level))
        bound = min(big_n, r)  # the share capped at 1, as the kernels cap it
        share = np.minimum(above, r) / bound if bound > 0 else np.ones(self.n)
        term = np.where(above == 0, 1.0, 1.0 - np.minimum(share, 1.0))
        counted = considered & (labels >= level)
        if self.rules.bpref_no_nonrelevant == "nan" and big_n == 0 and counted.any():
            term = np.full(self.n, np.nan)
            self.notes.append(
                "no judged non-relevant document (N = 0): the tool gives NaN, not a sum of the "
                "shares"
            )
        term = np.where(counted, term, 0.0)
        denominator, name = self.by_r(float(r))
        columns = {"nonrelevant_above": above.astype(np.float64)}
        return columns, _divided(term, denominator), denominator, name


def _divided(terms: np.ndarray, denominator: float | None) -> np.ndarray:
    """``terms`` over ``denominator`` (NaN when there is none to divide by; 0 over 0 is 0)."""
    if denominator is None:
        return np.full(terms.size, np.nan)
    return terms / denominator if denominator else np.zeros(terms.size)
