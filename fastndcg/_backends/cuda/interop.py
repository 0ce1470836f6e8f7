"""Device arrays of other libraries read in place: CUDA Array Interface and DLPack.

:func:`adopt` turns a torch CUDA tensor, a CuPy array, a numba device array, or anything with
``__cuda_array_interface__`` (version 2 or 3) or ``__dlpack__`` on a CUDA device into a numba
device array over the same memory (no copy), and says which stream the producer named:

- the CUDA Array Interface's ``stream`` (1: the legacy default stream, 2: the per-thread default
  stream, another integer: that stream; absent: none) is returned, not synchronised, so that the
  backend runs its kernels on that stream, after the producer's work;
- a DLPack producer is asked for the tensor on the legacy default stream (``stream=1``), on
  which the backend then works; the capsule is consumed (renamed ``used_dltensor``) and its
  deleter called when the device array is dropped.

Under numba-cuda's simulator there are no device pointers: the memory an interface points to is
host memory, which is wrapped as the simulator's device array (tests use this with fake
producers).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from fastndcg._backends.cuda.memory import torch_tensor

_DL_KINDS = {0: "i", 1: "u", 2: "f", 6: "b"}  # DLDataTypeCode -> typestr kind


class _DLDevice(ctypes.Structure):
    _fields_ = (("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32))


class _DLDataType(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16))


class _DLTensor(ctypes.Structure):
    _fields_ = (
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    )


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = (("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER))


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = (ctypes.py_object, ctypes.c_char_p)
_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.restype = ctypes.c_int
_set_name.argtypes = (ctypes.py_object, ctypes.c_char_p)


class DLPackOwner:
    """A consumed DLPack tensor as a CUDA Array Interface; its deleter runs when dropped."""

    def __init__(self, capsule: Any) -> None:
        address = _get_pointer(capsule, b"dltensor")
        _set_name(capsule, b"used_dltensor")
        self._managed = _DLManagedTensor.from_address(address)
        self._address = address
        tensor = self._managed.dl_tensor
        if tensor.dtype.lanes != 1 or tensor.dtype.code not in _DL_KINDS:
            kind = f"code {tensor.dtype.code}, {tensor.dtype.bits} bits x {tensor.dtype.lanes}"
            self.close()
            raise TypeError(f"a DLPack tensor of an unsupported dtype ({kind})")
        itemsize = tensor.dtype.bits // 8
        shape = tuple(tensor.shape[d] for d in range(tensor.ndim))
        strides = None
        if tensor.strides:
            strides = tuple(tensor.strides[d] * itemsize for d in range(tensor.ndim))
        self.__cuda_array_interface__ = {
            "shape": shape,
            "strides": strides,
            "typestr": f"|{_DL_KINDS[tensor.dtype.code]}{itemsize}"
            if itemsize == 1
            else f"<{_DL_KINDS[tensor.dtype.code]}{itemsize}",
            "data": ((tensor.data or 0) + tensor.byte_offset, True),
            "version": 3,
            "stream": None,  # the producer made it ready for the legacy default stream
        }

    def close(self) -> None:
        """Call the producer's deleter (once)."""
        if self._address is not None:
            deleter = self._managed.deleter
            self._address, address = None, self._address
            if deleter:
                deleter(address)

    def __del__(self) -> None:
        self.close()


def interface_of(values: Any) -> tuple[Any, dict[str, Any]]:
    """``(owner, interface)``: the CUDA Array Interface of a device object other than numba's.

    A torch tensor is detached (no copy), and a bfloat16 one widened to float32 on the device
    (a copy: NumPy, and so numba, have no bfloat16). A DLPack-only producer is consumed.
    """
    if torch_tensor(values):
        import torch

        values = values.detach()
        if values.dtype == torch.bfloat16:
            values = values.float()
    interface = getattr(values, "__cuda_array_interface__", None)
    if interface is not None:
        return values, dict(interface)
    try:
        capsule = values.__dlpack__(stream=1)
    except TypeError:  # a producer without the stream keyword (DLPack before 0.8)
        capsule = values.__dlpack__()
    owner = DLPackOwner(capsule)
    return owner, owner.__cuda_array_interface__


def host_view(interface: dict[str, Any], owner: Any) -> np.ndarray:
    """The memory an interface points to as a NumPy array (the simulator's device memory)."""
    dtype = np.dtype(interface["typestr"])
    shape = tuple(interface["shape"])
    strides = interface.get("strides")
    if strides is None:
        strides = tuple(
            int(np.prod(shape[d + 1 :], dtype=np.int64)) * dtype.itemsize for d in range(len(shape))
        )
    pointer = interface["data"][0]
    if int(np.prod(shape, dtype=np.int64)) == 0 or not pointer:
        return np.empty(shape, dtype=dtype)
    extent = sum((n - 1) * abs(s) for n, s in zip(shape, strides, strict=True)) + dtype.itemsize
    buffer = (ctypes.c_char * extent).from_address(pointer)
    buffer.owner = owner  # the view's base: the producer lives as long as the view
    view = np.ndarray(shape, dtype=dtype, buffer=buffer, strides=strides)
    view.flags.writeable = False
    return view
