"""Per-query results for the comparison tests (tests/compare, tests/cli)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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


_WITHOUT = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {module!r}:
            raise ImportError(f"No module named {{name!r}}")
sys.meta_path.insert(0, Block())
import numpy as np, fastndcg
def result(v):
    v = np.asarray(v, float).reshape(-1, 1)
    return fastndcg.NDCGResult(k=(10,), per_query=v, dcg=v, idcg=v, mean=v.mean(0),
                               query_ids=np.arange(len(v)), n_skipped=np.zeros(1))
c = fastndcg.compare({{"a": result([0.1, 0.5, 0.3]), "b": result([0.2, 0.6, 0.2])}},
                     n_resamples=50, backend="numpy")
"""


def run_without(module, code):
    """Run ``code`` in a fresh Python that cannot import ``module``; a comparison of two
    systems, ``c``, is made first. Returns the output, after checking the run succeeded."""
    script = _WITHOUT.format(module=module) + textwrap.dedent(code)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout
