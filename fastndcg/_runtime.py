"""Runtime facts and compile warm-up: what ``fastndcg info`` and ``fastndcg warmup`` report.

Both ask every backend that runs here through the contract: a
:class:`~fastndcg._contract.CompiledBackend` (the Numba one) is warmed up by calling the entry
points with it, and reports its own facts.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from fastndcg._backends import available_backends, get_backend, resolve_backend
from fastndcg._backends.tuning import PARALLEL_MIN_ROWS
from fastndcg._contract import Backend, CompiledBackend, capable

# The helper's share of a cold warm-up (see warmup)
_COMPILE_ASIDE = "from fastndcg._runtime import _compile_aside; _compile_aside({name!r})"
_SHORT_PATH_READY = b"short path compiled\n"
_HELPER_TIMEOUT_S = 600


def compiled_backends() -> list[Any]:
    """The backends that run here and compile their kernels on first use (best first)."""
    backends = (get_backend(name) for name in available_backends())
    return [backend for backend in backends if capable(backend, CompiledBackend)]


def warmup(*, compare: bool = False) -> float:
    """Compile (or load from the cache) every kernel fastndcg uses; return the seconds it took.

    The first call in a fresh environment compiles the Numba kernels (seconds); later calls, and
    later processes sharing the cache directory, only load them. Call it once before forking
    workers or timing anything. Without numba it returns at once. ``compare=True`` also
    compiles the resampling kernels of :func:`fastndcg.compare` (about 10-20 s more on an
    empty cache; ``fastndcg warmup --compare``). Every backend that compiles its kernels into a
    cache (:class:`~fastndcg._contract.CompiledBackend`) is warmed up.

    On an empty cache a helper process compiles the short-cutoff path of the scoring kernel
    and then the measure kernel into the cache, while this one compiles the general path, the
    input checks, the TREC join (and the resampling with ``compare=True``), and then the
    scoring kernel's driver, which links both paths from the cache: two cores share the work.
    Where no helper can start (or it fails) this process compiles everything itself.
    """
    start = time.perf_counter()
    backends = compiled_backends()
    if not backends:
        return 0.0
    for backend in backends:
        _warm_up(backend, compare)
    return time.perf_counter() - start


def _warm_up(backend: Any, compare: bool) -> None:
    """Compile one backend's kernels by calling the entry points with it."""
    import pyarrow as pa

    from fastndcg._api import ndcg
    from fastndcg._evaluate import evaluate
    from fastndcg._tables import ndcg_table
    from fastndcg.trec import ndcg_run

    name = backend.name
    helper = None if backend.compiled() else _start_aside(name)
    try:  # meanwhile compile the rest here (the calls below then load it or compile it)
        if helper is not None:
            plan = _small_plan(backend)
            backend.compile_part(plan, "general")
        _compile_checks(backend, PARALLEL_MIN_ROWS)
        _compile_trec(name)
        if compare:
            _compile_resampling(backend)
        if helper is not None:  # the driver links the short path from the cache: wait for it
            _wait_for_short_path(helper)
            backend.compile_part(plan, "whole")
    finally:
        if helper is not None:
            _wait_or_stop(helper)
    # small inputs run on one thread, large ones on the thread pool
    for rows in (6, PARALLEL_MIN_ROWS):
        grades = np.arange(rows, dtype=np.int64) % 3
        scores = np.linspace(1.0, 0.0, rows)
        for qid in (
            np.arange(rows) // 3,
            np.arange(rows) // 3.0,
            (np.arange(rows) // 3).astype(np.int32),
        ):
            ndcg(grades, scores, qid=qid, k=[1, None], backend=name)
            # Arrow columns arrive read-only, another array type to Numba: tables, Parquet,
            # streaming and the Dask and Spark tasks (which hand over float64 grades and scores)
            for grade_column in (grades, grades.astype(float)):
                table = pa.table({"qid": qid, "grade": grade_column, "score": scores})
                ndcg_table(table, k=[1, None], backend=name)
        ndcg(grades.astype(float), scores.astype(np.float32), k=2, backend=name)
        evaluate(grades, scores, qid=qid, measures=["P@1", "AP"], ties="stable", backend=name)
        # compact columns, as Parquet files often hold them
        compact = {"grade": grades.astype(np.int8), "score": scores.astype(np.float32)}
        ndcg_table(pa.table({"qid": qid, **compact}), k=[1, None], backend=name)
    judgments, run = _trec_tables()
    for options in _TREC_CASES:
        ndcg_run(judgments, run, backend=name, **options)


def _trec_tables() -> tuple[Any, Any]:
    """A run and its judgments, for the TREC join's kernels."""
    import pyarrow as pa

    judgments = pa.table({"qid": ["q", "q"], "docid": ["a", "b"], "grade": [1.0, 0.0]})
    run = pa.table({"qid": ["q", "q"], "docid": ["a", "c"], "score": [0.5, 0.4]})
    return judgments, run


# trec_eval's ties sort each query's document ids; max_docs is its -M
_TREC_CASES = ({"ties": "average"}, {"ties": "docid_desc"}, {"ties": "docid_desc", "max_docs": 1})


def _compile_trec(name: str) -> None:
    """Compile the join of a TREC run with its judgments, without the scoring.

    Document ids, the tie order by document id and the ``-M`` cut, through
    :func:`fastndcg.trec.prepare_run`.
    """
    from fastndcg.trec import prepare_run

    judgments, run = _trec_tables()
    for options in _TREC_CASES:
        prepare_run(judgments, run, backend=name, **options)


def _compile_measures(name: str) -> None:
    """Compile the measure kernel without the scoring one (measures reading whole rankings)."""
    from fastndcg._evaluate import evaluate

    grades = np.arange(6) % 3
    evaluate(grades, np.linspace(1.0, 0.0, 6), measures=["AP"], ties="stable", backend=name)


def _compile_resampling(backend: Any) -> None:
    """The sign-flip and bootstrap kernels of fastndcg.compare, on both kinds of draws.

    Any key does. A Poisson table of the kernels' width whose bounds no draw passes (every
    count 0: the top-up draws do the rest) and an empty one (direct draws only) take both paths
    of the bootstrap.
    """
    from fastndcg._contract.codes import POISSON_WIDTH

    diffs = np.linspace(-1.0, 1.0, 2 * 1100).reshape(2, 1100)
    backend.signflip_sums(diffs, 1, False, 64)
    backend.signflip_sums(np.ascontiguousarray(diffs[:, :3]), 1, True, 8)
    table = np.full(POISSON_WIDTH, 0xFFFFFFFF, dtype=np.uint32)
    for thresholds in (table, np.zeros(0, dtype=np.uint32)):
        backend.bootstrap_sums(diffs, 1, thresholds, 64)


def _small_plan(backend: Any) -> Any:
    """A plan of two rows whose types are those of every plan (one compiled signature)."""
    from fastndcg._core.definition import Definition
    from fastndcg._core.layout import build_layout

    layout = build_layout(np.array([1, 0]), np.array([0.5, 0.1]), backend=backend)
    return Definition.create(k=1, backend=backend.name).plan(layout)


def _compile_aside(name: str) -> None:
    """The helper's share of a cold warm-up: the short-cutoff path, then the measure kernel.

    Says on its standard output when the short-cutoff path is in the cache.
    """
    backend = get_backend(name)
    backend.compile_part(_small_plan(backend), "short")
    sys.stdout.buffer.write(_SHORT_PATH_READY)
    sys.stdout.flush()
    _compile_measures(name)


def _start_aside(name: str) -> subprocess.Popen | None:
    """Start a process that compiles its share of backend ``name``'s kernels into the cache.

    None where no process can start.

    The helper runs isolated (``python -I``: no current directory, no ``PYTHON*`` variables
    on its path) with this process's own import path, so a ``numpy.py`` in the current
    directory cannot run in it. A frozen application's executable is not a Python
    interpreter: no helper there.
    """
    if getattr(sys, "frozen", False) or not sys.executable:
        return None
    package_parent = str(Path(__file__).resolve().parent.parent)
    cwd = os.getcwd()
    path = [package_parent] + [
        p for p in sys.path if p and os.path.isabs(p) and p not in (cwd, package_parent)
    ]
    code = f"import sys; sys.path[:] = {path!r}; {_COMPILE_ASIDE.format(name=name)}"
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-c", code],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError:
        return None


def _wait_for_short_path(helper: subprocess.Popen) -> None:
    """Wait until the helper says the short-cutoff path is in the cache, or has ended.

    A helper that says nothing for far longer than a compile can take is stopped (whatever it
    did not compile is then compiled here).
    """
    stop = threading.Timer(_HELPER_TIMEOUT_S, helper.kill)
    stop.start()
    try:
        helper.stdout.readline()  # (end of file where the helper failed)
    finally:
        stop.cancel()


def _wait_or_stop(helper: subprocess.Popen) -> None:
    """Wait for the helper; stop it if it takes far longer than a compile can.

    A helper that failed is reported in a warning: the kernel is then compiled here.
    """
    try:
        _, err = helper.communicate(timeout=_HELPER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        helper.kill()
        helper.communicate()
        return
    if helper.returncode:
        last = err.decode(errors="replace").strip().splitlines()[-1:] if err else []
        warnings.warn(
            f"fastndcg: the process compiling kernels aside failed (exit status "
            f"{helper.returncode}{': ' + last[0] if last else ''}); compiling its share here",
            RuntimeWarning,
            stacklevel=3,
        )


def _compile_checks(backend: Backend, rows: int) -> None:
    """Compile the kernels of the input checks as the common calls use them.

    Column scans for integer and float grades and scores (``rows`` long: shorter columns are
    scanned by NumPy), the run bounds of integer and float query ids, the matching of a TREC
    run's (query, document) pairs and the separator check of TREC files.
    """
    import pyarrow as pa

    for dtype in (np.int64, np.int8, np.float64, np.float32):
        backend.column_stats(np.zeros(rows, dtype=dtype))
    for dtype in (np.int64, np.int32, np.float64):
        backend.run_bounds(np.zeros(2, dtype=dtype))
    docids = pa.chunked_array([["a"]])
    _, ids = backend.document_ids(docids, docids, ordered=False)
    one = np.array([0, 1], dtype=np.int64)
    backend.match_judgments(one, None, ids, np.zeros(2, np.int64), one[:0], ids, np.zeros(0))
    # the separator check of TREC files, on the read-only bytes of the mapped file
    data = np.zeros(24, dtype=np.uint8)
    data.setflags(write=False)
    backend.stray_whitespace(data, ord(" "), ord("\t"))


def cache_dir() -> str | None:
    """Where the compiled kernels are cached (the first compiled backend's); None without one."""
    backends = compiled_backends()
    return backends[0].cache_dir() if backends else None


def info() -> dict[str, Any]:
    """Versions, backend and threading facts of this installation."""
    import pyarrow

    from fastndcg._version import __version__

    facts: dict[str, Any] = {
        "fastndcg": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
        "backends": ", ".join(available_backends()),
        "default backend": resolve_backend("auto").name,
    }
    backends = compiled_backends()
    if backends:
        warmup()  # the threading layer is known once a kernel ran
        for backend in backends:
            facts.update(backend.facts())
    else:
        facts["compiled kernels"] = "none here (no numba: the NumPy backend)"
    return facts
