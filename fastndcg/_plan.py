"""Turn a layout plus resolved options into the kernel inputs both backends share.

This is where options meet the data: gains are checked against the grades (a lookup table needs
integer grades inside it, ``exp2`` needs grades >= 0), the discount table is built as long as the
deepest rank that will be scored, grade levels for counting IDCG are found, and the judgment
lists of ``ideal="global"`` are aligned with the queries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastndcg import _codes as C
from fastndcg._layout import Layout, first_nonintegral, readonly
from fastndcg._options import Discount, Gain

_EMPTY_F = readonly(np.empty(0, dtype=np.float64))
_EMPTY_I = readonly(np.empty(0, dtype=np.int64))


@dataclass(frozen=True)
class Plan:
    """Everything a backend needs, as arrays and integer codes (see ``_kernels.score_queries``)."""

    offsets: np.ndarray
    grades: np.ndarray  # grades, or gains already applied when gain_mode is GAIN_LINEAR
    scores: np.ndarray | None  # None: rows are in ranked order
    tie_mode: int
    tie_key: np.ndarray
    seed: int
    gain_mode: int
    gain_table: np.ndarray
    n_levels: int  # > 0: ideal grades are integers in [0, n_levels): IDCG by counting
    level_order: np.ndarray
    level_gain: np.ndarray
    discount: np.ndarray
    discount_prefix: np.ndarray
    cutoffs: np.ndarray  # int64, WHOLE_LIST for "no cutoff"
    k_max: int
    ideal_mode: int
    ideal_offsets: np.ndarray
    ideal_grades: np.ndarray
    max_gain: float

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.offsets.size - 1


def make_plan(
    layout: Layout,
    *,
    cutoffs: tuple[int | None, ...],
    gain: Gain,
    discount: Discount,
    tie_mode: int,
    tie_key: np.ndarray | None,
    seed: int,
    ideal_mode: int,
    ideal: tuple[np.ndarray, np.ndarray] | None,
    max_grade: float | None,
) -> Plan:
    """Build the :class:`Plan`; raises ValueError when grades do not fit the chosen gain."""
    grades = layout.grades
    ideal_offsets, ideal_grades = ideal if ideal is not None else (layout.offsets, grades)
    gain_mode, gain_table, grades, ideal_grades = _apply_gain(
        gain, layout, grades, ideal_grades, ideal is not None
    )
    if ideal_mode == C.IDEAL_MAX:
        top = _max_grade(layout, max_grade)
        max_gain = float(_gain_values(gain, np.array([top]), "max_grade")[0])
    else:
        if max_grade is not None:
            raise ValueError("max_grade= is only used with ideal='max'")
        max_gain = 0.0
    histogram_source = ideal_grades if ideal_mode in (C.IDEAL_RECALL, C.IDEAL_GLOBAL) else _EMPTY_F
    n_levels, level_order, level_gain = _levels(gain_mode, gain_table, histogram_source)

    finite = [c for c in cutoffs if c is not None]
    whole = len(finite) < len(cutoffs)
    k_max = max(finite) if finite else 0
    lengths = np.diff(layout.offsets)
    longest = int(lengths.max()) if lengths.size else 0
    ideal_lengths = np.diff(ideal_offsets)
    longest_ideal = int(ideal_lengths.max()) if ideal_lengths.size else 0
    depth = max(longest, longest_ideal)
    ranks = depth if whole else min(k_max, depth)
    if ideal_mode == C.IDEAL_MAX:
        ranks = max(ranks, k_max, longest if whole else 0)
    table = discount.table(ranks)
    prefix = np.zeros(ranks + 1)
    np.cumsum(table, out=prefix[1:])

    return Plan(
        offsets=layout.offsets,
        grades=readonly(grades),
        scores=layout.scores,
        tie_mode=tie_mode,
        tie_key=_EMPTY_I if tie_key is None else readonly(tie_key),
        seed=seed,
        gain_mode=gain_mode,
        gain_table=readonly(gain_table),
        n_levels=n_levels,
        level_order=readonly(level_order),
        level_gain=readonly(level_gain),
        discount=readonly(table),
        discount_prefix=readonly(prefix),
        cutoffs=readonly(np.array([C.WHOLE_LIST if c is None else c for c in cutoffs], np.int64)),
        k_max=k_max,
        ideal_mode=ideal_mode,
        ideal_offsets=ideal_offsets,
        ideal_grades=readonly(ideal_grades),
        max_gain=max_gain,
    )


def _apply_gain(
    gain: Gain, layout: Layout, grades: np.ndarray, ideal_grades: np.ndarray, separate: bool
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Check grades against the gain; precompute gains the kernels cannot compute themselves."""

    def where(row: int) -> str:
        return f"row {layout.input_row(row)} (query {layout.query_of_row(row)!r})"

    sources = [(grades, "grades", where)]
    if separate:
        sources.append((ideal_grades, "ideal_grades", lambda row: f"row {row}"))
    if gain.kind == "exp2":
        for values, name, at in sources:
            _check_non_negative(values, name, at)
        return C.GAIN_EXP2, _EMPTY_F, grades, ideal_grades
    if gain.kind == "linear":
        return C.GAIN_LINEAR, _EMPTY_F, grades, ideal_grades
    if gain.kind == "table":
        assert gain.table is not None
        for values, name, at in sources:
            _check_table_grades(values, gain.table, name, at)
        return C.GAIN_TABLE, gain.table, grades, ideal_grades
    main = _gain_values(gain, grades, "grades", where)
    other = _gain_values(gain, ideal_grades, "ideal_grades") if separate else main
    return C.GAIN_LINEAR, _EMPTY_F, main, other


