"""numba is optional: imported lazily, and its absence falls back to the NumPy backend."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import NUMBA_BLOCKED

import fastndcg


def test_import_does_not_load_numba():
    code = "import sys, fastndcg; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.skipif(not NUMBA_BLOCKED, reason="only meaningful when numba is blocked")
def test_without_numba_auto_falls_back_to_numpy():
    assert fastndcg.available_backends() == ("numpy",)
    result = fastndcg.ndcg([3, 1, 2, 0, 2], k=5)
    assert result.options["backend"] == "numpy"
    assert float(result) == pytest.approx(0.950849602851865, rel=1e-14)
    with pytest.raises(ImportError, match="backend='numba' needs numba"):
        fastndcg.ndcg([1, 0], [0.5, 0.4], backend="numba")
    assert "numba" not in sys.modules


@pytest.mark.skipif(NUMBA_BLOCKED, reason="needs numba")
def test_with_numba_auto_picks_numba(monkeypatch):
    monkeypatch.delenv("FASTNDCG_BACKEND", raising=False)
    assert fastndcg.available_backends() == ("numba", "numpy")
    assert fastndcg.ndcg([1, 0], [0.5, 0.4]).options["backend"] == "numba"
    monkeypatch.setenv("FASTNDCG_BACKEND", "numpy")
    assert fastndcg.ndcg([1, 0], [0.5, 0.4]).options["backend"] == "numpy"
