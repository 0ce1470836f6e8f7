"""Turn a layout plus resolved options into the plan a backend scores.

This is where options meet the data: gains are checked against the grades (a lookup table needs
integer grades inside it, ``exp2`` needs grades >= 0), the discount table is built as long as the
deepest rank that will be scored, grade levels for counting IDCG are found, and the judgment
lists of ``ideal="global"`` are aligned with the queries.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from fastndcg._contract import Columns, ColumnStats, Layout, Plan, readonly
from fastndcg._contract import codes as C
from fastndcg._core.specs import Discount, Gain
from fastndcg._core.vocabulary import plain
from fastndcg._errors import NOT_GIVEN, InputError, OptionError, OptionTypeError

# deepest cutoff beyond the longest list that ideal="max" sums discounts to (a table of 128 MiB)
MAX_IDEAL_SLOTS = 1 << 24

_EMPTY_F = readonly(np.empty(0, dtype=np.float64))
_EMPTY_I = readonly(np.empty(0, dtype=np.int64))


def _longest(offsets: np.ndarray) -> int:
    """The length of the longest list (0 without lists)."""
    return int(np.diff(offsets).max()) if offsets.size > 1 else 0


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
    ideal: tuple[np.ndarray, np.ndarray, ColumnStats] | None,
    max_grade: float | None,
) -> Plan:
    """Build the :class:`Plan`; raises InputError when grades do not fit the chosen gain.

    Offending rows are found where the grades are (``layout.columns``).
    """
    if ideal is None:
        ideal = (layout.offsets, layout.grades, layout.grade_stats)
    ideal_offsets, ideal_grades, ideal_stats = ideal
    separate = ideal_grades is not layout.grades
    gain_mode, gain_table, grades, ideal_grades = _apply_gain(
        gain, layout, ideal_grades, ideal_stats, separate
    )
    if ideal_mode == C.IDEAL_MAX:
        top = _max_grade(layout, max_grade)
        try:
            max_gain = float(_gain_values(gain, np.array([top]), "max_grade")[0])
        except InputError as exc:  # the data was checked before: the gain refuses max_grade
            raise OptionError(
                exc.message, option="max_grade", value=top, fix=exc.fix, joiner=exc.joiner
            ) from None
    else:
        if max_grade is not None:
            raise OptionError(
                "`max_grade=` is only used with `ideal='max'`", option="max_grade", value=max_grade
            )
        max_gain = 0.0
    counting = ideal_mode in (C.IDEAL_RECALL, C.IDEAL_GLOBAL) and gain.kind in (
        "exp2",
        "linear",
        "table",
    )
    level_order, level_gain = _levels(gain, gain_table, ideal_stats, counting, ideal_grades.size)

    finite = [c for c in cutoffs if c is not None]
    whole = len(finite) < len(cutoffs)
    k_max = max(finite) if finite else 0
    longest = _longest(layout.offsets)
    longest_ideal = longest if ideal_offsets is layout.offsets else _longest(ideal_offsets)
    depth = max(longest, longest_ideal)
    ranks = depth if whole else min(k_max, depth)
    if ideal_mode == C.IDEAL_MAX:
        ranks = max(ranks, k_max, longest if whole else 0)
        if ranks > max(depth, MAX_IDEAL_SLOTS):
            raise OptionError(
                f"`ideal='max'` fills all `k={k_max:,}` slots with the largest gain, which needs "
                f"the discounts of {k_max:,} ranks; beyond the longest list ({depth:,} rows) it "
                f"takes cutoffs up to {MAX_IDEAL_SLOTS:,}",
                option="k",
                value=k_max,
                fix="pass a smaller `k`",
                joiner=": ",
            )
    table = discount.table(ranks)
    prefix = np.zeros(ranks + 1)
    with np.errstate(over="ignore"):  # an infinite sum is reported below
        np.cumsum(table, out=prefix[1:])
    largest = max(
        _largest_gain(gain_mode, gain_table, grades, layout.grade_stats, gain.kind),
        _largest_gain(gain_mode, gain_table, ideal_grades, ideal_stats, gain.kind),
        abs(max_gain),
    )
    _check_sums_fit(largest, prefix[-1], ranks, gain)

    # the short path finds IDCG without a sort: by the grade levels, or the largest gain, or the
    # best rows re-sorted ("local"), or (float grades under gains that grow with the grade) the
    # best grades bounded and ranked as the scores are
    ideal_from = ideal_grades if ideal_mode == C.IDEAL_GLOBAL else grades
    grows = gain_mode in (C.GAIN_EXP2, C.GAIN_LINEAR) and ideal_from.dtype.kind == "f"
    top_path = (
        layout.scores is not None
        and not whole
        and k_max <= C.TOP_PATH_DEPTH
        and (ideal_mode in (C.IDEAL_MAX, C.IDEAL_LOCAL) or level_order.size > 0 or grows)
    )
    return Plan(
        device_offsets=layout.device_offsets,
        offsets=layout.offsets,
        grades=readonly(grades),
        scores=layout.scores,
        tie_mode=tie_mode,
        tie_key=_EMPTY_I if tie_key is None else readonly(tie_key),
        seed=seed,
        gain_mode=gain_mode,
        gain_table=readonly(gain_table),
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
        top_path=top_path,
        levels_presumed=not layout.grades_checked,
    )


def _apply_gain(
    gain: Gain,
    layout: Layout,
    ideal_grades: np.ndarray,
    ideal_stats: ColumnStats,
    separate: bool,
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Check grades against the gain; precompute gains the kernels cannot compute themselves.

    Returns the gain code, the gain table, and the grades and ideal grades the kernels read.
    Gains of a dict or a callable are computed on the host (device grades are copied there).
    """

    def where(row: int) -> str:
        return f"{layout.where(layout.input_row(row))} (query {layout.query_of_row(row)!r})"

    grades = layout.grades
    columns = layout.columns
    sources = [(grades, layout.grade_stats, layout.names[0], where)]
    if separate:
        sources.append((ideal_grades, ideal_stats, "ideal_grades", lambda row: f"row {row}"))
    if gain.kind == "exp2":
        for values, stats, name, at in sources:
            _check_non_negative(values, stats, name, at, columns)
        small = [_small_levels(stats) for _, stats, _, _ in sources]
        if all(small):  # small integer grades: a lookup table is cheaper than exp2 per row
            levels = np.arange(max(small), dtype=np.float64)
            return C.GAIN_TABLE, np.exp2(levels) - 1.0, grades, ideal_grades
        return C.GAIN_EXP2, _EMPTY_F, grades, ideal_grades
    if gain.kind == "linear":
        return C.GAIN_LINEAR, _EMPTY_F, grades, ideal_grades
    if gain.kind == "table":
        assert gain.table is not None
        for values, stats, name, at in sources:
            _check_table_grades(values, stats, gain.table, name, at, columns)
        return C.GAIN_TABLE, gain.table, grades, ideal_grades
    host = (lambda values: values) if columns is None else columns.host
    main = _gain_values(gain, host(grades), layout.names[0], where)
    other = _gain_values(gain, host(ideal_grades), "ideal_grades") if separate else main
    return C.GAIN_LINEAR, _EMPTY_F, main, other


