"""The contract between the core and every backend: the one package both import.

It holds only what the two sides must agree on, and imports nothing of either:

- :mod:`~fastndcg._contract.codes`: the integer codes options become before they reach a kernel;
- :mod:`~fastndcg._contract.records`: the records the core builds and backends read
  (:class:`ColumnStats`, :class:`Layout`, :class:`Plan`, :class:`DocumentIds`) and the dtypes
  kernels read in place;
- :mod:`~fastndcg._contract.protocol`: the :class:`Backend` protocol, the :class:`Columns` a
  layout's grades and scores live in, and the optional capabilities a backend may declare
  (:class:`DeviceBackend`, :class:`ListScoringBackend`, :class:`CompiledBackend`,
  :class:`GradeCheckingBackend`).

The registry of backends (:mod:`fastndcg._backends`) sits beside it: the core resolves a
backend's name there and then talks to the object through this contract only.
"""

from fastndcg._contract.protocol import (
    Backend,
    Columns,
    CompiledBackend,
    DeviceBackend,
    GradeCheckingBackend,
    ListScorer,
    ListScoringBackend,
    MeasuresBackend,
    capable,
)
from fastndcg._contract.records import (
    GRADE_SLOTS,
    PRESUMED_GRADES,
    SCORE_SLOTS,
    ColumnStats,
    DocumentIds,
    Layout,
    MeasurePlan,
    MeasureValues,
    Plan,
    SharedRanking,
    input_row,
    readonly,
)

__all__ = [
    "GRADE_SLOTS",
    "PRESUMED_GRADES",
    "SCORE_SLOTS",
    "Backend",
    "ColumnStats",
    "Columns",
    "CompiledBackend",
    "DeviceBackend",
    "DocumentIds",
    "GradeCheckingBackend",
    "Layout",
    "ListScorer",
    "ListScoringBackend",
    "MeasurePlan",
    "MeasureValues",
    "MeasuresBackend",
    "Plan",
    "SharedRanking",
    "capable",
    "input_row",
    "readonly",
]
