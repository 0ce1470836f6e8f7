"""The measures engine (fastndcg.evaluate_run) against trec_eval's outputs, the oracle and the tools.

- trec_eval 10's own expected outputs (``out.test*``): every measure it prints that fastndcg
  computes, per query and in the summary, printed alike (4 decimals), on both backends;
- the oracle (tests/reference_measures.py, itself checked against the tools in
  test_measures_oracle.py) under every tool's preset, on the real TREC pairs and random runs
  full of ties, at 1e-12, and the two backends bit-identical;
- pytrec_eval, ir_measures (gdeval included) and ranx themselves, at 1e-12.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pyarrow as pa
import pytest
import reference_measures as ref
from conftest import BACKENDS
from parity_data import REQUIRE_TOOLS, TREC, assert_same_values, read_qrels, read_run, tool
from test_measures_oracle import (
    COUNTS,
    GDEVAL_MEASURES,
    IR_MEASURES,
    PYTREC_MEASURES,
    RANX_METRICS,
    TOY_QRELS,
    TOY_QUERIES,
    TOY_RUN,
    TOY_TABLE,
    TREC_OUTPUTS,
    oracle,
    printed,
    tool_data,
    trec_output,
)

import fastndcg
from fastndcg._core.measures import parse_measure, parse_measures
from fastndcg._core.measures.definitions import RULES
from fastndcg._errors import InputError, OptionError


def tables(qrels: dict, run: dict) -> tuple[pa.Table, pa.Table]:
    """The judgments and the run as tables (rows in the dicts' order)."""
    judged = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    ranked = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    qrels_table = pa.table(
        {
            "qid": [r[0] for r in judged],
            "docid": [r[1] for r in judged],
            "grade": pa.array([r[2] for r in judged], pa.int64()),
        }
    )
    run_table = pa.table(
        {
            "qid": pa.array([r[0] for r in ranked], pa.string()),
            "docid": pa.array([r[1] for r in ranked], pa.string()),
            "score": pa.array([r[2] for r in ranked], pa.float64()),
        }
    )
    return qrels_table, run_table


def engine(qrels: dict, run: dict, names: list[str], **options) -> fastndcg.MeasuresResult:
    return fastndcg.evaluate_run(*tables(qrels, run), measures=names, **options)


def columns(result: fastndcg.MeasuresResult) -> dict[str, dict[str, float]]:
    """{measure name: {query id: value}}."""
    return {
        name: {
            str(q): float(v) for q, v in zip(result.query_ids, result.per_query[:, j], strict=True)
        }
        for j, name in enumerate(result.measures)
    }


# -- trec_eval 10: its own expected outputs ----------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("output", "qrels_file", "run_file", "options"), TREC_OUTPUTS)
def test_engine_prints_what_trec_eval_10_prints(output, qrels_file, run_file, options, backend):
    table = trec_output(output)
    names = []
    for name in table:
        try:
            parse_measure(name)
        except OptionError:  # a measure fastndcg does not compute (relstring, infAP, ...)
            continue
        names.append(name)
    options = dict(options)
    options["relevance_level"] = options.pop("level", 1)
    options.setdefault("missing", "skip")  # trec_eval without -c
    result = fastndcg.evaluate_run(
        TREC / qrels_file,
        TREC / run_file,
        measures=names,
        preset="trec_eval",
        backend=backend,
        **options,
    )
    assert result.measures == tuple(names)
    for j, name in enumerate(names):
        kind = parse_measure(name).kind
        for i, qid in enumerate(result.query_ids):
            if qid in table[name]:  # gm_map and num_q are printed in the summary only
                assert printed(kind, result.per_query[i, j]) == table[name][qid], (name, qid)
        assert printed(kind, result.mean[j]) == table[name]["all"], (output, name)
    assert len(names) >= 12


# -- the oracle, under every tool's preset -----------------------------------------------------

TREC10_NAMES = [
    *("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref"),
    *("recip_rank", "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success"),
    *("set_P", "set_recall", "set_F", "rbp", "rbp_resid", "unj", "dcg"),
]
# (preset, measure names, engine options, oracle options)
PRESET_CASES = [
    ("trec_eval", TREC10_NAMES, {"missing": "zero"}, {"missing": "zero"}),
    ("trec_eval", TREC10_NAMES, {"missing": "zero", "relevance_level": 2}, {"level": 2}),
    ("trec_eval", ["map", "P.5,10", "recip_rank", "bpref"], {"max_docs": 3}, {"max_docs": 3}),
    (
        "trec_eval",
        ["map", "P.5", "unj.5", "rbp_resid"],
        {"judged_only": True, "missing": "zero"},
        {},
    ),
    ("trec_eval9", sorted(PYTREC_MEASURES), {"missing": "skip"}, {"missing": "skip"}),
    ("pytrec_eval", sorted(PYTREC_MEASURES), {"missing": "skip"}, {"missing": "skip"}),
    ("ir_measures", [*IR_MEASURES, *GDEVAL_MEASURES, "RBP(rel=1,p=0.8)"], {"missing": "zero"}, {}),
    ("ranx", RANX_METRICS, {"missing": "zero"}, {"missing": "zero"}),
    ("gdeval", ["ERR@20", "nDCG(dcg='exp-log2')@10"], {"missing": "zero"}, {}),
]


def _oracle_options(engine_options: dict, oracle_options: dict) -> dict:
    out = {"missing": engine_options.get("missing", "error"), **oracle_options}
    if engine_options.get("judged_only"):
        out["judged_only"] = True
    if "relevance_level" in engine_options:
        out["level"] = engine_options["relevance_level"]
    return out


@pytest.mark.parametrize(("preset", "names", "options", "oracle_options"), PRESET_CASES)
def test_engine_equals_the_oracle_under_every_preset(preset, names, options, oracle_options):
    """At 1e-12 per query on both backends, which give the same bits."""
    rules = RULES[preset]
    expected = _oracle_options(options, oracle_options)
    for data, qrels, run in tool_data():
        if preset == "trec_eval" and "max_docs" in options:
            expected = {**expected, "missing": "error"}
            qrels = {q: j for q, j in qrels.items() if q in run}
        top = max(g for judged in qrels.values() for g in judged.values())
        if top > 4 and any(m.kind == "ERR" for m in parse_measures(names)):
            with pytest.raises(InputError, match="ERR's stopping probability"):
                engine(qrels, run, names, preset=preset, **options)  # gdeval stops there too
            continue
        results = [
            engine(qrels, run, names, preset=preset, backend=backend, **options)
            for backend in BACKENDS
        ]
        for other in results[1:]:
            np.testing.assert_array_equal(other.per_query, results[0].per_query)
            np.testing.assert_array_equal(other.mean, results[0].mean)
        result = results[0]
        for name, ours in columns(result).items():
            measure = parse_measure(name)
            theirs = oracle(qrels, run, measure, rules, **expected)
            assert_same_values(ours, theirs, 1e-12, f"{preset} {data} {name}")
            j = result.measures.index(name)
            values = [v for v in theirs.values()]
            mean = ref.summary(measure.kind, values)
            if measure.kind != "GMAP" or rules.gm_per_query == "ap":
                assert result.mean[j] == pytest.approx(mean, abs=1e-12, nan_ok=True), name


@pytest.mark.parametrize(("name", "tool_name", "values", "mean"), TOY_TABLE)
def test_engine_gives_every_tool_column_of_the_toy_example(name, tool_name, values, mean):
    missing = "skip" if tool_name == "pytrec_eval" else "zero"
    result = engine(TOY_QRELS, TOY_RUN, [name], preset=tool_name, missing=missing)
    theirs = {q: v for q, v in zip(TOY_QUERIES, values, strict=True) if v is not None}
    assert_same_values(columns(result)[name], theirs, 0.5e-4 + 1e-12, f"{tool_name} {name}")
    if mean is not None:
        assert abs(result.mean[0] - mean) <= 0.5e-4 + 1e-12


# -- the tools themselves ----------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("judged_only", [False, True])
def test_engine_equals_pytrec_eval(level, judged_only):
    pytrec_eval = tool("pytrec_eval", "pytrec-eval-terrier")
    for data, qrels, run in tool_data():
        theirs = pytrec_eval.RelevanceEvaluator(
            qrels, PYTREC_MEASURES, relevance_level=level, judged_docs_only_flag=judged_only
        ).evaluate(run)
        keys = sorted(next(iter(theirs.values())))
        result = engine(
            qrels,
            run,
            keys,
            preset="pytrec_eval",
            missing="skip",
            relevance_level=level,
            judged_only=judged_only,
        )
        ours = columns(result)
        for key in keys:
            values = {q: v[key] for q, v in theirs.items()}
            if key.startswith("iprec_at_recall"):  # -J can leave no document: 0/0 there
                values = {q: 0.0 if math.isnan(v) else v for q, v in values.items()}
            assert_same_values(ours[key], values, 1e-12, f"{data} {key} -l{level}")


def _ir_measures_check(names: list[str], data: list, atol: float) -> None:
    ir_measures = tool("ir_measures", "ir_measures")
    for name, qrels, run in data:
        measures = [ir_measures.parse_measure(n) for n in names]
        theirs: dict = {}
        for metric in ir_measures.iter_calc(measures, qrels, run):
            theirs.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
        means = ir_measures.calc_aggregate(measures, qrels, run)
        result = engine(qrels, run, names, preset="ir_measures", missing="zero")
        ours = columns(result)
        for j, (text, measure) in enumerate(zip(names, measures, strict=True)):
            assert_same_values(ours[text], theirs[str(measure)], atol, f"{name} {text}")
            assert result.mean[j] == pytest.approx(means[measure], abs=1e-12), (name, text)


def test_engine_equals_ir_measures():
    _ir_measures_check(IR_MEASURES, tool_data(), 1e-12)


@pytest.mark.skipif(shutil.which("perl") is None and not REQUIRE_TOOLS, reason="needs perl")
def test_engine_equals_ir_measures_gdeval():
    numeric = ("adhoc", "adhoc_graded", "adhoc_missing", "random1", "random2")
    data = [d for d in tool_data(numeric=True) if d[0] in numeric]
    _ir_measures_check(GDEVAL_MEASURES, data, 0.0)


def test_engine_equals_ranx():
    """Runs without tied scores; bpref on queries with a relevant judgment (see the oracle's
    test)."""
    ranx = tool("ranx", "ranx")
    numba = pytest.importorskip("numba")
    before = numba.get_num_threads()
    from parity_data import TREC_PAIRS, random_trec

    try:
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
                qrels_x = ranx.Qrels.from_dict(judged)
                run_x = ranx.Run.from_dict(run).make_comparable(qrels_x)
                ranx.evaluate(qrels_x, run_x, metric)
                theirs = {str(q): float(v) for q, v in run_x.scores[metric].items()}
                result = engine(judged, run, [metric], preset="ranx", missing="zero")
                assert_same_values(columns(result)[metric], theirs, 1e-12, f"{name} {metric}")
    finally:
        numba.set_num_threads(before)


def test_counts_are_summed():
    result = engine(TOY_QRELS, TOY_RUN, ["num_ret", "num_rel"], preset="trec_eval", missing="zero")
    assert {parse_measure(n).kind for n in result.measures} <= set(COUNTS)
    assert list(result.mean) == list(result.per_query.sum(axis=0))