def _largest_gain(
    gain_mode: int, gain_table: np.ndarray, values: np.ndarray, stats: ColumnStats, kind: str
) -> float:
    """The largest absolute gain of ``values`` (grades, or gains already for other kinds)."""
    if values.size == 0:
        return 0.0
    if gain_mode == C.GAIN_TABLE:  # the grades are integers within the table (checked)
        used = gain_table[int(stats.low) : int(stats.high) + 1]
        return float(np.nanmax(np.abs(used), initial=0.0))
    if gain_mode == C.GAIN_EXP2:
        try:
            return math.exp2(stats.high) - 1.0
        except OverflowError:
            return math.inf
    if kind == "linear":
        return max(abs(stats.low), abs(stats.high))
    return float(max(values.max(), -values.min()))  # mapping or callable: gains already


def _check_sums_fit(largest: float, discount_sum: float, ranks: int, gain: Gain) -> None:
    """Raise an OptionError (on ``gain``) when a DCG could leave the float64 range.

    Every DCG and IDCG is at most ``largest`` (absolute gain) times the sum of the first
    ``ranks`` discounts; when that bound is finite no sum in the kernels can overflow (an
    overflow would turn into inf or NaN, which the kernels' fast math does not expect).
    """
    if math.isfinite(float(largest) * float(discount_sum)):  # Python floats overflow to inf
        return
    exp2 = gain.kind == "exp2"
    raise OptionError(
        f"gains reach {largest:g}{' (2**grade - 1 with `gain=exp2`)' if exp2 else ''} and the "
        f"discounts of the first {ranks:,} ranks sum to {discount_sum:g}: a DCG could exceed "
        "the float64 range",
        option="gain",
        value="exp2" if exp2 else NOT_GIVEN,
        fix=(
            "Use `gain='linear'`, a gain table, or grades well below 1024"
            if exp2
            else "Scale the gains or the discounts down"
        ),
        joiner=". ",
    )


