"""Presets, tool rules and compare_definitions: listing, overrides, errors, output (no tools)."""

from __future__ import annotations

import doctest
import importlib
import json
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import COMMAND
from parity_data import TREC, random_lists

import fastndcg
from fastndcg._core.aggregate import round_half_even
from fastndcg._presets import EXP2_TABLE

PRESETS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "user-guide" / "presets.md"
NAMES = [
    "trec_eval",
    "trec_eval9",
    "pytrec_eval",
    "ir_measures",
    "gdeval",
    "sklearn",
    "torchmetrics",
    "keras_rs",
    "lightgbm",
    "xgboost",
    "ranx",
]
GRADES = np.array([3.0, 2, 0, 1, 0, 0, 1, 0, 2, 0])
SCORES = np.array([0.9, 0.9, 0.7, 0.6, 0.5, 0.5, 0.5, 0.1, 0.3, 0.3])
QID = np.array([1, 1, 1, 1, 2, 2, 2, 2, 3, 3])


def test_listing():
    listed = fastndcg.presets()
    assert list(listed) == NAMES
    for name, preset in listed.items():
        assert preset.name == name and preset.tool and preset.flags and preset.parity
        assert preset.options["discount"] == "log2"
        assert name in repr(preset)
    listed.clear()  # a copy: the registry is untouched
    assert list(fastndcg.presets()) == NAMES
    with pytest.raises(TypeError):
        fastndcg.presets()["sklearn"].options["gain"] = "exp2"  # read-only settings
    assert "[0, 1, 3, ..., 2**30 - 1]" in repr(fastndcg.presets()["lightgbm"])


@pytest.mark.parametrize(
    "call",
    [
        lambda: fastndcg.ndcg([1, 0], [0.2, 0.1], preset="lightgmb"),
        lambda: fastndcg.ndcg_table(pa.table({"qid": [1], "grade": [1], "score": [0.1]}), preset=3),
        lambda: fastndcg.ndcg_run(TREC / "qrels.test", TREC / "results.test", preset="TREC_EVAL"),
        lambda: fastndcg.compare_definitions([1, 0], [0.2, 0.1], definitions=["nope"]),
    ],
)
def test_unknown_preset_lists_the_valid_ones(call):
    with pytest.raises(ValueError, match=r"unknown preset=.*valid presets are 'trec_eval', "):
        call()


def test_preset_settings_and_explicit_overrides():
    lightgbm = fastndcg.ndcg(GRADES, SCORES, qid=QID, preset="lightgbm")
    assert lightgbm.k == (1, 2, 3, 4, 5) and lightgbm.options["preset"] == "lightgbm"
    same = fastndcg.ndcg(
        GRADES,
        SCORES,
        qid=QID,
        k=[1, 2, 3, 4, 5],
        gain=list(EXP2_TABLE),
        ties="stable",
        zero_idcg="one",
    )
    np.testing.assert_array_equal(lightgbm.per_query, same.per_query)
    # an explicit option wins, even when it equals fastndcg's own default ("average")
    averaged = fastndcg.ndcg(GRADES, SCORES, qid=QID, preset="lightgbm", k=3, ties="average")
    expected = fastndcg.ndcg(GRADES, SCORES, qid=QID, k=3, gain=list(EXP2_TABLE), zero_idcg="one")
    np.testing.assert_array_equal(averaged.per_query, expected.per_query)
    assert averaged.options["ties"] == "average"
    # the same through a table, a Parquet file and a TREC run
    table = pa.table({"qid": QID, "grade": GRADES, "score": SCORES})
    via_table = fastndcg.ndcg_table(table, preset="sklearn", k=[2, None])
    np.testing.assert_array_equal(
        via_table.per_query,
        fastndcg.ndcg(GRADES, SCORES, qid=QID, preset="sklearn", k=[2, None]).per_query,
    )


def test_parquet_and_run_entry_points(tmp_path):
    table = pa.table({"qid": QID, "grade": GRADES, "score": SCORES + 1e-9 * (QID == 2)})
    pq.write_table(table, tmp_path / "p.parquet")
    streamed = fastndcg.ndcg_parquet(tmp_path / "p.parquet", preset="xgboost", batch_rows=3)
    direct = fastndcg.ndcg(
        table["grade"].to_numpy(), table["score"].to_numpy(), qid=QID, preset="xgboost"
    )
    np.testing.assert_array_equal(streamed.per_query, direct.per_query)
    assert streamed.options["score_dtype"] == "float32" and streamed.k == (32,)
    run = fastndcg.ndcg_run(
        TREC / "qrels.test", TREC / "results.test", preset="lightgbm", k=5, missing="skip"
    )
    assert run.options["ideal"] == "recall" and run.options["preset"] == "lightgbm"


