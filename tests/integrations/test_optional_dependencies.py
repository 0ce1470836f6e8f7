"""The training libraries stay optional: ``import fastndcg`` loads none of them, and an
integration whose library is missing says which extra installs it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import fastndcg

# module -> (the library it needs, the extra that installs it)
INTEGRATIONS = {
    "torch": ("torch", "torch"),
    "lightgbm": ("lightgbm", "lightgbm"),
    "xgboost": ("xgboost", "xgboost"),
    "sklearn": ("sklearn", "sklearn"),
}


def test_import_fastndcg_loads_no_training_library():
    code = "import sys, fastndcg; print(sorted({'torch', 'lightgbm', 'xgboost', 'sklearn'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", list(INTEGRATIONS))
def test_a_missing_library_names_its_extra(name, monkeypatch):
    library, extra = INTEGRATIONS[name]
    monkeypatch.setitem(sys.modules, library, None)  # import of it fails, as where not installed
    spec = importlib.util.spec_from_file_location(
        f"fastndcg_{name}_without_it", f"{fastndcg.__path__[0]}/{name}.py"
    )
    with pytest.raises(fastndcg.BackendUnavailableError) as caught:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert isinstance(caught.value, ImportError)
    assert caught.value.value == library
    assert f"pip install 'fastndcg[{extra}]'" in str(caught.value)
