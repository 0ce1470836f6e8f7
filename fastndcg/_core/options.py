"""Parse and check the user-facing options of :func:`fastndcg.ndcg`.

Everything here is independent of the data: option names are checked, spelled-out values are
turned into the integer codes of :mod:`fastndcg._codes`, and gain and discount specifications
become small objects that can later build the per-grade and per-rank tables the kernels need.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._backends import codes as C

TIES = {
    "average": C.TIE_AVERAGE,
    "stable": C.TIE_STABLE,
    "pessimistic": C.TIE_PESSIMISTIC,
    "optimistic": C.TIE_OPTIMISTIC,
    "random": C.TIE_RANDOM,
}
IDEALS = {
    "recall": C.IDEAL_RECALL,
    "local": C.IDEAL_LOCAL,
    "global": C.IDEAL_GLOBAL,
    "max": C.IDEAL_MAX,
}
# Tie rules that need a per-row key from the caller (e.g. document ids for TREC runs).
KEYED_TIES = ("docid_desc",)
ZERO_IDCG = ("skip", "zero", "one", "error")
AGGREGATES = ("mean", "ratio")
TOOL_AGGREGATES = ("lightgbm", "xgboost", "keras_rs")
BACKENDS = ("auto", "numba", "numpy")
# Precision scores are held in before ranking; "float32" reproduces tools that store them so.
SCORE_DTYPES = ("float64", "float32")
MISSING = ("zero", "skip", "error")  # judged queries absent from a TREC run
GROUPINGS = ("stream", "memory")  # how ndcg_parquet groups rows into queries
ENGINES = ("dask", "spark")  # where fastndcg.dask / fastndcg.spark run
VALIDATIONS = ("ranges", "exact")  # how colocated=True is checked there
GAIN_NAMES = ("exp2", "linear")
DISCOUNT_NAMES = ("log2", "jarvelin", "reciprocal")

# Dict gains whose keys are non-negative integers up to this bound become a dense lookup table.
_MAX_DENSE_TABLE = 1 << 20


def plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it holds (for readable messages); others unchanged."""
    return value.item() if isinstance(value, np.generic) else value


def choose(name: str, value: Any, valid: Sequence[str], also: str = "") -> str:
    """Return ``value`` if it is one of ``valid``; otherwise raise a ValueError listing them.

    ``also`` names further accepted forms that are not strings (e.g. "a callable").
    """
    if isinstance(value, str) and value in valid:
        return value
    listed = ", ".join(repr(v) for v in valid) + (f", or {also}" if also else "")
    raise ValueError(f"unknown {name}={value!r}; valid values are {listed}")


_LARGEST_CUTOFF = np.iinfo(np.int64).max


def parse_cutoffs(k: Any) -> tuple[int | None, ...]:
    """Turn ``k`` (None, an int, or a sequence of ints and None) into a tuple of cutoffs."""
    many = isinstance(k, (list, tuple)) or (isinstance(k, np.ndarray) and k.ndim > 0)
    items = list(k) if many else [k.item() if isinstance(k, np.ndarray) else k]
    if not items:
        raise ValueError("k is an empty list; pass an int, a list of ints, or None (whole list)")
    cutoffs: list[int | None] = []
    for item in items:
        if item is None:
            cutoffs.append(None)
            continue
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
            raise TypeError(
                f"k must be an int >= 1, a list of them, or None (whole list); got {item!r}"
            )
        if item < 1:
            raise ValueError(f"k must be >= 1 (or None for the whole list); got {int(item)}")
        if item > _LARGEST_CUTOFF:
            raise ValueError(
                f"k={int(item)} does not fit in 64 bits; pass k=None to score whole lists"
            )
        cutoffs.append(int(item))
    if len(set(cutoffs)) != len(cutoffs):
        raise ValueError(f"k lists a cutoff more than once: {cutoffs}; give each cutoff once")
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
        table = _finite_float_vector(gain, "gain table")
        if table.size == 0:
            raise ValueError("gain table is empty; give one gain per integer grade 0, 1, 2, ...")
        return Gain("table", table=table)
    raise TypeError(
        "gain must be 'exp2', 'linear', a sequence indexed by integer grade, "
        f"a dict grade -> gain, or a vectorised callable; got {type(gain).__name__}"
    )


def _gain_from_mapping(mapping: Mapping[Any, Any]) -> Gain:
    if not mapping:
        raise ValueError("gain dict is empty; map each grade to its gain, e.g. {0: 0, 1: 1}")
    keys = np.array(list(mapping.keys()))
    values = _finite_float_vector(list(mapping.values()), "gain dict values", list(mapping))
    if keys.dtype.kind not in "iufb":
        raise TypeError(f"gain dict keys must be numbers (grades); got {keys.dtype} keys")
    keys = keys.astype(np.float64)
    if not np.all(np.isfinite(keys)):
        raise ValueError("gain dict keys must be finite grades")
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
                raise ValueError(
                    f"discount array has {self.array.size} entries but ranks up to {length} are "
                    "scored; pass a longer array (pad with zeros to ignore deeper ranks) or a "
                    "smaller k"
                )
            return self.array[:length].copy()
        assert self.func is not None
        try:
            raw = self.func(np.arange(1, length + 1, dtype=np.int64))
        except Exception as exc:  # the user's function failed: say which option it was
            raise ValueError(f"discount callable failed on ranks 1..{length}: {exc!r}") from exc
        out = _finite_float_vector(raw, "discount callable result")
        if out.shape != (length,):
            raise ValueError(
                f"discount callable must return one value per rank: expected shape ({length},), "
                f"got {out.shape}"
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
        array = _finite_float_vector(discount, "discount array")
        return Discount("array", array=array)
    raise TypeError(
        "discount must be 'log2', 'jarvelin', 'reciprocal', a per-rank array, or a callable of "
        f"the 1-based rank; got {type(discount).__name__}"
    )


def _finite_float_vector(values: Any, what: str, keys: list | None = None) -> np.ndarray:
    """``values`` as a 1-D float64 array; errors name entry ``i`` (or ``keys[i]``)."""
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must contain numbers: {exc}") from exc
    if array.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional; got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        entry = f"entry {bad[0]}" if keys is None else f"the gain of {keys[bad[0]]!r}"
        raise ValueError(f"{what} must be finite; {entry} is {array[bad[0]]}")
    return array
