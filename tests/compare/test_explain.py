"""Explain one query: the values are the library's, the rows add up to them, in rank order."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pytest
from conftest import TEST_DATA
from hypothesis import given
from hypothesis import strategies as st
from reference import (
    Item,
    dcg_at,
    discount_of,
    gain_of,
    local_gains,
    rank_items,
    reference_ndcg,
    tie_groups,
)
from strategies import (
    INDEPENDENT_JUDGMENTS,
    discount_option,
    discounts,
    gain_option,
    gains,
    ideals,
    ragged,
    ties,
)

import fastndcg
from fastndcg import InputError, OptionError

TREC = TEST_DATA / "real" / "trec_eval_test"
TOL = dict(rel=1e-12, abs=1e-12)


def tied_list(seed, n=23):
    rng = np.random.default_rng(seed)
    grades = rng.integers(0, 5, n)
    scores = np.round(rng.normal(0, 1, n), 1)  # many ties
    scores[3:7] = scores[2]  # a long tie group
    return grades, scores


def explain_as_the_library_scores(grades, scores, k, backend, options):
    """Explain one list; check that its values are the library's own, bit for bit, and that its
    rows add up to them (the cumulative DCG at every rank is the NumPy backend's DCG@rank)."""
    expected = fastndcg.ndcg(grades, scores, k=k, backend=backend, **options)
    listed = fastndcg.explain(grades, scores, k=k, backend=backend, **options).lists[0]
    assert listed.dcg == expected.dcg[0, 0] and listed.idcg == expected.idcg[0, 0]
    np.testing.assert_array_equal(listed.ndcg, expected.per_query[0, 0])  # NaN when skipped
    n = len(grades)
    cut = n if k is None else min(k, n)
    cumulative = [row["cumulative"] for row in listed.rows[:cut]]
    prefix = fastndcg.ndcg(grades, scores, k=list(range(1, n + 1)), backend="numpy", **options)
    if options.get("ties") == "average":  # a tie group's mean gain may be summed in another order
        np.testing.assert_allclose(cumulative, prefix.dcg[0, :cut], rtol=1e-14, atol=0)
    else:  # the same gains in the same order: the ranking is the library's
        np.testing.assert_array_equal(cumulative, prefix.dcg[0, :cut])
    contributions = np.array([row["contribution"] for row in listed.rows])
    assert np.all(contributions[cut:] == 0.0)
    np.testing.assert_array_equal(np.cumsum(contributions[:cut]), cumulative)
    if listed.ideal:
        assert listed.idcg == pytest.approx(listed.ideal[-1]["cumulative"], rel=1e-12)
    return listed


@st.composite
def one_list(draw):
    _, grades, scores = draw(ragged(max_queries=1, max_len=14).filter(lambda d: d[0][-1]))
    return grades.astype(int), scores


@INDEPENDENT_JUDGMENTS
@given(
    data=one_list(),
    k=st.one_of(st.none(), st.integers(1, 16)),
    gain=gains,
    discount=discounts,
    ideal=ideals,
    tie=ties,
    seed=st.integers(0, 2**63),
    ranked=st.booleans(),
    judged=st.lists(st.integers(0, 4), max_size=16),
)
def test_explain_agrees_with_the_reference(
    backend, data, k, gain, discount, ideal, tie, seed, ranked, judged
):
    """For random lists and options: the rows (order, gains, gains used, discounts, cumulative
    DCG), the ideal ranking and DCG/IDCG/NDCG of explain agree with tests/reference.py."""
    grades, scores = data
    gain, discount = gain_option(gain), discount_option(discount)
    options = dict(gain=gain, discount=discount, ideal=ideal, ties=tie)
    if tie == "random":
        options["seed"] = seed
    if ideal == "global":
        options.update(ideal_grades=judged, ideal_offsets=[0, len(judged)])
    listed = explain_as_the_library_scores(grades, None if ranked else scores, k, backend, options)

    rule = "ranked" if ranked else tie
    items = [
        Item(row, float(g), float(s)) for row, (g, s) in enumerate(zip(grades, scores, strict=True))
    ]
    ranked_items = rank_items(items, rule, seed, gain)
    rules = dict(gain=gain, discount=discount, ideal=ideal, ties=rule, seed=seed)
    expected = reference_ndcg([items], k=(k,), ideal_lists=[judged], **rules)
    assert listed.dcg == pytest.approx(expected.dcg[0][0], **TOL)
    assert listed.idcg == pytest.approx(expected.idcg[0][0], **TOL)
    assert listed.ndcg == pytest.approx(expected.ndcg[0][0], nan_ok=True, **TOL)
    assert listed.ties == ("ranked input" if ranked else tie)

    gain_of_item = [gain_of(item.grade, gain) for item in ranked_items]
    used = list(gain_of_item)
    if rule == "average":
        for first, last in tie_groups(ranked_items):
            mean = sum(gain_of_item[first - 1 : last]) / (last - first + 1)
            used[first - 1 : last] = [mean] * (last - first + 1)
    rows = listed.rows
    assert [row["doc"] for row in rows] == [item.row for item in ranked_items]
    assert [row["grade"] for row in rows] == [int(item.grade) for item in ranked_items]
    assert [row["gain"] for row in rows] == pytest.approx(gain_of_item, **TOL)
    assert [row["gain_used"] for row in rows] == pytest.approx(used, **TOL)
    cut = len(rows) if k is None else min(k, len(rows))
    for rank, row in enumerate(rows[:cut], start=1):
        assert row["discount"] == pytest.approx(discount_of(rank, discount), **TOL)
        assert row["cumulative"] == pytest.approx(
            dcg_at(ranked_items, rank, rule, gain, discount), **TOL
        )

    if ideal == "max":
        slots = len(rows) if k is None else k
        best = [gain_of(max(items, key=lambda item: item.grade).grade, gain)] * slots
    elif ideal == "local":
        best = sorted(local_gains(ranked_items, k, rule, gain), reverse=True)
    else:
        pool = judged if ideal == "global" else [item.grade for item in items]
        best = sorted((gain_of(g, gain) for g in pool), reverse=True)
        best = best[: len(best) if k is None else k]
    assert [row["gain"] for row in listed.ideal] == pytest.approx(best, **TOL)


# a representative grid of named cases on one 23-row list with long tie groups: every tie
# rule, gain form and ideal appears, and every cutoff kind (None, inside, beyond the list)
GRID = {
    "average-exp2-recall-5": ({"ties": "average"}, "exp2", "recall", 5),
    "average-table-local-4": ({"ties": "average"}, [0.0, 0.3, 1.7, 2.9, 4.1], "local", 4),
    "stable-linear-local-1": ({"ties": "stable"}, "linear", "local", 1),
    "pessimistic-table-max-all": ({"ties": "pessimistic"}, [0.0, 0.3, 1.7, 2.9, 4.1], "max", None),
    "optimistic-dict-global-40": (
        {"ties": "optimistic"},
        {0: 0, 1: 0.25, 2: 1.1, 3: 2, 4: 3.3},
        "global",
        40,
    ),
    "random-callable-global-5": (
        {"ties": "random", "seed": 12345},
        lambda g: np.sqrt(g) * 1.3,
        "global",
        5,
    ),
    "average-dict-max-40": ({"ties": "average"}, {0: 0, 1: 0.25, 2: 1.1, 3: 2, 4: 3.3}, "max", 40),
}


@pytest.mark.parametrize(("ties", "gain", "ideal", "k"), GRID.values(), ids=GRID.keys())
def test_explain_equals_ndcg_on_a_list_with_long_ties(backend, ties, gain, ideal, k):
    grades, scores = tied_list(len(str(ties)) + len(ideal))
    options = {"gain": gain, "ideal": ideal, **ties}
    if ideal == "global":
        options["ideal_grades"] = np.r_[grades, [4, 3, 0]]  # judged beyond the ranked list
        options["ideal_offsets"] = [0, len(grades) + 3]
    listed = explain_as_the_library_scores(grades, scores, k, backend, options)
    assert any(row["tie"] for row in listed.rows)


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


def test_markdown_and_latex_hold_the_rows_and_the_ideal_ranking():
    explanation = fastndcg.explain(
        [3, 2, 0, 1], [0.9, 0.5, 0.5, 0.1], k=3, docs=["a|1", "b_2", "c", "d"]
    )
    lines = explanation.to_markdown().splitlines()
    assert lines[0] == "**query 0, NDCG@3 (k=3)**"
    assert "- T1: 2 items tied at score 0.5 (ranks 2-3), each counts the mean gain 1.5" in lines
    head = lines.index(
        "| rank | doc | score | grade | gain | tie | gain used | discount | contrib | DCG |"
    )
    ranked = [line.split(" | ")[1] for line in lines[head + 2 : head + 5]]
    assert ranked == ["a\\|1", "b_2", "c"]  # a | in a cell is escaped
    assert lines[head + 6 : head + 8] == [
        "| ideal doc | grade | gain | IDCG |",
        "|---|---|---|---|",
    ]
    assert len(lines) == head + 8 + 3  # three ideal rows: the cutoff
    latex = explanation.to_latex()
    assert latex.count(r"\toprule") == 2 and r"\quad" in latex  # the ideal ranking beside
    assert r"\begin{tabular}{rlrrrrrrrr}" in latex and r"\begin{tabular}{lrrr}" in latex
    assert r"2 & b\_2 & 0.5000 & 2 & 3.000 & T1 & 1.500 & 0.6309 & 0.9464 & 7.9464 \\" in latex
    caption = next(line for line in latex.splitlines() if line.startswith(r"\caption{"))
    assert "ties='average'" in caption and "NDCG@3 = " in caption


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
    ranked = fastndcg.explain([0, 2, 1], k=2)  # no scores: the rows come ranked, no ties
    assert [row["grade"] for row in ranked.rows] == [0, 2, 1]
    assert [row["tie"] for row in ranked.rows] == ["", "", ""]
    assert "ties='ranked input': rows in the order given" in repr(ranked)


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
