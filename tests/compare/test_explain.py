"""Explain one query: the values are the library's, the rows add up to them, in rank order."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pytest
from conftest import BACKENDS, TEST_DATA

import fastndcg
from fastndcg import InputError, OptionError

TREC = TEST_DATA / "real" / "trec_eval_test"

GAINS = {
    "exp2": "exp2",
    "linear": "linear",
    "table": [0.0, 0.3, 1.7, 2.9, 4.1],
    "dict": {0: 0.0, 1: 0.25, 2: 1.1, 3: 2.0, 4: 3.3},
    "callable": lambda g: np.sqrt(g) * 1.3,
}
TIES = [
    {"ties": "average"},
    {"ties": "stable"},
    {"ties": "pessimistic"},
    {"ties": "optimistic"},
    {"ties": "random", "seed": 12345},
]
IDEALS = ["recall", "local", "max", "global"]


def tied_list(seed, n=23):
    rng = np.random.default_rng(seed)
    grades = rng.integers(0, 5, n)
    scores = np.round(rng.normal(0, 1, n), 1)  # many ties
    scores[3:7] = scores[2]  # a long tie group
    return grades, scores


def numpy_prefix(grades, scores, **options):
    """DCG at every rank and IDCG as the NumPy backend sums them (left to right)."""
    n = len(grades)
    options = {**options, "k": list(range(1, n + 1))}
    return fastndcg.ndcg(grades, scores, backend="numpy", **options)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("gain", list(GAINS))
@pytest.mark.parametrize("ties", TIES, ids=lambda t: t["ties"])
@pytest.mark.parametrize("ideal", IDEALS)
@pytest.mark.parametrize("k", [None, 1, 5, 40])
def test_explain_equals_ndcg_for_every_tie_rule_gain_and_ideal(backend, gain, ties, ideal, k):
    grades, scores = tied_list(hash((str(gain), ties["ties"], ideal, k)) % 1000)
    options = {"gain": GAINS[gain], "ideal": ideal, **ties}
    if ideal == "global":
        options["ideal_grades"] = np.r_[grades, [4, 3, 0]]  # judged beyond the ranked list
        options["ideal_offsets"] = [0, len(grades) + 3]
    expected = fastndcg.ndcg(grades, scores, k=k, backend=backend, **options)
    explanation = fastndcg.explain(grades, scores, k=k, backend=backend, **options)
    listed = explanation.lists[0]
    # the values shown are the library's own, bit for bit
    assert listed.dcg == expected.dcg[0, 0]
    assert listed.idcg == expected.idcg[0, 0]
    assert listed.ndcg == expected.per_query[0, 0] or (
        math.isnan(listed.ndcg) and math.isnan(expected.per_query[0, 0])
    )
    # the rows add up to them: the cumulative DCG at every rank is the NumPy backend's DCG@r
    n = len(grades)
    cut = n if k is None else min(k, n)
    prefix = numpy_prefix(grades, scores, **options)
    cumulative = [row["cumulative"] for row in listed.rows[:cut]]
    if ties["ties"] == "average":  # a tie group's mean gain may be summed in another order
        np.testing.assert_allclose(cumulative, prefix.dcg[0, :cut], rtol=1e-14, atol=0)
    else:  # the same gains in the same order: the ranking is the library's
        np.testing.assert_array_equal(cumulative, prefix.dcg[0, :cut])
    assert listed.dcg == pytest.approx(cumulative[-1] if cumulative else 0.0, rel=1e-12, abs=0)
    if listed.ideal:
        assert listed.idcg == pytest.approx(listed.ideal[-1]["cumulative"], rel=1e-12)
    contributions = np.array([row["contribution"] for row in listed.rows])
    assert np.all(contributions[cut:] == 0.0)
    np.testing.assert_allclose(np.cumsum(contributions[:cut]), cumulative, rtol=0, atol=0)


def test_rows_carry_grades_gains_discounts_and_ties():
    grades = [3, 2, 0, 1, 0, 2]
    scores = [0.9, 0.5, 0.5, 0.1, 0.05, 0.5]
    explanation = fastndcg.explain(grades, scores, k=4, docs=[f"d{i}" for i in range(6)])
    rows = explanation.rows
    assert [row["doc"] for row in rows] == ["d0", "d1", "d2", "d5", "d3", "d4"]
    assert [row["grade"] for row in rows] == [3, 2, 0, 2, 1, 0]
    assert [row["gain"] for row in rows] == [7.0, 3.0, 0.0, 3.0, 1.0, 0.0]
    assert [row["tie"] for row in rows] == ["", "T1", "T1", "T1", "", ""]
    assert [row["gain_used"] for row in rows][:4] == [7.0, 2.0, 2.0, 2.0]  # (3 + 0 + 3) / 3
    assert rows[1]["discount"] == pytest.approx(1 / math.log2(3))
    group = explanation.lists[0].groups[0]
    assert group == {"label": "T1", "score": 0.5, "ranks": (2, 4), "size": 3, "mean_gain": 2.0}
    ideal = explanation.lists[0].ideal
    assert [row["doc"] for row in ideal] == ["d0", "d1", "d5", "d3"]
    text = repr(explanation)
    assert "ties='average': tied items share their ranks" in text
    assert "T1: 3 items tied at score 0.5 (ranks 2-4), each counts the mean gain 2" in text
    assert "2 more ranks below the cutoff; with a gain: rank 5" in text
    data = json.loads(explanation.to_json())
    assert data["systems"][0]["rows"][3]["doc"] == "d5" and data["k"] == 4


def test_explain_refuses_several_cutoffs_and_several_lists():
    with pytest.raises(OptionError, match="one cutoff"):
        fastndcg.explain([1, 0], [0.2, 0.1], k=[1, 2])
    with pytest.raises(OptionError, match="one query's arrays"):
        fastndcg.explain([1, 0], [0.2, 0.1], qid=[1, 2])
    with pytest.raises(InputError, match="one list"):
        fastndcg.explain([[1, 0], [0, 1]], [[0.2, 0.1], [0.3, 0.4]])


def test_explain_a_preset_and_a_skipped_query():
    explanation = fastndcg.explain([0, 0, 0], [0.3, 0.2, 0.1], k=2)
    assert math.isnan(explanation.lists[0].ndcg) and explanation.lists[0].idcg == 0.0
    assert "NaN (skipped: no relevant item)" in repr(explanation)
    sklearn = fastndcg.explain([2, 1, 0], [0.1, 0.5, 0.5], preset="sklearn", k=2)
    expected = fastndcg.ndcg([2, 1, 0], [0.1, 0.5, 0.5], preset="sklearn", k=2)
    assert sklearn.lists[0].ndcg == expected.per_query[0, 0]
    assert sklearn.rows[0]["gain"] == 1.0  # linear gain


# -- explained from a comparison ---------------------------------------------------------------


def predictions(n_queries=40, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 15, n_queries)
    qid = np.repeat(np.arange(100, 100 + n_queries), sizes)
    order = rng.permutation(qid.size)  # rows of a query are not contiguous
    grade = rng.integers(0, 4, qid.size)
    return pa.table(
        {
            "qid": qid[order],
            "grade": grade[order],
            "a": np.round(grade + rng.normal(0, 1.5, qid.size), 1)[order],
            "b": np.round(grade + rng.normal(0, 1.0, qid.size), 1)[order],
        }
    )


@pytest.mark.parametrize("ties", [{"ties": "average"}, {"ties": "random"}, {"ties": "stable"}])
def test_explain_a_table_comparison(ties):
    table = predictions()
    comparison = fastndcg.compare_table(
        table, scores=["a", "b"], k=[3, 10], test="t", seed=7, **ties
    )
    qids = table.column("qid").to_numpy()
    for query in (100, 117, 139):
        explanation = comparison.explain(query, k=10)
        assert [item.system for item in explanation.lists] == ["a", "b"]
        for item in explanation.lists:
            result = comparison.results[item.system]
            q = list(result.query_ids).index(query)
            assert item.dcg == result.dcg[q, 1] and item.idcg == result.idcg[q, 1]
            seeded = {"seed": 7} if ties["ties"] == "random" else {}
            alone = fastndcg.ndcg_table(table, score=item.system, k=10, **ties, **seeded)
            assert item.dcg == alone.dcg[q, 0]  # the seed of ties='random' is compare's
            rows = np.flatnonzero(qids == query)
            assert sorted(int(row["doc"].removeprefix("row ")) for row in item.rows) == list(rows)
            for row in item.rows:  # each row's grade and score are its input row's
                r = int(row["doc"].removeprefix("row "))
                assert row["grade"] == table.column("grade")[r].as_py()
                assert row["score"] == table.column(item.system)[r].as_py()
            cut = min(10, len(item.rows))
            assert item.rows[cut - 1]["cumulative"] == pytest.approx(item.dcg, rel=1e-12)
    text = repr(comparison.explain(117, k=3))
    assert text.splitlines()[0] == "query 117, NDCG@3 (k=3)"
    assert " | a " in text and " | b " in text and "| ideal" in text  # side by side
    one = comparison.explain(117, k=3, systems="b")
    assert [item.system for item in one.lists] == ["b"]


def test_explain_a_run_comparison_names_documents_and_judgments(tmp_path):
    other = tmp_path / "shuffled.run"
    lines = (TREC / "results.test").read_text().splitlines()
    rng = np.random.default_rng(3)
    shuffled = []
    for line in lines:
        q, q0, doc, rank, score, _ = line.split()
        shuffled.append(f"{q} {q0} {doc} {rank} {float(score) + rng.normal(0, 0.3):.4f} x")
    other.write_text("\n".join(shuffled) + "\n")
    runs = [TREC / "results.test", other]
    comparison = fastndcg.compare_runs(TREC / "qrels.test", runs, k=[10, 20], test="t")
    assert comparison.names == ("results", "shuffled")
    qrels = fastndcg.trec.read_qrels(TREC / "qrels.test").to_pandas()
    judged = {(str(q), d): g for q, d, g in zip(qrels.qid, qrels.docid, qrels.grade, strict=True)}
    for query in ("301", "303"):
        explanation = comparison.explain(query, k=20)
        for item, run in zip(explanation.lists, runs, strict=True):
            expected = fastndcg.ndcg_run(TREC / "qrels.test", run, k=20)
            q = [str(x) for x in expected.query_ids].index(query)
            assert item.dcg == expected.dcg[q, 0] and item.idcg == expected.idcg[q, 0]
            for row in item.rows:
                assert row["grade"] == max(judged.get((query, row["doc"]), 0), 0)
            judged_here = sorted((g for (qq, _), g in judged.items() if qq == query), reverse=True)[
                :20
            ]
            assert [row["grade"] for row in item.ideal] == judged_here
            assert all((query, row["doc"]) in judged for row in item.ideal)
            assert item.ideal_kind == "global"
    text = repr(comparison.explain("303", k=10))
    assert "| results" in text and "| shuffled" in text and "ideal='global'" in text


def test_explain_needs_rows_and_a_known_query_and_cutoff():
    table = predictions(10)
    from_results = fastndcg.compare(
        {
            "a": fastndcg.ndcg_table(table, score="a", k=5),
            "b": fastndcg.ndcg_table(table, score="b", k=5),
        },
        test="t",
    )
    with pytest.raises(InputError, match="hold per-query values but not the rows") as info:
        from_results.explain(100)
    assert "fastndcg.compare_runs" in info.value.fix and "fastndcg.explain" in info.value.fix
    comparison = fastndcg.compare_table(table, scores=["a", "b"], k=5, test="t")
    with pytest.raises(InputError, match="query 7 is not among the compared queries"):
        comparison.explain(7)
    with pytest.raises(OptionError, match="k=10 was not compared"):
        comparison.explain(100, k=10)
    with pytest.raises(OptionError, match="unknown system 'c'"):
        comparison.explain(100, systems=["c"])
    assert comparison.explain("100").query_id == 100  # a query id typed as text is found
