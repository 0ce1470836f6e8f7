"""A deliberately plain, slow, pure-Python NDCG: the oracle every backend is tested against.

Written straight from the definitions in the documentation (docs/user-guide/definitions.md),
with no shared code from the package and no cleverness: Python floats, Python sorts, one query
at a time. Tie averaging is computed from each item's *expected discount* (the mean discount
over the ranks its tie group occupies), which is a different route from the package's
per-position mean gain; both equal the expected DCG over all orders of the tied items
(``test_reference.py`` checks that by enumeration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MASK64 = (1 << 64) - 1


def splitmix64(seed: int, row: int) -> int:
    """The random tie key of a row: SplitMix64 of seed + row * golden ratio, in 64-bit ints."""
    z = (seed + row * 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def gain_of(grade: float, gain: Any) -> float:
    if gain == "exp2":
        return 2.0**grade - 1.0
    if gain == "linear":
        return float(grade)
    if isinstance(gain, dict):
        return float(gain[grade])
    if callable(gain):
        return float(np.asarray(gain(np.array([grade], dtype=float)))[0])
    return float(gain[int(grade)])


def discount_of(rank: int, discount: Any) -> float:
    """Discount of 1-based ``rank``."""
    if discount == "log2":
        return 1.0 / math.log2(rank + 1)
    if discount == "jarvelin":
        return 1.0 if rank == 1 else 1.0 / math.log2(rank)
    if discount == "reciprocal":
        return 1.0 / rank
    if callable(discount):
        return float(np.asarray(discount(np.array([rank])))[0])
    return float(discount[rank - 1])


@dataclass
class Item:
    row: int  # position in the flat (grouped) layout
    grade: float
    score: float


@dataclass
class RefResult:
    dcg: list[list[float]] = field(default_factory=list)
    idcg: list[list[float]] = field(default_factory=list)
    ndcg: list[list[float]] = field(default_factory=list)
    mean: list[float] = field(default_factory=list)
    n_skipped: list[int] = field(default_factory=list)


def rank_items(items: list[Item], ties: str, seed: int, gain: Any, tie_key=None) -> list[Item]:
    """Items in rank order under a deterministic tie rule."""
    if ties == "ranked":
        return list(items)

    def key(item: Item):
        if ties in ("stable", "average"):
            second = 0
        elif ties == "pessimistic":
            second = gain_of(item.grade, gain)
        elif ties == "optimistic":
            second = -gain_of(item.grade, gain)
        elif ties == "random":
            second = splitmix64(seed, item.row)
        elif ties == "key":
            second = tie_key[item.row]
        else:
            raise ValueError(ties)
        return (-item.score, second, item.row)

    return sorted(items, key=key)


def tie_groups(ranked: list[Item]) -> list[tuple[int, int]]:
    """(first, last) 1-based ranks of each run of equal scores."""
    groups = []
    start = 0
    for r in range(1, len(ranked) + 1):
        if r == len(ranked) or ranked[r].score != ranked[start].score:
            groups.append((start + 1, r))
            start = r
    return groups


def dcg_at(ranked: list[Item], k: int | None, ties: str, gain: Any, discount: Any) -> float:
    n = len(ranked)
    cut = n if k is None else min(k, n)
    if ties != "average":
        return sum(
            gain_of(ranked[r - 1].grade, gain) * discount_of(r, discount) for r in range(1, cut + 1)
        )
    total = 0.0
    for first, last in tie_groups(ranked):
        ranks = [r for r in range(first, last + 1)]
        expected_discount = sum(discount_of(r, discount) for r in ranks if r <= cut) / len(ranks)
        for r in ranks:
            total += gain_of(ranked[r - 1].grade, gain) * expected_discount
    return total


def ideal_dcg(gains: list[float], slots: int, discount: Any) -> float:
    best = sorted(gains, reverse=True)[:slots]
    return sum(g * discount_of(r, discount) for r, g in enumerate(best, start=1))


def local_gains(ranked: list[Item], k: int | None, ties: str, gain: Any) -> list[float]:
    """Gains of the returned top k.

    With tie averaging, the slots a tie group straddling k fills carry the group's mean gain.
    """
    n = len(ranked)
    cut = n if k is None else min(k, n)
    if ties != "average":
        return [gain_of(item.grade, gain) for item in ranked[:cut]]
    out = []
    for first, last in tie_groups(ranked):
        if first > cut:
            break
        members = [gain_of(ranked[r - 1].grade, gain) for r in range(first, last + 1)]
        if last <= cut:
            out.extend(members)
        else:
            out.extend([sum(members) / len(members)] * (cut - first + 1))
    return out


def reference_ndcg(
    queries: list[list[Item]],
    *,
    k=(None,),
    gain: Any = "exp2",
    discount: Any = "log2",
    ideal: str = "recall",
    ideal_lists: list[list[float]] | None = None,
    max_grade: float | None = None,
    ties: str = "average",
    seed: int = 0,
    tie_key=None,
    zero_idcg: str = "skip",
    aggregate: str = "mean",
    weights: list[float] | None = None,
) -> RefResult:
    """NDCG of every query at every cutoff in ``k``, plus the aggregate (see the definitions page)."""
    if ideal == "max" and max_grade is None:
        all_grades = [item.grade for items in queries for item in items]
        max_grade = max(all_grades) if all_grades else 0.0
    out = RefResult()
    for q, items in enumerate(queries):
        ranked = rank_items(items, ties, seed, gain, tie_key)
        dcgs, idcgs = [], []
        for cut in k:
            dcgs.append(dcg_at(ranked, cut, ties, gain, discount))
            n = len(items)
            if ideal == "recall":
                value = ideal_dcg(
                    [gain_of(i.grade, gain) for i in items], n if cut is None else cut, discount
                )
            elif ideal == "global":
                judged = [gain_of(g, gain) for g in ideal_lists[q]]
                value = ideal_dcg(judged, len(judged) if cut is None else cut, discount)
            elif ideal == "max":
                slots = n if cut is None else cut
                value = gain_of(max_grade, gain) * sum(
                    discount_of(r, discount) for r in range(1, slots + 1)
                )
            elif ideal == "local":
                value = ideal_dcg(local_gains(ranked, cut, ties, gain), n, discount)
            else:
                raise ValueError(ideal)
            idcgs.append(value)
        out.dcg.append(dcgs)
        out.idcg.append(idcgs)
    n_cut = len(k)
    for q in range(len(queries)):
        row = []
        for j in range(n_cut):
            d, i = out.dcg[q][j], out.idcg[q][j]
            if i > 0:
                row.append(d / i)
            elif zero_idcg == "zero":
                row.append(0.0)
            elif zero_idcg == "one":
                row.append(1.0)
            elif zero_idcg == "error":
                raise ValueError("no relevant item")
            else:
                row.append(math.nan)
        out.ndcg.append(row)
    w = weights if weights is not None else [1.0] * len(queries)
    for j in range(n_cut):
        counted = [q for q in range(len(queries)) if not math.isnan(out.ndcg[q][j])]
        out.n_skipped.append(len(queries) - len(counted))
        if aggregate == "mean":
            num = sum(w[q] * out.ndcg[q][j] for q in counted)
            den = sum(w[q] for q in counted)
        else:
            num = sum(w[q] * out.dcg[q][j] for q in counted)
            den = sum(w[q] * out.idcg[q][j] for q in counted)
        out.mean.append(num / den if den > 0 else math.nan)
    return out


def queries_from_csr(offsets, grades, scores=None) -> list[list[Item]]:
    """Split flat arrays into the reference's per-query item lists."""
    out = []
    for q in range(len(offsets) - 1):
        items = []
        for row in range(int(offsets[q]), int(offsets[q + 1])):
            score = 0.0 if scores is None else float(scores[row])
            items.append(Item(row, float(grades[row]), score))
        out.append(items)
    return out
