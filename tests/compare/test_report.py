"""PairedComparison's tables: printed, pandas, Markdown, LaTeX, JSON, per query."""

from __future__ import annotations

import json

import numpy as np
import pytest
from compare_data import result, run_without, three_runs

import fastndcg


def test_to_pandas_columns():
    pytest.importorskip("pandas")
    comparison = fastndcg.compare(three_runs(), n_resamples=200)
    frame = comparison.to_pandas()
    assert list(frame.columns) == [
        "measure",
        "cutoff",
        "baseline",
        "system",
        "mean_baseline",
        "mean_system",
        "delta",
        "ci_low",
        "ci_high",
        "effect_size",
        "p_value",
        "p_adjusted",
        "significant",
        "wins",
        "ties",
        "losses",
        "n_queries",
    ]
    assert len(frame) == 3 and frame["significant"].dtype == bool
    assert frame["n_queries"].tolist() == [60, 60, 60]
    systems = comparison.to_pandas("systems")
    assert list(systems["system"]) == ["bm25", "dense", "hybrid"]
    with pytest.raises(ValueError, match="unknown table='x'"):
        comparison.to_pandas("x")


def test_repr_states_the_settings():
    comparison = fastndcg.compare(three_runs(), baseline="bm25", n_resamples=321, seed=9)
    text = repr(comparison)
    for piece in (
        "paired randomization test",
        "321 random sign vectors, seed 9",
        "family: each system against baseline 'bm25'",
        "correction: Holm (within each measure); alpha = 0.05",
        "95% sign-flip interval: the shifts the randomization test does not reject at level 0.05",
        "test: paired randomization test (sign flips of the per-query differences); two-sided",
        "measure: NDCG@10, per query DCG / IDCG",
        "per-system means (t interval)",
    ):
        assert piece in text
    dense = next(line for line in text.splitlines() if " dense " in line and "@10" in line)
    assert dense.rstrip().endswith("60") and " *" in dense
    hybrid = next(line for line in text.splitlines() if " hybrid " in line and "@10" in line)
    assert " *" not in hybrid


def test_markdown_marks_significance():
    text = fastndcg.compare(three_runs(), baseline="bm25", test="t").to_markdown()
    lines = text.splitlines()
    assert lines[0].startswith("**Paired t-test**") and "Holm correction" in lines[0]
    assert lines[2].startswith("| measure | baseline | system |")
    dense = next(line for line in lines if "| dense |" in line)
    hybrid = next(line for line in lines if "| hybrid |" in line)
    assert "*" in dense.split("|")[10] and "*" not in hybrid.split("|")[10]


def test_latex_booktabs_best_bold_marker_and_caption():
    runs = three_runs()
    runs["my_sys"] = runs.pop("hybrid")
    comparison = fastndcg.compare(runs, baseline="bm25", n_resamples=500, correction="bh")
    text = comparison.to_latex()
    assert text.count(r"\toprule") == 1 and r"\midrule" in text and r"\bottomrule" in text
    assert r"my\_sys" in text
    best = max(r["mean_system"] for r in comparison.rows)
    dense = next(line for line in text.splitlines() if line.startswith("NDCG@10 & bm25 & dense"))
    assert rf"\textbf{{{best:.4f}}}" in dense and r"^{\dagger}$" in dense
    other = next(line for line in text.splitlines() if "my\\_sys" in line and "&" in line)
    assert r"\textbf" not in other and r"\dagger" not in other
    assert "$$" not in text.split(r"\midrule")[1]  # each cell's math is one group
    caption = next(line for line in text.splitlines() if line.startswith(r"\caption{"))
    for piece in (
        "Paired randomization test",
        "500 random sign vectors, seed 0",
        "Benjamini-Hochberg correction",
        r"$\alpha = 0.05$",
    ):
        assert piece in caption


def test_json_is_one_object_with_null_for_nan():
    comparison = fastndcg.compare({"a": result([0.3]), "b": result([0.5])}, test="t")
    text = comparison.to_json()
    assert "NaN" not in text
    data = json.loads(text)
    assert data["test"] == "t" and data["seed"] == 0 and data["alpha"] == 0.05
    row = data["comparisons"][0]
    assert row["p_value"] is None and row["ci_low"] is None and row["n_queries"] == 1
    assert row["delta"] == pytest.approx(0.2)
    assert data["systems"][0]["mean"] == 0.3