def test_trec_presets_outside_runs():
    """No document ids: the docid tie rule needs ties= given; the ideal is the rows given."""
    with pytest.raises(ValueError, match=r"preset 'trec_eval' orders tied scores by document id"):
        fastndcg.ndcg(GRADES, SCORES, qid=QID, preset="trec_eval")
    result = fastndcg.ndcg(GRADES, SCORES, qid=QID, preset="trec_eval", ties="stable", k=3)
    assert result.options["ideal"] == "recall" and result.options["gain"] == "linear"
    judged = fastndcg.ndcg(
        GRADES,
        SCORES,
        qid=QID,
        preset="ir_measures",
        ties="stable",
        k=3,
        ideal_grades=[3, 3, 0, 2, 1],
        ideal_qid=[1, 1, 2, 3, 3],
    )
    assert judged.options["ideal"] == "global"
    # settings for TREC runs only (missing=) are not passed elsewhere
    fastndcg.ndcg_table(pa.table({"qid": QID, "grade": GRADES, "score": SCORES}), preset="ranx")


def test_score_dtype_collapses_near_ties_and_leaves_inputs_alone():
    grades = np.array([0.0, 1.0])
    scores = np.array([1.0 + 1e-9, 1.0])
    kept = scores.copy()
    float64 = fastndcg.ndcg(grades, scores, ties="stable")
    float32 = fastndcg.ndcg(grades, scores, ties="stable", score_dtype="float32")
    assert float64.per_query[0, 0] < 1.0 and float32.per_query[0, 0] < 1.0
    assert fastndcg.ndcg(grades, scores, score_dtype="float32").per_query[0, 0] == pytest.approx(
        fastndcg.ndcg(grades, [1.0, 1.0]).per_query[0, 0], rel=1e-15
    )  # averaged as a tie
    np.testing.assert_array_equal(scores, kept)
    huge = fastndcg.ndcg([1.0, 0.0, 2.0], [1e39, 2e39, 1.0], score_dtype="float32", ties="average")
    assert huge.per_query[0, 0] == pytest.approx(
        fastndcg.ndcg([1.0, 0.0, 2.0], [5.0, 5.0, 1.0]).per_query[0, 0], rel=1e-15
    )  # beyond float32: both +inf, a tie
    with pytest.raises(ValueError, match="unknown score_dtype='float16'; valid values are"):
        fastndcg.ndcg(grades, scores, score_dtype="float16")


def test_decimals_round_as_printf():
    values = np.array([[2.675, 0.125], [0.375, np.nan], [0.7967076, 1 / 3]])
    rounded = round_half_even(values, 2)
    expected = [[float(f"{v:.2f}") for v in row] for row in values]
    np.testing.assert_array_equal(rounded, expected)  # 2.675 is 2.67499..., np.round gives 2.68
    rng = np.random.default_rng(1)
    many = rng.random(20000)
    assert all(round_half_even(many, 5) == [float(f"{v:.5f}") for v in many])
    # as many decimals as float64 holds and more: printf's rounding, no overflow, no NaN
    odd = np.array([12.345, 0.1 + 0.2, 1e-300, 5e-324, 1 / 3, np.nan])
    for decimals in (16, 17, 20, 300, 308, 309, 323):
        expected = [float(f"{v:.{decimals}f}") for v in odd]
        np.testing.assert_array_equal(round_half_even(odd, decimals), expected)
    for decimals in (324, 400, 10**20):
        np.testing.assert_array_equal(round_half_even(odd, decimals), odd)
    result = fastndcg.ndcg(GRADES, SCORES, qid=QID, k=3, decimals=3, weights=[1, 2, 3])
    plain = fastndcg.ndcg(GRADES, SCORES, qid=QID, k=3, weights=[1, 2, 3])
    np.testing.assert_array_equal(result.per_query, round_half_even(plain.per_query, 3))
    assert float(result) == pytest.approx(np.average(result.per_query[:, 0], weights=[1, 2, 3]))
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="decimals must be an int >= 0 or None"):
            fastndcg.ndcg(GRADES, SCORES, qid=QID, decimals=bad)


