"""explain(measure=...): the value is evaluate's bits, the shares add up to it in rank order."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
import reference_measures as ref
from conftest import BACKENDS, TEST_DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import judged_lists

import fastndcg
from fastndcg import InputError, OptionError
from fastndcg._compare.explain_measures import EXPLAINED, explain_measure_query
from fastndcg._core.definition import Definition
from fastndcg._core.layout import build_layout
from fastndcg._core.measures import Measure
from fastndcg._core.measures.definitions import DEFAULT
from fastndcg._core.measures.engine import Judged, Scoring, compute
from fastndcg._evaluate import MeasuresInput, Measuring

TREC = TEST_DATA / "real" / "trec_eval_test"
QRELS = TREC / "qrels.test"
RUN = TREC / "results.test"

# every value of every choice the shares read, in three sets (the first: trec_eval's)
CHOICE_SETS = [
    {"no_relevant": "zero"},
    {
        "precision_denominator": "min(k,n)",
        "recall_denominator": "min(R,k)",
        "ap_denominator": "min(R,k)",
        "judged_denominator": "k",
        "judged_labels": "nonnegative",
        "bpref_negative": "nonrelevant",
        "bpref_no_nonrelevant": "nan",
        "rbp_gain": "raw",
        "no_relevant": "skip",
    },
    {"rbp_gain": "binary", "no_relevant": "one"},
]
ORDERED = ("ERR", "Bpref")  # need a tie order (refused under ties="average")
FIRST = ("RR", "Success")  # under ties="average", no shares when a tie group holds the first


def explained_measures(k, level, p):
    out = []
    for kind in EXPLAINED:
        kinds = KINDS_TAKING_CUTOFF.get(kind, (None, k))
        rel = None if kind in ("nDCG", "DCG", "Unjudged") else level
        param = p if kind == "RBP" else None
        out += [Measure(kind, cutoff=c, rel=rel, param=param) for c in kinds]
    return out


KINDS_TAKING_CUTOFF = {"Rprec": (None,), "Bpref": (None,), "DCG": (None, 3)}


def one_input(queries, measure, rules, backend, ties):
    """The MeasuresInput of TREC-like ``queries`` (see strategies.judged_lists), one measure."""
    labels = np.array(
        [np.nan if label is None else label for q in queries for label in q[0]], dtype=float
    )
    scores = np.array([s for q in queries for s in q[2]], dtype=float)
    offsets = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum([len(q[0]) for q in queries], out=offsets[1:])
    judged = [[g for g in q[0] if g is not None] + q[1] for q in queries]
    judged_offsets = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum([len(j) for j in judged], out=judged_offsets[1:])
    judgments = Judged(judged_offsets, np.array([g for j in judged for g in j], dtype=float))
    seed = 11 if ties == "random" else None
    definition = Definition.create(ties=ties, seed=seed, backend=backend)
    with definition.threads():
        layout = build_layout(
            np.fmax(labels, 0.0), scores, offsets=offsets, backend=definition.backend
        )
    scoring = Scoring(layout, labels, judgments)
    return MeasuresInput(definition, Measuring(rules, (measure,), 1, None), scoring)


def shares_sum(explained):
    shares = np.array([row["share"] for row in explained.rows])
    return float(shares.sum()) if shares.size else 0.0


@pytest.mark.parametrize("choices", CHOICE_SETS)
@settings(max_examples=60)
@given(
    queries=judged_lists(max_len=9),
    k=st.integers(1, 10),
    level=st.integers(0, 3),
    p=st.sampled_from([0.5, 0.8]),
    tie_rule=st.sampled_from(["stable", "pessimistic", "optimistic", "random", "average"]),
    backend=st.sampled_from(BACKENDS),
)
def test_the_shares_add_up_to_the_engines_value(choices, queries, k, level, p, tie_rule, backend):
    rules = replace(DEFAULT, **choices)
    for measure in explained_measures(k, level, p):
        if tie_rule == "average" and measure.kind in ORDERED:
            continue
        given_ = one_input(queries, measure, rules, backend, tie_rule)
        values = engine_values(given_)
        for q in range(len(queries)):
            value = float(values[q])
            explained = explain_measure_query(given_, q, value)
            assert explained.value == value or (math.isnan(value) and math.isnan(explained.value))
            assert len(explained.rows) == len(queries[q][0])
            if any("not a sum of the shares" in note for note in explained.notes):
                # no denominator (R = 0, IDCG = 0), bpref's NaN without N, or a tie group
                # holding RR's first relevant document under ties="average"
                continue
            assert shares_sum(explained) == pytest.approx(value, rel=1e-12, abs=1e-12), measure
            ranks = [row["rank"] for row in explained.rows]
            assert ranks == list(range(1, len(ranks) + 1))


def engine_values(given_):
    """The engine's value of every query (in one call, as evaluate makes it)."""
    with given_.definition.threads():
        return compute(given_.definition, given_.rules, given_.measures, 1, given_.scoring)[:, 0]


