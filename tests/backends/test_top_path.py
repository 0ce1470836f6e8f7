"""The Numba kernel's short-cutoff path: when the plan takes it, what it hands over, its network.

Its numbers are checked against the reference by the property tests (``test_short_cutoffs`` in
``tests/api/test_properties.py``); here, the parts those cannot see.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

import fastndcg
from fastndcg._backends import get_backend
from fastndcg._core.definition import Definition
from fastndcg._core.layout import build_layout

pytestmark = pytest.mark.numba


def _plan(grades, scores, offsets, ideal_grades=None, ideal_offsets=None, **options):
    backend = get_backend("numba")
    layout = build_layout(grades, scores, offsets=offsets, backend=backend)
    definition = Definition.create(backend="numba", **options)
    return definition.plan(layout, ideal_grades=ideal_grades, ideal_offsets=ideal_offsets)


def test_the_sorting_network_sorts_every_input():
    """A comparator network sorts every input if it sorts every input of zeros and ones."""
    from fastndcg._backends.numba.score import _sort16

    for bits in range(1 << 16):
        values = np.array([(bits >> i) & 1 for i in range(16)], dtype=np.float64)
        expected = -np.sort(-values)
        _sort16(values)
        assert np.array_equal(values, expected), bits
    rng = np.random.default_rng(0)
    for _ in range(200):
        values = rng.choice([-np.inf, -2.5, -1.0, -0.0, 0.0, 1.0, 7.0, np.inf], 16)
        expected = -np.sort(-values)
        _sort16(values)
        assert np.array_equal(values, expected)


GRADES = np.array([0, 2, 1, 0, 4, 3, 0, 1])
SCORES = np.linspace(1.0, 0.3, 8)


@pytest.mark.parametrize(
    ("grades", "scores", "options", "taken"),
    [
        (GRADES, SCORES, dict(k=10), True),
        (GRADES, SCORES, dict(k=[1, 5, 28], ideal="global"), True),
        (GRADES, SCORES, dict(k=3, ideal="max", gain="linear"), True),
        (GRADES * 0.5, SCORES, dict(k=3, ideal="local", gain="linear"), True),
        (GRADES, SCORES, dict(k=3, gain=lambda g: g * 2.0, ideal="local"), True),
        (GRADES * 0.5, SCORES, dict(k=5, gain="linear"), True),  # the best grades bounded
        (GRADES, SCORES, dict(k=3, gain=lambda g: g * 2.0), True),  # gains from the host
        (GRADES * 100, SCORES, dict(k=5, gain="linear"), False),  # integers past the levels
        (GRADES * 100.0, SCORES, dict(k=5, gain=np.linspace(9, 0, 401)), False),  # falling gains
        (GRADES, SCORES, dict(k=29), False),
        (GRADES, SCORES, dict(k=[5, None]), False),
        (GRADES, None, dict(k=5), False),  # ranked lists: nothing to select
    ],
)
def test_the_plan_takes_the_path_for_short_cutoffs_with_scores(grades, scores, options, taken):
    if options.get("ideal") == "global":
        options = dict(options, ideal_grades=GRADES, ideal_offsets=np.array([0, 8]))
    assert _plan(grades, scores, np.array([0, 8]), **options).top_path is taken


def _served(grades, scores, offsets, **options):
    """Which queries the path scores itself, and its DCG and IDCG against the general path's."""
    from fastndcg._backends.numba import score
    from fastndcg._backends.numba.args import KernelArgs

    plan = _plan(grades, scores, offsets, **options)
    assert plan.top_path
    args = KernelArgs.of(plan).packed()
    n_queries = offsets.size - 1
    dcg = np.full((plan.cutoffs.size, n_queries), -1.0)
    idcg = dcg.copy()
    pending = np.empty(n_queries, dtype=np.int64)
    longest = int(np.diff(offsets).max())
    if options.get("ideal_offsets") is not None:  # (the best grades of judgment lists too)
        longest = max(longest, int(np.diff(options["ideal_offsets"]).max()))
    scratch = score._top_scratch(longest, plan.k_max, plan.level_order.size)
    n_pending = score._top_queries(0, n_queries, args, dcg, idcg, pending, scratch)
    served = np.setdiff1d(np.arange(n_queries), pending[:n_pending])
    general = KernelArgs.of(dataclasses.replace(plan, top_path=False)).packed()
    dcg_general, idcg_general = np.zeros_like(dcg), np.zeros_like(idcg)
    score.score_queries(0, n_queries, general, dcg_general, idcg_general)
    for mine, theirs in ((dcg, dcg_general), (idcg, idcg_general)):
        assert np.array_equal(mine[:, served].view(np.uint64), theirs[:, served].view(np.uint64))
    return set(served.tolist())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_queries_the_path_hands_to_the_general_path(dtype):
    """NaN and infinite scores (among the best rows or far below them, in any lane), ties among
    the best rows (the tie rule decides there), more than 64 rows reaching the bound, and
    empty lists go to the general path; a tie below the best rows does not."""
    below = list(np.linspace(9.0, 1.0, 37))  # the bad score far below the best two
    lists = {
        "plain": [3.0, 1.0, 2.0, 0.5],
        "nan": [3.0, np.nan, 2.0, 0.5],
        "inf": [3.0, np.inf, 2.0, 0.5],
        "nan below": [*below[:30], np.nan, *below[30:]],
        "-inf below": [*below[:35], -np.inf, *below[35:]],
        "-inf last": [*below, -np.inf],
        "tie in the top": [3.0, 1.0, 3.0, 0.5],
        "0.0 and -0.0 in the top": [0.0, -1.0, -0.0, -2.0],
        "tie below the top": [3.0, 1.0, 2.0, 1.0],
        "empty": [],
        "many equal maxima": [1.0] * 70,
    }
    scores = np.concatenate([np.array(v, dtype=dtype) for v in lists.values()])
    offsets = np.concatenate(([0], np.cumsum([len(v) for v in lists.values()])))
    grades = np.arange(scores.size) % 5
    served = {list(lists)[q] for q in _served(grades, scores, offsets, k=2, ties="stable")}
    assert served == {"plain", "tie below the top"}