def test_tool_aggregates_by_hand():
    grades = np.array([1.0, 0.0, 0.0, 0.0, 2.0, 1.0])
    scores = np.array([0.2, 0.5, 0.1, 0.3, 0.9, 0.8])
    offsets = [0, 2, 4, 6]  # query 1 has no relevant item
    weights = [2.0, 0.5, 1.0]
    values = fastndcg.ndcg(grades, scores, offsets=offsets, zero_idcg="one").per_query[:, 0]
    lightgbm = fastndcg.ndcg(
        grades, scores, offsets=offsets, preset="lightgbm", k=None, weights=weights
    )
    assert float(lightgbm) == pytest.approx((2 * values[0] + 1.0 + values[2]) / 3.5, rel=1e-15)
    xgboost = fastndcg.ndcg(
        grades, scores, offsets=offsets, preset="xgboost", k=None, weights=weights
    )
    assert float(xgboost) == pytest.approx(float(lightgbm), rel=1e-15)
    capped = fastndcg.ndcg(
        [0.0, 0.0, 1.0],
        [0.1, 0.2, 0.3],
        offsets=[0, 2, 3],
        preset="xgboost",
        weights=[0.9999995, 1.0],
    )
    assert float(capped) == 1.0  # (1 + 1) / 1.9999995 is within XGBoost's 1e-6 of 1: capped
    keras = fastndcg.ndcg(
        grades, scores, offsets=offsets, preset="keras_rs", ties="stable", weights=weights
    )
    kv = fastndcg.ndcg(grades, scores, offsets=offsets, gain="exp2", zero_idcg="zero").per_query[
        :, 0
    ]
    # list weights: 2 and 1 for the lists with gain; the list without gain gets their mean 1.5
    assert float(keras) == pytest.approx((2 * kv[0] + 1.5 * kv[1] + kv[2]) / 4.5, rel=1e-15)
    with pytest.raises(
        ValueError, match=r"unknown aggregate='gbdt'; valid values are 'mean', 'ratio', 'lightgbm'"
    ):
        fastndcg.ndcg(grades, scores, offsets=offsets, aggregate="gbdt")
    ratio = fastndcg.ndcg(grades, scores, offsets=offsets, aggregate="ratio", decimals=2)
    assert float(ratio) == float(fastndcg.ndcg(grades, scores, offsets=offsets, aggregate="ratio"))


def test_keras_rs_dense_input_is_not_modified():
    grades = np.array([[2.0, -1.0, 1.0], [0.0, 1.0, -1.0]])
    scores = np.array([[0.1, 0.9, 0.3], [0.2, 0.1, 0.5]])
    weights = np.array([[1.0, 1.0, 0.0], [2.0, 1.0, 1.0]])
    copies = [a.copy() for a in (grades, scores, weights)]
    result = fastndcg.ndcg(grades, scores, preset="keras_rs", weights=weights)
    for array, copy in zip((grades, scores, weights), copies, strict=True):
        np.testing.assert_array_equal(array, copy)
    # list 0: item 1 (label -1) and item 2 (weight 0) are dropped; only item 0 remains
    assert result.per_query[0, 0] == 1.0
    with pytest.raises(ValueError, match=r"item weights must have the shape of grades \(2, 3\)"):
        fastndcg.ndcg(grades, scores, preset="keras_rs", weights=np.ones((3, 2)))


def test_max_docs_and_emptied_queries(tmp_path):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("1 0 a 1\n1 0 b 2\n1 0 c 0\n2 0 x 1\n")
    run.write_text("1 Q0 a 1 0.5 s\n1 Q0 b 2 0.5 s\n1 Q0 c 3 0.9 s\n2 Q0 y 1 0.3 s\n")
    cut = fastndcg.ndcg_run(qrels, run, preset="trec_eval", max_docs=2)
    # ranking c, b, a (ties by docid descending): the first two are c and b
    ideal = 2 + 1 / np.log2(3)
    assert cut.per_query[0, 0] == pytest.approx((2 / np.log2(3)) / ideal, rel=1e-15)
    # query 2's only document is unjudged: judged_only leaves it empty, scored 0 and counted
    judged = fastndcg.ndcg_run(qrels, run, preset="trec_eval", judged_only=True)
    assert list(judged.query_ids) == ["1", "2"] and judged.per_query[1, 0] == 0.0
    with pytest.raises(ValueError, match="max_docs=0 keeps no document of a ranking"):
        fastndcg.ndcg_run(qrels, run, max_docs=0)
    with pytest.raises(TypeError, match=r"max_docs must be an int .* got 2\.0"):
        fastndcg.ndcg_run(qrels, run, max_docs=2.0)
    with pytest.raises(ValueError, match="needs a fixed order of tied scores"):
        fastndcg.ndcg_run(qrels, run, max_docs=2, ties="average")


