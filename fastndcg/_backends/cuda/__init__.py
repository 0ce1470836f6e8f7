"""The CUDA backend: numba-cuda kernels on an NVIDIA GPU (``backend="cuda"``).

Loaded on first use, never at ``import fastndcg``. It needs numba-cuda (the extra
``fastndcg[cuda]``), a CUDA driver and a device; where one is missing, ``backend="cuda"`` is a
:class:`~fastndcg.BackendUnavailableError` naming it. ``backend="auto"`` picks it for inputs in
device memory only (see :mod:`fastndcg._backends.cuda.columns`).

What runs where
---------------
- **On the device**: scoring (:meth:`CudaBackend.score`: DCG and IDCG of every query, every
  option of the Numba kernel), and the validation of device columns (:meth:`column_stats`,
  :meth:`first_where`: block reductions whose few numbers come back to the host), conversions
  and gathers of device columns.
- **On the host** (the Numba backend, else the NumPy one): everything that reads host data or
  Python objects: scans of host columns, the runs of query ids (a device ``qid`` is copied to
  the host and grouped there; grades and scores stay on the device and are gathered there when
  rows move; device offsets are copied for planning, and int64 ones are read in place), the
  TREC join and its document ids, the options and the plan, the aggregation of the per-query
  DCG and IDCG (as for every backend), and the resampling of comparisons (per-query values are
  host arrays). Host arrays given with ``backend="cuda"`` are validated on the host and copied
  to the device once, by :meth:`score`.

Scoring (kernels in ``score.py``, ``groups.py`` and ``sort.py``; sizes in ``common.py``)
---------------------------------------------------------------------------------------
Queries fall in three size classes. Lists of at most ``SMALL`` rows (64) are scored one thread
per list by the Numba kernel's serial algorithm. Lists of at most ``CAP`` rows (1,024) are
filed by width on the device (``groups.classify``; the host reads back a few counts) and sorted
whole in shared memory, several lists of one width per block, by a bitonic network; one thread
per list then walks its ranking as the serial kernel does (``groups.score_groups``). Longer
lists are sorted in chunks: one block of ``THREADS`` threads per chunk of ``CAP`` rows, and the
runs are merged by passes over the whole grid (a list of ten million rows is 9,766 chunks on
every multiprocessor at once, not one warp), keeping only the ``count`` best (``k``, or the
whole list); one block per list then sums the DCG by block reductions. The ideal of a list
counts its grade levels when grades are small integers (while its rows are loaded, for lists of
one chunk), else sorts its gains the same way. Every sum has a fixed order (no floating-point
atomics): the same input gives the same bits on every run.

Options the GPU cannot do itself: a callable gain or a gain dict with device grades computes
the gains on the host (the grades are copied there and the gains back). Everything else runs
on the device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fastndcg._backends.cuda.memory import on_cuda_device
from fastndcg._contract import Columns, ColumnStats, Plan


class CudaUnavailable(ImportError):
    """The CUDA backend cannot run here; ``missing`` words what is missing and the fix."""

    def __init__(self, missing: str) -> None:
        super().__init__(missing)
        self.missing = missing


INSTALL = "install it (pip install 'fastndcg[cuda]')"
MISSING_PACKAGE = f"numba-cuda, which cannot be imported here; {INSTALL}"
MISSING_DRIVER = (
    "a CUDA driver, which numba-cuda cannot find here (no libcuda); install the NVIDIA driver"
)
MISSING_DEVICE = "a CUDA device, which the driver does not report here; run on a machine with one"


def ensure_numpy_aliases() -> None:
    """Give NumPy the names numba-cuda still uses.

    numba-cuda 0.30.4 registers a typing template for ``np.row_stack``, which NumPy 2.5 removed
    (``AttributeError: module 'numpy' has no attribute 'row_stack'`` when the first kernel
    compiles). ``np.row_stack`` was an alias of ``np.vstack``; it is set back, before numba-cuda
    is imported, only where it is missing.
    """
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack  # noqa: NPY201


def import_cuda() -> Any:
    """numba-cuda's ``numba.cuda`` module, usable here; CudaUnavailable says what is missing."""
    ensure_numpy_aliases()
    try:
        from numba import cuda
    except ImportError as exc:
        raise CudaUnavailable(MISSING_PACKAGE) from exc
    if cuda.config.ENABLE_CUDASIM:
        return cuda
    try:
        devices = len(cuda.gpus)
    except Exception as exc:  # CudaSupportError: no driver library, or it failed to start
        text = str(exc).lower()
        if "driver" in text and ("cannot be found" in text or "not found" in text):
            raise CudaUnavailable(MISSING_DRIVER) from exc
        raise CudaUnavailable(
            f"a working CUDA driver, which failed to start here ({str(exc).strip()}); "
            "check the NVIDIA driver"
        ) from exc
    if devices == 0:
        raise CudaUnavailable(MISSING_DEVICE)
    return cuda


