"""The seeds' worked examples, with every expected number recomputed here from the formulas.

Where a seed prints a wrong figure the test says so and checks the recomputed value.
"""

from __future__ import annotations

from math import log2

import numpy as np
import pytest

import fastndcg


def dcg(grades, gain, discount):
    return sum(gain(g) * discount(r) for r, g in enumerate(grades, start=1))


def exp2(g):
    return 2.0**g - 1.0


def linear(g):
    return g


def log2_discount(r):
    return 1.0 / log2(r + 1)


def jarvelin(r):
    return 1.0 if r == 1 else 1.0 / log2(r)


def reciprocal(r):
    return 1.0 / r


# Seed 000: the list G = [3, 1, 2, 0, 2] in ranked order, exp2 gain, log discount, NDCG@5.
# (The seed's code divides by ln(i + 2); the base cancels in the ratio.)
SEED0 = [3, 1, 2, 0, 2]


@pytest.mark.parametrize(
    ("ranked", "printed"),
    [
        (SEED0, 0.950849602851865),
        (sorted(SEED0), 0.5664478625498256),  # "Worst NDCG@5"
        (sorted(SEED0, reverse=True), 1.0),  # "Best NDCG@5"
    ],
)
def test_seed000_ranked_list(backend, ranked, printed):
    expected = dcg(ranked, exp2, log2_discount) / dcg(
        sorted(ranked, reverse=True), exp2, log2_discount
    )
    assert expected == pytest.approx(printed, abs=1e-15)  # the seed's three figures are right
    result = fastndcg.ndcg(ranked, k=5, backend=backend)  # scores=None: already ranked
    assert float(result) == pytest.approx(expected, rel=1e-14)


def test_seed000_dataset_formulas(backend):
    """Both dataset aggregates of seed 000: mean of per-query NDCG and sum DCG / sum IDCG."""
    lists = [SEED0, [0, 0, 1], [2, 2, 0, 1]]
    dcgs = [dcg(q, exp2, log2_discount) for q in lists]
    idcgs = [dcg(sorted(q, reverse=True), exp2, log2_discount) for q in lists]
    grades = np.concatenate(lists).astype(float)
    offsets = np.cumsum([0] + [len(q) for q in lists])
    mean = fastndcg.ndcg(grades, offsets=offsets, backend=backend)
    ratio = fastndcg.ndcg(grades, offsets=offsets, aggregate="ratio", backend=backend)
    assert float(mean) == pytest.approx(np.mean(np.array(dcgs) / np.array(idcgs)), rel=1e-14)
    assert float(ratio) == pytest.approx(sum(dcgs) / sum(idcgs), rel=1e-14)


# Seed 001: "zoolander", grades 0..1, discount 1/rank, linear gain, NDCG@2 under four ideals.
JUDGED = {"movie": 1.0, "zoolander 2": 0.9, "photo": 0.7, "helicopter": 0.1, "doggy": 0.1}
RETRIEVED = ["helicopter", "movie", "photo"]  # in ranked order


def test_seed001_first_dcg(backend):
    ranked = [JUDGED["movie"], JUDGED["doggy"], JUDGED["zoolander 2"]]
    expected = 1.0 / 1 + 0.1 / 2 + 0.9 / 3  # = 1.35, as printed
    assert expected == pytest.approx(1.35, abs=1e-15)
    result = fastndcg.ndcg(
        ranked, gain="linear", discount="reciprocal", ideal="max", backend=backend
    )
    assert result.dcg[0, 0] == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    ("ideal", "ideal_gains", "printed"),
    [
        ("local", [1.0, 0.1], 0.571),  # top 2 re-sorted: 1.0/1 + 0.1/2 = 1.05
        ("recall", [1.0, 0.7], 0.4444),  # all 3 retrieved: 1.0/1 + 0.7/2 = 1.35
        ("global", [1.0, 0.9], 0.414),  # judgment list: 1.0/1 + 0.9/2 = 1.45
        ("max", [1.0, 1.0], 0.4),  # max grade in both slots: 1.5
    ],
)
def test_seed001_four_ideals(backend, ideal, ideal_gains, printed):
    grades = [JUDGED[d] for d in RETRIEVED]
    dcg_at_2 = 0.1 / 1 + 1.0 / 2  # = 0.6
    expected = dcg_at_2 / (ideal_gains[0] / 1 + ideal_gains[1] / 2)
    assert expected == pytest.approx(printed, abs=5e-4)  # the seed rounds to 3-4 decimals
    extra = {}
    if ideal == "global":
        extra = dict(ideal_grades=list(JUDGED.values()), ideal_offsets=[0, len(JUDGED)])
    result = fastndcg.ndcg(
        grades, k=2, gain="linear", discount="reciprocal", ideal=ideal, backend=backend, **extra
    )
    assert result.dcg[0, 0] == pytest.approx(dcg_at_2, rel=1e-15)
    assert float(result) == pytest.approx(expected, rel=1e-14)


