"""The inputs of the Numba scoring kernel (``score.py``, ``score_queries``), from a plan.

Grades and scores travel as tuples of read-only views, one slot per dtype the kernels read
(:data:`~fastndcg._contract.GRADE_SLOTS`, :data:`~fastndcg._contract.SCORE_SLOTS`), the unused
slots empty, plus the code of the slot holding the data: one compiled signature then serves
every input dtype without a conversion copy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fastndcg._contract import GRADE_SLOTS, SCORE_SLOTS, Plan, SharedRanking, readonly


def _empty_readonly(dtype: np.dtype) -> np.ndarray:
    return readonly(np.empty(0, dtype=dtype))


# one shared empty read-only array per dtype fills the unused slots of every views tuple
_EMPTY_TUPLES = {
    slots: tuple(_empty_readonly(dtype) for dtype in slots) for slots in (GRADE_SLOTS, SCORE_SLOTS)
}


# nothing shared with the measures asked for: stand-ins, never written
NO_ROWS = np.full((0, 0), -1, dtype=np.int32)
NO_SHARED = SharedRanking(NO_ROWS, np.zeros((0, 0), np.int8), np.zeros((0, 0), np.int16))


def views(values: np.ndarray, slots: tuple[np.dtype, ...]) -> tuple[tuple[np.ndarray, ...], int]:
    """A tuple with one read-only array per dtype slot (``values`` in its slot), and the slot."""
    code = slots.index(values.dtype)
    empty = _EMPTY_TUPLES[slots]
    return (*empty[:code], readonly(values), *empty[code + 1 :]), code


class KernelArgs(NamedTuple):
    """The inputs of the Numba scoring kernel (``numba/score.py``, ``score_queries``).

    Four plain tuples, in the order the kernel names their fields: ``lists`` (offsets, grade
    views and their code, score views and their code, ranked, and the judgment lists' offsets,
    views and code), ``rules`` (``score.Rules``: tie mode, tie key, seed, gain mode, gain table),
    ``cuts`` (discount, its prefix sums, cutoffs, k_max, whether the short-cutoff path serves
    them, and where it writes each query's best rows, their grades and its level counts:
    ``Plan.shared``) and ``ideal``
    (``score.Ideal``: ideal mode, level order, level gains, max gain, whether the levels are
    presumed).
    ``tests/backends/test_kernel_args.py`` checks the order. Only ``lists`` holds the data,
    which lets :class:`fastndcg.Scorer` reuse the others for lists of the same length and grade
    range.
    """

    lists: tuple
    rules: tuple
    cuts: tuple
    ideal: tuple

    def packed(self) -> tuple:
        """The bundles as the kernel takes them: a plain tuple of the four plain tuples.

        Numba's dispatcher types plain tuples in compiled code and a NamedTuple in Python
        (about 4 us more a call): the names stay on the kernel's side of the call.
        """
        return tuple(self)

    def for_list(
        self,
        grades: tuple[np.ndarray, ...],
        grade_code: int,
        scores: tuple[np.ndarray, ...],
        score_code: int,
    ) -> KernelArgs:
        """These inputs with one list's grades and scores (views tuples) in place of the data.

        For a plan of one list whose ideal is its own grades (any ideal but ``"global"``).
        """
        offsets = self.lists[0]
        query = (offsets, grades, grade_code, scores, score_code, False)
        lists = (*query, offsets, grades, grade_code)  # its own grades are its judgments
        return tuple.__new__(KernelArgs, (lists, *self[1:]))  # type: ignore[return-value]

    @classmethod
    def of(cls, plan: Plan) -> KernelArgs:
        """The kernel's inputs for ``plan``."""
        grades, grade_code = views(plan.grades, GRADE_SLOTS)
        ideal_grades, ideal_code = views(plan.ideal_grades, GRADE_SLOTS)
        ranked = plan.scores is None
        scores, score_code = views(plan.discount[:0] if ranked else plan.scores, SCORE_SLOTS)
        queries = (plan.offsets, grades, grade_code, scores, score_code, ranked)
        judgments = (plan.ideal_offsets, ideal_grades, ideal_code)
        seed = np.uint64(plan.seed)
        shared = plan.shared or NO_SHARED
        return cls(
            lists=(*queries, *judgments),
            rules=(plan.tie_mode, plan.tie_key, seed, plan.gain_mode, plan.gain_table),
            cuts=(
                plan.discount,
                plan.discount_prefix,
                plan.cutoffs,
                plan.k_max,
                plan.top_path,
                shared.rows,
                shared.grades,
                shared.level_counts,
            ),
            ideal=(
                plan.ideal_mode,
                plan.level_order,
                plan.level_gain,
                plan.max_gain,
                plan.levels_presumed,
            ),
        )
