"""Compile every CUDA kernel of ``backend="cuda"`` for a real GPU, without one.

numba-cuda's simulator runs the kernels as Python, so it never type-checks them the way the
GPU compiler does. This script drives the backend's host side (``Launcher``) through
``fastndcg.ndcg`` with a stand-in for numba-cuda: device arrays are host arrays, and every
kernel launch records the types of its arguments instead of running. It then compiles each
kernel, for each recorded signature, to PTX for ``--cc`` (default 9.0, the H100 and H200) with
numba-cuda's compiler::

    python scripts/compile_cuda.py

The compiler needs NVVM and NVRTC, which do not need a GPU: the pip packages
``nvidia-cuda-nvcc-cu12`` and ``nvidia-cuda-nvrtc-cu12`` (``--install`` installs them into
``.cache/cuda-compiler``). Exit status 0: every signature compiled; 1: one did not (its error is
printed); 2: the compiler cannot run here.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TOOLKIT = ROOT / ".cache" / "cuda-compiler"
PACKAGES = ("nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvrtc-cu12")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default="9.0", help="compute capability (default 9.0)")
    parser.add_argument(
        "--install", action="store_true", help=f"pip install {' '.join(PACKAGES)} first"
    )
    return parser.parse_args()


def _find_compiler() -> dict[str, str]:
    """Environment variables pointing numba-cuda at NVVM and NVRTC under ``TOOLKIT``."""
    nvvm = glob.glob(str(TOOLKIT / "nvidia" / "cuda_nvcc" / "nvvm" / "lib64" / "libnvvm.so*"))
    nvrtc = glob.glob(str(TOOLKIT / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so*"))
    if not (nvvm and nvrtc):
        return {}
    libs = [str(Path(nvrtc[0]).parent), str(Path(nvvm[0]).parent)]
    return {
        "LD_LIBRARY_PATH": os.pathsep.join([*libs, os.environ.get("LD_LIBRARY_PATH", "")]),
        "CUDA_HOME": str(TOOLKIT / "nvidia" / "cuda_nvcc"),
        "PYTHONPATH": os.pathsep.join([str(TOOLKIT), os.environ.get("PYTHONPATH", "")]),
    }


def main() -> int:
    args = _arguments()
    if os.environ.get("FASTNDCG_COMPILE_CHILD") != "1":
        if args.install and not _find_compiler():
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--target",
                    str(TOOLKIT),
                    *PACKAGES,
                ],
                check=False,
            )
        env = _find_compiler()
        if not env:
            print(
                f"compile_cuda: NVVM and NVRTC not found under {TOOLKIT}; run with --install",
                file=sys.stderr,
            )
            return 2
        # the libraries are found when the process starts: run again with them in place
        env = os.environ | env | {"FASTNDCG_COMPILE_CHILD": "1"}
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        return subprocess.run([sys.executable, *sys.argv], env=env, check=False).returncode
    return _compile_all(tuple(int(part) for part in args.cc.split(".")))


# -- the stand-in for numba-cuda ----------------------------------------------------------------


class HostDeviceArray(np.ndarray):
    """A host array playing a numba device array."""

    __cuda_ndarray__ = True
    stream = 0

    def copy_to_host(self, stream=0):
        return np.array(self)

    def is_c_contiguous(self):
        return bool(self.flags.c_contiguous)


def _host(value):
    """``value`` with its stand-in device arrays (also inside tuples) as plain arrays."""
    if isinstance(value, np.ndarray):
        return np.asarray(value)
    if isinstance(value, tuple):
        items = [_host(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def _device(values):
    return np.ascontiguousarray(values).view(HostDeviceArray)


class StandIn(types.SimpleNamespace):
    """The parts of ``numba.cuda`` the launcher uses."""

    def __init__(self):
        super().__init__(config=types.SimpleNamespace(ENABLE_CUDASIM=False))

    def to_device(self, values, stream=0, copy=True):
        return _device(np.array(values))

    def device_array(self, shape, dtype=np.float64, stream=0):
        return _device(np.zeros(shape, dtype))

    def current_context(self):
        return types.SimpleNamespace(deallocations=types.SimpleNamespace(clear=lambda: None))


class Recorder:
    """A kernel whose launches record the argument types."""

    def __init__(self, name, dispatcher, seen):
        self.name, self.dispatcher, self.seen = name, dispatcher, seen

    def __getitem__(self, config):
        return self.launch

    def launch(self, *args):
        from numba import typeof

        signature = tuple(typeof(_host(a)) for a in args)
        self.seen.setdefault((self.name, signature), self.dispatcher)
        if self.name == "classify":  # every class holds query 0, so that every launch happens
            args[1][:] = 1
            args[2][:] = 0


def _compile_all(cc: tuple[int, int]) -> int:
    sys.path.insert(0, str(ROOT))
    from numba import cuda
    from numba.cuda import dispatcher as cuda_dispatcher
    from numba.cuda.dispatcher import CUDADispatcher

    import fastndcg
    from fastndcg._backends import get_backend, register_backend
    from fastndcg._backends.cuda import CudaBackend, groups, launch, scan, score, sort

    # device functions compile for the current device's compute capability: there is none
    cuda_dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    seen: dict = {}
    for module in (score, groups, sort, scan):
        for name, value in vars(module).items():
            if isinstance(value, CUDADispatcher) and not value.targetoptions.get("device"):
                setattr(module, name, Recorder(name, value, seen))
    backend = object.__new__(CudaBackend)
    backend._cuda = StandIn()
    backend._launch = launch.Launcher(backend._cuda)
    backend.host = get_backend("numba") or get_backend("numpy")
    register_backend("cuda", lambda: backend, automatic=False)

    rng = np.random.default_rng(0)
    lengths = np.array([3000, 5, 70, 300, 0, 1])  # one long list: the merge passes launch too
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n = int(offsets[-1])
    grades8 = rng.integers(0, 5, n).astype(np.int8)
    scores32 = rng.random(n).astype(np.float32)
    calls = [
        dict(k=10),
        dict(k=[1, 3, 5, 10, 20, 100]),
        dict(k=None, ties="stable"),
        dict(k=5, ties="random", seed=1, ideal="local"),
        dict(k=5, ties="pessimistic", ideal="max", max_grade=4),
        dict(k=[2, None], ties="optimistic", gain="linear", discount="reciprocal"),
    ]
    for options in calls:
        for grades, scores in ((grades8, scores32), (grades8 / 2.0, scores32.astype(float))):
            fastndcg.ndcg(grades, scores, offsets=offsets, backend="cuda", **options)
        fastndcg.ndcg(grades8, None, offsets=offsets, backend="cuda", **options)
    judged = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths + 2, out=judged[1:])
    fastndcg.ndcg(
        grades8,
        scores32,
        offsets=offsets,
        ideal="global",
        ideal_grades=rng.integers(0, 3, int(judged[-1])).astype(float),
        ideal_offsets=judged,
        backend="cuda",
    )
    launcher = backend._launch
    for dtype in (np.int8, np.int64, np.uint64, np.float32, np.float64):
        column = _device(np.arange(10).astype(dtype))
        launcher.column_stats(column, True)
        launcher.first_where(column, "outside", 0.0, 4.0, None)
        launcher.first_where(column, "beyond_exact", 0.0, 0.0, None)
        launcher.convert(column, np.float64)
        launcher.take(column, np.arange(3))
    launcher.flatten(np.asfortranarray(np.zeros((3, 4))).view(HostDeviceArray))

    failures = 0
    memory: dict[str, tuple[int, int, int, int]] = {}
    for (name, signature), dispatcher in sorted(seen.items(), key=lambda item: str(item[0])):
        try:
            bounds = dispatcher.targetoptions.get("launch_bounds")
            ptx, _ = cuda.compile_ptx(dispatcher.py_func, signature, cc=cc, launch_bounds=bounds)
        except Exception as exc:  # any compiler error is the finding
            failures += 1
            print(f"FAILED {name}{signature}:\n{exc}\n", file=sys.stderr)
            continue
        found = _resources(ptx, cc)
        if found:
            memory[name] = max(memory.get(name, found), found)
    kernels = sorted({name for name, _ in seen})
    print(
        f"compiled {len(seen) - failures} of {len(seen)} signatures of {len(kernels)} kernels "
        f"for sm_{cc[0]}{cc[1]}: {', '.join(kernels)}"
    )
    if memory:
        print("ptxas, per kernel (its most demanding signature):")
    for name, (registers, shared, stack, spilled) in sorted(memory.items()):
        print(
            f"  {name}: {registers} registers, {shared:,} bytes of shared memory, "
            f"{stack:,} bytes of stack, {spilled:,} bytes of spill stores"
        )
    return 1 if failures else 0


def _resources(ptx: str, cc: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """``(registers, shared bytes, stack bytes, spill-store bytes)`` from ``ptxas -v``.

    None where ptxas (shipped with ``nvidia-cuda-nvcc-cu12``) is not found.
    """
    ptxas = TOOLKIT / "nvidia" / "cuda_nvcc" / "bin" / "ptxas"
    if not ptxas.exists():
        return None
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder, "kernel.ptx")
        # the ptxas of nvidia-cuda-nvcc-cu12 reads PTX ISA up to 8.8, and numba-cuda built on
        # CUDA 13 stamps 9.0 on the same instructions: the report only needs them assembled
        source.write_text(re.sub(r"^\.version 9\.\d+", ".version 8.8", ptx, flags=re.M))
        report = subprocess.run(
            [str(ptxas), f"-arch=sm_{cc[0]}{cc[1]}", "-v", str(source), "-o", os.devnull],
            capture_output=True,
            text=True,
            check=False,
        ).stderr

    def number(pattern: str) -> int:
        return max((int(x) for x in re.findall(pattern, report)), default=0)

    return (
        number(r"Used (\d+) registers"),
        number(r"(\d+) bytes smem"),
        number(r"(\d+) bytes stack frame"),
        number(r"(\d+) bytes spill stores"),
    )


if __name__ == "__main__":
    sys.exit(main())
