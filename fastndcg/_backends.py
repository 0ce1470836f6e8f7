"""Choose the backend that runs a plan, and run it.

``"numba"`` runs the kernels of :mod:`fastndcg._kernels` on a thread pool; ``"numpy"`` runs the
vectorised twin of :mod:`fastndcg._numpy`. ``"auto"`` picks numba when it can be imported and
``FASTNDCG_BACKEND`` does not say otherwise. numba is imported lazily, on first use.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from functools import cache
from types import ModuleType

import numpy as np

from fastndcg._options import BACKENDS, choose
from fastndcg._plan import Plan
from fastndcg._scan import GRADE_DTYPES, SCORE_DTYPES, run_chunks, views

ENV_BACKEND = "FASTNDCG_BACKEND"
_CHUNKS_PER_THREAD = 4
_QUERY_COST_IN_ROWS = 8  # fixed per-query work, in row equivalents, when balancing chunks
# Below this many rows one thread runs: waking threads would cost more than it saves. (On the
# README's machine the two break even at about 150,000 rows of NDCG@10 lists of 100.)
PARALLEL_MIN_ROWS = 1 << 17
_MANY_ROWS = 1 << 20  # from here on, _CHUNKS_PER_THREAD chunks per thread


@cache
def _numba_kernels() -> ModuleType | None:
    try:
        from fastndcg import _kernels
    except ImportError:
        return None
    return _kernels


def numba_available() -> bool:
    """True when numba can be imported (then ``backend="numba"`` works)."""
    return _numba_kernels() is not None


def available_backends() -> tuple[str, ...]:
    """Names of the backends that can run here, best first."""
    return ("numba", "numpy") if numba_available() else ("numpy",)


def resolve_backend(backend: str) -> str:
    """Resolve ``"auto"`` (and the ``FASTNDCG_BACKEND`` override) to a concrete backend."""
    choose("backend", backend, BACKENDS)
    if backend == "auto":
        backend = os.environ.get(ENV_BACKEND, "auto") or "auto"
        choose(f"{ENV_BACKEND} environment variable", backend, BACKENDS)
    if backend == "auto":
        return "numba" if numba_available() else "numpy"
    if backend == "numba" and not numba_available():
        raise ImportError(
            "backend='numba' needs numba, which cannot be imported here; install it "
            "(pip install numba) or use backend='numpy'"
        )
    return backend


@contextlib.contextmanager
def thread_limit(backend: str, n_threads: int | None) -> Iterator[None]:
    """Run the block with ``n_threads`` Numba threads (numba backend), restoring the count after.

    The NumPy backend runs on one thread; ``n_threads`` is checked but has no effect there.
    """
    if n_threads is not None and (
        isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer))
    ):
        raise TypeError(f"n_threads must be a positive int or None; got {n_threads!r}")
    if backend != "numba":
        if n_threads is not None and n_threads < 1:
            raise ValueError(f"n_threads must be a positive int or None; got {n_threads}")
        yield
        return
    import numba

    if n_threads is None:
        yield
        return
    ceiling = numba.config.NUMBA_NUM_THREADS
    if not 1 <= n_threads <= ceiling:
        raise ValueError(
            f"n_threads must be between 1 and {ceiling} (NUMBA_NUM_THREADS, set before numba "
            f"is imported, is the ceiling); got {n_threads}"
        )
    previous = numba.get_num_threads()
    numba.set_num_threads(int(n_threads))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def chunk_bounds(offsets: np.ndarray, n_chunks: int) -> np.ndarray:
    """Split queries into at most ``n_chunks`` runs of about equal work (rows plus a fixed cost)."""
    n_queries = offsets.size - 1
    if n_queries == 0:
        return np.zeros(1, dtype=np.int64)
    cost = offsets + _QUERY_COST_IN_ROWS * np.arange(n_queries + 1)
    targets = np.linspace(0, cost[-1], n_chunks + 1)
    bounds = np.searchsorted(cost, targets, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, n_queries
    return np.unique(bounds)


def run_plan(plan: Plan, backend: str) -> tuple[np.ndarray, np.ndarray, int]:
    """DCG and IDCG arrays (n_queries, n_cutoffs) for ``plan`` on a concrete backend.

    The third value counts the NaN or infinite scores the numba kernel met as it read them
    (always 0 from the NumPy backend, whose caller checks the scores beforehand).
    Call it inside :func:`thread_limit`; the numba backend uses the current thread count.
    """
    if backend == "numpy":
        from fastndcg import _numpy

        return (*_numpy.score_queries(plan), 0)
    import numba

    kernels = _numba_kernels()
    assert kernels is not None
    threads = numba.get_num_threads()
    rows = plan.offsets[-1]
    dcg = np.zeros((plan.cutoffs.size, plan.n_queries))  # the kernel's layout; returned as .T
    idcg = np.zeros_like(dcg)
    inputs = kernel_inputs(plan)
    if threads == 1 or rows < PARALLEL_MIN_ROWS:
        nonfinite = kernels.score_queries(0, plan.n_queries, inputs, dcg, idcg)
        return dcg.T, idcg.T, nonfinite
    # large inputs in more chunks than threads, so that a slow chunk does not hold the others
    bounds = chunk_bounds(plan.offsets, threads * (_CHUNKS_PER_THREAD if rows >= _MANY_ROWS else 1))
    counts = run_chunks(
        lambda c: kernels.score_queries(bounds[c], bounds[c + 1], inputs, dcg, idcg),
        bounds.size - 1,
        threads,
    )
    return dcg.T, idcg.T, sum(counts)


def kernel_inputs(plan: Plan) -> tuple:
    """The ``inputs`` tuple of ``_kernels.score_queries`` for ``plan``.

    Slots 0-4 and 18-20 hold the data (offsets, grade views and code, score views and code;
    judgment offsets, views and code); the others depend only on the options and on what the
    plan derived from the data (see ``fastndcg.Scorer``, which reuses them).
    """
    grades, grade_code = views(plan.grades, GRADE_DTYPES)
    ideal_grades, ideal_code = views(plan.ideal_grades, GRADE_DTYPES)
    scores, score_code = views(
        plan.scores if plan.scores is not None else plan.discount[:0], SCORE_DTYPES
    )
    return (
        plan.offsets,
        grades,
        grade_code,
        scores,
        score_code,
        plan.scores is None,
        plan.tie_mode,
        plan.tie_key,
        np.uint64(plan.seed),
        plan.gain_mode,
        plan.gain_table,
        plan.level_order,
        plan.level_gain,
        plan.discount,
        plan.discount_prefix,
        plan.cutoffs,
        plan.k_max,
        plan.ideal_mode,
        plan.ideal_offsets,
        ideal_grades,
        ideal_code,
        plan.max_gain,
    )
