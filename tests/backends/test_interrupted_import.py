"""An interrupt while the first call imports numba leaves a process that works afterwards.

Before, a KeyboardInterrupt in the first ~0.2 s left a partly initialised numba in
sys.modules, and every later call raised AttributeError: module 'numba' has no attribute
'core'. The child interrupts numba's import once, at a module deep inside it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.numba

CHILD = """
import importlib.abc, sys
import numpy as np
import fastndcg

class InterruptOnce(importlib.abc.MetaPathFinder):
    fired = False

    def find_spec(self, name, path=None, target=None):
        if name == "numba.core.typing" and not self.fired:
            type(self).fired = True
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, InterruptOnce())
grades, scores = np.array([3, 2, 0]), np.array([0.3, 0.2, 0.1])
try:
    fastndcg.ndcg(grades, scores, k=2, backend="numba")
except KeyboardInterrupt:
    print("interrupted")
assert InterruptOnce.fired
for _ in range(2):
    print(float(fastndcg.ndcg(grades, scores, k=2, backend="numba")))
"""


def test_a_call_after_an_interrupted_numba_import_works():
    run = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["interrupted", "1.0", "1.0"]