def test_compare_definitions():
    comparison = fastndcg.compare_definitions(
        GRADES,
        SCORES,
        qid=QID,
        k=[1, 3],
        definitions={"ours": {"ties": "average"}, "lgb": "lightgbm", "stable": {"ties": "stable"}},
    )
    assert list(comparison.results) == ["ours", "lgb", "stable"] and not comparison.errors
    rows = {(r["definition"], r["k"]): r for r in comparison.rows}
    ours = comparison.results["ours"].per_query
    for label in ("lgb", "stable"):
        theirs = comparison.results[label].per_query
        for j, k in enumerate([1, 3]):
            gap = np.abs(np.nan_to_num(theirs[:, j], nan=-1) - np.nan_to_num(ours[:, j], nan=-1))
            row = rows[label, k]
            assert row["differ"] == int((gap > 1e-12).sum())
            assert row["max_diff"] == pytest.approx(gap.max())
            assert row["mean"] == comparison.results[label].mean[j]
    assert rows["ours", 1]["settings"] == "(baseline)" and rows["ours", 1]["differ"] == 0
    assert rows["stable", 1]["settings"] == "ties=stable"
    assert "zero_idcg=one" in rows["lgb", 1]["settings"]
    gap = np.abs(comparison.results["lgb"].per_query[:, 0] - ours[:, 0])
    assert rows["lgb", 1]["worst_query"] == comparison.results["lgb"].query_ids[np.argmax(gap)]
    side = comparison.per_query(3)
    assert side.column_names == ["query_id", "ours", "lgb", "stable"]
    assert "Comparison with 'ours'" in repr(comparison) and "ties=stable" in repr(comparison)
    assert comparison.to_arrow().num_rows == 6 and comparison.to_pandas().shape == (6, 9)
    frame = pa.table({"qid": QID, "grade": GRADES, "score": SCORES}).to_pandas()
    for using in ("ndcg_table", fastndcg.ndcg_table):
        same = fastndcg.compare_definitions(
            frame,
            using=using,
            k=[1, 3],
            definitions={
                "ours": {"ties": "average"},
                "lgb": "lightgbm",
                "stable": {"ties": "stable"},
            },
        )
        assert same.rows == comparison.rows


def test_presets_of_ones_own():
    ours = fastndcg.Preset("ours", "our dashboards", {"ties": "stable", "k": 3, "gain": "linear"})
    assert list(ours.options) == ["k", "gain", "ties"]
    result = fastndcg.ndcg(GRADES, SCORES, qid=QID, preset=ours)
    expected = fastndcg.ndcg(GRADES, SCORES, qid=QID, k=3, gain="linear", ties="stable")
    np.testing.assert_array_equal(result.per_query, expected.per_query)
    assert result.options["preset"] == "ours"
    with pytest.raises(
        ValueError, match="preset 'bad' sets unknown option\\(s\\) cutoff; a preset sets k, "
    ):
        fastndcg.Preset("bad", "typo", {"cutoff": 3})


def test_compare_definitions_errors_and_labels(tmp_path):
    # no preset decides what a judged query absent from the run gets: missing= does
    ir_measures = {"preset": "ir_measures", "missing": "zero"}
    trec_eval9 = {"preset": "trec_eval9", "missing": "skip"}
    comparison = fastndcg.compare_definitions(
        TREC / "qrels.test",
        TREC / "results.trunc",
        using="ndcg_run",
        definitions={
            "trec_eval": "trec_eval",
            "ir_measures": ir_measures,
            "trec_eval9": trec_eval9,
        },
        k=10,
    )
    assert list(comparison.results) == ["ir_measures", "trec_eval9"]  # baseline: ir_measures
    assert "1 judged query is not in the run" in comparison.errors["trec_eval"]
    rows = {r["definition"]: r for r in comparison.rows}
    assert rows["trec_eval"]["mean"] is None and rows["trec_eval"]["settings"].startswith("error:")
    assert rows["trec_eval9"]["queries"] == 2 and rows["trec_eval9"]["differ"] == 1  # 302 skipped
    assert rows["trec_eval9"]["max_diff"] == 0 and rows["trec_eval9"]["worst_query"] == "302"
    reverse = fastndcg.compare_definitions(  # the query only in the other result is named too
        TREC / "qrels.test",
        TREC / "results.trunc",
        using="ndcg_run",
        definitions={"trec_eval9": trec_eval9, "ir_measures": ir_measures},
        k=10,
    )
    assert [(r["differ"], r["worst_query"]) for r in reverse.rows] == [(0, None), (1, "302")]
    assert rows["trec_eval9"]["settings"] == "missing=skip"
    labels = [
        r["definition"]
        for r in fastndcg.compare_definitions(
            [1, 0], [0.2, 0.1], definitions=["sklearn", "sklearn", {"gain": "linear"}]
        ).rows
    ]
    assert labels == ["sklearn", "sklearn #2", "gain=linear"]
    with pytest.raises(ValueError, match="definitions is empty"):
        fastndcg.compare_definitions([1, 0], [0.2, 0.1], definitions=[])
    with pytest.raises(ValueError, match="unknown using='ndcg_csv'"):
        fastndcg.compare_definitions([1, 0], [0.2, 0.1], definitions=["sklearn"], using="ndcg_csv")
    with pytest.raises(TypeError, match="a definition is a preset name or a dict of options"):
        fastndcg.compare_definitions([1, 0], [0.2, 0.1], definitions=[3])
    with pytest.raises(ValueError, match="no definition could score this input: trec_eval:"):
        fastndcg.compare_definitions([1, 0], [0.2, 0.1], definitions=["trec_eval"])


