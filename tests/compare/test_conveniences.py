"""compare_runs and compare_table equal compare() on results computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from conftest import TEST_DATA

import fastndcg
from fastndcg import InputError, OptionError, OptionTypeError
from fastndcg._compare.conveniences import system_names

TREC = TEST_DATA / "real" / "trec_eval_test"
QRELS = TREC / "qrels.comment.test"
RUN = TREC / "results.comment.test"


def same_rows(got, expected):
    assert len(got.rows) == len(expected.rows)
    for a, b in zip(got.rows, expected.rows, strict=True):
        assert a.keys() == b.keys()
        for key in a:
            if isinstance(a[key], float) and math.isnan(a[key]):
                assert math.isnan(b[key]), key
            else:
                assert a[key] == b[key], (key, a[key], b[key])


@pytest.fixture(scope="module")
def second_run(tmp_path_factory):
    """A second system: the RAG run with its scores perturbed (ties broken, order changed)."""
    path = tmp_path_factory.mktemp("runs") / "perturbed.run"
    rng = np.random.default_rng(0)
    out = []
    for line in RUN.read_text().splitlines():
        fields = line.split()
        fields[4] = f"{float(fields[4]) + rng.normal(0, 0.05):.5f}"
        out.append(" ".join(fields[:6]))
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.mark.parametrize("test", ["randomization", "t", "bootstrap"])
def test_compare_runs_equals_compare_of_ndcg_run(second_run, test):
    options = dict(k=[5, 10], test=test, n_resamples=500, seed=4)
    got = fastndcg.compare_runs(QRELS, {"rag": RUN, "perturbed": second_run}, **options)
    by_hand = {
        name: fastndcg.ndcg_run(QRELS, run, k=[5, 10], missing="skip")
        for name, run in (("rag", RUN), ("perturbed", second_run))
    }
    expected = fastndcg.compare(by_hand, test=test, n_resamples=500, seed=4)
    same_rows(got, expected)
    assert got.rows[0]["n_queries"] + got.rows[0]["n_skipped"] == got.query_ids.size


def test_compare_runs_missing_decides_how_runs_are_scored():
    runs = {"full": TREC / "results.test", "trunc": TREC / "results.trunc"}  # trunc lacks 302
    with pytest.raises(InputError, match="'trunc' lacks 1 \\(first: '302'\\)") as info:
        fastndcg.compare_runs(TREC / "qrels.test", runs, k=10)
    assert "missing='zero'" in str(info.value)
    zero = fastndcg.compare_runs(TREC / "qrels.test", runs, k=10, missing="zero", test="t")
    by_hand = {
        n: fastndcg.ndcg_run(TREC / "qrels.test", r, k=10, missing="zero") for n, r in runs.items()
    }
    same_rows(zero, fastndcg.compare(by_hand, test="t"))  # as trec_eval -c
    assert zero.rows[0]["n_queries"] == 3 and zero.n_missing == {"full": 0, "trunc": 0}
    assert zero.rows[0]["mean_system"] == pytest.approx(float(by_hand["trunc"]))
    common = fastndcg.compare_runs(
        TREC / "qrels.test", runs, k=10, missing="intersection", test="t"
    )
    assert common.n_dropped == 1 and common.rows[0]["n_queries"] == 2
    skipped = {
        n: fastndcg.ndcg_run(TREC / "qrels.test", r, k=10, missing="skip") for n, r in runs.items()
    }
    same_rows(common, fastndcg.compare(skipped, test="t", missing="intersection"))


def test_a_preset_missing_setting_gives_way_to_the_comparison(second_run):
    """trec_eval's preset says missing='error' for a run; compare_runs pairs queries itself."""
    runs = {"full": TREC / "results.test", "trunc": TREC / "results.trunc"}
    got = fastndcg.compare_runs(
        TREC / "qrels.test", runs, preset="trec_eval", k=10, missing="intersection", test="t"
    )
    by_hand = {
        n: fastndcg.ndcg_run(TREC / "qrels.test", r, preset="trec_eval", k=10, missing="skip")
        for n, r in runs.items()
    }
    same_rows(got, fastndcg.compare(by_hand, test="t", missing="intersection"))


def test_queries_without_relevant_items_are_dropped_from_both_sides_and_counted():
    qrels = pa.table(
        {"qid": ["1", "1", "2", "2", "3"], "docid": list("abcde"), "grade": [1, 0, 0, 0, 2]}
    )
    x = pa.table({"qid": ["1", "1", "2", "3"], "docid": list("bace"), "score": [2.0, 1, 1, 1]})
    y = pa.table({"qid": ["1", "1", "2", "3"], "docid": list("abce"), "score": [2.0, 1, 1, 1]})
    comparison = fastndcg.compare_runs(qrels, {"x": x, "y": y}, k=2, test="t")
    row = comparison.rows[0]
    assert row["n_queries"] == 2 and row["n_skipped"] == 1  # query 2: no relevant item
    assert row["wins"] == 1 and row["ties"] == 1
    assert "1 query-comparisons skipped (no relevant item)" in repr(comparison)