@pytest.mark.parametrize(
    ("ideal", "tie", "k"),
    list(itertools.product(["recall", "local", "max", "global"], ["stable", "average"], [1, 7])),
)
def test_the_path_serves_distinct_scores_under_every_ideal(ideal, tie, k):
    rng = np.random.default_rng(k)
    offsets = np.array([0, 1, 9, 100, 117], dtype=np.int64)
    grades = rng.integers(0, 12, offsets[-1]).astype(np.int8)  # beyond 8 levels: a histogram
    scores = rng.standard_normal(offsets[-1]).astype(np.float32)
    options = dict(k=[k, 3], ideal=ideal, ties=tie)
    if ideal == "global":
        options.update(ideal_grades=grades[::-1].copy(), ideal_offsets=offsets)
    assert _served(grades, scores, offsets, **options) == {0, 1, 2, 3}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_lane_bound_keeps_the_best_rows_wherever_they_stand(dtype):
    """Lists of 1 to 80 rows whose best rows stand where the lanes' last block overlaps the
    blocks before it (and, in a second set, in the rows a list ends with): every list is served
    and scored as the general path scores it. A row counted in two lanes would raise the bound
    above the count-th best score, and the path would drop a best row."""
    lists = []
    for n in range(1, 81):
        for top_at in (max(n - 24, 0), max(n - 10, 0)):
            scores = np.arange(n, dtype=np.float64)
            best = np.arange(top_at, n)[:12]
            scores[best] += 1_000.0  # the best rows, distinct
            lists.append(scores)
    scores = np.concatenate(lists).astype(dtype)
    offsets = np.concatenate(([0], np.cumsum([v.size for v in lists])))
    grades = np.arange(scores.size) % 5
    for k in (1, 10, 15, 16, 28):  # 16 lanes, then 32
        assert _served(grades, scores, offsets, k=k, ties="stable") == set(range(len(lists)))
        fast = fastndcg.ndcg(grades, scores, offsets=offsets, k=k, backend="numba").per_query
        plain = fastndcg.ndcg(grades, scores, offsets=offsets, k=k, backend="numpy").per_query
        np.testing.assert_array_equal(fast, plain)


