"""numba-cuda's simulator made safe and quick for the CUDA tests (``NUMBA_ENABLE_CUDASIM=1``).

:mod:`conftest` calls :func:`install` in the simulator run of ``scripts/test.sh``, and
``tests/backends/test_cuda.py`` in the child process that runs ``scripts/bench_gpu.py
--simulate``. Two changes, neither to what the kernels compute:

- **Shared arrays made under a lock.** The simulator runs every thread of a block as a Python
  thread; ``cuda.shared.array`` looks the block's array up by the calling file and line and
  makes it when it is missing (numba-cuda 0.30.4, ``FakeCUDAShared.array``), without a lock. Two
  threads that both find it missing each make their own, and the block then works in two
  "shared" arrays: values from a half-sorted list, or a row index never written, in a different
  test each run. At a 10 us switch interval, 19 arrays of blocks split so in one run of
  ``test_cuda.py`` (8 tests failed); locked, none failed in 5 runs.
- **A switch interval of 10 us** (Python's default is 5 ms). The launcher polls its threads in a
  loop that keeps the GIL for the whole interval each time: a short one hands it to the
  simulated threads at once (``test_cuda.py`` in the simulator: 138 s -> 58-60 s here).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

SWITCH_INTERVAL_S = 1e-5
_ALLOCATING = threading.Lock()


def install() -> None:
    """Lock the simulator's shared-array lookup and shorten the switch interval (see above)."""
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    unlocked = FakeCUDAShared.array

    def array(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        if shape == 0 or alignment is not None:  # (dynamic shared memory, or an error)
            return unlocked(self, shape, dtype, alignment)
        caller = sys._getframe(1)  # the simulator's key: the calling file and line
        key = (caller.f_code.co_filename, caller.f_lineno)
        with _ALLOCATING:
            if key not in self._allocations:
                self._allocations[key] = _allocate(shape, dtype)
            return self._allocations[key]

    FakeCUDAShared.array = array
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def _allocate(shape: Any, dtype: Any) -> Any:
    """An uninitialised array as the simulator makes one (``dtype``: NumPy's or Numba's)."""
    import numpy as np
    from numba.core import types
    from numba.np import numpy_support

    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    return np.empty(shape, dtype)
