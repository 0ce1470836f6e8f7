"""Baselines measured in the same run as fastndcg, so figures are ratios on the same machine.

- ``floor``: one streaming read of grades and scores (a sum over both arrays), the lower bound
  for anything that looks at every row; Numba-parallel when numba is present so it uses every
  core like the kernels do, NumPy otherwise.
- ``lexsort_ndcg``: the textbook NumPy approach: one global ``np.lexsort`` by (query, -score),
  ranks from the offsets, ``np.add.reduceat`` per query. Stable ties, exp2 gain, log2
  discount, ideal from the list.
- ``plain_numba_kernel``: the textbook Numba approach: ``prange`` over queries, a full stable
  argsort in each.
"""

from __future__ import annotations

import numpy as np


def _numba_floor():
    try:
        from numba import njit, prange
    except ImportError:
        return None

    @njit(parallel=True, cache=True)
    def read_all(grades, scores):
        n = grades.size
        chunks = 64
        partial = np.zeros(chunks)
        for c in prange(chunks):
            total = 0.0
            for i in range(n * c // chunks, n * (c + 1) // chunks):
                total += grades[i] + scores[i]
            partial[c] = total
        return partial.sum()

    return read_all


_READ_ALL = _numba_floor()


def floor(grades: np.ndarray, scores: np.ndarray) -> float:
    """Read every grade and score once."""
    if _READ_ALL is not None:
        return float(_READ_ALL(grades, scores))
    return float(grades.sum(dtype=np.float64) + scores.sum(dtype=np.float64))


def lexsort_ndcg(offsets: np.ndarray, grades: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Per-query NDCG@k via a global lexsort (NaN where IDCG is 0)."""
    n_queries = offsets.size - 1
    lengths = np.diff(offsets)
    query = np.repeat(np.arange(n_queries), lengths)
    rank = np.arange(grades.size) - np.repeat(offsets[:-1], lengths)
    discount = np.where(rank < k, 1.0 / np.log2(rank + 2.0), 0.0)
    gains = np.exp2(grades.astype(np.float64)) - 1.0
    by_score = np.lexsort((-scores, query))
    by_gain = np.lexsort((-gains, query))
    dcg = np.bincount(query, weights=gains[by_score] * discount, minlength=n_queries)
    idcg = np.bincount(query, weights=gains[by_gain] * discount, minlength=n_queries)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(idcg > 0, dcg / idcg, np.nan)


def plain_numba_kernel():
    """Compile-on-first-call kernel: prange over queries, a full stable argsort in each."""
    from numba import njit, prange

    @njit(parallel=True)
    def plain_ndcg(offsets, grades, scores, k):
        n_queries = offsets.size - 1
        out = np.empty(n_queries)
        for q in prange(n_queries):
            lo, hi = offsets[q], offsets[q + 1]
            g = grades[lo:hi]
            order = np.argsort(-scores[lo:hi], kind="mergesort")
            ideal = np.sort(g)[::-1]
            dcg = 0.0
            idcg = 0.0
            for r in range(min(k, hi - lo)):
                discount = 1.0 / np.log2(r + 2.0)
                dcg += (2.0 ** g[order[r]] - 1.0) * discount
                idcg += (2.0 ** ideal[r] - 1.0) * discount
            out[q] = dcg / idcg if idcg > 0.0 else np.nan
        return out

    return plain_ndcg
