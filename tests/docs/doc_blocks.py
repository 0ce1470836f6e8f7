"""The code blocks of the documentation's pages and the README, and how to run them.

A page's blocks run in order, in one directory: Python blocks in one namespace (a page is a
tutorial, later blocks use what earlier ones made), ``bash`` blocks with ``bash -euo pipefail``
and the ``fastndcg`` command of this checkout first on the PATH. A comment on the line before a
block changes that:

- ``<!-- test: skip (reason) -->`` (``.. test: skip (reason)`` in reStructuredText): never run;
- ``<!-- test: requires NAME, NAME -->``: skipped unless each NAME is there: a module
  (``pyspark``), ``java`` (the program), ``cuda`` (the cuda backend) or a fastndcg attribute
  (``fastndcg.compare``);
- ``<!-- test: output -->`` before a ``text`` block: the block is what the code block before it
  prints, line by line (trailing spaces aside).

A Python block that imports an optional package (:data:`OPTIONAL`) requires it too.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RUNNABLE = ("python", "bash")
OPTIONAL = ("pandas", "polars", "dask", "distributed", "pyspark", "torch", "matplotlib", "scipy")

_FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\S*)")
_MARKER_MD = re.compile(r"^<!--\s*test:\s*(skip|requires|output)\b(.*?)-->\s*$")
_MARKER_RST = re.compile(r"^\.\.\s+test:\s*(skip|requires|output)\b(.*)$")
_CODE_BLOCK_RST = re.compile(r"^\.\.\s+code-block::\s*(\w+)\s*$")
_IMPORT = re.compile(r"^\s*(?:import|from)\s+([A-Za-z_][\w]*)", re.M)


@dataclass
class Block:
    """One code block of a page."""

    page: Path
    line: int  # 1-based line of the block's first code line
    language: str
    code: str
    skip: str | None = None  # the reason it never runs
    requires: list[str] = field(default_factory=list)
    output: bool = False  # a text block: what the block before it prints

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def needs(self) -> list[str]:
        """Everything the block requires: its marker's names and the optional modules it imports."""
        names = list(self.requires)
        if self.language == "python":
            names += [name for name in _IMPORT.findall(self.code) if name in OPTIONAL]
        return list(dict.fromkeys(names))


def _marker(text: str, pattern: re.Pattern) -> tuple[str, str] | None:
    found = pattern.match(text.strip())
    if found is None:
        return None
    return found.group(1), found.group(2).strip().strip("()").strip()


def markdown_blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown (MyST) page, with the marker before each."""
    lines = page.read_text().splitlines()
    blocks = []
    index = 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if opened is None:
            index += 1
            continue
        fence, language = opened.group(1), opened.group(2).lower()
        start = index + 1
        end = start
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        if language.startswith("{"):  # a MyST directive ({figure}, {toctree}), not code
            index = end + 1
            continue
        before = next((line for line in reversed(lines[:index]) if line.strip()), "")
        blocks.append(_block(page, start + 1, language, "\n".join(lines[start:end]), before))
        index = end + 1
    return blocks


def rst_blocks(page: Path) -> list[Block]:
    """The ``.. code-block::`` blocks of a reStructuredText page, with the marker before each."""
    lines = page.read_text().splitlines()
    blocks = []
    for index, line in enumerate(lines):
        opened = _CODE_BLOCK_RST.match(line.strip())
        if opened is None:
            continue
        body = []
        for following in lines[index + 1 :]:
            if following.strip() and not following.startswith((" ", "\t")):
                break
            body.append(following)
        code = textwrap.dedent("\n".join(body)).strip()
        before = next((text for text in reversed(lines[:index]) if text.strip()), "")
        blocks.append(_block(page, index + 2, opened.group(1).lower(), code, before))
    return blocks


def _block(page: Path, line: int, language: str, code: str, before: str) -> Block:
    block = Block(page, line, language, code)
    marker = _marker(before, _MARKER_MD) or _marker(before, _MARKER_RST)
    if marker is not None:
        kind, words = marker
        if kind == "skip":
            block.skip = words or "marked skip"
        elif kind == "output":
            block.output = True
        else:
            block.requires = [name.strip() for name in words.split(",") if name.strip()]
    return block


def blocks(page: Path) -> list[Block]:
    """The code blocks of ``page`` (Markdown or reStructuredText)."""
    return rst_blocks(page) if page.suffix == ".rst" else markdown_blocks(page)


def pages() -> list[Path]:
    """Every page of the documentation, and the README (the pages that include the top-level
    Markdown files name them, so those files are pages here)."""
    found = [ROOT / name for name in ("README.md", "CONTRIBUTING.md", "ARCHITECTURE.md")]
    found.append(ROOT / "CHANGELOG.md")
    for path in sorted(DOCS.rglob("*")):
        if path.suffix not in (".md", ".rst") or not path.is_file():
            continue
        if any(part.startswith(("_", ".")) for part in path.relative_to(DOCS).parts):
            continue  # _build, _templates, generated files
        if "generated" in path.relative_to(DOCS).parts or path.parent.name == "benchmarks":
            continue
        found.append(path)
    return found


def missing(name: str) -> bool:
    """Whether a requirement NAME is unavailable here."""
    if name == "java":
        return shutil.which("java") is None
    if name == "cuda":
        import fastndcg

        return "cuda" not in fastndcg.available_backends()
    if name.startswith("fastndcg."):
        import fastndcg

        target: object = fastndcg
        for part in name.split(".")[1:]:
            if not hasattr(target, part):
                return True
            target = getattr(target, part)
        return False
    return importlib.util.find_spec(name) is None


def command_shim(folder: Path) -> Path:
    """A directory holding a ``fastndcg`` that runs this checkout's command with this Python."""
    folder.mkdir(parents=True, exist_ok=True)
    shim = folder / "fastndcg"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m fastndcg "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def run_bash(block: Block, cwd: Path, shim: Path, timeout: float = 600) -> str:
    """Run a bash block in ``cwd``; returns its output, raises AssertionError on failure."""
    env = dict(os.environ)
    env["PATH"] = f"{shim}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{block.where}: exit status {done.returncode}\n{output}"
    return output


