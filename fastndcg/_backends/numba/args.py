"""The inputs of the Numba scoring kernel (``score.py``, ``score_queries``), from a plan.

Grades and scores travel as tuples of read-only views, one slot per dtype the kernels read
(:data:`~fastndcg._contract.GRADE_SLOTS`, :data:`~fastndcg._contract.SCORE_SLOTS`), the unused
slots empty, plus the code of the slot holding the data: one compiled signature then serves
every input dtype without a conversion copy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fastndcg._contract import GRADE_SLOTS, SCORE_SLOTS, Plan, readonly


def _empty_readonly(dtype: np.dtype) -> np.ndarray:
    return readonly(np.empty(0, dtype=dtype))


# one shared empty read-only array per dtype fills the unused slots of every views tuple
_EMPTY_TUPLES = {
    slots: tuple(_empty_readonly(dtype) for dtype in slots) for slots in (GRADE_SLOTS, SCORE_SLOTS)
}


def views(values: np.ndarray, slots: tuple[np.dtype, ...]) -> tuple[tuple[np.ndarray, ...], int]:
    """A tuple with one read-only array per dtype slot (``values`` in its slot), and the slot."""
    code = slots.index(values.dtype)
    empty = _EMPTY_TUPLES[slots]
    return (*empty[:code], readonly(values), *empty[code + 1 :]), code


class KernelArgs(NamedTuple):
    """The inputs of the Numba scoring kernel (``numba/score.py``, ``score_queries``).

    ``offsets`` and the grade, score and judgment views are the data; the other fields depend
    only on the options and on what the plan derived from the data, which lets
    :class:`fastndcg.Scorer` reuse them for lists of the same length and grade range.
    """

    offsets: np.ndarray
    grades: tuple[np.ndarray, ...]
    grade_code: int
    scores: tuple[np.ndarray, ...]
    score_code: int
    ranked: bool
    tie_mode: int
    tie_key: np.ndarray
    seed: np.uint64
    gain_mode: int
    gain_table: np.ndarray
    level_order: np.ndarray
    level_gain: np.ndarray
    discount: np.ndarray
    discount_prefix: np.ndarray
    cutoffs: np.ndarray
    k_max: int
    ideal_mode: int
    ideal_offsets: np.ndarray
    ideal_grades: tuple[np.ndarray, ...]
    ideal_code: int
    max_gain: float

    def packed(self) -> tuple:
        """The fields as the kernel takes them: a plain tuple, in this order.

        Numba's dispatcher types a plain tuple in compiled code and a NamedTuple in Python
        (about 4 us more a call): the name stays on this side of the call.
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
        return tuple.__new__(  # type: ignore[return-value]  # a fast _replace of six fields
            KernelArgs,
            (
                self.offsets,
                grades,
                grade_code,
                scores,
                score_code,
                *self[5:18],
                self.offsets,
                grades,
                grade_code,
                self.max_gain,
            ),
        )

    @classmethod
    def of(cls, plan: Plan) -> KernelArgs:
        """The kernel's inputs for ``plan``."""
        grades, grade_code = views(plan.grades, GRADE_SLOTS)
        ideal_grades, ideal_code = views(plan.ideal_grades, GRADE_SLOTS)
        scores, score_code = views(
            plan.scores if plan.scores is not None else plan.discount[:0], SCORE_SLOTS
        )
        return cls(
            offsets=plan.offsets,
            grades=grades,
            grade_code=grade_code,
            scores=scores,
            score_code=score_code,
            ranked=plan.scores is None,
            tie_mode=plan.tie_mode,
            tie_key=plan.tie_key,
            seed=np.uint64(plan.seed),
            gain_mode=plan.gain_mode,
            gain_table=plan.gain_table,
            level_order=plan.level_order,
            level_gain=plan.level_gain,
            discount=plan.discount,
            discount_prefix=plan.discount_prefix,
            cutoffs=plan.cutoffs,
            k_max=plan.k_max,
            ideal_mode=plan.ideal_mode,
            ideal_offsets=plan.ideal_offsets,
            ideal_grades=ideal_grades,
            ideal_code=ideal_code,
            max_gain=plan.max_gain,
        )