def test_per_query_table():
    pa = pytest.importorskip("pyarrow")
    runs = {
        "a": result([0.5, np.nan, 0.25], ids=["x", "y", "z"]),
        "b": result([0.75, 0.5, 0.0], ids=["x", "y", "z"]),
    }
    table = fastndcg.compare(runs, test="t").per_query()
    assert isinstance(table, pa.Table)
    assert table.column_names == [
        "measure",
        "cutoff",
        "baseline",
        "system",
        "query_id",
        "value_baseline",
        "value_system",
        "delta",
        "used",
    ]
    assert table.column("query_id").to_pylist() == ["x", "y", "z"]
    assert table.column("delta").to_pylist()[0] == 0.25
    assert table.column("used").to_pylist() == [True, False, True]
    assert table.column("cutoff").to_pylist() == [10, 10, 10]
    assert table.column("measure").to_pylist() == ["NDCG@10"] * 3


def test_whole_list_cutoff_and_several_cutoffs():
    values = np.random.default_rng(2).uniform(0, 1, (30, 2))
    runs = {"a": result(values, k=(3, None)), "b": result(values[::-1].copy(), k=(3, None))}
    comparison = fastndcg.compare(runs, test="t")
    assert [r["cutoff"] for r in comparison.rows] == [3, None]
    assert [r["measure"] for r in comparison.rows] == ["NDCG@3", "NDCG"]
    assert "all" in repr(comparison)
    assert json.loads(comparison.to_json())["cutoffs"] == [3, None]


def test_pandas_stays_optional():
    out = run_without(
        "pandas",
        """
        repr(c); c.to_markdown(); c.to_latex(); c.to_json(); c.per_query()
        try:
            c.to_pandas()
        except ImportError as exc:
            print(exc)
        print("pandas" in sys.modules)
        """,
    )
    message, loaded = out.strip().splitlines()
    assert "pip install pandas" in message and loaded == "False"


def scored_pair():
    """Two systems scored by fastndcg under the trec_eval-like definition of a preset."""
    rng = np.random.default_rng(3)
    grades = rng.integers(0, 3, (40, 8))
    options = {"k": [5, 10], "preset": "sklearn"}
    a = fastndcg.ndcg(grades, rng.random((40, 8)), **options)
    b = fastndcg.ndcg(grades, grades + 2 * rng.random((40, 8)), **options)
    return {"a": a, "b": b}


DEFINED = (
    "NDCG@5, NDCG@10",
    "gain linear (g)",
    "discount log2 (1/log2(r + 1))",
    "ties average",
    "ideal recall",
    "zero_idcg zero",
    "preset sklearn",
)


def test_every_output_states_the_measure_and_the_test():
    comparison = fastndcg.compare(
        scored_pair(), test="t", alternative="greater", correction="by", alpha=0.01, seed=4
    )
    outputs = {
        "repr": repr(comparison),
        "markdown": comparison.to_markdown(),
        "latex": comparison.to_latex().replace(r"\_", "_").replace(r"\textgreater{}", ">"),
        "json": comparison.to_json(),
    }
    for name, text in outputs.items():
        named = ("Benjamini-Yekutieli",) if name != "json" else ('"correction": "by"',)
        for piece in (*DEFINED, "H1: system > baseline", *named):
            assert piece in text, (name, piece)
    settings = json.loads(outputs["json"])
    assert settings["alternative"] == "greater" and settings["correction"] == "by"
    assert settings["alpha"] == 0.01 and settings["seed"] == 4 and settings["test"] == "t"
    assert "gain linear (g)" in settings["definitions"]["a"]
    pytest.importorskip("pandas")
    frame = comparison.to_pandas()
    assert frame.attrs["alternative"] == "greater" and "preset sklearn" in frame.attrs["measure"]


def test_different_definitions_are_shown_side_by_side():
    runs = scored_pair()
    rng = np.random.default_rng(5)
    grades = rng.integers(0, 3, (40, 8))
    runs["b"] = fastndcg.ndcg(grades, rng.random((40, 8)), k=[5, 10], gain="exp2")
    text = repr(fastndcg.compare(runs, test="t"))
    assert "DEFINITIONS DIFFER: a: preset sklearn, gain linear (g)" in text
    assert "b: gain exp2 (2^g - 1)" in text
