"""Parse the composite options: cutoffs, gains and discounts.

Everything here is independent of the data: a gain or discount specification (a name, a table,
a dict, a callable) becomes a small object that later builds the per-grade and per-rank tables
the kernels need.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._core.vocabulary import DISCOUNT_NAMES, GAIN_NAMES, choose
from fastndcg._errors import OptionError, OptionTypeError

# Dict gains whose keys are non-negative integers up to this bound become a dense lookup table.
_MAX_DENSE_TABLE = 1 << 20


_LARGEST_CUTOFF = np.iinfo(np.int64).max


def parse_cutoffs(k: Any) -> tuple[int | None, ...]:
    """Turn ``k`` (None, an int, or a sequence of ints and None) into a tuple of cutoffs."""
    many = isinstance(k, (list, tuple)) or (isinstance(k, np.ndarray) and k.ndim > 0)
    items = list(k) if many else [k.item() if isinstance(k, np.ndarray) else k]
    if not items:
        raise OptionError(
            "`k` is an empty list",
            option="k",
            value=k,
            fix="pass an int, a list of ints, or `k=None` (whole list)",
        )
    cutoffs: list[int | None] = []
    for item in items:
        if item is None:
            cutoffs.append(None)
            continue
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
            raise OptionTypeError(
                "`k` must be an int >= 1, a list of them, or `k=None` (whole list)",
                option="k",
                value=item,
                fix=f"got {item!r}",
            )
        if item < 1:
            raise OptionError(
                "`k` must be >= 1 (or `k=None` for the whole list)",
                option="k",
                value=int(item),
                fix=f"got {int(item)}",
            )
        if item > _LARGEST_CUTOFF:
            raise OptionError(
                f"`k={int(item)}` does not fit in 64 bits",
                option="k",
                value=int(item),
                fix="pass `k=None` to score whole lists",
            )
        cutoffs.append(int(item))
    if len(set(cutoffs)) != len(cutoffs):
        raise OptionError(
            f"`k` lists a cutoff more than once: {cutoffs}",
            option="k",
            value=cutoffs,
            fix="give each cutoff once",
        )
    return tuple(cutoffs)


@dataclass(frozen=True)
class Gain:
    """A resolved gain specification.

    ``kind`` is ``"exp2"``, ``"linear"``, ``"table"`` (dense array indexed by integer grade,
    NaN where a grade has no gain), ``"mapping"`` (arbitrary grade keys) or ``"callable"``.
    """

    kind: str
    table: np.ndarray | None = None
    keys: np.ndarray | None = None
    values: np.ndarray | None = None
    func: Callable[[np.ndarray], Any] | None = None

    def describe(self) -> str:
        """Short human-readable name used in reprs and reports."""
        return self.kind if self.kind in GAIN_NAMES else f"{self.kind} gain"


def parse_gain(gain: Any) -> Gain:
    """Resolve the ``gain`` option."""
    if isinstance(gain, str):
        also = "a sequence indexed by grade, a dict grade -> gain, or a callable"
        return Gain(choose("gain", gain, GAIN_NAMES, also))
    if isinstance(gain, Mapping):
        return _gain_from_mapping(gain)
    if callable(gain):
        return Gain("callable", func=gain)
    if isinstance(gain, (Sequence, np.ndarray)):
        table = _finite_float_vector(gain, "gain table", "gain")
        if table.size == 0:
            raise OptionError(
                "gain table is empty",
                option="gain",
                value=gain,
                fix="give one gain per integer grade 0, 1, 2, ...",
            )
        return Gain("table", table=table)
    raise OptionTypeError(
        "`gain` must be `'exp2'`, `'linear'`, a sequence indexed by integer grade, "
        "a dict grade -> gain, or a vectorised callable",
        option="gain",
        value=gain,
        fix=f"got {type(gain).__name__}",
    )


def _gain_from_mapping(mapping: Mapping[Any, Any]) -> Gain:
    if not mapping:
        raise OptionError(
            "gain dict is empty",
            option="gain",
            value=mapping,
            fix="map each grade to its gain, e.g. {0: 0, 1: 1}",
        )
    keys = np.array(list(mapping.keys()))
    values = _finite_float_vector(list(mapping.values()), "gain dict values", "gain", list(mapping))
    if keys.dtype.kind not in "iufb":
        raise OptionTypeError(
            "gain dict keys must be numbers (grades)",
            option="gain",
            value=mapping,
            fix=f"got {keys.dtype} keys",
        )
    keys = keys.astype(np.float64)
    if not np.all(np.isfinite(keys)):
        raise OptionError("gain dict keys must be finite grades", option="gain", value=mapping)
    integral = np.all(keys == np.floor(keys))
    if integral and keys.min() >= 0 and keys.max() < _MAX_DENSE_TABLE:
        table = np.full(int(keys.max()) + 1, np.nan)
        table[keys.astype(np.int64)] = values
        return Gain("table", table=table)
    order = np.argsort(keys, kind="stable")
    return Gain("mapping", keys=keys[order], values=values[order])


@dataclass(frozen=True)
class Discount:
    """A resolved discount: a named formula, a per-rank array, or a callable of the rank."""

    kind: str
    array: np.ndarray | None = None
    func: Callable[[np.ndarray], Any] | None = None

    def describe(self) -> str:
        """Short human-readable name used in reprs and reports."""
        return self.kind if self.kind in DISCOUNT_NAMES else f"{self.kind} discount"

    def table(self, length: int) -> np.ndarray:
        """Discounts of ranks 1..length as a float64 array (index 0 is rank 1)."""
        if self.kind in DISCOUNT_NAMES:
            return _named_discounts(self.kind, length)
        if self.kind == "array":
            assert self.array is not None
            if length > self.array.size:
                raise OptionError(
                    f"discount array has {self.array.size} entries but ranks up to {length} are "
                    "scored",
                    option="discount",
                    value=self.array,
                    fix="pass a longer array (pad with zeros to ignore deeper ranks) or a "
                    "smaller `k`",
                )
            return self.array[:length].copy()
        assert self.func is not None
        try:
            raw = self.func(np.arange(1, length + 1, dtype=np.int64))
        except Exception as exc:  # the user's function failed: say which option it was
            raise OptionError(
                f"discount callable failed on ranks 1..{length}: {exc!r}",
                option="discount",
                value=self.func,
            ) from exc
        out = _finite_float_vector(raw, "discount callable result", "discount")
        if out.shape != (length,):
            raise OptionError(
                "discount callable must return one value per rank",
                option="discount",
                value=self.func,
                fix=f"expected shape ({length},), got {out.shape}",
                joiner=": ",
            )
        return out


_DISCOUNT_CACHE: dict[str, np.ndarray] = {}


def _named_discounts(kind: str, length: int) -> np.ndarray:
    """Discounts of a named formula for ranks 1..length, from a growing read-only cache."""
    cached = _DISCOUNT_CACHE.get(kind)
    if cached is None or cached.size < length:
        size = max(length, 1024, 0 if cached is None else 2 * cached.size)
        ranks = np.arange(1, size + 1, dtype=np.float64)
        if kind == "log2":
            cached = 1.0 / np.log2(ranks + 1.0)
        elif kind == "jarvelin":
            cached = np.ones(size)
            cached[1:] = 1.0 / np.log2(ranks[1:])
        else:
            cached = 1.0 / ranks
        cached.flags.writeable = False
        _DISCOUNT_CACHE[kind] = cached
    return cached[:length]


def parse_discount(discount: Any) -> Discount:
    """Resolve the ``discount`` option."""
    if isinstance(discount, str):
        also = "a per-rank array or a callable of the rank"
        return Discount(choose("discount", discount, DISCOUNT_NAMES, also))
    if callable(discount):
        return Discount("callable", func=discount)
    if isinstance(discount, (Sequence, np.ndarray)):
        array = _finite_float_vector(discount, "discount array", "discount")
        return Discount("array", array=array)
    raise OptionTypeError(
        "`discount` must be `'log2'`, `'jarvelin'`, `'reciprocal'`, a per-rank array, or a "
        "callable of the 1-based rank",
        option="discount",
        value=discount,
        fix=f"got {type(discount).__name__}",
    )


def _finite_float_vector(
    values: Any, what: str, option: str, keys: list | None = None
) -> np.ndarray:
    """``values`` as a 1-D float64 array; errors name entry ``i`` (or ``keys[i]``)."""
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise OptionTypeError(
            f"{what} must contain numbers: {exc}", option=option, value=values
        ) from exc
    if array.ndim != 1:
        raise OptionError(
            f"{what} must be one-dimensional",
            option=option,
            value=values,
            fix=f"got shape {array.shape}",
        )
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        entry = f"entry {bad[0]}" if keys is None else f"the gain of {keys[bad[0]]!r}"
        raise OptionError(
            f"{what} must be finite",
            option=option,
            value=values,
            where=entry,
            fix=f"{entry} is {array[bad[0]]}",
        )
    return array