# Seed 004: two queries, "regular" DCG (Jarvelin: rank 1 undiscounted, then / log2 r, linear
# gain) and the "alternative" (exp2 gain, 1/log2(r + 1)).
Q1 = [2, 3, 1, 2, 1, 0, 1]
Q2 = [3, 2, 2, 1, 2, 1, 0, 0, 1]


@pytest.mark.parametrize(
    ("form", "gain", "discount", "gain_fn", "discount_fn"),
    [
        ("regular", "linear", "jarvelin", linear, jarvelin),
        ("alternative", "exp2", "log2", exp2, log2_discount),
    ],
)
def test_seed004_two_queries(backend, form, gain, discount, gain_fn, discount_fn):
    grades = np.array(Q1 + Q2, dtype=float)
    qid = ["q1"] * len(Q1) + ["q2"] * len(Q2)
    result = fastndcg.ndcg(grades, qid=qid, gain=gain, discount=discount, backend=backend)
    assert list(result.query_ids) == ["q1", "q2"]
    for q, query in enumerate((Q1, Q2)):
        expected_dcg = dcg(query, gain_fn, discount_fn)
        expected_idcg = dcg(sorted(query, reverse=True), gain_fn, discount_fn)
        assert result.dcg[q, 0] == pytest.approx(expected_dcg, rel=1e-14)
        assert result.idcg[q, 0] == pytest.approx(expected_idcg, rel=1e-14)
        assert result.per_query[q, 0] == pytest.approx(expected_dcg / expected_idcg, rel=1e-14)


def test_seed004_printed_figures():
    """Which of seed 004's printed figures hold (2 decimals) and which are arithmetic slips."""
    reg = {
        q: (dcg(g, linear, jarvelin), dcg(sorted(g, reverse=True), linear, jarvelin))
        for q, g in (("1", Q1), ("2", Q2))
    }
    alt = {
        q: (dcg(g, exp2, log2_discount), dcg(sorted(g, reverse=True), exp2, log2_discount))
        for q, g in (("1", Q1), ("2", Q2))
    }
    assert (sum(Q1), sum(Q2)) == (10, 12)  # CG, as printed
    assert (
        round(reg["1"][0], 2) == 7.42 and round(reg["2"][0], 2) == 8.33
    )  # printed 8.32: rounding slip
    assert (
        round(reg["1"][1], 2) == 7.58 and round(reg["2"][1], 2) == 8.44
    )  # printed 8.43: rounding slip
    # printed NDCG_1 = 0.989 is wrong: 7.4178 / 7.5794 = 0.9787
    assert round(reg["1"][0] / reg["1"][1], 3) == 0.979
    assert round(reg["2"][0] / reg["2"][1], 3) == 0.987  # as printed
    assert round(alt["1"][0], 2) == 9.93 and round(alt["1"][1], 2) == 11.57  # as printed
    assert round(alt["1"][0] / alt["1"][1], 3) == 0.858  # as printed
    # printed DCG_2 = 13.11 is wrong (its last term 2^1/log2 10 also drops the -1): 12.64
    assert round(alt["2"][0], 2) == 12.64
    # printed IDCG_2 = 14.96 is wrong: 12.76; printed NDCG_2 = 8.43/14.96 = 0.563 mixes in the
    # regular IDCG; the alternative NDCG_2 is 0.991
    assert round(alt["2"][1], 2) == 12.76
    assert round(alt["2"][0] / alt["2"][1], 3) == 0.991