def _check_non_negative(values: np.ndarray, name: str, where) -> None:
    if values.size and values.min() < 0:
        row = int(np.argmax(values < 0))
        raise ValueError(
            f"gain='exp2' (2**g - 1) is not defined for negative grades: {name} has "
            f"{values[row]:g} at {where(row)}. Map judged-non-relevant grades to 0, drop those "
            "rows, or use gain='linear' or a gain table"
        )


def _check_table_grades(values: np.ndarray, table: np.ndarray, name: str, where) -> None:
    if values.size == 0:
        return
    row = first_nonintegral(values)
    if row >= 0:
        raise ValueError(
            f"a gain table maps integer grades to gains, but {name} has {values[row]:g} at "
            f"{where(row)}; round the grades or pass a callable gain"
        )
    low, high = values.min(), values.max()
    if low < 0 or high >= table.size:
        row = int(np.argmax((values < 0) | (values >= table.size)))
        raise ValueError(
            f"{name} has {values[row]:g} at {where(row)}, outside the gain table (grades "
            f"0..{table.size - 1}); extend the table or fix the grade"
        )
    holes = np.isnan(table)
    if holes.any():
        missing = holes[values.astype(np.int64)]
        if missing.any():
            row = int(np.argmax(missing))
            raise ValueError(
                f"{name} has {values[row]:g} at {where(row)}, which the gain dict does not map; "
                "add that grade to the dict"
            )


def _gain_values(gain: Gain, grades: np.ndarray, name: str, where=None) -> np.ndarray:
    """Gains of ``grades`` under any gain specification (vectorised)."""
    at = where or (lambda row: f"row {row}")
    if gain.kind == "exp2":
        _check_non_negative(grades, name, at)
        return np.exp2(grades) - 1.0
    if gain.kind == "linear":
        return grades.astype(np.float64, copy=True)
    if gain.kind == "table":
        assert gain.table is not None
        _check_table_grades(grades, gain.table, name, at)
        return gain.table[grades.astype(np.int64)]
    if gain.kind == "mapping":
        assert gain.keys is not None and gain.values is not None
        pos = np.minimum(np.searchsorted(gain.keys, grades), gain.keys.size - 1)
        unmapped = gain.keys[pos] != grades
        if unmapped.any():
            row = int(np.argmax(unmapped))
            raise ValueError(
                f"{name} has {grades[row]:g} at {at(row)}, which the gain dict does not map; "
                "add that grade to the dict"
            )
        return gain.values[pos]
    assert gain.func is not None
    try:
        raw = gain.func(grades.copy())
    except Exception as exc:  # the user's function failed: say which option it was
        raise ValueError(f"gain callable failed on {name}: {exc!r}") from exc
    out = np.asarray(raw, dtype=np.float64)
    if out.shape != grades.shape:
        raise ValueError(
            f"gain callable must return one gain per grade (vectorised): expected shape "
            f"{grades.shape}, got {out.shape}"
        )
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        raise ValueError(
            f"gain callable returned {out[bad[0]]} for grade {grades[bad[0]]:g} at "
            f"{at(int(bad[0]))}; gains must be finite"
        )
    return out


def _max_grade(layout: Layout, max_grade: float | None) -> float:
    if max_grade is None:
        return float(layout.grades.max()) if layout.grades.size else 0.0
    value = float(max_grade)
    if not np.isfinite(value):
        raise ValueError(f"max_grade must be finite; got {max_grade!r}")
    if layout.grades.size and layout.grades.max() > value:
        raise ValueError(
            f"max_grade={value:g} is below the largest grade in the data "
            f"({layout.grades.max():g}); NDCG would exceed 1. Raise max_grade or leave it unset"
        )
    return value


def _levels(
    gain_mode: int, gain_table: np.ndarray, grades: np.ndarray
) -> tuple[int, np.ndarray, np.ndarray]:
    """Grade levels for counting IDCG, when every grade is a small non-negative integer."""
    if grades.size == 0 or gain_mode not in (C.GAIN_EXP2, C.GAIN_LINEAR, C.GAIN_TABLE):
        return 0, _EMPTY_I, _EMPTY_F
    low, high = grades.min(), grades.max()
    if low < 0 or high >= C.MAX_HISTOGRAM_LEVELS or first_nonintegral(grades) >= 0:
        return 0, _EMPTY_I, _EMPTY_F
    n_levels = int(high) + 1
    levels = np.arange(n_levels, dtype=np.float64)
    if gain_mode == C.GAIN_EXP2:
        level_gain = np.exp2(levels) - 1.0
    elif gain_mode == C.GAIN_LINEAR:
        level_gain = levels
    else:
        level_gain = np.nan_to_num(gain_table[:n_levels], nan=0.0)
    level_order = np.argsort(-level_gain, kind="stable").astype(np.int64)
    return n_levels, level_order, level_gain