@pytest.mark.parametrize(
    "options",
    [
        dict(gain="linear"),  # fractional grades
        dict(gain="exp2", ideal="global"),  # ... and judgment lists of their own
        dict(gain=lambda g: 3.0 * g + 0.25),  # gains computed by the host
        dict(gain={0.0: 0.0, 0.5: 1.0, 1.5: 2.5, 2.0: 7.0, 3.5: 0.125}, ties="average"),
    ],
    ids=["linear", "exp2-global", "callable", "dict-average"],
)
def test_the_path_selects_the_ideal_of_grades_without_levels(options):
    """Fractional grades and computed gains: the ideal from the best grades, bounded and ranked
    as the scores are, lists of 1 to 300 rows, float64 and float32 grades, empty judgment lists:
    the general path's bits."""
    rng = np.random.default_rng(7)
    lengths = np.concatenate((np.arange(1, 40), rng.integers(40, 300, 60)))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    grades = rng.choice([0.0, 0.5, 1.5, 2.0, 3.5], offsets[-1], p=[0.5, 0.2, 0.15, 0.1, 0.05])
    scores = rng.standard_normal(offsets[-1])
    if options.get("ideal") == "global":
        ideal_lengths = rng.integers(0, 80, lengths.size)
        ideal_offsets = np.concatenate(([0], np.cumsum(ideal_lengths)))
        ideal_grades = rng.choice([0.0, 0.5, 3.5], ideal_offsets[-1])
        options = dict(options, ideal_grades=ideal_grades, ideal_offsets=ideal_offsets)
    for layout in (grades, grades.astype(np.float32)):
        served = _served(layout, scores, offsets, k=[3, 10], **options)
        assert served == set(range(lengths.size))


def test_judgment_lists_longer_than_every_run():
    """Fractional grades, ``ideal="global"``: judgment lists of 20,000 rows beside runs of 3.
    The path compacts the best grades of the judgment lists into the scratch it sized for the
    runs' rows (it wrote past it, and the process crashed); their IDCG is the general path's
    (a cutoff of 40 takes it, and the value at 10 does not depend on the other cutoffs)."""
    rng = np.random.default_rng(11)
    offsets = np.arange(41) * 3
    ideal_offsets = np.arange(41) * 20_000
    grades = rng.choice([0.0, 0.5, 2.5], offsets[-1])
    scores = rng.standard_normal(offsets[-1])
    ideal_grades = rng.random(ideal_offsets[-1]) * 3.0
    options = dict(gain="exp2", ideal="global", ideal_grades=ideal_grades)
    options.update(ideal_offsets=ideal_offsets)
    assert _served(grades, scores, offsets, k=10, **options) == set(range(40))
    fast = fastndcg.ndcg(grades, scores, offsets=offsets, k=10, backend="numba", **options)
    plain = fastndcg.ndcg(grades, scores, offsets=offsets, k=[10, 40], backend="numba", **options)
    np.testing.assert_array_equal(fast.idcg[:, 0], plain.idcg[:, 0])


def test_grades_the_bound_cannot_select_go_to_the_general_path():
    """More than 64 rows above the grades' lane bound (the best grades in 5 of 16 lanes): the
    path hands the lists to the general path, which selects their ideal."""
    rows = np.arange(300)
    lanes = np.where(rows % 16 < 5, 3.5, 1.0)  # 95 rows of 3.5: the 10th lane maximum is 1.0
    offsets = np.array([0, 300, 600])
    grades = np.concatenate((lanes, lanes[::-1] * 2.0))
    scores = np.random.default_rng(2).standard_normal(600)
    assert _served(grades, scores, offsets, k=10, gain="linear") == set()
    fast = fastndcg.ndcg(grades, scores, offsets=offsets, k=10, gain="linear", backend="numba")
    plain = fastndcg.ndcg(grades, scores, offsets=offsets, k=10, gain="linear", backend="numpy")
    np.testing.assert_array_equal(fast.per_query, plain.per_query)


def test_the_path_counts_the_levels_of_long_lists():
    """Lists of 1,500 and 70,000 rows: the grade levels counted in blocks of 16-bit counters."""
    rng = np.random.default_rng(5)
    offsets = np.array([0, 1_500, 71_500], dtype=np.int64)
    grades = rng.integers(0, 5, offsets[-1])
    scores = rng.standard_normal(offsets[-1])
    for layout in (grades, grades.astype(np.uint8)):
        assert _served(layout, scores, offsets, k=[10, 20], ties="stable") == {0, 1}


def test_a_one_list_scorer_takes_the_path():
    scorer = fastndcg.Scorer(k=[1, 3])
    dcg = scorer(GRADES, SCORES)
    expected = fastndcg.ndcg(GRADES, SCORES, k=[1, 3], backend="numpy").per_query[0]
    np.testing.assert_allclose(dcg, expected, rtol=1e-15)
