"""Makes ``import numba`` (and llvmlite) fail: a machine without numba, for a test run or a child.

:mod:`conftest` installs it before fastndcg is imported when ``FASTNDCG_BLOCK_NUMBA=1``;
``conftest.COMMAND`` installs it in the child processes that run the command in such a run.
"""

from __future__ import annotations

import importlib.abc
import sys


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


def install() -> None:
    """Block numba for the rest of this process (before fastndcg is imported)."""
    sys.meta_path.insert(0, _BlockNumba())
