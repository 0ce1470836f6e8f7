"""The benchmark tables the documentation renders: their JSON files, the page, the README taste."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest
from doc_blocks import DOCS, ROOT

sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "scripts"))
import bench_peers_measures
import report

from fastndcg.synthetic import Synthetic

FILES = sorted((DOCS / "benchmarks").glob("*.json"))


def tables() -> list[tuple[str, dict]]:
    """Every table, the sections included, as ``("file:section", table)``."""
    out = []
    for path in FILES:
        content = json.loads(path.read_text())
        out += [
            (f"{path.stem}:{name}", table)
            for name, table in {"": content, **report.sections(content)}.items()
        ]
    return out


TABLES = tables()
DIRECTIVE = r"^\.\. fastndcg-benchmark:: (\S+)\n(?:   :section: (\S+)\n)?"


def test_every_table_is_rendered_and_every_rendered_table_exists():
    page = (DOCS / "performance.rst").read_text()
    rendered = {f"{name}:{section}" for name, section in re.findall(DIRECTIVE, page, flags=re.M)}
    assert rendered == {name for name, _ in TABLES}


@pytest.mark.parametrize("table", [table for _, table in TABLES], ids=[name for name, _ in TABLES])
def test_a_table_says_when_where_and_how(table):
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


def test_a_section_and_the_main_table_keep_each_other(tmp_path):
    path = tmp_path / "peers.json"
    shape = dict(command="python x.py", columns=["a"], rows=[["1"]])
    report.write(path, title="main", **shape)
    report.write(path, title="measures", section="measures", **shape)
    report.write(path, title="main again", **shape)
    assert json.loads(path.read_text())["measures"]["title"] == "measures"
    report.write(path, title="measures again", section="measures", **shape)
    table = json.loads(path.read_text())
    assert (table["title"], table["measures"]["title"]) == ("main again", "measures again")


def test_the_measures_table_pairs_every_tool_with_fastndcg_under_its_preset():
    """Each tool's rows follow fastndcg's two calls under its preset, with the same measures,
    and those calls agreed with the tool on every query (or the table says what was left out)."""
    table = json.loads((DOCS / "benchmarks" / "peers.json").read_text())["measures"]
    column = {name: table["columns"].index(name) for name in table["columns"]}
    agreement = column["agreement with the tool (max abs diff; queries differing)"]
    rows = [row for row in table["rows"] if row[0] != "floor"]
    presets = {re.search(r"preset='(\w+)'", row[0]).group(1) for row in rows if "preset=" in row[0]}
    assert presets == {"pytrec_eval", "ranx", "ir_measures"}
    for preset in presets:
        ours = [row for row in rows if f"preset={preset!r}" in row[0]]
        tools = [row for row in rows if row[0].startswith(preset)]
        assert len(ours) == 2 and tools, preset
        assert {row[column["measures"]] for row in ours + tools} == {ours[0][column["measures"]]}
        for row in ours:
            assert re.match(r"\S+; 0 of [\d,]+ > 1e-09( \(|$)", row[agreement]), row
        shown = ours[0][column["measures"]].split(", ")
        left_out = re.findall(
            rf"\*\*left out\*\*: (\S+) under [^:]*preset={preset!r}", " ".join(table["notes"])
        )
        assert sorted({*shown, *left_out}) == sorted(bench_peers_measures.names_of(preset, 10))


def test_the_measures_check_names_the_measure_and_the_query_that_differ():
    query_ids = ["q0", "q1", "q2"]
    tool = np.array([[0.5, 1.0], [np.nan, 0.25], [0.0, 0.0]])
    ours = tool.copy()
    cell, mismatches = bench_peers_measures.compare(tool, ours, ("P@10", "AP"), query_ids)
    assert (cell, mismatches) == ("0.0e+00; 0 of 3 > 1e-09", [])
    ours[1, 1] += 1e-6
    ours[2, 0] = np.nan
    cell, mismatches = bench_peers_measures.compare(tool, ours, ("P@10", "AP"), query_ids)
    assert cell == "inf; 2 of 3 > 1e-09"
    assert [(entry["measure"], entry["query"]) for entry in mismatches] == [
        ("P@10", "q2"),
        ("AP", "q1"),
    ]


def test_the_measures_check_leaves_out_only_what_a_preset_documents_as_not_reproduced():
    """ranx's quicksort order of tied scores in lists over 15 documents (its preset's notes)."""
    lengths = [16, 16, 15, 3]
    scores = [np.arange(16.0), np.r_[np.arange(15.0), 3.0], np.r_[np.arange(14.0), 3.0], [1, 1, 2]]
    data = Synthetic(
        np.r_[0, np.cumsum(lengths)],
        np.zeros(sum(lengths), dtype=np.int8),
        np.concatenate(scores).astype(np.float32),
    )
    assert bench_peers_measures.unreproduced("ranx", data).tolist() == [False, True, False, False]
    assert not bench_peers_measures.unreproduced("pytrec_eval", data).any()
