"""The README's examples run and print what they claim; the README stays a short front page."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from doc_blocks import RUNNABLE, blocks, run_page

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_examples_run(capsys, tmp_path, monkeypatch):
    runnable = [block for block in blocks(README) if block.language in RUNNABLE]
    assert len(runnable) >= 4, "README lost its examples"
    ran, skipped, out = run_page(README, tmp_path, monkeypatch, capsys)
    assert len(ran) >= 3, (ran, skipped)
    assert "NDCGResult(n_queries=2" in out
    assert "NDCGResult(n_queries=10000" in out
    assert "ndcg@10" in out  # the TREC command printed its table
    # the TREC example's missing query, once in the README, is checked on the inputs page
    # (tests/docs/test_examples.py)


def test_the_first_examples_need_only_the_plain_install():
    """`pip install .` (numpy, numba, pyarrow) runs every example before the comparison's."""
    first = README.read_text().split("## Comparing two runs", 1)[0].count("\n") + 1
    for block in blocks(README):
        if block.language in RUNNABLE and not block.skip and block.line < first:
            assert not block.needs(), (block.where, block.needs())


def test_readme_is_a_short_front_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    assert "UTC" not in text, "timestamps belong in git history"
    hashes = re.findall(r"`[0-9a-f]{7,40}`", text)
    assert not hashes, f"commit hashes belong in git history: {hashes}"
