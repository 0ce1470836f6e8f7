"""The contract between the Python side and every backend: arrays and integer codes, named.

Nothing here validates: the core has checked every value before it builds these structures.

- :class:`ColumnStats`: what one scan of a column found (validation and planning read it).
- :class:`Plan`: everything a backend needs to score a layout.
- :class:`KernelArgs`: the plan as the Numba scoring kernel takes it. Grades and scores travel
  as tuples of read-only views, one slot per dtype the kernels read (:data:`GRADE_SLOTS`,
  :data:`SCORE_SLOTS`), the unused slots empty, plus the code of the slot holding the data:
  one compiled signature then serves every input dtype without a conversion copy.
- :class:`DocumentIds`: a TREC run's or its judgments' document ids, in the form a backend's
  join compares them.
- :func:`on_cuda_device`: whether an input lives in CUDA device memory (a GPU backend's input).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

# dtypes the kernels read without a copy, in the slot order of the kernels' view tuples
GRADE_SLOTS = tuple(
    np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.int16, np.int8, np.uint8)
)
SCORE_SLOTS = GRADE_SLOTS[:2]


@dataclass(frozen=True)
class ColumnStats:
    """What one pass over a column found.

    ``first_nonfinite``/``first_nonintegral`` are row numbers, -1 when there is none (or, for
    ``first_nonintegral``, when the scan was told not to look). ``low`` and ``high`` (the
    extreme values; inf/-inf for an empty column) are only meaningful when every value is
    finite.
    """

    low: float
    high: float
    first_nonfinite: int
    first_nonintegral: int

    @property
    def integral(self) -> bool:
        """True when every value is a whole number."""
        return self.first_nonintegral < 0


def readonly(values: np.ndarray) -> np.ndarray:
    """``values``, or a read-only view of it.

    Numba compiles a kernel once per array type, and writeability is part of the type: passing
    every column read-only (as Arrow hands them over) halves the signatures to compile.
    """
    if not isinstance(values, np.ndarray):  # a device array: the CUDA kernels take it as it is
        return values
    if values.flags.writeable:
        values = values.view()
        values.flags.writeable = False
    return values


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


@dataclass(frozen=True)
class Plan:
    """Everything a backend needs to score a layout, as arrays and integer codes."""

    offsets: np.ndarray
    grades: np.ndarray  # grades (any kernel dtype), or float64 gains when precomputed
    scores: np.ndarray | None  # float64 or float32; None: rows are in ranked order
    tie_mode: int
    tie_key: np.ndarray
    seed: int
    gain_mode: int
    gain_table: np.ndarray
    level_order: np.ndarray  # non-empty: ideal grades are integers in [0, size): IDCG by counting
    level_gain: np.ndarray
    discount: np.ndarray
    discount_prefix: np.ndarray
    cutoffs: np.ndarray  # int64, WHOLE_LIST for "no cutoff"
    k_max: int
    ideal_mode: int
    ideal_offsets: np.ndarray
    ideal_grades: np.ndarray
    max_gain: float
    device_offsets: Any = None  # ``offsets`` in device memory, when given there (CUDA backend)

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.offsets.size - 1


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


@dataclass(frozen=True)
class DocumentIds:
    """The document ids of a run or of judgments, as a backend's join compares them.

    ``column`` holds the ids themselves, for messages. The Numba join compares their bytes: id
    ``r`` is ``data[bounds[r]:bounds[r + 1]]``. The NumPy join compares integer ``codes``
    instead, shared by the run and the judgments (numbered in descending byte order of the ids
    when trec_eval's tie order is asked for).
    """

    column: Any  # pyarrow.ChunkedArray of strings
    bounds: np.ndarray | None = None
    data: np.ndarray | None = None
    codes: np.ndarray | None = None


# DLPack device types of CUDA memory (kDLCUDA, kDLCUDAManaged)
KDL_CUDA = 2
KDL_CUDA_MANAGED = 13
_DEVICE_TYPES = (KDL_CUDA, KDL_CUDA_MANAGED)


def torch_tensor(values: Any) -> bool:
    """Whether ``values`` is a torch tensor (torch is not imported)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(values, torch.Tensor)


def on_cuda_device(values: Any) -> bool:
    """Whether ``values`` lives in CUDA device memory.

    True for a torch tensor on a CUDA device, a numba device array, an object with
    ``__cuda_array_interface__`` (CuPy, ...), or one whose ``__dlpack_device__`` is a CUDA
    device. Nothing is imported.
    """
    if isinstance(values, (np.ndarray, list, tuple, int, float)):
        return False
    if torch_tensor(values):
        return values.device.type == "cuda"
    if getattr(values, "__cuda_ndarray__", False):  # numba's device arrays (and the simulator's)
        return True
    try:
        if hasattr(values, "__cuda_array_interface__"):
            return True
    except Exception:  # a property that raises: not readable here
        return False
    probe = getattr(values, "__dlpack_device__", None)
    if probe is None:
        return False
    try:
        device_type = int(probe()[0])
    except Exception:
        return False
    return device_type in _DEVICE_TYPES
