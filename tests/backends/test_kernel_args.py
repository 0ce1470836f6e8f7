"""The Numba kernel reads its inputs in the order ``KernelArgs`` lays them out (two files)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fastndcg._contract import GRADE_SLOTS, SCORE_SLOTS, Plan, SharedRanking

pytestmark = pytest.mark.numba


def _plan(scores: np.ndarray | None) -> Plan:
    """A plan whose fields all differ: codes and numbers of one type are distinct values."""
    rng = np.random.default_rng(0)
    return Plan(
        offsets=np.array([0, 3, 5]),
        grades=rng.integers(0, 3, 5).astype(np.int8),
        scores=scores,
        tie_mode=3,
        tie_key=np.arange(5),
        seed=11,
        gain_mode=2,
        gain_table=np.array([0.0, 1.0, 3.0]),
        level_order=np.array([2, 1, 0]),
        level_gain=np.array([0.0, 1.0, 3.0]),
        discount=np.linspace(1.0, 0.5, 5),
        discount_prefix=np.linspace(0.0, 3.0, 6),
        cutoffs=np.array([1, -1]),
        k_max=7,
        ideal_mode=1,
        ideal_offsets=np.array([0, 4, 8]),
        ideal_grades=rng.random(8),
        max_gain=5.5,
        top_path=True,
        levels_presumed=True,
    )


@pytest.mark.parametrize("ranked", [False, True])
def test_every_kernel_input_is_the_plan_field_it_is_named_after(ranked):
    """The records the kernel builds (Rules, Ideal) name the plan's fields; the lists and the
    cutoffs, which the kernel unpacks, come in the order of its unpacking."""
    from fastndcg._backends.numba.args import KernelArgs
    from fastndcg._backends.numba.score import Ideal, Rules

    plan = _plan(None if ranked else np.linspace(1.0, 0.0, 5).astype(np.float32))
    packed = KernelArgs.of(plan).packed()
    assert type(packed) is tuple and all(type(bundle) is tuple for bundle in packed)
    lists, rules, cuts, ideal = packed
    offsets, grades, grade_code, scores, score_code, is_ranked = lists[:6]
    ideal_offsets, ideal_grades, ideal_code = lists[6:]
    assert offsets is plan.offsets and ideal_offsets is plan.ideal_offsets
    assert is_ranked is ranked
    for views, code, expected, slots in (
        (grades, grade_code, plan.grades, GRADE_SLOTS),
        (ideal_grades, ideal_code, plan.ideal_grades, GRADE_SLOTS),
        (scores, score_code, plan.scores, SCORE_SLOTS),
    ):
        assert len(views) == len(slots)
        if expected is None:
            assert views[code].size == 0
        else:
            assert views[code].dtype == expected.dtype
            np.testing.assert_array_equal(views[code], expected)
    discount, discount_prefix, cutoffs, k_max, top_path, *shared = cuts
    assert discount is plan.discount and discount_prefix is plan.discount_prefix
    assert cutoffs is plan.cutoffs and k_max == plan.k_max and top_path is plan.top_path
    assert plan.shared is None and all(part.size == 0 for part in shared)  # empty stand-ins
    rows = np.full((plan.n_queries, max(plan.k_max, 1)), -1, np.int32)
    asked = SharedRanking(
        rows, np.zeros(rows.shape, np.int8), np.full((plan.n_queries, 8), -1, np.int16)
    )
    with_rows = KernelArgs.of(dataclasses.replace(plan, shared=asked)).packed()
    parts = (asked.rows, asked.grades, asked.level_counts)
    assert all(a is b for a, b in zip(with_rows[2][5:], parts, strict=True))
    for cls, bundle in ((Rules, rules), (Ideal, ideal)):
        for name, value in cls(*bundle)._asdict().items():
            # Ideal.mode is the plan's ideal_mode; the other names are the plan's own
            expected = getattr(plan, name if hasattr(plan, name) else f"ideal_{name}")
            if isinstance(expected, np.ndarray):
                assert value is expected, (cls.__name__, name)
            else:
                assert value == expected, (cls.__name__, name)


def test_a_list_takes_the_place_of_the_data_and_nothing_else():
    from fastndcg._backends.numba.args import KernelArgs, views

    args = KernelArgs.of(_plan(np.zeros(5)))
    grades, grade_code = views(np.arange(4.0), GRADE_SLOTS)
    scores, score_code = views(np.ones(4, np.float32), SCORE_SLOTS)
    one = args.for_list(grades, grade_code, scores, score_code)
    assert one[1:] == args[1:]
    offsets = args.lists[0]
    own = (offsets, grades, grade_code)  # its grades are its judgments
    assert one.lists == (*own, scores, score_code, False, *own)  # (identical objects)
