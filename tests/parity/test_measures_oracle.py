"""The measures' oracle (tests/reference_measures.py) against the tools themselves.

Under each tool's definitions as fastndcg declares them (``fastndcg._core.measures.definitions``),
the oracle must give the tool's own numbers, per query:

- trec_eval 10: its test suite's expected outputs (``out.test*``, 4 printed decimals; no binary
  is installed), for every measure of issue 37 it prints, per query and in the summary;
- the toy example of measures-in-the-wild.md section (c), for every tool column;
- pytrec_eval, ir_measures and ranx, run here on trec_eval's test data, at 1e-12 (they return
  full precision; gdeval's 5 printed decimals exactly).

So both the oracle and the declared definitions are checked; the engine is then checked against
the oracle.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
import reference_measures as ref
from parity_data import (
    REQUIRE_TOOLS,
    TREC,
    TREC_PAIRS,
    assert_same_values,
    random_trec,
    read_qrels,
    read_run,
    tool,
)

from fastndcg._core.measures import KINDS, Measure, parse_measure
from fastndcg._core.measures.definitions import RULES, MeasureRules
from fastndcg._core.measures.kinds import IR_MEASURES_NAMES, IR_MEASURES_SETS
from fastndcg._core.measures.trec_layout import format_trec_eval, trec_eval_measures
from fastndcg._errors import OptionError

COUNTS = ("NumQ", "NumRet", "NumRel", "NumRelRet")


def choices(rules: MeasureRules) -> dict:
    """The oracle's keywords for a tool's declared choices."""
    return {name: getattr(rules, name) for name in ref.CHOICES}


def oracle(
    qrels: dict, run: dict, measure: Measure, rules: MeasureRules, *, level: int = 1, **options
) -> dict[str, float]:
    """{query id: the oracle's value of ``measure``} under ``rules`` (the measure's provider).

    ``options``: ``missing``, ``max_docs``, ``judged_only`` (trec_eval's -c, -M, -J).
    """
    provider = rules.provider(measure)
    return ref.evaluate(
        qrels,
        run,
        measure.kind,
        ties=provider.ties,
        score_dtype=provider.score_dtype,
        decimals=provider.decimals,
        cutoff=measure.cutoff,
        level=level if measure.rel is None else measure.rel,
        param=measure.param,
        gain=measure.gain or "linear",
        **choices(rules),
        **options,
    )


# -- the oracle on a query worked by hand (the measures page's example) -----------------------

# ranked grades: not relevant, 2, unjudged, 1, negative ("in the pool, not judged"), 1; two
# more judgments not retrieved (3 and 0): R = 4 at level 1, N = 2 (trec_eval), 3 (ranx)
WORKED = ref.Query([0, 2, None, 1, -1, 1], [0, 2, 1, -1, 1, 3, 0])
WORKED_VALUES = [
    ("P", {"cutoff": 5}, 2 / 5),
    ("P", {"cutoff": 10, "precision_denominator": "min(k,n)"}, 3 / 6),
    ("R", {"cutoff": 5}, 2 / 4),
    ("R", {"cutoff": 2, "recall_denominator": "min(R,k)"}, 1 / 2),
    ("F1", {"cutoff": 5}, 2 * 0.4 * 0.5 / 0.9),
    ("RR", {}, 1 / 2),
    ("RR", {"cutoff": 1}, 0.0),
    ("Success", {"cutoff": 2}, 1.0),
    ("AP", {}, (1 / 2 + 2 / 4 + 3 / 6) / 4),
    ("AP", {"cutoff": 3}, (1 / 2) / 4),
    ("AP", {"cutoff": 3, "ap_denominator": "min(R,k)"}, (1 / 2) / 3),
    ("GMAP", {}, 0.375),
    ("GMAP", {"gm_per_query": "log"}, math.log(0.375)),
    ("Rprec", {}, 2 / 4),
    ("Bpref", {}, (0.5 + 0.5 + 0.5) / 4),
    ("Bpref", {"bpref_negative": "nonrelevant"}, (2 / 3 + 2 / 3 + 1 / 3) / 4),
    ("RBP", {"param": 0.5}, 0.5 * (2 / 3 * 0.5 + 1 / 3 * 0.5**3 + 1 / 3 * 0.5**5)),
    ("RBP", {"param": 0.5, "rbp_gain": "raw"}, 0.5 * (2 * 0.5 + 0.5**3 + 0.5**5)),
    ("RBP", {"param": 0.5, "rbp_gain": "binary", "level": 2}, 0.5 * 0.5),
    ("RBPResid", {"param": 0.5}, 0.5**6 + 0.5 * (0.5**2 + 0.5**4)),
    ("ERR", {"cutoff": 3}, (3 / 16) / 2),
    ("Judged", {"cutoff": 5}, 4 / 5),
    ("Judged", {"cutoff": 5, "judged_labels": "nonnegative"}, 3 / 5),
    ("Judged", {"cutoff": 10, "judged_denominator": "k"}, 5 / 10),
    ("Unjudged", {"cutoff": 5}, 2 / 5),
    ("IPrec", {"param": 0.5}, 3 / 6),  # from the 2nd relevant (rank 4): max(2/4, 2/5, 3/6)
    ("IPrec", {"param": 0.0}, 1 / 2),
    ("nDCG", {"cutoff": 3}, (2 / math.log2(3)) / (3 + 2 / math.log2(3) + 1 / 2)),
    ("DCG", {"cutoff": 3, "gain": "exp2"}, 3 / math.log2(3)),
    ("NumRet", {}, 6.0),
    ("NumRel", {"level": 2}, 2.0),
    ("NumRelRet", {}, 3.0),
]


@pytest.mark.parametrize(("kind", "settings", "expected"), WORKED_VALUES)
def test_oracle_on_a_query_worked_by_hand(kind, settings, expected):
    assert ref.value(kind, WORKED, **settings) == pytest.approx(expected, abs=1e-15)


def test_oracle_rules_for_queries_without_relevant_judgments_and_tie_averaging():
    nothing = ref.Query([0, None], [0])
    for rule, expected in (("zero", 0.0), ("one", 1.0)):
        assert ref.value("AP", nothing, no_relevant=rule) == expected
    assert math.isnan(ref.value("R", nothing, cutoff=5, no_relevant="skip"))
    with pytest.raises(ZeroDivisionError):
        ref.value("nDCG", nothing, no_relevant="error")
    assert ref.value("P", nothing, cutoff=5, no_relevant="error") == 0.0  # P does not divide by R
    # three tied documents, one relevant: every order counts once
    orders = ref.every_order({"a": 1.0, "b": 1.0, "c": 1.0}, {"b": 1})
    assert len(orders) == 6
    assert ref.expected_value("RR", orders) == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert ref.expected_value("P", orders, cutoff=1) == pytest.approx(1 / 3)


def test_kinds_declare_what_the_oracle_does():
    """A kind marked ``relevant`` is 0/0 without a relevant judgment (the no_relevant rule);
    the others have a value there. Counts are summed."""
    nothing = ref.Query([0, None, 0], [0, 0])
    for kind in KINDS.values():
        settings = {"param": 0.5} if kind.param else {}
        value = ref.value(kind.name, nothing, no_relevant="skip", **settings)
        assert math.isnan(value) == kind.relevant, kind.name
        assert (kind.aggregate == "sum") == kind.count, kind.name
        assert ref.summary(kind.name, [2.0, 2.0]) == (4.0 if kind.count else 2.0)


def test_oracle_rankings():
    run = {"b": 1.0, "a": 1.0, "c": 2.0, "d": 1.0 + 1e-9}
    judgments = {"a": 1, "b": 2, "c": -1}
    assert ref.rank(run, judgments).labels == [-1, None, 2, 1]  # docid descending
    assert ref.rank(run, judgments, ties="docid_asc").labels == [-1, None, 1, 2]
    assert ref.rank(run, judgments, ties="stable").labels == [-1, None, 2, 1]
    assert ref.rank(run, judgments, ties="reverse").labels == [-1, None, 1, 2]
    held32 = ref.rank(run, judgments, score_dtype="float32")  # d ties with a and b in float32
    assert held32.labels == [-1, None, 2, 1]
    assert ref.rank(run, judgments, ties="docid_asc", score_dtype="float32").labels == [
        -1,
        1,
        2,
        None,
    ]
    assert ref.rank(run, judgments, max_docs=2, judged_only=True).labels == []
    assert ref.rank(run, judgments, judged_only=True).labels == [2, 1]


# -- trec_eval 10: its own expected outputs ----------------------------------------------------


def trec_output(name: str) -> dict[str, dict[str, str]]:
    """{printed measure: {query id or 'all': printed value}} of a trec_eval output file."""
    table: dict[str, dict[str, str]] = {}
    for line in (TREC / name).read_text().splitlines():
        measure, qid, value = line.split("\t")
        table.setdefault(measure.strip(), {})[qid] = value
    return table


def printed(kind: str, value: float) -> str:
    """A value as trec_eval prints it: counts as integers, the rest with %6.4f."""
    return str(round(value)) if kind in COUNTS else f"{value:6.4f}"


# (output file, qrels, run, options): trec_eval's test invocations (-c: missing='zero', -M100:
# max_docs=100, -l2: level=2); out.test.meas_params asks for P.3,5,7, recall.20,2000,
# success.2,5,20, iprec_at_recall.0.1,0.2,0.25,0.5,0.75 and odd ndcg_cut cutoffs
TREC_OUTPUTS = [
    ("out.test", "qrels.test", "results.test", {}),
    ("out.test.a", "qrels.test", "results.test", {}),
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"missing": "zero"}),
    ("out.test.aqcM", "qrels.test", "results.trunc", {"missing": "zero", "max_docs": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"level": 2}),
    ("out.test.meas_params", "qrels.test", "results.test", {}),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", {}),
]
# what trec_eval prints that fastndcg computes; the rest (relstring, infAP, utility, ...) is not
# among issue 37's measures
CHECKED_WITH_A = {
    *("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref"),
    *("recip_rank", "set_P", "set_recall", "set_F", "ndcg", "rbp", "rbp_resid"),
    *(f"iprec_at_recall_{level / 10:3.2f}" for level in range(11)),
    *(f"{name}_{k}" for name in ("P", "recall", "ndcg_cut", "map_cut") for k in ref.TREC_CUTS),
    *("success_1", "success_5", "success_10", "unj_5", "unj_10", "unj_20"),
}


@pytest.mark.parametrize(("output", "qrels_file", "run_file", "options"), TREC_OUTPUTS)
def test_oracle_prints_what_trec_eval_10_prints(output, qrels_file, run_file, options):
    qrels, run = read_qrels(TREC / qrels_file), read_run(TREC / run_file)
    rules = RULES["trec_eval"]
    checked = set()
    for name, values in trec_output(output).items():
        try:
            measure = parse_measure(name)
        except OptionError:  # a measure fastndcg does not compute (relstring, infAP, ...)
            continue
        per_query = oracle(qrels, run, measure, rules, **options)
        for qid, value in per_query.items():
            if qid in values:  # gm_map and num_q are printed in the summary only
                assert printed(measure.kind, value) == values[qid], (output, name, qid)
        if measure.kind == "NumQ":
            assert values["all"] == str(len(per_query))
        else:
            total = ref.summary(measure.kind, list(per_query.values()))
            assert printed(measure.kind, total) == values["all"], (output, name)
        checked.add(name)
    if output.startswith("out.test.a"):
        assert CHECKED_WITH_A <= checked, sorted(CHECKED_WITH_A - checked)
    else:
        assert len(checked) >= 12, checked


def test_trec_eval_10_refuses_what_its_quicktest_leaves_out():
    """Without -c a judged query absent from the run stops trec_eval 10: so does the oracle."""
    with pytest.raises(KeyError):
        ref.queries_of(read_qrels(TREC / "qrels.test"), read_run(TREC / "results.trunc"), "error")


@pytest.mark.parametrize(
    ("output", "qrels_file", "run_file", "queries"),
    [
        ("out.test", "qrels.test", "results.test", False),
        ("out.comment.test", "qrels.comment.test", "results.comment.test", False),
        ("out.test.aq", "qrels.test", "results.test", True),
    ],
)
def test_trec_eval_layout_of_the_default_measures(output, qrels_file, run_file, queries):
    """``trec_eval Q R`` (and ``-q``, compared with the same measures' lines of ``-a -q``),
    printed from the oracle's per-query values, line for line."""
    qrels, run = read_qrels(TREC / qrels_file), read_run(TREC / run_file)
    run_id = (TREC / run_file).read_text().split(None, 6)[5]
    measures = trec_eval_measures()
    per_query = [oracle(qrels, run, m, RULES["trec_eval"]) for m in measures]
    query_ids = list(per_query[0])
    values = np.array([[column[q] for column in per_query] for q in query_ids])
    text = format_trec_eval(measures, query_ids, values, run_id=run_id, queries=queries)
    ours = text.splitlines()
    names = {line.split("\t")[0] for line in ours}
    theirs = [
        line for line in (TREC / output).read_text().splitlines() if line.split("\t")[0] in names
    ]
    assert ours == theirs
    assert len(ours) == (len(query_ids) * 27 if queries else 0) + 30


# -- the toy example of measures-in-the-wild.md, section (c) -----------------------------------

TOY_QRELS = {
    "1": {"a1": 2, "a2": 1, "a3": 0, "a4": 1, "a5": 0},
    "2": {"b1": 1, "b9": 0},
    "3": {"c1": 0},
    "4": {"d1": 1},
    "5": {"e1": 1, "e2": 1},
    "7": {"g1": 1, "g2": 1, "g3": 1, "g4": 1},
}
TOY_RUN = {
    "1": {"a3": 0.9, "a1": 0.8, "x1": 0.7, "a2": 0.6},
    "2": {"b1": 1.0, "b2": 1.0, "b3": 1.0},
    "3": {"c1": 0.5, "c2": 0.4},
    "5": {"e1": 0.9},
    "6": {"f1": 0.9},
    "7": {"g1": 0.9, "n1": 0.8, "n2": 0.7, "n3": 0.6, "g2": 0.5, "g3": 0.4, "g4": 0.3},
}
TOY_QUERIES = ("1", "2", "3", "4", "5", "7")
# (measure, tool, values of queries 1, 2, 3, 4, 5, 7 as the table prints them (None: absent),
# the mean or None): trec_eval 10 with -c, ir_measures' default pipeline, ranx with
# make_comparable=True, pytrec_eval (query 4 absent)
TOY_TABLE = [
    ("P@5", "trec_eval", (0.4, 0.2, 0, 0, 0.2, 0.4), 0.2),
    ("P@5", "ir_measures", (0.4, 0.2, 0, 0, 0.2, 0.4), 0.2),
    ("precision@5", "ranx", (0.4, 0.2, 0, 0, 0.2, 0.4), 0.2),
    ("recall.5", "trec_eval", (0.6667, 1, 0, 0, 0.5, 0.5), 0.4444),
    ("R@5", "ir_measures", (0.6667, 1, 0, 0, 0.5, 0.5), 0.4444),
    ("recall@5", "ranx", (0.6667, 1, 0, 0, 0.5, 0.5), 0.4444),
    ("map", "trec_eval", (0.3333, 0.3333, 0, 0, 0.5, 0.6179), 0.2974),
    ("AP", "ir_measures", (0.3333, 0.3333, 0, 0, 0.5, 0.6179), 0.2974),
    ("map", "ranx", (0.3333, 1.0, 0, 0, 0.5, 0.6179), 0.4085),
    ("map_cut.2", "trec_eval", (0.1667, 0, 0, 0, 0.5, 0.25), 0.1528),
    ("AP@2", "ir_measures", (0.1667, 0, 0, 0, 0.5, 0.25), 0.1528),
    ("recip_rank", "trec_eval", (0.5, 0.3333, 0, 0, 1, 1), 0.4722),
    ("RR", "ir_measures", (0.5, 0.3333, 0, 0, 1, 1), 0.4722),
    ("RR@10", "ir_measures", (0.5, 1.0, 0, 0, 1, 1), 0.5833),
    ("Rprec", "trec_eval", (0.3333, 0, 0, 0, 0.5, 0.25), 0.1806),
    ("Rprec", "ir_measures", (0.3333, 0, 0, 0, 0.5, 0.25), 0.1806),
    ("bpref", "trec_eval", (0.3333, 1, 0, 0, 0.5, 1), 0.4722),
    ("Bpref", "ir_measures", (0.3333, 1, 0, 0, 0.5, 1), 0.4722),
    ("success.1", "trec_eval", (0, 0, 0, 0, 1, 1), 0.3333),
    ("Success@1", "ir_measures", (0, 0, 0, 0, 1, 1), 0.3333),
    ("Judged@5", "ir_measures", (0.75, 0.3333, 0.5, 0, 1, 0.4), 0.4972),
    ("unj.5", "trec_eval", (0.2, 0.4, 0.2, 0, 0, 0.6), 0.2333),
    ("ERR@5", "ir_measures", (0.1065, 0.0208, 0, 0, 0.0625, 0.0742), 0.0440),
    ("rbp.p=0.8", "trec_eval", (0.2112, 0.128, 0, 0, 0.2, 0.3999), 0.1565),
    ("rbp.8", "ranx", (0.4224, 0.2, 0, 0, 0.2, 0.3999), None),
    ("rbp_resid", "trec_eval", (0.7371, 0.9190, 0.9, 0, 0, 0.7222), 0.5464),
    ("iprec_at_recall.0.3", "pytrec_eval", (0.5, 0.3333, 0, None, 1, 0.5714), None),
    ("IPrec@0.3", "ir_measures", (0.5, 0.3333, 0, 0, 1, 0.5714), None),
    ("gm_map", "pytrec_eval", (-1.0986, -1.0986, -11.5129, None, -0.6931, -0.4815), None),
]


@pytest.mark.parametrize(("name", "tool", "values", "mean"), TOY_TABLE)
def test_oracle_gives_every_tool_column_of_the_toy_example(name, tool, values, mean):
    rules = RULES[tool]
    missing = "skip" if tool == "pytrec_eval" else "zero"
    measure = parse_measure(name)
    ours = oracle(TOY_QRELS, TOY_RUN, measure, rules, missing=missing)
    theirs = {q: v for q, v in zip(TOY_QUERIES, values, strict=True) if v is not None}
    assert_same_values(ours, theirs, 0.5e-4 + 1e-12, f"{tool} {name}")
    if mean is not None:
        assert abs(ref.summary(measure.kind, list(ours.values())) - mean) <= 0.5e-4 + 1e-12


def test_toy_example_iprec_rounding_of_trec_eval_10():
    """Query 7 (R = 4, relevant at ranks 1, 5, 6, 7), recall 0.3: trec_eval 10 starts at the
    round(1.2) = 1st relevant document (1.0), 9.0.8 at the int(1.2 + 0.9) = 2nd (0.5714)."""
    measure = parse_measure("iprec_at_recall.0.3")
    assert oracle(TOY_QRELS, TOY_RUN, measure, RULES["trec_eval"], missing="zero")["7"] == 1.0


def test_toy_example_other_observations():
    """trec_eval -c -l 2: num_rel is 1 for query 1, else 0; -J: query 2 keeps one document."""
    num_rel = oracle(
        TOY_QRELS, TOY_RUN, parse_measure("num_rel"), RULES["trec_eval"], level=2, missing="zero"
    )
    assert num_rel == {"1": 1, "2": 0, "3": 0, "4": 0, "5": 0, "7": 0}
    judged = {"judged_only": True, "missing": "zero"}
    rules = RULES["trec_eval"]
    assert oracle(TOY_QRELS, TOY_RUN, parse_measure("num_ret"), rules, **judged)["2"] == 1
    assert oracle(TOY_QRELS, TOY_RUN, parse_measure("recip_rank"), rules, **judged)["2"] == 1
    # ranx's bpref of query 5 alone (no judged non-relevant document): NaN
    bpref = oracle(TOY_QRELS, TOY_RUN, parse_measure("bpref"), RULES["ranx"], missing="zero")
    assert math.isnan(bpref["5"]) and bpref["3"] == 0


# -- pytrec_eval, ir_measures and ranx, run here: 1e-12 -----------------------------------------


def tool_data(numeric: bool = False) -> list[tuple[str, dict, dict]]:
    """(name, qrels, run): the real TREC pairs and two random runs (labels -1..4, heavy ties and
    near-ties only float64 tells apart, queries without relevant judgments, judged queries
    absent from the run, run-only queries; ``numeric`` query ids for gdeval)."""
    out = [(name, read_qrels(q), read_run(r)) for name, (q, r) in TREC_PAIRS.items()]
    out += [(f"random{seed}", *random_trec(seed, numeric_qids=numeric)) for seed in (1, 2)]
    return out


PYTREC_MEASURES = {
    *("P", "recall", "map", "map_cut", "recip_rank", "Rprec", "bpref", "success"),
    *("num_ret", "num_rel", "num_rel_ret", "gm_map", "set_P", "set_recall", "set_F"),
    *("ndcg", "ndcg_cut", "iprec_at_recall"),
}


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("judged_only", [False, True])
def test_oracle_equals_pytrec_eval(level, judged_only):
    pytrec_eval = tool("pytrec_eval", "pytrec-eval-terrier")
    rules = RULES["pytrec_eval"]
    for name, qrels, run in tool_data():
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels, PYTREC_MEASURES, relevance_level=level, judged_docs_only_flag=judged_only
        )
        theirs = evaluator.evaluate(run)
        keys = next(iter(theirs.values())).keys()
        assert len(keys) >= 60, sorted(keys)
        for key in keys:
            measure = parse_measure(key)
            ours = oracle(
                qrels, run, measure, rules, level=level, missing="skip", judged_only=judged_only
            )
            values = {q: v[key] for q, v in theirs.items()}
            if measure.kind == "IPrec":  # -J can leave no document: trec_eval divides 0 by 0
                empty = {
                    q for q in values if not ref.rank(run[q], qrels[q], judged_only=True).labels
                }
                assert {q for q, v in values.items() if math.isnan(v)} <= empty
                values = {q: 0.0 if q in empty else v for q, v in values.items()}
            assert_same_values(ours, values, 1e-12, f"{name} {key} -l{level} J={judged_only}")


IR_MEASURES = [
    *("P@5", "P(rel=2)@10", "R@10", "R(rel=2)@100", "AP", "AP@10", "AP(rel=2)", "RR", "RR@10"),
    *("RR(rel=2)@5", "Rprec", "Bpref", "Bpref(rel=2)", "Success@5", "Judged@10", "Judged"),
    *("IPrec@0.3", "IPrec@0.0", "NumRet", "NumRel", "NumRelRet", "NumRet(rel=2)", "SetP"),
    *("SetR", "SetF", "nDCG@10"),
]
GDEVAL_MEASURES = ["ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@10"]


def ir_measures_check(names: list[str], data: list[tuple[str, dict, dict]], atol: float) -> None:
    ir_measures = tool("ir_measures", "ir_measures")
    rules = RULES["ir_measures"]
    for name, qrels, run in data:
        theirs_measures = [ir_measures.parse_measure(n) for n in names]
        theirs: dict = {}
        for metric in ir_measures.iter_calc(theirs_measures, qrels, run):
            theirs.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
        means = ir_measures.calc_aggregate(theirs_measures, qrels, run)
        for text, their_measure in zip(names, theirs_measures, strict=True):
            measure = parse_measure(text)
            ours = oracle(qrels, run, measure, rules, missing="zero")
            values = theirs[str(their_measure)]
            assert_same_values(ours, values, atol, f"{name} {text}")
            mean = ref.summary(measure.kind, list(ours.values()))
            assert mean == pytest.approx(means[their_measure], abs=1e-12), (name, text)


def test_oracle_equals_ir_measures():
    ir_measures_check(IR_MEASURES, tool_data(), 1e-12)


@pytest.mark.skipif(shutil.which("perl") is None and not REQUIRE_TOOLS, reason="needs perl")
def test_oracle_equals_ir_measures_gdeval():
    """gdeval prints 5 decimals and needs numeric query ids and grades <= 4."""
    numeric = ("adhoc", "adhoc_graded", "adhoc_missing", "random1", "random2")
    data = [d for d in tool_data(numeric=True) if d[0] in numeric]
    ir_measures_check(GDEVAL_MEASURES, data, 0.0)


RANX_METRICS = [
    *("precision@5", "precision@10-l2", "precision", "recall@10", "recall@100-l2", "f1@10"),
    *("r-precision", "mrr", "mrr@10", "map", "map@10", "map-l2", "hit_rate@5", "hits@10"),
    *("rbp.8", "rbp.95-l2", "ndcg@10", "ndcg_burges@10-l2", "dcg@5", "bpref", "bpref-l2"),
]


@pytest.fixture
def ranx():
    """ranx, with Numba's process-wide thread count put back afterwards."""
    ranx = tool("ranx", "ranx")
    numba = pytest.importorskip("numba")
    before = numba.get_num_threads()
    yield ranx
    numba.set_num_threads(before)


def test_oracle_equals_ranx(ranx):
    """Runs without tied scores (ranx scrambles long tied lists), with make_comparable=True.

    bpref only on queries with a relevant judgment: with none, ranx divides by 0 inside its
    parallel loop, which can leave other queries of the batch at 0 (not reproduced).
    """
    rules = RULES["ranx"]
    cast_qrels, cast_run = TREC_PAIRS["cast2019"]
    data = [("cast2019", read_qrels(cast_qrels), read_run(cast_run))]
    data += [(f"random{seed}", *random_trec(seed, tied=False)) for seed in (5, 6)]
    for name, qrels, run in data:
        for metric in RANX_METRICS:
            measure = parse_measure(metric)
            judged = qrels
            if measure.kind == "Bpref":
                level = measure.rel or 1
                judged = {q: j for q, j in qrels.items() if max(j.values()) >= level}
            qrels_x, run_x = ranx.Qrels.from_dict(judged), ranx.Run.from_dict(run)
            run_x = run_x.make_comparable(qrels_x)
            ranx.evaluate(qrels_x, run_x, metric)
            theirs = {str(q): float(v) for q, v in run_x.scores[metric].items()}
            ours = oracle(judged, run, measure, rules, missing="zero")
            assert_same_values(ours, theirs, 1e-12, f"{name} {metric}")


# -- names: read as ir_measures reads them ------------------------------------------------------

IR_NAMES = [
    *("nDCG@10", "P@5", "P(rel=2)@10", "R@100", "AP", "AP@100", "MAP", "RR", "RR@10", "MRR"),
    *("Rprec", "RPrec", "Success@5", "ERR@20", "Bpref", "BPref", "Judged@10", "Judged"),
    *("RBP(rel=1,p=0.8)", "RBP(p=0.9)", "IPrec@0.3", "NumRet", "NumRet(rel=2)", "NumRelRet"),
    *("NumRel", "NumQ", "SetP", "SetR", "SetF", "nDCG(dcg='exp-log2')@10", "nDCG(dcg='log2')"),
]
TREC_PRINTED = [
    *("P_10", "map_cut_100", "recip_rank", "iprec_at_recall_0.10", "success_5", "recall_100"),
    *("num_rel_ret", "num_ret", "num_rel", "num_q", "ndcg_cut_10", "ndcg", "map", "Rprec"),
    *("bpref", "set_P", "set_recall", "set_F"),
]


def ir_fields(measure) -> tuple:
    """(kind, cutoff, level, parameter, gain) of an ir_measures measure."""
    params = dict(measure.params)
    kind = IR_MEASURES_SETS.get(measure.NAME) or IR_MEASURES_NAMES[measure.NAME]
    if kind == "NumRet" and "rel" in params:
        kind = "NumRelRet"
    gain = {"exp-log2": "exp2", "log2": "linear"}.get(params.get("dcg"))
    number = params.get("p", params.get("recall"))
    return kind, params.get("cutoff"), params.get("rel", 1), number, gain


def test_names_read_as_ir_measures_reads_them():
    """ir_measures' own parsers: its syntax, and trec_eval's printed names
    (``parse_trec_measure``)."""
    ir_measures = tool("ir_measures", "ir_measures")
    for name in IR_NAMES:
        ours = parse_measure(name)
        theirs = ir_fields(ir_measures.parse_measure(name))
        assert (ours.kind, ours.cutoff, ours.rel or 1, ours.param, ours.gain) == theirs, name
    for name in TREC_PRINTED:
        ours = parse_measure(name)
        (theirs,) = ir_measures.parse_trec_measure(name)
        assert (ours.kind, ours.cutoff, ours.rel or 1, ours.param) == ir_fields(theirs)[:4], name
