"""The benchmark tables the documentation renders: their JSON files, the page, the README taste."""

from __future__ import annotations

import json
import re
import sys

import pytest
from doc_blocks import DOCS, ROOT

sys.path.insert(0, str(ROOT / "bench"))
import report

FILES = sorted((DOCS / "benchmarks").glob("*.json"))


def test_every_table_is_rendered_and_every_rendered_table_exists():
    page = (DOCS / "performance.rst").read_text()
    rendered = set(re.findall(r"^\.\. fastndcg-benchmark:: (\S+)$", page, flags=re.M))
    assert rendered == {path.stem for path in FILES}


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_a_table_says_when_where_and_how(path):
    table = json.loads(path.read_text())
    assert set(report.FIELDS) <= set(table), set(report.FIELDS) - set(table)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", table["date"])
    assert table["command"].startswith(("python ", "FASTNDCG_BENCH_QUERIES=", "bash "))
    assert table["machine"]["description"] and "fastndcg" in table["machine"]["software"]
    assert table["rows"] and all(len(row) == len(table["columns"]) for row in table["rows"])


def test_the_readme_taste_is_the_peers_table():
    """The README's five rows repeat the peers table's: name, what is timed and ratio."""
    peers = json.loads((DOCS / "benchmarks" / "peers.json").read_text())
    by_name = {row[0]: row for row in peers["rows"]}
    ratio = peers["columns"].index("relative to floor")
    text = (ROOT / "README.md").read_text()
    section = text.split("## Speed", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    header, rows = rows[0], rows[1:]
    assert "relative to floor" in header
    assert len(rows) == 5
    for line in rows:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        name = cells[0].replace("**", "")
        assert name in by_name, name
        assert cells[-1] == by_name[name][ratio], (name, cells[-1], by_name[name][ratio])
    queries = re.search(r"make_synthetic\((\d+)", peers["data"]).group(1)
    assert f"{int(queries):,} generated queries" in section


def test_the_figure_captions_state_what_the_figures_draw():
    """The numbers the presets page's caption gives are those the figure computes."""
    sys.path.insert(0, str(DOCS))
    import figures

    means = figures.tool_definition_means()
    caption = (DOCS / "user-guide" / "presets.md").read_text().split("tool-definitions.png", 1)[1]
    caption = caption.split("```", 1)[0]
    stated = [float(value) for value in re.findall(r"\b0\.\d{4}\b", caption)]
    assert sorted(stated) == sorted({round(mean, 4) for mean in means.values()})
