"""The README's Python example runs and prints what it claims."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_examples_run(capsys):
    blocks = python_blocks()
    assert blocks, "README has no python example"
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, str(README), "exec"), namespace)
    assert "NDCGResult(n_queries=2" in capsys.readouterr().out
