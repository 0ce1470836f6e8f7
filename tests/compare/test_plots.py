"""The figures of a comparison render to PNG files (matplotlib's Agg backend, no window)."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
from compare_data import run_without

import fastndcg
from fastndcg import OptionError, OptionTypeError

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    """Width and height from the IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == PNG, "not a PNG file"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def comparison():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(300), 15)
    grade = rng.choice(4, size=qid.size, p=[0.6, 0.2, 0.12, 0.08])
    table = pa.table(
        {
            "qid": qid,
            "grade": grade,
            "bm25": grade + rng.normal(0, 2.0, qid.size),
            "dense": grade + rng.normal(0, 1.6, qid.size),
            "hybrid": grade + rng.normal(0, 2.05, qid.size),
        }
    )
    return fastndcg.compare_table(
        table,
        scores=["bm25", "dense", "hybrid"],
        baseline="bm25",
        k=[1, 5, 10, None],
        n_resamples=500,
    )


@pytest.mark.parametrize(
    ("kind", "options", "inches"),
    [
        ("forest", {}, (9.0, 1.2 + 0.42 * 8)),
        ("waterfall", {"system": "hybrid", "k": 10}, (8.0, 4.5)),
        ("ndcg_at_k", {}, (7.0, 4.5)),
        ("distribution", {"k": 5}, (7.5, 4.5)),
    ],
)
def test_every_figure_renders_to_png(comparison, tmp_path, kind, options, inches):
    pytest.importorskip("matplotlib")
    path = tmp_path / f"{kind}.png"
    figure = comparison.plot(kind, path, dpi=100, **options)
    width, height = png_size(path)
    assert (width, height) == (round(inches[0] * 100), round(inches[1] * 100))
    assert path.stat().st_size > 15_000  # drawn, not blank
    assert figure.axes and figure.axes[0].get_title()
    if kind == "waterfall":
        assert "hybrid vs bm25, NDCG@10" in figure.axes[0].get_title()
    if kind == "forest":
        labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
        assert labels[0] == "dense vs bm25  NDCG@1" and len(labels) == 8


def test_a_figure_draws_on_given_axes(comparison):
    figure_module = pytest.importorskip("matplotlib.figure")
    figure = figure_module.Figure()
    axes = figure.subplots(1, 2)
    assert comparison.plot("ndcg_at_k", ax=axes[0]) is figure
    assert comparison.plot("distribution", ax=axes[1]) is figure
    assert axes[1].get_xlabel().startswith("per-query NDCG@1")


@pytest.mark.parametrize(
    ("kind", "options", "error", "message"),
    [
        ("pie", {}, OptionError, "unknown kind='pie'; valid values are 'forest', 'waterfall'"),
        (
            "waterfall",
            {"k": 3},
            OptionError,
            "k=3 was not compared; the cutoffs are 1, 5, 10, None",
        ),
        ("distribution", {"k": "5"}, OptionTypeError, "k must be an int >= 1 or None; got '5'"),
        ("waterfall", {"system": "bm25"}, OptionError, "no comparison of system='bm25'"),
        ("waterfall", {"system": 1}, OptionTypeError, "system must be a system name"),
        ("waterfall", {"baseline": ["bm25"]}, OptionTypeError, "baseline must be a system name"),
    ],
)
def test_bad_plot_options(comparison, kind, options, error, message):
    """Checked through the option table (fastndcg._core.options.comparing.VIEW_OPTIONS)."""
    pytest.importorskip("matplotlib")
    with pytest.raises(error, match=message) as info:
        comparison.plot(kind, **options)
    assert (info.value.option, info.value.value) == (
        ("kind", kind) if not options else next(iter(options.items()))
    )


def test_the_view_options_default_as_the_signatures_do():
    import inspect

    from fastndcg._compare import plots
    from fastndcg._core.options.comparing import VIEW_OPTIONS

    signatures = {
        "compare_definitions": inspect.signature(fastndcg.compare_definitions),
        "plot": inspect.signature(fastndcg.PairedComparison.plot),
        "waterfall": inspect.signature(plots.waterfall),
    }
    for function, names in (
        ("compare_definitions", ("using", "tolerance")),
        ("plot", ("kind",)),
        ("waterfall", ("k", "system")),
    ):
        for name in names:
            assert signatures[function].parameters[name].default == VIEW_OPTIONS[name].default
    assert signatures["waterfall"].parameters["baseline"].default is None  # compare's baseline


def test_plots_need_matplotlib_and_say_how_to_get_it():
    out = run_without(
        "matplotlib",
        """
        try:
            c.plot("forest")
        except ImportError as exc:
            print(exc)
        """,
    )
    assert "pip install 'fastndcg[plot]'" in out


def test_the_plot_extra_is_matplotlib():
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    extras = project["project"]["optional-dependencies"]
    assert any(spec.startswith("matplotlib") for spec in extras["plot"])


def test_forest_draws_an_unbounded_side_as_an_arrow(tmp_path):
    """One-sided intervals (and too few queries to reject any shift) run to the axis edge."""
    pytest.importorskip("matplotlib")
    from compare_data import three_runs

    comparison = fastndcg.compare(three_runs(), baseline="bm25", alternative="greater")
    assert all(r["ci_high"] == np.inf for r in comparison.rows)
    figure = comparison.plot("forest", tmp_path / "forest.png")
    ax = figure.axes[0]
    arrows = [line for line in ax.lines if line.get_marker() == ">"]
    assert len(arrows) == 2 and not [line for line in ax.lines if line.get_marker() == "<"]
    assert all(line.get_xdata()[0] <= ax.get_xlim()[1] for line in arrows)
    assert "95% one-sided sign-flip interval" in ax.get_xlabel()
    png_size(tmp_path / "forest.png")
