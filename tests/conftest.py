"""Test configuration: the numba blocker, the backend fixture and the Hypothesis profile.

``FASTNDCG_BLOCK_NUMBA=1`` makes ``import numba`` fail before fastndcg is imported, so a whole
test run sees a machine without numba: the import guard and the NumPy fallback are exercised for
real (``scripts/test.sh`` runs the suite a second time that way, less the tests marked
``numba`` or ``subprocess``).
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings


class _BlockNumba(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if (
            name == "numba"
            or name.startswith("numba.")
            or name == "llvmlite"
            or name.startswith("llvmlite.")
        ):
            raise ImportError(f"{name} is blocked for this test run (FASTNDCG_BLOCK_NUMBA=1)")
        return None


NUMBA_BLOCKED = os.environ.get("FASTNDCG_BLOCK_NUMBA") == "1"
if NUMBA_BLOCKED:
    assert "fastndcg" not in sys.modules, "fastndcg was imported before the numba blocker"
    sys.meta_path.insert(0, _BlockNumba())

import fastndcg  # noqa: E402

# numba-cuda's simulator runs every CUDA thread of a block as a Python thread, and its launcher
# polls them in a loop that keeps the GIL for the whole switch interval (5 ms) each time: a
# short interval hands the GIL to the simulated threads at once (tests/backends/test_cuda.py
# in the simulator: 169 s -> 28 s on a quiet 2-core machine). Only the scheduling changes, not
# what the kernels compute.
SIMULATOR_SWITCH_INTERVAL_S = 1e-5
if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    sys.setswitchinterval(SIMULATOR_SWITCH_INTERVAL_S)

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


def pytest_collection_modifyitems(config, items):
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
