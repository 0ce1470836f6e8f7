"""The backends: the only place that knows how NDCG is computed on a machine.

A backend is one object behind the :class:`Backend` protocol. It scores plans, scans columns,
finds runs of equal query ids, joins TREC runs with their judgments and draws the resamples of
the paired tests of :func:`fastndcg.compare`. The rest of the package
talks to the object it gets from :func:`resolve_backend` and never imports a kernel.

Three backends are registered here: ``"numba"`` (parallel Numba kernels on the thread pool of
:mod:`fastndcg._backends.parallel`; numba is imported on first use), ``"numpy"`` (a vectorised
twin) and ``"cuda"`` (numba-cuda kernels on a GPU, :mod:`fastndcg._backends.cuda`; never
chosen by ``"auto"`` for host inputs). Another is added by writing one package beside them and
registering it with :func:`register_backend`. ``"auto"`` picks the first available backend that
registered itself for automatic choice, unless ``FASTNDCG_BACKEND`` names one.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from fastndcg._backends.abi import ColumnStats, DocumentIds, Plan
from fastndcg._errors import BackendUnavailableError, OptionError

ENV_BACKEND = "FASTNDCG_BACKEND"


class Backend(Protocol):
    """What every backend does; all arrays are NumPy arrays on the host.

    Attributes
    ----------
    name : str
        The name ``backend=`` takes.
    checks_scores : bool
        True when :meth:`score` counts NaN and infinite scores as it reads them, so that the
        caller need not scan the scores first (it names the bad row only when one is found).
    serves_single_lists : bool
        True when :meth:`scan_list` and :meth:`score_range` exist: the per-call fast path of
        :class:`fastndcg.Scorer`.
    """

    name: str
    checks_scores: bool
    serves_single_lists: bool

    def threads(self, n_threads: int | None) -> AbstractContextManager[None]:
        """Run the block with ``n_threads`` threads (None: the current setting)."""
        ...

    def score(self, plan: Plan) -> tuple[np.ndarray, np.ndarray, int]:
        """DCG and IDCG ``(n_queries, n_cutoffs)`` of ``plan``, and the non-finite scores met."""
        ...

    def column_stats(self, values: np.ndarray, integral: bool = True) -> ColumnStats:
        """Scan a 1-D column (a kernel dtype) once; ``integral=False`` skips that check."""
        ...

    def run_bounds(self, ids: np.ndarray) -> np.ndarray:
        """Start row of every run of equal consecutive ids, and the row count at the end."""
        ...

    def stray_whitespace(self, data: np.ndarray, separator: int, other: int) -> bool:
        """Whether the bytes ``data`` hold whitespace besides single ``separator`` bytes."""
        ...

    def document_ids(self, judged: Any, run: Any, ordered: bool) -> tuple[DocumentIds, DocumentIds]:
        """The judgments' and the run's document ids (Arrow string columns) for the join.

        ``ordered``: the ids will also rank ties (trec_eval's descending byte order).
        """
        ...

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
        """Labels of the run rows grouped by query (NaN: unjudged), and a repeated position.

        Position ``p`` of the CSR ``offsets`` is run row ``order[p]`` (``order`` None: row
        ``p``); position ``p`` of ``judged_offsets`` is judgment ``judged_rows[p]``. The second
        value is the first position whose document repeats within its query (-1: none).
        """
        ...

    def docid_ranks(
        self, offsets: np.ndarray, order: np.ndarray | None, ids: DocumentIds, scores: np.ndarray
    ) -> np.ndarray:
        """Per run row, a key ordering each query's rows by descending document id bytes.

        Only the order between rows of a query with equal ``scores`` counts.
        """
        ...

    def first_ranked(
        self,
        offsets: np.ndarray,
        order: np.ndarray | None,
        scores: np.ndarray,
        tie_key: np.ndarray | None,
        max_docs: int,
    ) -> np.ndarray:
        """Which run rows are among the first ``max_docs`` of their query's ranking.

        By ``scores`` descending, ties by ``tie_key`` ascending (None: run order).
        """
        ...

    def signflip_sums(
        self,
        diffs: np.ndarray,
        key: int,
        exact: bool,
        n_resamples: int,
        n_chunks: int | None = None,
    ) -> np.ndarray:
        r"""Sign-flipped sums :math:`T^*_{ic} = \sum_j s_{ij} d_{cj}`: (n_resamples, n_columns).

        ``diffs`` (float64, C-contiguous, shape (n_columns, n)) holds one comparison per row.
        Resample ``i`` negates query ``j`` when bit ``j mod 64`` of its ``j // 64``-th random
        word is set (the streams of :mod:`fastndcg._compare.rng`, keyed by ``key``); with
        ``exact`` (``n <= 63``) when bit ``j`` of ``i`` itself is set. Sums run over the
        queries in order: every backend, thread count and split into ``n_chunks`` chunks of
        resamples gives the same bits.
        """
        ...

    def bootstrap_sums(
        self,
        values: np.ndarray,
        key: int,
        thresholds: np.ndarray,
        n_resamples: int,
        n_chunks: int | None = None,
    ) -> np.ndarray:
        """Paired bootstrap sums of each row of ``values`` (n_columns, n): (n_resamples, n_columns).

        Resample ``i`` draws ``n`` queries with replacement (the same draws for every row) from
        the streams keyed by ``key``, with the Poisson ``thresholds`` of
        :func:`fastndcg._compare.rng.poisson_bounds`; bit-identical on every backend, thread
        count and chunking.
        """
        ...


@dataclass(frozen=True)
class _Registered:
    load: Callable[[], Backend]  # raises ImportError when the backend cannot run here
    automatic: bool  # "auto" may pick it
    missing: str  # what to install when it cannot be loaded


_REGISTRY: dict[str, _Registered] = {}
_LOADED: dict[str, Backend | ImportError] = {}


def register_backend(
    name: str, load: Callable[[], Backend], *, automatic: bool = True, missing: str = ""
) -> None:
    """Register a backend under ``name``, after those registered before (preference order).

    ``load`` builds the backend object; it raises ImportError when the backend cannot run here
    (a missing package), which ``missing`` then words as the fix.
    """
    _REGISTRY[name] = _Registered(load, automatic, missing)
    _LOADED.pop(name, None)


def backend_names() -> tuple[str, ...]:
    """Every registered backend name, best first (available here or not)."""
    return tuple(_REGISTRY)


def get_backend(name: str) -> Backend | None:
    """The backend called ``name``, or None when it cannot run here."""
    loaded = _LOADED.get(name)
    if loaded is None:
        try:
            loaded = _REGISTRY[name].load()
        except ImportError as exc:
            loaded = exc
        _LOADED[name] = loaded
    return None if isinstance(loaded, ImportError) else loaded


def numba_available() -> bool:
    """True when numba can be imported (then ``backend="numba"`` works)."""
    return get_backend("numba") is not None


def available_backends() -> tuple[str, ...]:
    """Names of the backends that can run here, best first."""
    return tuple(name for name in _REGISTRY if get_backend(name) is not None)


def automatic_backend() -> Backend:
    """The backend ``"auto"`` resolves to (``FASTNDCG_BACKEND`` aside)."""
    for name, entry in _REGISTRY.items():
        backend = get_backend(name) if entry.automatic else None
        if backend is not None:
            return backend
    raise RuntimeError("no backend can run here")  # numpy always can


def unavailable_reason(name: str) -> str:
    """Why backend ``name`` cannot run here, and what to install.

    A loader's ImportError with a ``missing`` attribute words it (a backend that can miss
    several things, such as a package, a driver or a device); else the registered words.
    """
    get_backend(name)
    return getattr(_LOADED.get(name), "missing", None) or _REGISTRY[name].missing


def resolve_backend(name: str) -> Backend:
    """The backend object for a checked option value (``"auto"`` or a registered name).

    ``"auto"`` follows ``FASTNDCG_BACKEND`` when set (an unknown value is an OptionError on
    ``backend``). A named backend that cannot run here is a BackendUnavailableError (an
    ImportError) naming what to install.
    """
    where = None  # where the name came from, when not from backend=
    if name == "auto":
        name = os.environ.get(ENV_BACKEND, "auto") or "auto"
        where = f"environment variable {ENV_BACKEND}"
        if name != "auto" and name not in _REGISTRY:
            valid = ", ".join(repr(v) for v in ("auto", *_REGISTRY))
            raise OptionError(
                f"unknown {ENV_BACKEND} environment variable={name!r}",
                option="backend",
                value=name,
                where=where,
                fix=f"valid values are {valid}",
            )
        if name == "auto":
            return automatic_backend()
    backend = get_backend(name)
    if backend is None:
        # "numba, which cannot be imported here; install it (...)": the problem, then the fix
        problem, _, install = unavailable_reason(name).partition("; ")
        raise BackendUnavailableError(
            f"`backend={name!r}` needs {problem}",
            option="backend",
            value=name,
            where=where,
            fix=f"{install} or use `backend='numpy'`" if install else "use `backend='numpy'`",
            joiner="; " if install else " or ",
        )
    return backend


def _load(module: str, cls: str) -> Callable[[], Backend]:
    def load() -> Backend:
        return getattr(importlib.import_module(module), cls)()

    return load


register_backend(
    "numba",
    _load("fastndcg._backends.numba", "NumbaBackend"),
    missing="numba, which cannot be imported here; install it (pip install numba)",
)
register_backend("numpy", _load("fastndcg._backends.numpy", "NumpyBackend"), missing="numpy")
# never picked by "auto" for host inputs; inputs in device memory pick it (_core/device.py)
register_backend(
    "cuda",
    _load("fastndcg._backends.cuda", "CudaBackend"),
    automatic=False,
    missing="numba-cuda, which cannot be imported here; install it (pip install 'fastndcg[cuda]')",
)
