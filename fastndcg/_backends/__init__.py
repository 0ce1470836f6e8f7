"""The registry of backends: the only place that knows which backends exist.

A backend is one object behind the :class:`fastndcg._contract.Backend` protocol. It scores
plans, scans columns, finds runs of equal query ids, joins TREC runs with their judgments and
draws the resamples of the paired tests of :func:`fastndcg.compare`. The rest of the package
talks to the object it gets from :func:`resolve_backend` through the contract
(:mod:`fastndcg._contract`) and never imports a backend's package.

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
from dataclasses import dataclass
from typing import Any

from fastndcg._contract import Backend
from fastndcg._errors import BackendUnavailableError, OptionError

ENV_BACKEND = "FASTNDCG_BACKEND"


@dataclass(frozen=True)
class _Registered:
    load: Callable[[], Backend]  # raises ImportError when the backend cannot run here
    automatic: bool  # "auto" may pick it for host inputs
    missing: str  # what to install when it cannot be loaded
    holds: Callable[[Any], bool] | None  # whether an input lives in its memory (a device's)


_REGISTRY: dict[str, _Registered] = {}
_LOADED: dict[str, Backend | ImportError] = {}


def register_backend(
    name: str,
    load: Callable[[], Backend],
    *,
    automatic: bool = True,
    missing: str = "",
    holds: Callable[[Any], bool] | None = None,
) -> None:
    """Register a backend under ``name``, after those registered before (preference order).

    ``load`` builds the backend object; it raises ImportError when the backend cannot run here
    (a missing package), which ``missing`` then words as the fix. A backend with memory of its
    own (a :class:`~fastndcg._contract.DeviceBackend`) passes ``holds``, which tells without
    loading the backend or importing anything whether an input lives there:
    ``backend="auto"`` then picks it for such inputs.
    """
    _REGISTRY[name] = _Registered(load, automatic, missing, holds)
    _LOADED.pop(name, None)


def unregister_backend(name: str) -> None:
    """Forget the backend registered as ``name`` (a plug-in's or a test's)."""
    _REGISTRY.pop(name, None)
    _LOADED.pop(name, None)


def holder_of(*inputs: Any) -> str | None:
    """The name of the backend whose memory holds one of ``inputs`` (None: host memory)."""
    for name, entry in _REGISTRY.items():
        if entry.holds is not None and any(x is not None and entry.holds(x) for x in inputs):
            return name
    return None


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


def _load_cuda() -> Backend:
    from fastndcg._backends.cuda import CudaBackend

    # the host side of the CUDA backend: Numba, else NumPy
    return CudaBackend(host=get_backend("numba") or get_backend("numpy"))


def _on_cuda_device(values: Any) -> bool:
    # imported on the first device check, not at import fastndcg (it imports no numba-cuda)
    from fastndcg._backends.cuda.memory import on_cuda_device

    return on_cuda_device(values)


register_backend(
    "numba",
    _load("fastndcg._backends.numba", "NumbaBackend"),
    missing="numba, which cannot be imported here; install it (pip install numba)",
)
register_backend("numpy", _load("fastndcg._backends.numpy", "NumpyBackend"), missing="numpy")
# never picked by "auto" for host inputs; inputs in CUDA device memory pick it
register_backend(
    "cuda",
    _load_cuda,
    automatic=False,
    missing="numba-cuda, which cannot be imported here; install it (pip install 'fastndcg[cuda]')",
    holds=_on_cuda_device,
)
