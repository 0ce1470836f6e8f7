"""Where no cache directory is writable (a read-only install run by a user without a writable
home), fastndcg still runs: the kernels go to a temporary directory, with one warning.

The child process makes every directory but the temporary one unwritable to Numba (as a
read-only file system would), then scores and reports where the cache is.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.numba

CHILD = """
import json, os, tempfile, warnings
from numba.core import caching

def read_only(self):  # what a read-only file system does to every directory but /tmp
    path = self.get_cache_path()
    if not os.path.realpath(path).startswith(os.path.realpath(tempfile.gettempdir())):
        raise OSError(30, "Read-only file system", path)
    return original(self)

original = caching._CacheLocator.ensure_cache_path
caching._CacheLocator.ensure_cache_path = read_only

import numpy as np, fastndcg
from fastndcg import _runtime
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    value = float(fastndcg.ndcg(np.array([3, 2, 0]), np.array([0.3, 0.2, 0.1]), k=2))
print(json.dumps({
    "value": value,
    "warnings": [str(w.message) for w in caught],
    "cache": _runtime.cache_dir(),
    "tmp": os.path.realpath(tempfile.gettempdir()),
}))
"""


def test_no_writable_cache_directory_falls_back_to_a_temporary_one(tmp_path):
    (tmp_path / "tmp").mkdir()
    env = {"HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp")}
    run = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, **env, "NUMBA_CACHE_DIR": ""},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["value"] == pytest.approx(1.0)
    assert len(out["warnings"]) == 1 and "NUMBA_CACHE_DIR" in out["warnings"][0]
    assert out["cache"].startswith(out["tmp"])  # fastndcg info names the directory in use
    assert out["cache"].split("/")[len(out["tmp"].split("/"))].startswith("fastndcg-numba-cache-")
