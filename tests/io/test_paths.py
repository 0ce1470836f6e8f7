"""Outputs: PairedComparison.plot(path) checks its path as the command's outputs are checked."""

from __future__ import annotations

import pytest

import fastndcg
from fastndcg._errors import OptionError

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 0\n"
RUNS = {
    "a": "q1 Q0 d2 1 0.9 A\nq1 Q0 d1 2 0.8 A\nq2 Q0 d4 1 0.7 A\n",
    "b": "q1 Q0 d1 1 0.9 B\nq1 Q0 d3 2 0.8 B\nq2 Q0 d5 1 0.7 B\nq2 Q0 d4 2 0.6 B\n",
}


@pytest.fixture
def comparison(tmp_path):
    (tmp_path / "qrels.svg").write_text(QRELS)
    for name, text in RUNS.items():
        (tmp_path / f"{name}.png").write_text(text)
    runs = {name: tmp_path / f"{name}.png" for name in RUNS}
    return fastndcg.compare_runs(tmp_path / "qrels.svg", runs, k=10, test="t")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a.png", "path {path} is the input {path}, which writing it would overwrite"),
        ("qrels.svg", "path {path} is the input {path}, which writing it would overwrite"),
        ("forest.xyz", "path {path} has the suffix .xyz, which is not a format it writes"),
        ("no/forest.png", "path {path}: there is no directory {parent}; create it first"),
    ],
)
def test_plot_refuses_a_path_it_cannot_write_before_drawing(tmp_path, comparison, name, message):
    """Before, matplotlib's ValueError or FileNotFoundError, or an input replaced."""
    pytest.importorskip("matplotlib")
    before = {path: path.read_bytes() for path in tmp_path.iterdir()}
    path = tmp_path / name
    with pytest.raises(OptionError) as raised:
        comparison.plot("forest", path)
    assert raised.value.option == "path" and raised.value.value == str(path)
    assert message.format(path=path, parent=path.parent) in str(raised.value)
    assert {path: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_plot_writes_a_supported_format(tmp_path, comparison):
    pytest.importorskip("matplotlib")
    figure = comparison.plot("forest", tmp_path / "forest.pdf")
    assert (tmp_path / "forest.pdf").read_bytes().startswith(b"%PDF")
    assert figure is not None
