"""Test configuration: the numba blocker, the backend fixture and the Hypothesis profile.

``FASTNDCG_BLOCK_NUMBA=1`` makes ``import numba`` fail before fastndcg is imported, so a whole
test run sees a machine without numba: the import guard and the NumPy fallback are exercised for
real (``scripts/test.sh`` runs the suite a second time that way, less the tests marked
``numba`` or ``subprocess``, and sets ``FASTNDCG_NUMPY_BESIDE=1`` for the first run, which then
leaves the tests of ``backend="numpy"`` to the second). Tests run the command as ``COMMAND``,
which blocks numba in the child process too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numba_blocker
import pytest
from hypothesis import HealthCheck, settings

NUMBA_BLOCKED = os.environ.get("FASTNDCG_BLOCK_NUMBA") == "1"
if NUMBA_BLOCKED:
    assert "fastndcg" not in sys.modules, "fastndcg was imported before the numba blocker"
    numba_blocker.install()

import fastndcg  # noqa: E402

# numba-cuda's simulator: its shared-array race fixed, its polling shortened
if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    import cuda_simulator

    cuda_simulator.install()

settings.register_profile(
    "fastndcg",
    deadline=None,  # the first example of a run pays the JIT compile
    max_examples=int(os.environ.get("FASTNDCG_HYPOTHESIS_EXAMPLES", "60")),
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
settings.load_profile("fastndcg")

BACKENDS = fastndcg.available_backends()
# real TREC files and model predictions the tests read; provenance and licences: data/SOURCES.md
TESTS = Path(__file__).resolve().parent  # the shared helpers: reference, strategies ...
TEST_DATA = TESTS / "data"
# how tests run the command: ``python -m fastndcg``; in a run with numba blocked, blocked in the
# child too (so that the command's NumPy fallback is what that run tests)
COMMAND = [sys.executable, "-m", "fastndcg"]
if NUMBA_BLOCKED:
    COMMAND = [
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {str(TESTS)!r}); import numba_blocker; "
        "numba_blocker.install(); import runpy; "
        "runpy.run_module('fastndcg', run_name='__main__', alter_sys=True)",
    ]


# scripts/test.sh runs the NumPy backend's tests in its numba-blocked pass beside this one: this
# pass then leaves them to it (those marked `numba` or `subprocess` stay here: that pass skips them)
NUMPY_BESIDE = os.environ.get("FASTNDCG_NUMPY_BESIDE") == "1" and not NUMBA_BLOCKED


def _numpy_done_beside(item) -> bool:
    callspec = getattr(item, "callspec", None)
    return (
        callspec is not None
        and callspec.params.get("backend") == "numpy"
        and "numba" not in item.keywords
        and "subprocess" not in item.keywords
    )


def pytest_collection_modifyitems(config, items):
    if NUMPY_BESIDE:
        keep, beside = [], []
        for item in items:
            (beside if _numpy_done_beside(item) else keep).append(item)
        config.hook.pytest_deselected(items=beside)
        items[:] = keep
    if "numba" in BACKENDS:
        return
    skip = pytest.mark.skip(reason="numba is not available in this run")
    for item in items:
        if "numba" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Every backend that can run here."""
    return request.param