@pytest.mark.parametrize("kind", ["AP", "RR", "ERR", "RBP", "DCG", "NumRelRet"])
@given(queries=judged_lists(max_queries=1, max_len=9), k=st.integers(1, 10))
def test_the_rows_are_the_oracles_ranking_and_shares(kind, queries, k):
    """ties="stable": rows in the oracle's order, and the cumulative share at each rank is the
    oracle's value of the measure cut there (AP: divided by R)."""
    labels, unretrieved, scores = queries[0]
    if kind == "ERR" and any(g is not None and g > 4 for g in labels):
        return
    order = sorted(range(len(labels)), key=lambda i: -scores[i])
    judged = [g for g in labels if g is not None] + unretrieved
    measure = Measure(kind, cutoff=k, param=0.8 if kind == "RBP" else None)
    given_ = one_input(queries, measure, replace(DEFAULT, no_relevant="zero"), "numpy", "stable")
    explained = explain_measure_query(given_, 0, float(engine_values(given_)[0]))
    assert [row["doc"] for row in explained.rows] == order
    assert [row["grade"] for row in explained.rows] == [labels[i] for i in order]
    query = ref.Query([labels[i] for i in order], judged)
    if kind == "AP" and ref.n_relevant(query, 1) == 0:  # no shares: the no-relevant rule's value
        assert all(math.isnan(row["share"]) for row in explained.rows)
        return
    for row in explained.rows[:k]:
        # fastndcg's default gain is 2**g - 1
        expected = ref.value(kind, query, cutoff=row["rank"], param=measure.param, gain="exp2")
        assert row["cumulative"] == pytest.approx(expected, rel=1e-12, abs=1e-12)


MEASURE_NAMES = ["P@3", "R@2", "AP", "AP@3", "RR", "RR@2", "Success@2", "Rprec", "ERR@4"]
MEASURE_NAMES += ["RBP(p=0.8)", "Judged@3", "NumRet@2", "NumRelRet", "nDCG@3", "DCG", "Bpref"]


@given(
    grades=st.lists(st.integers(0, 3), min_size=1, max_size=10),
    data=st.data(),
    measure=st.sampled_from(MEASURE_NAMES),
    level=st.integers(1, 2),
    options=st.sampled_from(
        [{"ties": "stable"}, {"ties": "random", "seed": 3}, {"preset": "ranx"}, {}]
    ),
)
def test_explain_value_is_evaluate_bit_for_bit(grades, data, measure, level, options):
    """Public API: explain's value is evaluate's for the same list, options and preset."""
    scores = data.draw(
        st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=len(grades), max_size=len(grades))
    )
    call = {"relevance_level": level, **options}
    try:
        expected = fastndcg.evaluate(grades, scores, measures=[measure], **call).per_query[0, 0]
    except OptionError as error:  # ties="average" for ERR and bpref, ranx lacking a measure
        with pytest.raises(OptionError) as caught:
            fastndcg.explain(grades, scores, measure=measure, **call)
        assert str(caught.value) == str(error)
        return
    explained = fastndcg.explain(grades, scores, measure=measure, **call)
    np.testing.assert_array_equal(np.array([explained.value]), np.array([expected]))
    assert explained.measure == measure
    if call.get("ties") == "stable":  # every measure in one evaluate: the same bits
        together = fastndcg.evaluate(grades, scores, measures=MEASURE_NAMES, **call)
        j = MEASURE_NAMES.index(measure)
        np.testing.assert_array_equal(together.per_query[:, j], np.array([expected]))


