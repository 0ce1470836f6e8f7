"""Whether an input lives in CUDA device memory: told without importing numba-cuda or torch.

The registry (:mod:`fastndcg._backends`) asks :func:`on_cuda_device` for every input of a call
with ``backend="auto"``, so this module imports nothing but NumPy.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

# DLPack device types of CUDA memory (kDLCUDA, kDLCUDAManaged)
KDL_CUDA = 2
KDL_CUDA_MANAGED = 13
_DEVICE_TYPES = (KDL_CUDA, KDL_CUDA_MANAGED)


def torch_tensor(values: Any) -> bool:
    """Whether ``values`` is a torch tensor (torch is not imported)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(values, torch.Tensor)


def on_cuda_device(values: Any) -> bool:
    """Whether ``values`` lives in CUDA device memory.

    True for a torch tensor on a CUDA device, a numba device array, an object with
    ``__cuda_array_interface__`` (CuPy, ...), or one whose ``__dlpack_device__`` is a CUDA
    device. Nothing is imported.
    """
    if isinstance(values, (np.ndarray, list, tuple, int, float)):
        return False
    if torch_tensor(values):
        return values.device.type == "cuda"
    if getattr(values, "__cuda_ndarray__", False):  # numba's device arrays (and the simulator's)
        return True
    try:
        if hasattr(values, "__cuda_array_interface__"):
            return True
    except Exception:  # a property that raises: not readable here
        return False
    probe = getattr(values, "__dlpack_device__", None)
    if probe is None:
        return False
    try:
        device_type = int(probe()[0])
    except Exception:
        return False
    return device_type in _DEVICE_TYPES