def cli(*args):
    return subprocess.run([*COMMAND, *map(str, args)], capture_output=True, text=True)


def test_command_line(tmp_path):
    table = pa.table({"qid": QID, "grade": GRADES, "score": SCORES})
    pq.write_table(table, tmp_path / "p.parquet")
    out = cli(
        "score", tmp_path / "p.parquet", "--preset", "lightgbm", "-k", "1,3", "--format", "json"
    )
    assert out.returncode == 0, out.stderr
    (data,) = json.loads(out.stdout)["results"]
    expected = fastndcg.ndcg(GRADES, SCORES, qid=QID, preset="lightgbm", k=[1, 3])
    assert data["ndcg@1"] == pytest.approx(expected.mean[0], rel=1e-12)
    assert data["ndcg@3"] == pytest.approx(expected.mean[1], rel=1e-12)
    out = cli("score", tmp_path / "p.parquet", "--compare-presets", "-k", "3", "--format", "json")
    rows = json.loads(out.stdout)["results"]
    assert [r["definition"] for r in rows] == [
        n for n in NAMES if fastndcg.presets()[n].options["ties"] != "docid_desc"
    ]
    runs = cli(
        "score",
        "--qrels",
        TREC / "qrels.test",
        "--run",
        TREC / "results.trunc",
        "--compare-presets",
        "trec_eval9,ir_measures",
        "-k",
        "10",
        "--missing",
        "zero",
    )
    assert runs.returncode == 0 and "trec_eval9" in runs.stdout and "(baseline)" in runs.stdout
    for args, message in [
        (["--preset", "nope"], "invalid choice: 'nope'"),
        (["--compare-presets", "sklearn,nope"], "unknown preset 'nope'"),
        (["--compare-presets", "--per-query", tmp_path / "x.csv"], "drop --compare-presets"),
        (["--preset", "trec_eval"], "orders tied scores by document id"),
        (["--preset", "sklearn", "--compare-presets"], "not allowed with argument"),
    ]:
        out = cli("score", tmp_path / "p.parquet", *args)
        assert out.returncode == 2 and message in out.stderr, out.stderr


def test_documented_preset_table_matches_the_registry():
    """The presets' settings table of the documentation (once in the README) is the registry's."""
    text = PRESETS_PAGE.read_text()
    section = text.split("### The presets' settings", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    header = next(line for line in section.splitlines() if line.startswith("| preset"))
    columns = [c.strip().strip("`") for c in header.strip("|").split("|")]
    seen = []
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0].strip("`")
        seen.append(name)
        options = fastndcg.presets()[name].options
        for column, cell in zip(columns, cells, strict=True):
            if column in ("preset", "reproduces"):
                continue
            value = options.get(column)
            shown = "–" if value is None and column != "k" else f"`{_short(value)}`"
            assert cell == shown, (name, column, cell, shown)
    assert seen == NAMES


def _short(value):
    from fastndcg._presets.registry import _short as short

    return short(value)


@pytest.mark.parametrize("name", ["fastndcg._presets.registry", "fastndcg._compare.definitions"])
def test_docstring_examples(name):
    failures, tried = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


def test_random_tied_lists_under_every_array_preset():
    """Every preset scores random tied lists (TREC presets with ties given: no document ids),
    with NDCG within [0, 1]."""
    data = random_lists(71)
    for name, preset in fastndcg.presets().items():
        options = {"ties": "stable"} if preset.options["ties"] == "docid_desc" else {}
        if name == "keras_rs":
            options["seed"] = 1
        result = fastndcg.ndcg(data.grades, data.scores, qid=data.qid, preset=name, **options)
        values = result.per_query[~np.isnan(result.per_query)]
        assert values.min() >= 0 and values.max() <= 1 + 1e-12, name