COMMON = ["P@10", "R@100", "AP", "AP@10", "Rprec", "Bpref", "nDCG@10"]
PRESET_MEASURES = {
    "trec_eval": [*COMMON, "recip_rank", "success.5", "rbp", "num_ret", "num_rel_ret", "unj.10"],
    "ranx": [*COMMON, "mrr@10", "rbp.8", "hits@10", "hit_rate@5"],
    "ir_measures": [*COMMON, "RR@10", "Judged@10", "ERR@10"],
    "gdeval": ["ERR@10", "nDCG@10"],
}


@pytest.mark.parametrize("preset", list(PRESET_MEASURES))
def test_runs_under_each_preset_equal_evaluate_run(preset):
    """Explaining a comparison of measures: each system's value is evaluate_run's for the query."""
    measures = PRESET_MEASURES[preset]
    runs = {"full": RUN, "trunc": TREC / "results.trunc"}
    comparison = fastndcg.compare_runs(
        QRELS, runs, measures=measures, preset=preset, test="t", missing="zero"
    )
    by_hand = {
        name: fastndcg.evaluate_run(QRELS, run, measures=measures, preset=preset, missing="zero")
        for name, run in runs.items()
    }
    for query in ("301", "302", "303"):  # 302: not in results.trunc (an empty ranking)
        for j, measure in enumerate(measures):
            explained = comparison.explain(query, measure=measure)
            assert [item.system for item in explained.lists] == ["full", "trunc"]
            for item in explained.lists:
                result = by_hand[item.system]
                q = list(result.query_ids).index(query)
                assert item.value == result.per_query[q, j]
                rounded = any("decimals" in note for note in item.notes)  # gdeval's 5 decimals
                tolerance = 5e-6 if rounded else 1e-12
                assert shares_sum(item) == pytest.approx(item.value, rel=0, abs=tolerance)


@pytest.mark.parametrize(
    ("preset", "measure", "descending"),
    [("trec_eval", "map", True), ("ir_measures", "RR@10", False), ("ir_measures", "AP", True)],
)
def test_the_tools_rank_ties_by_document_id(preset, measure, descending):
    """trec_eval and ir_measures' pytrec_eval provider: ids descending; its msmarco one: ascending."""
    explained = fastndcg.compare_runs(
        QRELS,
        {"a": RUN, "b": RUN},
        measures=[measure],
        preset=preset,
        test="t",
        missing="intersection",
    ).explain("301", systems="a")
    run = [line.split() for line in RUN.read_text().splitlines() if line.split()[0] == "301"]
    sign = -1 if descending else 1
    expected = sorted(run, key=lambda f: (-float(f[4]), [sign * b for b in f[2].encode()]))
    assert len({f[4] for f in run}) < len(run)  # the query has ties
    assert [row["doc"] for row in explained.rows] == [f[2] for f in expected]
    assert explained.measure == measure
    evaluated = fastndcg.evaluate_run(QRELS, RUN, measures=[measure], preset=preset, missing="skip")
    assert explained.value == evaluated.per_query[0, 0]


