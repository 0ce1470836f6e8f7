"""The README's Python example runs and prints what it claims."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_examples_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write small files
    blocks = python_blocks()
    assert len(blocks) >= 4, "README lost its python examples"
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "NDCGResult(n_queries=2" in out
    assert "NDCGResult(n_queries=10000" in out
    assert "judged queries missing from the run: 1" in out
