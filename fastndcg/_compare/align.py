"""Line up the per-query values of several results by query id, under a missing-query policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._errors import InputError, InputTypeError

_SHOWN_IDS = 5


@dataclass(frozen=True)
class Aligned:
    """Per-query values of every system on one list of queries.

    Attributes
    ----------
    query_ids : ndarray, shape (n_queries,)
        The aligned queries: the first system's order, then queries only later systems have.
    values : ndarray of float64, shape (n_systems, n_queries, n_cutoffs)
        Each system's ``per_query`` on those queries (NaN: skipped, no relevant item; 0 for a
        query the system lacks under ``missing="zero"``). A new array: the results' own
        arrays are never written.
    n_missing : tuple of int
        Per system, aligned queries it lacked (scored 0 under ``"zero"``; 0 under
        ``"intersection"``, which drops them, and ``"error"``).
    n_dropped : int
        Queries dropped because some system lacked them (``"intersection"`` only).
    """

    query_ids: np.ndarray
    values: np.ndarray
    n_missing: tuple[int, ...]
    n_dropped: int


def _shown(ids: Any) -> str:
    listed = ", ".join(repr(v) for v in ids[:_SHOWN_IDS])
    return listed + (", ..." if len(ids) > _SHOWN_IDS else "")


def _as_arrow(name: str, ids: np.ndarray) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        array = pa.array(ids)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputTypeError(
            f"the query ids of {name!r} cannot be compared with the others ({exc})",
            value=name,
            where=f"results[{name!r}].query_ids",
            fix="use ints or strings",
        ) from exc
    if len(array) == 0:
        return array  # no query: nothing repeats (its type may be null)
    if pa.types.is_integer(array.type):
        array = array.cast(pa.int64())
    elif pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        array = array.cast(pa.large_string())
    if pc.count_distinct(array, mode="all").as_py() != len(array):
        counts = pc.value_counts(array)
        repeated = [
            v.as_py()
            for v, c in zip(counts.field("values"), counts.field("counts"), strict=True)
            if c.as_py() > 1
        ]
        raise InputError(
            f"the results of {name!r} list a query id more than once ({_shown(repeated)})",
            value=repeated[0],
            where=f"results[{name!r}].query_ids",
            fix="each query must appear once to be paired",
        )
    return array


def align(names: list[str], results: list[Any], missing: str) -> Aligned:
    """Align ``results`` (NDCGResult objects, in ``names`` order) on their query ids."""
    ids = [np.asarray(r.query_ids) for r in results]
    first = ids[0]
    if all(i.shape == first.shape and np.array_equal(i, first) for i in ids[1:]):
        _as_arrow(names[0], first)  # duplicates are an error even when all agree
        values = np.stack([np.array(r.per_query, dtype=np.float64) for r in results])
        return Aligned(first.copy(), values, (0,) * len(results), 0)

    import pyarrow as pa
    import pyarrow.compute as pc

    arrays = [_as_arrow(name, i) for name, i in zip(names, ids, strict=True)]
    typed = [a.type for a in arrays if len(a)]
    common = typed[0] if typed else pa.int64()
    arrays = [a if len(a) else pa.array([], type=common) for a in arrays]  # no query: any type
    kinds = {a.type for a in arrays}
    if len(kinds) > 1:
        described = ", ".join(f"{n!r}: {a.type}" for n, a in zip(names, arrays, strict=True))
        raise InputTypeError(
            f"the results' query ids have different types ({described})",
            value={n: str(a.type) for n, a in zip(names, arrays, strict=True)},
            fix="score every system with query ids of one type",
        )
    union = pc.unique(pa.chunked_array(arrays))
    positions = [pc.index_in(union, value_set=a) for a in arrays]
    present = np.stack([p.is_valid().to_numpy(zero_copy_only=False) for p in positions])
    lacking = (~present).sum(axis=1)
    if missing == "error" and lacking.any():
        parts = []
        for name, row, count in zip(names, present, lacking, strict=True):
            if count:
                absent = union.filter(pa.array(~row)).to_pylist()
                parts.append(f"{name!r} lacks {count} (first: {_shown(absent)})")
        raise InputError(
            f"`missing='error'`: the results do not cover the same queries ({len(union)} in "
            "all): " + "; ".join(parts),
            value={n: int(c) for n, c in zip(names, lacking, strict=True) if c},
            fix="pass `missing='zero'` to score a missing query 0 (like trec_eval -c) or "
            "`missing='intersection'` to keep the queries every system has",
        )
    n_cutoffs = results[0].per_query.shape[1]
    keep = present.all(axis=0) if missing == "intersection" else np.ones(len(union), bool)
    values = np.zeros((len(results), int(keep.sum()), n_cutoffs))
    for s, (result, pos) in enumerate(zip(results, positions, strict=True)):
        rows = pos.to_numpy(zero_copy_only=False)[keep]
        found = present[s][keep]
        values[s, found] = np.asarray(result.per_query, dtype=np.float64)[
            rows[found].astype(np.int64)
        ]
    query_ids = union.filter(pa.array(keep)).to_numpy(zero_copy_only=False)
    if missing == "intersection":
        return Aligned(query_ids, values, (0,) * len(results), int((~keep).sum()))
    return Aligned(query_ids, values, tuple(int(c) for c in lacking), 0)
