"""Per-query results for the comparison tests (tests/compare, tests/cli)."""

from __future__ import annotations

import numpy as np

import fastndcg


def result(values, ids=None, k=(10,)):
    values = np.asarray(values, dtype=np.float64)
    values = values.reshape(len(values), len(k))
    ids = np.arange(len(values)) if ids is None else np.asarray(ids)
    return fastndcg.NDCGResult(
        k=k,
        per_query=values,
        dcg=values,
        idcg=np.ones_like(values),
        mean=np.nanmean(values, axis=0) if len(values) else np.full(len(k), np.nan),
        query_ids=ids,
        n_skipped=np.isnan(values).sum(axis=0),
    )


def three_runs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, n)
    return {
        "bm25": result(base),
        "dense": result(np.clip(base + rng.normal(0.15, 0.05, n), 0, 1)),
        "hybrid": result(np.clip(base + rng.normal(0.0, 0.05, n), 0, 1)),
    }
