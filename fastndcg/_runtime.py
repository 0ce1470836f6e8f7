"""Runtime facts and compile warm-up: what ``fastndcg info`` and ``fastndcg warmup`` report."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np


def warmup() -> float:
    """Compile (or load from the cache) every kernel fastndcg uses; return the seconds it took.

    The first call in a fresh environment compiles the Numba kernels (seconds); later calls, and
    later processes sharing the cache directory, only load them. Call it once before forking
    workers or timing anything. Without numba it returns at once.
    """
    import pyarrow as pa

    from fastndcg._api import ndcg
    from fastndcg._backends import PARALLEL_MIN_ROWS, numba_available
    from fastndcg._tables import ndcg_table
    from fastndcg.trec import ndcg_run

    start = time.perf_counter()
    if not numba_available():
        return 0.0
    # small inputs run on one thread, large ones on the thread pool (and threaded scans)
    for rows in (6, PARALLEL_MIN_ROWS):
        grades = np.arange(rows, dtype=np.int64) % 3
        scores = np.linspace(1.0, 0.0, rows)
        for qid in (
            np.arange(rows) // 3,
            np.arange(rows) // 3.0,
            (np.arange(rows) // 3).astype(np.int32),
        ):
            ndcg(grades, scores, qid=qid, k=[1, None], backend="numba")
            # Arrow columns arrive read-only, another array type to Numba: tables, Parquet,
            # streaming and the Dask and Spark tasks (which hand over float64 grades and scores)
            for grade_column in (grades, grades.astype(float)):
                table = pa.table({"qid": qid, "grade": grade_column, "score": scores})
                ndcg_table(table, k=[1, None], backend="numba")
        ndcg(grades.astype(float), scores.astype(np.float32), k=2, backend="numba")
        # compact columns, as Parquet files often hold them
        compact = {"grade": grades.astype(np.int8), "score": scores.astype(np.float32)}
        ndcg_table(pa.table({"qid": qid, **compact}), k=[1, None], backend="numba")
    # TREC runs: the join of a run with its judgments
    judgments = pa.table({"qid": ["q", "q"], "docid": ["a", "b"], "grade": [1.0, 0.0]})
    run = pa.table({"qid": ["q", "q"], "docid": ["a", "c"], "score": [0.5, 0.4]})
    ndcg_run(judgments, run, backend="numba")
    return time.perf_counter() - start


def cache_dir() -> str:
    """Where Numba keeps compiled kernels (``NUMBA_CACHE_DIR`` or beside the package)."""
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if configured:
        return configured
    return str(Path(__file__).resolve().parent / "__pycache__")


def info() -> dict[str, Any]:
    """Versions, backend and threading facts of this installation."""
    import pyarrow

    from fastndcg import __version__
    from fastndcg._backends import available_backends, numba_available, resolve_backend

    facts: dict[str, Any] = {
        "fastndcg": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
        "backends": ", ".join(available_backends()),
        "default backend": resolve_backend("auto"),
    }
    if numba_available():
        import numba

        warmup()
        facts.update(
            {
                "numba": numba.__version__,
                "threading layer": numba.threading_layer(),
                "threads": numba.get_num_threads(),
                "max threads (NUMBA_NUM_THREADS)": numba.config.NUMBA_NUM_THREADS,
                "cache dir": cache_dir(),
            }
        )
    else:
        facts["numba"] = "not installed (NumPy backend)"
    return facts