def _small_levels(stats: ColumnStats) -> int:
    """Number of grade levels when grades are integers in [0, MAX_HISTOGRAM_LEVELS), else 0."""
    if stats.integral and 0 <= stats.low <= stats.high < C.MAX_HISTOGRAM_LEVELS:
        return int(stats.high) + 1
    return 0


def _first_row(values: Any, test: str, mask: Any, columns: Columns | None, **bounds: Any) -> int:
    """First row where ``mask(values)`` holds (-1: none), found where ``columns`` holds them."""
    if columns is not None:
        return columns.first_where(values, test, mask, **bounds)
    hits = mask(values)
    return int(np.argmax(hits)) if hits.any() else -1


def _check_non_negative(
    values: np.ndarray,
    stats: ColumnStats | None,
    name: str,
    where,
    columns: Columns | None = None,
) -> None:
    low = stats.low if stats is not None else (values.min() if values.size else 0.0)
    if values.size and low < 0:
        row = _first_row(values, "negative", lambda v: v < 0, columns)
        raise InputError(
            f"`gain='exp2'` (2**g - 1) is not defined for negative grades: {name} has "
            f"{values[row]:g} at {where(row)}",
            value=plain(values[row]),
            where=where(row),
            fix="Map judged-non-relevant grades to 0, drop those rows, or use `gain='linear'` or "
            "a gain table",
            joiner=". ",
        )


def _check_table_grades(
    values: np.ndarray,
    stats: ColumnStats | None,
    table: np.ndarray,
    name: str,
    where,
    columns: Columns | None = None,
) -> None:
    if values.size == 0:
        return
    if stats is None:
        whole = values == np.floor(values)
        first = -1 if whole.all() else int(np.argmin(whole))
        stats = ColumnStats(float(values.min()), float(values.max()), -1, first)
    if not stats.integral:  # the stats may be of the rows before grouping: find it in values
        row = _first_row(values, "nonintegral", lambda v: v != np.floor(v), columns)
        raise InputError(
            f"a gain table maps integer grades to gains, but {name} has {values[row]:g} at "
            f"{where(row)}",
            value=plain(values[row]),
            where=where(row),
            fix="round the grades or pass a callable gain",
        )
    holes = np.isnan(table)  # grades a gain dict lacks (a gain sequence has none)
    if stats.low < 0 or stats.high >= table.size:
        outside = lambda v: (v < 0) | (v >= table.size)  # noqa: E731
        row = _first_row(values, "outside", outside, columns, low=0, high=table.size)
        if holes.any():
            raise _unmapped_error(name, values[row], where(row))
        # a dict of the grades 0..n-1 is held as the same table as a sequence of n gains
        raise InputError(
            f"{name} has {values[row]:g} at {where(row)}, outside the gain table or dict "
            f"(grades 0..{table.size - 1})",
            value=plain(values[row]),
            where=where(row),
            fix="add a gain for that grade or fix the grade",
        )
    if holes.any():
        unmapped = lambda v: holes[v.astype(np.int64)]  # noqa: E731
        row = _first_row(values, "unmapped", unmapped, columns, table=table)
        if row >= 0:
            raise _unmapped_error(name, values[row], where(row))


