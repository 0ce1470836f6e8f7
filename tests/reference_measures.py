"""A deliberately plain oracle of the measures beside NDCG: one query at a time, in Python.

Written from the definitions (docs/user-guide/measures.md) with no code of the package: Python
floats, Python sorts, a loop per measure. Each tool's choice (a denominator, bpref's N, RBP's
gains, IPrec's rounding, the tie order...) is a keyword; the tests pass a tool's choices
and compare with the tool. Three inputs are kept apart, as the tools' differences are choices on
one of them:

- the ranking: the grade of each retrieved document in rank order (None: not in the
  judgments), after the tie order and the depth cut (:func:`rank`);
- every judgment of the query, retrieved or not, negative grades included;
- the relevance level: a grade at or above it is relevant.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Query:
    """One query as scored: ``labels`` of the ranked documents, every ``judgments`` grade."""

    labels: list[int | None]
    judgments: list[int]


# Each choice and its default (trec_eval 10's): see fastndcg._core.measures.definitions.
CHOICES = dict(
    precision_denominator="k",
    recall_denominator="R",
    ap_denominator="R",
    judged_denominator="min(k,n)",
    judged_labels="any",
    bpref_negative="skip",
    bpref_no_nonrelevant="one",
    rbp_gain="scaled",
    rbp_p=0.9,
    err_max_grade=4,
    iprec_rounding="nearest",
    gm_floor=1e-5,
    gm_per_query="ap",
    ndcg_level=False,
    no_relevant="zero",
    absent="ranking",
)
TREC_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


# -- the ranking ----------------------------------------------------------------------------


def held(score: float, score_dtype: str) -> float:
    """A score as the tool holds it (float32 tools round it first)."""
    return float(np.float32(score)) if score_dtype == "float32" else score


def rank(
    run: dict[str, float],
    judgments: dict[str, int],
    *,
    ties: str = "docid_desc",
    score_dtype: str = "float64",
    max_docs: int | None = None,
    judged_only: bool = False,
) -> Query:
    """The query as scored: ranked by score descending, ties by ``ties``, then cut and filtered.

    ``ties``: ``"docid_desc"`` (trec_eval: document ids in descending byte order),
    ``"docid_asc"``, ``"stable"`` (the run's order), ``"reverse"`` (the run's order reversed).
    ``max_docs`` keeps the first documents (trec_eval -M), then ``judged_only`` drops those
    without a judgment >= 0 (trec_eval -J).
    """
    docs = list(run.items())  # in the run's order
    if ties == "reverse":
        docs.reverse()
    if ties in ("docid_desc", "docid_asc"):
        docs.sort(key=lambda item: item[0].encode(), reverse=ties == "docid_desc")
    elif ties not in ("stable", "reverse"):
        raise ValueError(ties)
    docs.sort(key=lambda item: -held(item[1], score_dtype))  # stable: ties keep the order above
    if max_docs is not None:
        docs = docs[:max_docs]
    labels = [judgments.get(doc) for doc, _ in docs]
    if judged_only:
        labels = [label for label in labels if label is not None and label >= 0]
    return Query(labels, list(judgments.values()))


def every_order(
    run: dict[str, float], judgments: dict[str, int], score_dtype: str = "float64"
) -> list[Query]:
    """The query under every order of its tied documents (equally likely), for tie averaging."""
    groups: dict[float, list[str]] = {}
    for doc, score in run.items():
        groups.setdefault(held(score, score_dtype), []).append(doc)
    ordered = [groups[score] for score in sorted(groups, reverse=True)]
    if math.prod(math.factorial(len(group)) for group in ordered) > 100_000:
        raise ValueError("too many orders to enumerate")
    out = []
    for choice in itertools.product(*(itertools.permutations(group) for group in ordered)):
        docs = [doc for group in choice for doc in group]
        out.append(Query([judgments.get(doc) for doc in docs], list(judgments.values())))
    return out


# -- the measures, per query ----------------------------------------------------------------


def is_relevant(label: int | None, level: int) -> bool:
    return label is not None and label >= level


def n_relevant(query: Query, level: int) -> int:
    """R: the judgments at or above the level, retrieved or not (level >= 0: none negative)."""
    return sum(1 for label in query.judgments if label >= level)


def hits(labels: list[int | None], level: int) -> int:
    return sum(1 for label in labels if is_relevant(label, level))


def no_relevant_value(rule: str) -> float:
    if rule == "zero":
        return 0.0
    if rule == "one":
        return 1.0
    if rule == "skip":
        return math.nan
    raise ZeroDivisionError("the query has no relevant judgment")


def precision(labels, k, level, denominator):
    n = len(labels)
    if k is None:
        return hits(labels, level) / n if n else 0.0
    slots = k if denominator == "k" else min(k, n)
    return hits(labels[:k], level) / slots if slots else 0.0


def recall(labels, k, level, r, denominator):
    found = hits(labels if k is None else labels[:k], level)
    return found / (r if k is None or denominator == "R" else min(r, k))


def average_precision(labels, k, level, r, denominator):
    total, found = 0.0, 0
    for i, label in enumerate(labels if k is None else labels[:k], start=1):
        if is_relevant(label, level):
            found += 1
            total += found / i
    return total / (r if k is None or denominator == "R" else min(r, k))


def reciprocal_rank(labels, k, level):
    for i, label in enumerate(labels if k is None else labels[:k], start=1):
        if is_relevant(label, level):
            return 1.0 / i
    return 0.0


def bpref(query, level, r, negative, no_nonrelevant):
    if negative == "skip":
        n_nonrel = sum(1 for label in query.judgments if 0 <= label < level)
    else:  # ranx: every judgment below the level, negative ones too
        n_nonrel = sum(1 for label in query.judgments if label < level)
    total, nonrel_above = 0.0, 0
    for label in query.labels:
        if label is None or (label < 0 and negative == "skip"):
            continue
        if label < level:
            nonrel_above += 1
        elif no_nonrelevant == "nan" and n_nonrel == 0:
            total += math.nan
        elif nonrel_above == 0:
            total += 1.0
        else:  # capped at 1: judgments lacking some of the rows' (N = 0 included)
            bound = min(n_nonrel, r)
            total += 1.0 - (min(min(nonrel_above, r) / bound, 1.0) if bound > 0 else 1.0)
    return total / r


def rbp(query, k, level, p, gain_rule):
    labels = query.labels if k is None else query.labels[:k]
    if gain_rule == "scaled":  # trec_eval: grade / the query's largest when that is above 1
        largest = max([label for label in query.judgments if label >= 0], default=0)
        scale = largest if largest > 1 else 1
    total = 0.0
    for i, label in enumerate(labels):
        if label is None or label < 0:
            gain = 0.0
        elif gain_rule == "scaled":
            gain = label / scale
        elif gain_rule == "raw":
            gain = float(label) if label >= level else 0.0
        else:
            gain = 1.0 if label >= level else 0.0
        total += gain * p**i
    return (1.0 - p) * total


def rbp_residual(labels, p):
    n = len(labels)
    unjudged = [i for i, label in enumerate(labels) if label is None or label < 0]
    if not unjudged:
        return 0.0  # trec_eval sets it only when a retrieved document is unjudged
    return p**n + (1.0 - p) * sum(p**i for i in unjudged)


def err(labels, k, max_grade):
    total, still_looking = 0.0, 1.0
    for i, label in enumerate(labels if k is None else labels[:k], start=1):
        grade = label if label is not None and label > 0 else 0
        if grade > max_grade:
            raise ValueError(f"grade {grade} above {max_grade}")
        stop = (2.0**grade - 1.0) / 2.0**max_grade
        total += still_looking * stop / i
        still_looking *= 1.0 - stop
    return total


def judged(labels, k, which, denominator):
    top = labels if k is None else labels[:k]
    if which == "any":
        count = sum(1 for label in top if label is not None)
    else:
        count = sum(1 for label in top if label is not None and label >= 0)
    slots = len(top) if k is None or denominator == "min(k,n)" else k
    return count / slots if slots else 0.0


def unjudged(labels, k):
    top = labels if k is None else labels[:k]
    count = sum(1 for label in top if label is None or label < 0)
    slots = len(labels) if k is None else k
    return count / slots if slots else 0.0


def interpolated_precision(labels, level, r, recall_level, rounding):
    """Max precision at or below the rank where round(recall_level * R) relevant are found."""
    if rounding == "nearest":
        needed = math.floor(recall_level * r + 0.5)  # C's lround, for a value >= 0
    else:
        needed = int(recall_level * r + 0.9)
    found = hits(labels, level)
    if needed > found or not labels:
        return 0.0
    precisions, so_far = [], 0
    start = 0  # the rank index from which precision counts
    for i, label in enumerate(labels, start=1):
        if is_relevant(label, level):
            so_far += 1
            if so_far == needed:
                start = i - 1
        precisions.append(so_far / i)
    return max(precisions[start:])


def gain_of(label, gain, level, ndcg_level):
    if label is None or label <= 0 or (ndcg_level and label < level):
        return 0.0
    return float(label) if gain == "linear" else 2.0**label - 1.0


def dcg(labels, k, gain, level, ndcg_level):
    top = labels if k is None else labels[:k]
    return sum(
        gain_of(label, gain, level, ndcg_level) / math.log2(i + 1)
        for i, label in enumerate(top, start=1)
    )


def ideal_dcg(judgments, k, gain, level, ndcg_level):
    best = sorted((gain_of(label, gain, level, ndcg_level) for label in judgments), reverse=True)
    return dcg_of_gains(best if k is None else best[:k])


def dcg_of_gains(gains):
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))


def value(
    kind: str,
    query: Query,
    *,
    cutoff: int | None = None,
    level: int = 1,
    param: float | None = None,
    gain: str = "linear",
    **choices,
) -> float:
    """The measure ``kind`` of one query (kinds as fastndcg names them), under ``choices``."""
    c = {**CHOICES, **choices}
    labels, k = query.labels, cutoff
    r = n_relevant(query, level)
    if kind == "NumQ":
        return 1.0
    if kind == "NumRet":
        return float(len(labels) if k is None else min(k, len(labels)))
    if kind == "NumRel":
        return float(r)
    if kind == "NumRelRet":
        return float(hits(labels if k is None else labels[:k], level))
    if kind == "P":
        return precision(labels, k, level, c["precision_denominator"])
    if kind == "RR":
        return reciprocal_rank(labels, k, level)
    if kind == "Success":
        return 1.0 if hits(labels if k is None else labels[:k], level) else 0.0
    if kind == "RBP":
        p = c["rbp_p"] if param is None else param
        return rbp(query, k, level, p, c["rbp_gain"])
    if kind == "RBPResid":
        return rbp_residual(labels, 0.9 if param is None else param)
    if kind == "ERR":
        return err(labels, k, c["err_max_grade"])
    if kind == "Judged":
        return judged(labels, k, c["judged_labels"], c["judged_denominator"])
    if kind == "Unjudged":
        return unjudged(labels, k)
    if kind == "DCG":
        return dcg(labels, k, gain, level, c["ndcg_level"])
    if kind == "nDCG":
        ideal = ideal_dcg(query.judgments, k, gain, level, c["ndcg_level"])
        if ideal == 0:
            return no_relevant_value(c["no_relevant"])
        return dcg(labels, k, gain, level, c["ndcg_level"]) / ideal
    if kind == "GMAP":  # AP, whose mean is geometric (pytrec_eval returns the log per query)
        ap = (
            no_relevant_value(c["no_relevant"])
            if r == 0
            else average_precision(labels, None, level, r, "R")
        )
        return math.log(max(ap, c["gm_floor"])) if c["gm_per_query"] == "log" else ap
    # the measures dividing by R
    if r == 0:
        return no_relevant_value(c["no_relevant"])
    if kind == "R":
        return recall(labels, k, level, r, c["recall_denominator"])
    if kind == "F1":
        p = precision(labels, k, level, c["precision_denominator"])
        rec = recall(labels, k, level, r, c["recall_denominator"])
        return 2 * p * rec / (p + rec) if p + rec else 0.0
    if kind == "AP":
        return average_precision(labels, k, level, r, c["ap_denominator"])
    if kind == "Rprec":
        return hits(labels[:r], level) / r
    if kind == "Bpref":
        return bpref(query, level, r, c["bpref_negative"], c["bpref_no_nonrelevant"])
    if kind == "IPrec":
        return interpolated_precision(labels, level, r, param, c["iprec_rounding"])
    raise ValueError(kind)


def expected_value(kind: str, queries: list[Query], **settings) -> float:
    """The mean of ``kind`` over equally likely orders of one query (tie averaging)."""
    values = [value(kind, query, **settings) for query in queries]
    return sum(values) / len(values)


def summary(kind: str, values: list[float], gm_floor: float = 1e-5) -> float:
    """The summary over queries: a sum for counts, geometric for GMAP, else the mean.

    NaN values (skipped queries) are left out of the mean.
    """
    if kind in ("NumQ", "NumRet", "NumRel", "NumRelRet"):
        return float(sum(values))
    kept = [v for v in values if not math.isnan(v)]
    if not kept:
        return math.nan
    if kind == "GMAP":
        return math.exp(sum(math.log(max(v, gm_floor)) for v in kept) / len(kept))
    return sum(kept) / len(kept)


def round_half_even(x: float, decimals: int) -> float:
    """``x`` printed with ``decimals`` decimals and read back, as a tool printing ``%.Nf`` does."""
    return float(f"{x:.{decimals}f}")


def evaluate(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    kind: str,
    *,
    missing: str = "error",
    ties: str = "docid_desc",
    score_dtype: str = "float64",
    max_docs: int | None = None,
    judged_only: bool = False,
    decimals: int | None = None,
    **settings,
) -> dict[str, float]:
    """{query id: ``kind``'s value} for every query scored (:func:`queries_of`).

    A judged query absent from the run (``missing="zero"``) is an empty ranking, or, with
    ``absent="zero"`` (ir_measures), 0 for every measure, its counts too. ``decimals`` rounds
    values as a tool printing them does.
    """
    absent = settings.get("absent", CHOICES["absent"])
    out = {}
    for qid in queries_of(qrels, run, missing):
        if qid not in run and absent == "zero":
            out[qid] = 0.0
            continue
        query = rank(
            run.get(qid, {}),
            qrels[qid],
            ties=ties,
            score_dtype=score_dtype,
            max_docs=max_docs,
            judged_only=judged_only,
        )
        result = value(kind, query, **settings)
        out[qid] = result if decimals is None else round_half_even(result, decimals)
    return out


def queries_of(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], missing: str
) -> list[str]:
    """The queries scored, in trec_eval's order (query ids in byte order).

    Judged queries only; one absent from the run is left out (``"skip"``), scored as an empty
    ranking (``"zero"``) or an error (``"error"``).
    """
    out = []
    for qid in sorted(qrels, key=str.encode):
        if qid not in run:
            if missing == "error":
                raise KeyError(qid)
            if missing == "skip":
                continue
        out.append(qid)
    return out
