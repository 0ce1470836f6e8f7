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
    from fastndcg._api import ndcg
    from fastndcg._backends import numba_available

    start = time.perf_counter()
    if not numba_available():
        return 0.0
    grades = np.array([1, 0, 2], dtype=np.int64)
    scores = np.array([0.3, 0.2, 0.1])
    for qid in (np.array([1, 1, 2]), np.array([1.0, 1.0, 2.0]), np.array([1, 1, 2], np.int32)):
        ndcg(grades, scores, qid=qid, k=[1, None], backend="numba")
    ndcg(grades.astype(float), scores.astype(np.float32), k=2, backend="numba")
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