def test_what_the_rows_hold():
    e = fastndcg.explain(
        [0, 2, 0, 1], [0.9, 0.8, 0.7, 0.6], measure="ERR@3", docs=list("abcd"), ties="stable"
    )
    assert [row["doc"] for row in e.rows] == ["a", "b", "c", "d"]
    assert [row["relevant"] for row in e.rows] == [False, True, False, True]
    assert e.lists[0].columns == ("stop", "reach")
    assert e.rows[1]["stop"] == 3 / 16 and e.rows[2]["reach"] == 13 / 16
    assert e.rows[3]["share"] == 0.0  # below the cutoff
    e = fastndcg.explain([0, 2, 0, 1], [0.9, 0.8, 0.7, 0.6], measure="P@10", ties="stable")
    assert e.lists[0].denominator == 10 and e.lists[0].divides_by == "k"
    e = fastndcg.explain([0, 2, 0, 1], [0.9, 0.8, 0.7, 0.6], measure="AP", relevance_level=2)
    assert e.lists[0].facts["R"] == 1 and e.value == 0.5
    assert [row["precision"] for row in e.rows] == [0.0, 0.5, 0.0, 0.0]
    e = fastndcg.explain([1, 0, 1], [0.5, 0.5, 0.1], measure="RR")  # ties="average"
    assert all(math.isnan(row["share"]) for row in e.rows) and "tie group" in e.lists[0].notes[0]
    assert e.value == fastndcg.evaluate([1, 0, 1], [0.5, 0.5, 0.1], measures="RR").mean[0]
    e = fastndcg.explain([0, 0], [0.5, 0.1], measure="R", zero_idcg="skip")
    assert math.isnan(e.value) and e.lists[0].denominator is None


def test_printed_in_every_format():
    e = fastndcg.explain([0, 2, 0, 1, 1], [0.9, 0.8, 0.7, 0.6, 0.5], measure="AP@2")
    text = repr(e)
    assert "AP@2 (average precision)" in text and "AP@2 = 0.166667" in text
    assert (
        "divided by R = 3" in text and "3 more ranks below the cutoff; relevant: ranks 4, 5" in text
    )
    assert "| rank | doc | score | grade | rel | tie | prec | share | cum. |" in e.to_markdown()
    assert r"\begin{table}" in e.to_latex()
    data = json.loads(e.to_json())
    assert data["measure"] == "AP@2" and data["systems"][0]["value"] == e.value
    assert len(data["systems"][0]["rows"]) == 5


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        ({"measure": "F1@5"}, OptionError, "sums over the ranks; 'F1@5'"),
        ({"measure": "iprec_at_recall.0.3"}, OptionError, "explain one of 'P', 'R', 'AP'"),
        ({"measure": "P.5,10"}, OptionError, "explain shows one measure, not 2"),
        ({"measure": "P@5", "k": 5}, OptionError, "the cutoff is the measure's"),
        ({"measure": "ndgc@10"}, OptionError, "nearest"),
        ({"relevance_level": 2}, OptionError, "relevance_level is the measures'"),
        ({"measure": "P@5", "qid": [1, 1, 2]}, OptionError, "one query's arrays"),
        ({"measure": "ERR@5"}, OptionError, "ties='average'"),
        ({"measure": "P@5", "preset": "trec_eval"}, OptionError, "document id"),
    ],
)
def test_refusals(call, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(".", r"\.")):
        fastndcg.explain([0, 1, 2], [0.3, 0.2, 0.1], **call)


def test_several_lists_refused():
    with pytest.raises(InputError, match="one list; these arrays hold 2"):
        fastndcg.explain([[0, 1], [1, 0]], [[0.3, 0.2], [0.1, 0.5]], measure="AP")


def test_comparison_refusals():
    runs = {"full": RUN, "trunc": TREC / "results.trunc"}
    ndcg = fastndcg.compare_runs(QRELS, runs, k=10, test="t", missing="intersection")
    with pytest.raises(InputError, match="comparison is of NDCG"):
        ndcg.explain("301", measure="AP")
    of_measures = fastndcg.compare_runs(
        QRELS, runs, measures=["P@5", "map"], test="t", missing="intersection"
    )
    assert of_measures.explain("301").measure == "P@5"  # the first by default
    with pytest.raises(InputError, match="comparison is of measures"):
        of_measures.explain("301", k=5)
    with pytest.raises(OptionError, match="no measure 'R@5'"):
        of_measures.explain("301", measure="R@5")
    assert of_measures.explain("301", measure="AP").measure == "AP"  # map, by meaning
    one = fastndcg.evaluate_run(QRELS, RUN, measures=["map"], missing="skip")
    results = {"a": one, "b": one}
    with pytest.raises(InputError, match="hold per-query values but not the rows"):
        fastndcg.compare(results, test="t").explain("301")