def _unmapped_error(name: str, grade: float, where: str) -> InputError:
    return InputError(
        f"{name} has {grade:g} at {where}, which the gain dict does not map",
        value=plain(grade),
        where=where,
        fix="add that grade to the dict",
    )


def _gain_values(gain: Gain, grades: np.ndarray, name: str, where=None) -> np.ndarray:
    """Gains of ``grades`` under any gain specification (vectorised)."""
    at = where or (lambda row: f"row {row}")
    grades = grades.astype(np.float64)
    if gain.kind == "exp2":
        _check_non_negative(grades, None, name, at)
        with np.errstate(over="ignore"):  # an infinite gain is reported by make_plan
            return np.exp2(grades) - 1.0
    if gain.kind == "linear":
        return grades
    if gain.kind == "table":
        assert gain.table is not None
        _check_table_grades(grades, None, gain.table, name, at)
        return gain.table[grades.astype(np.int64)]
    if gain.kind == "mapping":
        assert gain.keys is not None and gain.values is not None
        pos = np.minimum(np.searchsorted(gain.keys, grades), gain.keys.size - 1)
        unmapped = gain.keys[pos] != grades
        if unmapped.any():
            row = int(np.argmax(unmapped))
            raise _unmapped_error(name, grades[row], at(row))
        return gain.values[pos]
    assert gain.func is not None
    try:
        raw = gain.func(grades)
    except Exception as exc:  # the user's function failed: say which option it was
        raise OptionError(
            f"gain callable failed on {name}: {exc!r}", option="gain", value=gain.func
        ) from exc
    out = np.asarray(raw, dtype=np.float64)
    if out.shape != grades.shape:
        raise OptionError(
            "gain callable must return one gain per grade (vectorised)",
            option="gain",
            value=gain.func,
            fix=f"expected shape {grades.shape}, got {out.shape}",
            joiner=": ",
        )
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        raise OptionError(
            f"gain callable returned {out[bad[0]]} for grade {grades[bad[0]]:g} at "
            f"{at(int(bad[0]))}",
            option="gain",
            value=gain.func,
            where=at(int(bad[0])),
            fix="gains must be finite",
        )
    return out


def _max_grade(layout: Layout, max_grade: float | None) -> float:
    highest = layout.grade_stats.high if layout.grades.size else 0.0
    if max_grade is None:
        return highest
    if isinstance(max_grade, bool) or not isinstance(max_grade, numbers.Real):
        raise OptionTypeError(
            "`max_grade` must be a number (the grade that fills every slot)",
            option="max_grade",
            value=max_grade,
            fix=f"got {max_grade!r}",
        )
    value = float(max_grade)
    if not np.isfinite(value):
        raise OptionError(
            "`max_grade` must be finite",
            option="max_grade",
            value=max_grade,
            fix=f"got {max_grade!r}",
        )
    if layout.grades.size and highest > value:
        raise OptionError(
            f"`max_grade={value:g}` is below the largest grade in the data ({highest:g}); "
            "NDCG would exceed 1",
            option="max_grade",
            value=max_grade,
            fix="Raise `max_grade=` or leave it unset",
            joiner=". ",
        )
    return value


def _levels(
    gain: Gain, gain_table: np.ndarray, stats: ColumnStats, counting: bool, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Grade levels in descending gain order, and the gain of each level, for counting IDCG.

    Empty when the ideal grades are not all small non-negative integers (then IDCG selects).
    """
    n_levels = _small_levels(stats) if counting and size > 0 else 0
    if n_levels == 0:
        return _EMPTY_I, _EMPTY_F
    levels = np.arange(n_levels, dtype=np.float64)
    if gain.kind == "exp2":
        level_gain = np.exp2(levels) - 1.0
    elif gain.kind == "linear":
        level_gain = levels
    else:  # a table; levels it does not map have no rows
        level_gain = np.nan_to_num(gain_table[: levels.size], nan=0.0)
    return np.argsort(-level_gain, kind="stable").astype(np.int64), level_gain