def on_host(operation: str, why: str) -> Any:
    """A method of :class:`CudaBackend` handing ``operation`` to the host backend unchanged."""

    def delegate(self: CudaBackend, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.host, operation)(*args, **kwargs)

    delegate.__name__ = operation
    delegate.__qualname__ = f"CudaBackend.{operation}"
    delegate.__doc__ = f"On the host ({why}); see :meth:`fastndcg._contract.Backend.{operation}`."
    return delegate


class CudaBackend:
    """numba-cuda kernels on the current CUDA device (see :mod:`fastndcg._backends.cuda`).

    Besides the operations of :class:`fastndcg._contract.Backend` it is a
    :class:`~fastndcg._contract.DeviceBackend`: it tells inputs in CUDA device memory
    (:meth:`holds`) and reads and checks them there (:meth:`columns`).
    """

    name = "cuda"
    checks_scores = True
    holds = staticmethod(on_cuda_device)

    def __init__(self, host: Any) -> None:
        self._cuda = import_cuda()
        from fastndcg._backends.cuda import launch

        self._launch = launch.Launcher(self._cuda)
        self.host = host  # the backend of the operations that run on the host: Numba, else NumPy

    @property
    def simulated(self) -> bool:
        """Whether kernels run in numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
        return bool(self._cuda.config.ENABLE_CUDASIM)

    def device_name(self) -> str:
        """The name of the current device ("simulator" under the simulator)."""
        if self.simulated:
            return "numba-cuda simulator"
        name = self._cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)

    threads = on_host("threads", "``n_threads`` applies to the host operations")
    thread_ceiling = on_host("thread_ceiling", "the host backend's")

    # -- scoring -----------------------------------------------------------------------------

    def score(self, plan: Plan) -> tuple[np.ndarray, np.ndarray, int]:
        """DCG and IDCG ``(n_queries, n_cutoffs)`` on the device, and the non-finite scores met.

        The call's device memory is freed before it returns.
        """
        try:
            return self._launch.score(plan)
        finally:
            self._launch.release()

    # -- columns -----------------------------------------------------------------------------

    def column_stats(self, values: Any, integral: bool = True) -> ColumnStats:
        """One scan of a column: block reductions on the device, or the host backend's scan."""
        if isinstance(values, np.ndarray):
            return self.host.column_stats(values, integral)
        return self._launch.column_stats(values, integral)

    def columns(self) -> Columns:
        """The columns of device memory (:mod:`fastndcg._backends.cuda.columns`)."""
        from fastndcg._backends.cuda.columns import CudaColumns

        return CudaColumns(self, self._launch)

    # -- on the host -------------------------------------------------------------------------

    rank_query = on_host("rank_query", "one query, for explanations")
    run_bounds = on_host("run_bounds", "query ids are grouped there")
    stray_whitespace = on_host("stray_whitespace", "TREC files are read there")
    document_ids = on_host("document_ids", "the TREC join runs there")
    match_judgments = on_host("match_judgments", "the TREC join runs there")
    docid_ranks = on_host("docid_ranks", "the TREC join runs there")
    first_ranked = on_host("first_ranked", "the TREC join runs there")

    def signflip_sums(
        self,
        diffs: np.ndarray,
        key: int,
        exact: bool,
        n_resamples: int,
        n_chunks: int | None = None,
        first: int = 0,
    ) -> np.ndarray:
        """On the host (per-query differences are host arrays, and the host's bits are kept)."""
        return self.host.signflip_sums(diffs, key, exact, n_resamples, n_chunks, first)

    def bootstrap_sums(
        self,
        values: np.ndarray,
        key: int,
        thresholds: np.ndarray,
        n_resamples: int,
        n_chunks: int | None = None,
        first: int = 0,
    ) -> np.ndarray:
        """On the host (as :meth:`signflip_sums`)."""
        return self.host.bootstrap_sums(values, key, thresholds, n_resamples, n_chunks, first)