def table_of_predictions(seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(60), 12)
    grade = rng.integers(0, 4, qid.size)
    return pa.table(
        {
            "qid": qid,
            "label": grade,
            "score_a": np.round(grade + rng.normal(0, 1.2, qid.size), 1),
            "score_b": np.round(grade + rng.normal(0, 1.0, qid.size), 1),
            "score_c": np.round(grade + rng.normal(0, 1.4, qid.size), 1),
        }
    )


@pytest.mark.parametrize("ties", ["average", "random"])
def test_compare_table_equals_compare_of_ndcg_table(ties):
    table = table_of_predictions()
    scores = {"A": "score_a", "B": "score_b", "C": "score_c"}
    got = fastndcg.compare_table(
        table, grade="label", scores=scores, k=[3, None], ties=ties, baseline="A", seed=11
    )
    seeded = {"seed": 11} if ties == "random" else {}
    by_hand = {
        name: fastndcg.ndcg_table(
            table, grade="label", score=column, k=[3, None], ties=ties, **seeded
        )
        for name, column in scores.items()
    }
    same_rows(got, fastndcg.compare(by_hand, baseline="A", seed=11))
    listed = fastndcg.compare_table(table.to_pandas(), grade="label", scores=list(scores.values()))
    assert listed.names == ("score_a", "score_b", "score_c")


def test_scoring_seed_is_the_comparison_seed_only_with_random_ties():
    table = table_of_predictions(1)
    one = fastndcg.compare_table(
        table, grade="label", scores=["score_a", "score_b"], ties="random", seed=1, test="t"
    )
    two = fastndcg.compare_table(
        table, grade="label", scores=["score_a", "score_b"], ties="random", seed=2, test="t"
    )
    assert one.rows[0]["mean_system"] != two.rows[0]["mean_system"]  # ties broken otherwise
    again = fastndcg.compare_table(
        table, grade="label", scores=["score_a", "score_b"], ties="random", seed=1, test="t"
    )
    assert one.rows[0]["mean_system"] == again.rows[0]["mean_system"]
    # without random ties the scoring takes no seed (ndcg_table would refuse one)
    fastndcg.compare_table(table, grade="label", scores=["score_a", "score_b"], seed=5, test="t")


def test_convenience_errors():
    table = table_of_predictions()
    with pytest.raises(OptionTypeError, match="takes the systems' score columns as scores="):
        fastndcg.compare_table(table, grade="label", scores=["score_a"], score="score_b")
    with pytest.raises(OptionTypeError, match="scores must map"):
        fastndcg.compare_table(table, grade="label", scores="score_a")
    with pytest.raises(OptionError, match="scores names a column more than once"):
        fastndcg.compare_table(table, grade="label", scores=["score_a", "score_a"])
    with pytest.raises(OptionError, match="unknown baseline='Z'; the systems are 'A', 'B'"):
        fastndcg.compare_table(
            table, grade="label", scores={"A": "score_a", "B": "score_b"}, baseline="Z"
        )
    with pytest.raises(
        OptionTypeError, match="compare_table\\(\\) got unknown option\\(s\\) cutoff"
    ):
        fastndcg.compare_table(table, grade="label", scores=["score_a", "score_b"], cutoff=3)
    with pytest.raises(OptionError, match="n_resamples must be a positive int"):
        fastndcg.compare_runs(QRELS, [RUN, RUN], n_resamples=0)  # options before any file
    with pytest.raises(InputError, match="two systems would both be named"):
        fastndcg.compare_runs(QRELS, [RUN, RUN])
    with pytest.raises(OptionTypeError, match="compare_runs\\(\\) got unknown option\\(s\\) grade"):
        fastndcg.compare_runs(QRELS, {"a": RUN, "b": RUN}, grade="x")


def test_system_names_from_files():
    assert system_names(["a/bm25.run", "b/dense.run"]) == ["bm25", "dense"]
    assert system_names(["x/results.test", "x/results.trunc"]) == ["results.test", "results.trunc"]
    assert system_names(["x/run.txt", "y/run.txt", "z.run"]) == ["x/run.txt", "y/run.txt", "z"]
    assert system_names(["/abs/x/run.txt", "/abs/y/run.txt"]) == ["x/run.txt", "y/run.txt"]
    assert system_names([pa.table({"a": [1]}), pa.table({"a": [2]})]) == ["run1", "run2"]
    with pytest.raises(InputError, match=r"both be named 'a\.run'") as info:
        system_names(["a.run", "a.run"])
    assert info.value.fix_for("command") == "give each run once"
