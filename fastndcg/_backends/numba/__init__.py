"""The Numba backend: compiled kernels run on the process-wide thread pool.

The kernels live in one file per call tree (``score.py``, ``scan.py``, ``trec.py``), so that
Numba's per-file cache invalidation sees every change of a tree. numba is imported when the
backend is first loaded, never at ``import fastndcg``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from fastndcg._backends import tuning
from fastndcg._backends.numba.args import NO_SHARED, KernelArgs
from fastndcg._backends.numpy import scan as numpy_scan
from fastndcg._backends.numpy import score as numpy_score
from fastndcg._backends.numpy import trec as numpy_trec
from fastndcg._backends.parallel import by_query_chunks, chunk_bounds, resample_bounds, run_chunks
from fastndcg._contract import (
    ColumnStats,
    DocumentIds,
    ListScorer,
    MeasurePlan,
    MeasureValues,
    Plan,
    readonly,
)
from fastndcg._errors import OptionError

# query id dtypes the run-bound kernel reads (native byte order); others are compared by NumPy
_RUN_DTYPES = tuple(
    np.dtype(t) for t in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8")
)
_NO_ORDER = np.zeros(0, dtype=np.int64)  # rows already grouped by query
COMPILE_REPORT_S = 1.0  # a first call compiling longer than this says so


def _import_kernels() -> tuple[Any, Any, Any, Any]:
    """Numba and the three kernel modules; an interrupted import leaves nothing half-made.

    A KeyboardInterrupt while numba imports would leave a partly initialised ``numba`` in
    ``sys.modules``, and every later import would fail on it: those modules are dropped, so
    the next call imports them again. Where Numba finds no writable cache directory (a
    read-only install run by a user without a writable home), the kernels are cached in a
    temporary directory for this process, with a warning naming ``NUMBA_CACHE_DIR``.
    """
    try:
        import numba

        try:
            from fastndcg._backends.numba import scan, score, trec
        except RuntimeError as exc:
            if "no locator available" not in str(exc):
                raise
            _forget(__name__)
            _cache_in_a_temporary_directory(numba)
            from fastndcg._backends.numba import scan, score, trec
    except BaseException as exc:
        if not isinstance(exc, ImportError):
            _forget("numba", "llvmlite", __name__)
        raise
    return numba, score, scan, trec


def _forget(*packages: str) -> None:
    """Drop the modules of ``packages`` from ``sys.modules`` (the packages themselves stay).

    ``numba`` and ``llvmlite`` go whole; this backend's package keeps its ``__init__`` (this
    module) and loses its kernel modules.
    """
    for name in list(sys.modules):
        top = name.split(".")[0]
        if top in packages or any(name.startswith(p + ".") for p in packages):
            del sys.modules[name]


def _cache_in_a_temporary_directory(numba: Any) -> None:
    """Point Numba's cache at a new temporary directory (removed at exit), and say so once."""
    import atexit
    import shutil
    import tempfile
    import warnings

    directory = tempfile.mkdtemp(prefix="fastndcg-numba-cache-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    numba.config.CACHE_DIR = directory
    warnings.warn(
        "fastndcg: no writable Numba cache directory (neither beside the installed package nor "
        f"in the home directory); kernels are compiled into {directory} for this process only. "
        "Set NUMBA_CACHE_DIR to a writable directory to compile them once for every process",
        RuntimeWarning,
        stacklevel=2,
    )


class NumbaBackend:
    """Numba kernels on fastndcg's thread pool (see :mod:`fastndcg._backends`).

    Besides the operations of :class:`fastndcg._contract.Backend` it scores one list at a time
    with little per-call work (a :class:`~fastndcg._contract.ListScoringBackend`) and compiles
    its kernels into Numba's cache (a :class:`~fastndcg._contract.CompiledBackend`).
    """

    name = "numba"
    checks_scores = True
    shares_rankings = True  # score() writes Plan.shared: the measures read nDCG's ranking
    checks_grades = True  # as it counts them for IDCG (see _contract.GradeCheckingBackend)

    def __init__(self) -> None:
        self._numba, self.kernels, self._scan, self._trec = _import_kernels()

    # -- threads -----------------------------------------------------------------------------

    def thread_count(self) -> int:
        """Numba's current thread count (this thread included)."""
        return self._numba.get_num_threads()

    def thread_ceiling(self) -> int:
        """``NUMBA_NUM_THREADS``, fixed before numba is imported."""
        return self._numba.config.NUMBA_NUM_THREADS

    @contextlib.contextmanager
    def threads(self, n_threads: int | None) -> Iterator[None]:
        """Run the block with ``n_threads`` Numba threads, restoring the count after."""
        if n_threads is None:
            yield
            return
        ceiling = self._numba.config.NUMBA_NUM_THREADS
        if not 1 <= n_threads <= ceiling:
            raise OptionError(
                f"`n_threads` must be between 1 and {ceiling} (NUMBA_NUM_THREADS, set before "
                "numba is imported, is the ceiling)",
                option="n_threads",
                value=n_threads,
                fix=f"got {n_threads}",
            )
        previous = self._numba.get_num_threads()
        self._numba.set_num_threads(int(n_threads))
        try:
            yield
        finally:
            self._numba.set_num_threads(previous)

    # -- scoring -----------------------------------------------------------------------------

    def score(self, plan: Plan) -> tuple[np.ndarray, np.ndarray, int]:
        """DCG and IDCG of ``plan`` (see :class:`fastndcg._contract.Backend`)."""
        if self.kernels.score_queries.overloads:
            return self._score(plan)
        with self._reporting_a_compile():  # the first call of this process
            return self._score(plan)

    @contextlib.contextmanager
    def _reporting_a_compile(self) -> Iterator[None]:
        """Log once (logger ``fastndcg``, INFO) a first call that compiled for over a second."""
        cached = self.compiled()
        start = time.perf_counter()
        yield
        seconds = time.perf_counter() - start
        if not cached and seconds > COMPILE_REPORT_S:
            logging.getLogger("fastndcg").info(
                "compiled the Numba scoring kernel in %.1f s, once: later calls and processes "
                "load it from the cache in %s (`fastndcg warmup` compiles it ahead)",
                seconds,
                self.cache_dir(),
            )

    def _score(self, plan: Plan) -> tuple[np.ndarray, np.ndarray, int]:
        kernel = self.kernels.score_queries
        threads = self.thread_count()
        rows = plan.offsets[-1]
        dcg = np.zeros((plan.cutoffs.size, plan.n_queries))  # the kernel's layout; returned as .T
        idcg = np.zeros_like(dcg)
        args = KernelArgs.of(plan).packed()
        if threads == 1 or rows < tuning.PARALLEL_MIN_ROWS:
            nonfinite = kernel(0, plan.n_queries, args, dcg, idcg)
            return dcg.T, idcg.T, nonfinite
        # large inputs in more chunks than threads, so that a slow chunk does not hold the others
        per_thread = tuning.CHUNKS_PER_THREAD if rows >= tuning.MANY_ROWS else 1
        bounds = chunk_bounds(plan.offsets, threads * per_thread)
        counts = run_chunks(
            lambda c: kernel(bounds[c], bounds[c + 1], args, dcg, idcg), bounds.size - 1, threads
        )
        return dcg.T, idcg.T, sum(counts)

    def measures(self, plan: MeasurePlan) -> MeasureValues:
        """The measures beside NDCG of ``plan``, in chunks of queries on the thread pool.

        Each query is computed by the same serial code whatever its chunk (``measures.py``).
        """
        from fastndcg._backends.numba.measures import MeasureArgs, measure_queries

        empty = np.zeros(0)
        shared = plan.shared or NO_SHARED
        args = MeasureArgs(
            plan.offsets,
            readonly(empty if plan.scores is None else plan.scores),  # (one signature)
            plan.scores is None,
            plan.labels,
            plan.tie_mode,
            plan.tie_key,
            np.uint64(plan.seed),
            plan.measures,
            plan.params,
            plan.judged_offsets,
            plan.judged_grades,
            plan.levels,
            plan.skip_negative,
            plan.err_stop,
            plan.depth,
            shared.rows,
            shared.grades,
            shared.level_counts,
        )
        # (measures, queries) in row order, handed back transposed: the core reads the values
        # measure by measure, and a C-ordered array is one type to Numba whatever its shape (an
        # F-ordered one with one row or column is also C-ordered: a second compile)
        out = np.empty((plan.measures.shape[0], plan.n_queries))
        relevant = np.zeros((plan.n_queries, plan.levels.size), dtype=np.int64)
        threads = self.thread_count()
        if threads == 1 or plan.offsets[-1] < tuning.PARALLEL_MIN_ROWS:
            found = [measure_queries(0, plan.n_queries, args, out, relevant)]
        else:
            bounds = chunk_bounds(plan.offsets, threads * tuning.CHUNKS_PER_THREAD)
            found = run_chunks(
                lambda c: measure_queries(bounds[c], bounds[c + 1], args, out, relevant),
                bounds.size - 1,
                threads,
            )
        bad = [row for _, row in found if row >= 0]  # chunks in order: the first is the first
        return MeasureValues(out.T, relevant, sum(n for n, _ in found), bad[0] if bad else -1)

    def list_scorer(
        self, plan_of: Callable[[np.ndarray, np.ndarray], Plan], n_cutoffs: int
    ) -> ListScorer:
        """One list per call on this thread (:mod:`fastndcg._backends.numba.lists`)."""
        from fastndcg._backends.numba.lists import NumbaListScorer

        return NumbaListScorer(self, plan_of, n_cutoffs)

    def rank_query(self, plan: Plan, query: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The NumPy twin's ranking of one query (the kernels rank the same way)."""
        return numpy_score.rank_query(plan, query)

    # -- scans -------------------------------------------------------------------------------

    def scan_list(self, values: np.ndarray, integral: bool) -> tuple[float, float, int, int]:
        """min, max, non-finite and non-integral count of read-only ``values``, on this thread.

        Integer columns are finite and integral: only their range is scanned.
        """
        if values.dtype.kind == "f":
            return self._scan.scan_floats(values, 0, values.size, integral)
        low, high = self._scan.scan_integers(values, 0, values.size)
        return low, high, 0, 0

    def _scan_part(
        self, values: np.ndarray, a: int, b: int, integral: bool
    ) -> tuple[float, float, int, int]:
        if values.dtype.kind == "f":
            return self._scan.scan_floats(values, a, b, integral)
        low, high = self._scan.scan_integers(values, a, b)
        return low, high, 0, 0

    def column_stats(self, values: np.ndarray, integral: bool = True) -> ColumnStats:
        """One scan of ``values``: a kernel (long columns in chunks on threads), else NumPy."""
        if values.size < tuning.SCAN_KERNEL_ROWS:
            return numpy_scan.column_stats(values, integral)
        values = readonly(values)
        threads = self.thread_count()
        if threads == 1 or values.size < tuning.SCAN_PARALLEL_ROWS:
            parts = [self._scan_part(values, 0, values.size, integral)]
        else:
            bounds = np.linspace(0, values.size, 2 * threads + 1).astype(np.int64)
            scan = lambda c: self._scan_part(values, bounds[c], bounds[c + 1], integral)  # noqa: E731
            parts = run_chunks(scan, bounds.size - 1, threads)
        low = min(p[0] for p in parts)
        high = max(p[1] for p in parts)
        bad = -1
        frac = -1
        if sum(p[2] for p in parts):  # rare: locate the first offending row
            bad = int(self._scan.first_row(values, 0, values.size, True))
        elif sum(p[3] for p in parts):
            frac = int(self._scan.first_row(values, 0, values.size, False))
        return ColumnStats(float(low), float(high), bad, frac)

    def run_bounds(self, ids: np.ndarray) -> np.ndarray:
        """Start row of every run of equal consecutive ids, and the row count at the end."""
        if ids.dtype in _RUN_DTYPES:
            return self._scan.run_starts(readonly(np.ascontiguousarray(ids)))
        return numpy_scan.run_bounds(ids)

    # -- TREC --------------------------------------------------------------------------------

    def stray_whitespace(self, data: np.ndarray, separator: int, other: int) -> bool:
        """Whether the bytes ``data`` hold whitespace besides single ``separator`` bytes.

        8 bytes at a time in 64-bit words, read in little-endian order (elsewhere: NumPy).
        """
        if sys.byteorder != "little":
            return numpy_trec.stray_whitespace(data, separator, other)
        kernel = self._trec.stray_whitespace
        threads = self.thread_count()
        body = data.size // 8 - 1  # whole words followed by another whole word
        if body > 0:
            words = data[: (body + 1) * 8].view(np.uint64)
            chunks = 4 * threads
            bounds = np.linspace(0, body, chunks + 1).astype(np.int64)
            found = run_chunks(
                lambda c: kernel(words, bounds[c], bounds[c + 1], separator, other),
                chunks,
                threads,
            )
            if any(found):
                return True
        tail = np.zeros(24, dtype=np.uint8)  # the last 8-15 bytes (or all of a short file), padded
        rest = data[max(body, 0) * 8 :]
        tail[: rest.size] = rest
        tail.setflags(write=False)  # read-only like the mapped file: one compiled signature
        return bool(kernel(tail.view(np.uint64), 0, 2, separator, other))

    def document_ids(self, judged: Any, run: Any, ordered: bool) -> tuple[DocumentIds, DocumentIds]:
        """Both sides' ids as bytes: each query is joined on its own ids, nothing hashed globally.

        With millions of distinct ids (a real collection) a global hash table outgrows the CPU
        caches and costs seconds.
        """
        return DocumentIds(judged, *_id_bytes(judged)), DocumentIds(run, *_id_bytes(run))

    def match_judgments(
        self,
        offsets: np.ndarray,
        order: np.ndarray | None,
        ids: DocumentIds,
        judged_offsets: np.ndarray,
        judged_rows: np.ndarray,
        judged_ids: DocumentIds,
        judged_labels: np.ndarray,
    ) -> tuple[np.ndarray, int]:
        """Join each query's run rows with its judgments (see the protocol)."""
        kernel = self._trec.match_judgments
        labels = readonly(np.asarray(judged_labels, dtype=np.float64))  # one signature
        out = np.empty(len(ids.column))
        order = _NO_ORDER if order is None else order

        def join(q0: int, q1: int) -> int:
            duplicate = np.full(1, -1, dtype=np.int64)
            kernel(
                q0,
                q1,
                offsets,
                order,
                ids.bounds,
                ids.data,
                judged_offsets,
                judged_rows,
                judged_ids.bounds,
                judged_ids.data,
                labels,
                out,
                duplicate,
            )
            return int(duplicate[0])

        found = [d for d in by_query_chunks(offsets, join, self.thread_count()) if d >= 0]
        return out, min(found) if found else -1

    def docid_ranks(
        self, offsets: np.ndarray, order: np.ndarray | None, ids: DocumentIds, scores: np.ndarray
    ) -> np.ndarray:
        """Each query's ids sorted on their own, only in queries with tied ``scores``."""
        kernel = self._trec.descending_id_ranks
        ranks = np.empty(len(ids.column), dtype=np.int64)
        order = _NO_ORDER if order is None else order
        bits = scores.view(np.uint64)
        by_query_chunks(
            offsets,
            lambda q0, q1: kernel(
                q0, q1, offsets, order, ids.bounds, ids.data, scores, bits, ranks
            ),
            self.thread_count(),
        )
        return ranks

    def first_ranked(
        self,
        offsets: np.ndarray,
        order: np.ndarray | None,
        scores: np.ndarray,
        tie_key: np.ndarray | None,
        max_docs: int,
    ) -> np.ndarray:
        """A selection within each query (no sort): ``O(n log max_docs)`` per query."""
        kernel = self._trec.first_ranked
        keep = np.zeros(scores.size, dtype=bool)
        order = _NO_ORDER if order is None else order
        key = _NO_ORDER if tie_key is None else tie_key
        by_query_chunks(
            offsets,
            lambda q0, q1: kernel(q0, q1, offsets, order, scores, key, max_docs, keep),
            self.thread_count(),
        )
        return keep

    # -- resampling (fastndcg.compare) -----------------------------------------------------

    @functools.cached_property
    def _resample(self) -> Any:
        """The resampling kernels, imported on first use (scoring never needs them)."""
        from fastndcg._backends.numba import resample

        return resample

    def _resamples(
        self,
        kernel: Any,
        args: tuple,
        n_resamples: int,
        shape: tuple[int, int],
        n_chunks: int | None,
        first: int,
    ) -> np.ndarray:
        """``kernel(*args, start, stop, first, out)`` over chunks of resamples on the pool.

        By default the resamples are split into chunks of at most ``CHUNK_WORK`` query-column
        products (and at least ``CHUNKS_PER_THREAD`` per thread), so that each kernel call is
        short and Ctrl-C is honoured between them (``parallel.run_chunks``).
        """
        n_cols, n = shape
        out = np.empty((n_resamples, n_cols))
        threads = self.thread_count()
        if n_chunks is None:
            work = n_resamples * max(1, n) * n_cols
            least = threads * tuning.CHUNKS_PER_THREAD if threads > 1 else 1
            n_chunks = max(least, -(-work // self._resample.CHUNK_WORK))
        bounds = first + resample_bounds(n_resamples, n_chunks, self._resample.LANES)
        run_chunks(
            lambda c: kernel(*args, int(bounds[c]), int(bounds[c + 1]), first, out),
            bounds.size - 1,
            threads,
        )
        return out

    def signflip_sums(
        self,
        diffs: np.ndarray,
        key: int,
        exact: bool,
        n_resamples: int,
        n_chunks: int | None = None,
        first: int = 0,
    ) -> np.ndarray:
        """Sign-flipped sums of every row of ``diffs``, chunks of resamples on threads."""
        args = (diffs, np.uint64(key), bool(exact))
        return self._resamples(
            self._resample.signflip_sums, args, n_resamples, diffs.shape, n_chunks, first
        )

    def bootstrap_sums(
        self,
        values: np.ndarray,
        key: int,
        thresholds: np.ndarray,
        n_resamples: int,
        n_chunks: int | None = None,
        first: int = 0,
    ) -> np.ndarray:
        """Bootstrap sums of every row of ``values``, chunks of resamples on threads."""
        args = (values, np.ascontiguousarray(values.T), np.uint64(key), thresholds)
        return self._resamples(
            self._resample.bootstrap_sums, args, n_resamples, values.shape, n_chunks, first
        )

    # -- the compile cache -------------------------------------------------------------------

    def compiled(self) -> bool:
        """Whether the scoring kernel is compiled in this process or in the compile cache."""
        kernel = self.kernels.score_queries
        if kernel.overloads:
            return True
        try:  # Numba's cache index for the current source (empty when stale or missing)
            return bool(kernel._cache._cache_file._load_index())
        except Exception:  # another Numba version: report not cached
            return False

    def cache_dir(self) -> str:
        """The directory Numba's cache of the kernels is in (where this process put it)."""
        return str(self.kernels.score_queries._cache._cache_path)

    def compile_part(self, plan: Plan, part: str) -> None:
        """Compile ``part`` of the scoring kernel into the cache (see the contract)."""
        out = np.zeros((plan.cutoffs.size, plan.n_queries))
        self.kernels.compile_part(part, KernelArgs.of(plan).packed(), out, out)

    def compiled_codes(self) -> tuple[int, ...]:
        """The integer codes as frozen into the compiled scoring kernel (a stale-cache check)."""
        return self.kernels.compiled_codes()

    def facts(self) -> dict[str, Any]:
        """Numba's version, threading layer, thread counts and cache directory."""
        numba = self._numba
        return {
            "numba": numba.__version__,
            "threading layer": numba.threading_layer(),
            "threads": numba.get_num_threads(),
            "max threads (NUMBA_NUM_THREADS)": numba.config.NUMBA_NUM_THREADS,
            "cache dir": self.cache_dir(),
        }


def _id_bytes(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(bounds, data)`` of a string column without nulls: value ``r`` is ``data[b[r]:b[r + 1]]``.

    Arrow combines the chunks into one buffer (with 64-bit offsets: no 2 GiB limit), in its own
    memory pool, which reuses what the CSV reader freed; both arrays are views of it.
    """
    import pyarrow as pa

    combined = column.cast(pa.large_string()).combine_chunks()
    n = len(combined)
    _, offsets, data = combined.buffers()
    if offsets is None:  # no values
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    bounds = np.frombuffer(offsets, dtype=np.int64)[combined.offset : combined.offset + n + 1]
    return bounds, np.zeros(0, dtype=np.uint8) if data is None else np.frombuffer(data, np.uint8)