def run_python(block: Block, namespace: dict) -> None:
    """Run a Python block in ``namespace`` (a traceback names the page and line)."""
    code = "\n" * (block.line - 1) + block.code  # tracebacks point at the page's lines
    exec(compile(code, str(block.page), "exec"), namespace)


def run_page(page: Path, tmp_path: Path, monkeypatch, capsys) -> tuple[list, list, str]:
    """Run the blocks of ``page`` in ``tmp_path`` (pytest's fixtures passed in).

    Returns the blocks that ran, the reasons of those skipped, and everything they printed.
    """
    import warnings

    numba_blocked = os.environ.get("FASTNDCG_BLOCK_NUMBA") == "1"
    monkeypatch.chdir(tmp_path)  # the examples write small files
    shim = command_shim(tmp_path / ".bin")
    namespace: dict = {"__name__": "__doc_example__"}
    ran, skipped, output = [], [], []
    last: str | None = None  # what the last block run printed
    page_blocks = blocks(page)
    # A bash block runs the command in a child process, where numba is not blocked: the run with
    # numba blocked would repeat the main run's. It skips those after the page's last Python
    # block (nothing run in this process reads what they write); earlier ones still run, as the
    # Python blocks after them read the files they make.
    python_lines = [b.line for b in page_blocks if b.language == "python" and not b.skip]
    last_python = max(python_lines, default=0)
    for block in page_blocks:
        if block.output:
            if last is not None:  # None: the block before was skipped
                assert _lines(last) == _lines(block.code), (
                    f"{block.where}: the page shows another output than the code prints:\n{last}"
                )
            continue
        last = None
        if block.language not in RUNNABLE:
            continue
        if block.skip:
            skipped.append(f"{block.where}: {block.skip}")
            continue
        needs = [name for name in block.needs() if missing(name)]
        if "pyspark" in block.needs() and numba_blocked:
            needs.append("the numba run (Spark examples run once)")
        if block.language == "bash" and block.line > last_python and numba_blocked:
            needs.append("the numba run (the command runs with numba in either run)")
        if needs:
            skipped.append(f"{block.where}: needs {', '.join(needs)}")
            continue
        if block.language == "python":
            capsys.readouterr()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # pyspark's pandas warnings
                run_python(block, namespace)
            last = capsys.readouterr().out
        else:
            last = run_bash(block, tmp_path, shim)
        output.append(last)
        ran.append(block.where)
    return ran, skipped, "".join(output)


def _lines(text: str) -> list[str]:
    """Lines to compare: trailing spaces dropped, and the backend a result names (the run with
    numba blocked computes with the NumPy backend, and its results say so)."""
    text = re.sub(r"backend='(numba|numpy)'", "backend=...", text)
    return [line.rstrip() for line in text.strip("\n").splitlines()]
