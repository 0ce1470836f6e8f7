"""Parity of the TREC presets with the tools themselves, per query.

- ``trec_eval`` (10.0): no binary is installed, so the evidence is trec_eval 10's own expected
  outputs shipped with its test suite (``out.test*``, printed with 4 decimals), plus pytrec_eval
  once scores are held as float32 as 9.0.8 does (the only ranking difference), at 1e-12.
- ``trec_eval9`` / ``pytrec_eval``: pytrec_eval (vendors trec_eval 9.0.8), at 1e-12.
- ``ir_measures``: ir_measures' default pipeline (pytrec_eval provider), per query and mean,
  at 1e-12.
- ``gdeval``: ir_measures' gdeval provider (the Perl script), which prints 5 decimals: equal
  values.

Data: trec_eval's test runs (ties, a missing topic, graded qrels with -1), a TREC 2024 RAG run
(71 tied groups), TREC CAsT 2019 (labels up to 50), LETOR MQ2008 model predictions as TREC
files, and random runs with heavy ties, float32-only near-ties and awkward docids.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from parity_data import (
    DERIVED,
    REQUIRE_TOOLS,
    TREC,
    TREC_PAIRS,
    assert_same_values,
    per_query,
    random_trec,
    read_qrels,
    read_run,
    tool,
    write_trec,
)

import fastndcg

pytrec_eval = tool("pytrec_eval", "pytrec-eval-terrier")
ir_measures = tool("ir_measures", "ir_measures")

CUTOFFS = [None, 1, 5, 10, 20, 100]
MEASURES = {"ndcg", "ndcg_cut.1,5,10,20,100"}
KEYS = ["ndcg", "ndcg_cut_1", "ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_100"]


def datasets(tmp_path_factory, numeric=False):
    """(name, qrels path, run path): the real pairs and random tied runs."""
    out = [(name, *paths) for name, paths in TREC_PAIRS.items()]
    for name in ("xgb_mq2008", "lgb_lambdarank_example"):  # GBDT predictions as TREC runs
        folder = DERIVED / name
        out.append((name, folder / "qrels.rowidx.txt", folder / "run.rowidx.txt"))
    folder = tmp_path_factory.mktemp("random_trec")
    for seed in (1, 2):
        qrels, run = random_trec(seed, numeric_qids=numeric)
        out.append((f"random{seed}", *write_trec(folder, qrels, run, f"r{seed}")))
    return out


@pytest.fixture(scope="module")
def trec_data(tmp_path_factory):
    return datasets(tmp_path_factory)


def pytrec(qrels_path, run_path, judged_only=False):
    evaluator = pytrec_eval.RelevanceEvaluator(
        read_qrels(qrels_path), MEASURES, judged_docs_only_flag=judged_only
    )
    return evaluator.evaluate(read_run(run_path))


# -- trec_eval 9.0.8 / pytrec_eval -------------------------------------------------------------


@pytest.mark.parametrize("preset", ["pytrec_eval", "trec_eval9"])
@pytest.mark.parametrize("judged_only", [False, True])
def test_pytrec_eval_per_query(trec_data, preset, judged_only):
    for name, qrels_path, run_path in trec_data:
        theirs = pytrec(qrels_path, run_path, judged_only)
        ours = fastndcg.ndcg_run(  # pytrec_eval leaves out a judged query absent from the run
            qrels_path, run_path, preset=preset, k=CUTOFFS, judged_only=judged_only, missing="skip"
        )
        for j, key in enumerate(KEYS):
            assert_same_values(
                per_query(ours, j),
                {q: v[key] for q, v in theirs.items()},
                atol=1e-12,
                what=f"{name} {key}",
            )


def test_float32_scores_are_what_separates_trec_eval_10_from_9(trec_data):
    """trec_eval 10 ranks on doubles; with scores held as float32 it equals pytrec_eval (9.0.8)
    at 1e-12 everywhere, and on runs with near-ties the float64 ranking really differs."""
    differing = 0
    for name, qrels_path, run_path in trec_data:
        theirs = pytrec(qrels_path, run_path)
        as_float32 = fastndcg.ndcg_run(
            qrels_path, run_path, preset="trec_eval", score_dtype="float32", missing="skip", k=10
        )
        assert_same_values(
            per_query(as_float32), {q: v["ndcg_cut_10"] for q, v in theirs.items()}, 1e-12, name
        )
        as_float64 = fastndcg.ndcg_run(qrels_path, run_path, preset="trec_eval", missing="skip")
        gap = [abs(per_query(as_float64)[q] - v["ndcg"]) for q, v in theirs.items()]
        differing += sum(g > 1e-9 for g in gap)
    assert differing > 0  # the random runs' 1e-9 near-ties collapse in float32 only


def test_trec_eval_preset_on_float32_scores(tmp_path):
    """On scores that float32 holds exactly both versions rank alike: the trec_eval preset as
    it is (float64) equals pytrec_eval at 1e-12 on random tied runs."""
    for seed in (8, 9):
        qrels, run = random_trec(seed)
        run = {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}
        qrels_path, run_path = write_trec(tmp_path, qrels, run, f"f{seed}")
        theirs = pytrec(qrels_path, run_path)
        ours = fastndcg.ndcg_run(
            qrels_path, run_path, preset="trec_eval", k=CUTOFFS, missing="skip"
        )
        for j, key in enumerate(KEYS):
            assert_same_values(
                per_query(ours, j), {q: v[key] for q, v in theirs.items()}, 1e-12, key
            )


# -- trec_eval 10.0: its own expected outputs ----------------------------------------------------


def expected(out_file):
    """{measure: {qid or 'all': value}} from a trec_eval output file (4 decimals)."""
    table: dict = {}
    for line in (TREC / out_file).read_text().splitlines():
        measure, qid, value = line.split()
        if measure.startswith("ndcg"):
            table.setdefault(measure, {})[qid] = float(value)
    return table


# trec_eval's quicktest: -a -q [-c] [-M100] [-l2]; -l does not change nDCG
TREC_EVAL_RUNS = [
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"missing": "zero"}),
    ("out.test.aqcM", "qrels.test", "results.trunc", {"missing": "zero", "max_docs": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", {}),
]
TREC_CUTS = [5, 10, 15, 20, 30, 100, 200, 500, 1000]


@pytest.mark.parametrize(("out_file", "qrels", "run", "flags"), TREC_EVAL_RUNS)
def test_trec_eval_10_expected_outputs(out_file, qrels, run, flags):
    table = expected(out_file)
    k = [None, *TREC_CUTS]
    printed = fastndcg.ndcg_run(
        TREC / qrels, TREC / run, preset="trec_eval", k=k, decimals=4, **flags
    )
    exact = fastndcg.ndcg_run(TREC / qrels, TREC / run, preset="trec_eval", k=k, **flags)
    for j, cut in enumerate(k):
        measure = "ndcg" if cut is None else f"ndcg_cut_{cut}"
        values = {q: v for q, v in table[measure].items() if q != "all"}
        assert_same_values(per_query(printed, j), values, 0.0, f"{out_file} {measure}")
        assert round(exact.mean[j], 4) == table[measure]["all"], measure


def test_trec_eval_10_gain_parameters_and_odd_cutoffs():
    """-m ndcg.1=3,2=9,4=4.5 (labels without a parameter keep their value) and ndcg_cut.10,20,23."""
    table = expected("out.test.meas_params")
    result = fastndcg.ndcg_run(
        TREC / "qrels.test",
        TREC / "results.test",
        preset="trec_eval",
        gain={0: 0, 1: 3, 2: 9, 3: 3, 4: 4.5},
        k=[None, 10, 20, 23],
        decimals=4,
    )
    for j, measure in enumerate(
        ["ndcg_1=3,2=9,4=4.5", "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
    ):
        values = {q: v for q, v in table[measure].items() if q != "all"}
        assert_same_values(per_query(result, j), values, 0.0, measure)


def test_trec_eval_10_without_c_refuses_a_run_missing_a_topic():
    with pytest.raises(ValueError, match="1 judged query is not in the run"):
        fastndcg.ndcg_run(TREC / "qrels.test", TREC / "results.trunc", preset="trec_eval")


# -- ir_measures ---------------------------------------------------------------------------------


def test_ir_measures_per_query_and_mean(trec_data):
    from ir_measures import nDCG

    gains = {-1: 0, 0: 0, 1: 1, 2: 3, 3: 7, 4: 15}
    variants = [
        ([nDCG, nDCG @ 1, nDCG @ 5, nDCG @ 10, nDCG @ 100], {"k": [None, 1, 5, 10, 100]}),
        ([nDCG(judged_only=True) @ 10], {"k": 10, "judged_only": True}),
        ([nDCG(gains=gains) @ 10], {"k": 10, "gain": gains}),
    ]
    for name, qrels_path, run_path in trec_data:
        qrels, run = read_qrels(qrels_path), read_run(run_path)  # ir_measures' reader rejects
        for measures, options in variants:  # results.trunc's trailing text; dicts are the same
            if "gain" in options and name == "cast2019":
                continue  # ir_measures' gains must cover every label; the CAsT labels go to 50
            ours = fastndcg.ndcg_run(  # ir_measures scores a judged query absent from the run 0
                qrels_path, run_path, preset="ir_measures", missing="zero", **options
            )
            theirs: dict = {}
            for metric in ir_measures.iter_calc(measures, qrels, run):
                theirs.setdefault(metric.measure, {})[metric.query_id] = metric.value
            means = ir_measures.calc_aggregate(measures, qrels, run)
            for j, measure in enumerate(measures):
                assert_same_values(per_query(ours, j), theirs[measure], 1e-12, f"{name} {measure}")
                assert abs(ours.mean[j] - means[measure]) <= 1e-12, (name, measure)


# -- gdeval ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gdeval_data(tmp_path_factory):
    """gdeval needs numeric topic ids and labels <= 4."""
    out = [
        ("adhoc", *TREC_PAIRS["adhoc"]),
        ("adhoc_graded", *TREC_PAIRS["adhoc_graded"]),
        ("adhoc_missing", *TREC_PAIRS["adhoc_missing"]),
        (
            "mq2008",
            DERIVED / "lgb_mq2008" / "qrels.revpad.txt",
            DERIVED / "lgb_mq2008" / "run.revpad.txt",
        ),
    ]
    folder = tmp_path_factory.mktemp("gdeval")
    for seed in (3, 4):
        qrels, run = random_trec(seed, numeric_qids=True)
        out.append((f"random{seed}", *write_trec(folder, qrels, run, f"g{seed}")))
    return out


@pytest.mark.skipif(
    shutil.which("perl") is None and not REQUIRE_TOOLS, reason="gdeval.pl needs perl"
)
def test_gdeval_per_query(gdeval_data):
    from ir_measures import nDCG

    for name, qrels_path, run_path in gdeval_data:
        qrels, run = read_qrels(qrels_path), read_run(run_path)
        for k in (5, 20):
            measure = nDCG(dcg="exp-log2") @ k
            theirs = {
                m.query_id: m.value for m in ir_measures.gdeval.iter_calc([measure], qrels, run)
            }
            ours = fastndcg.ndcg_run(qrels_path, run_path, preset="gdeval", k=k, missing="zero")
            assert_same_values(per_query(ours), theirs, 0.0, f"{name} {measure}")
            assert ours.mean[0] == pytest.approx(np.mean(list(theirs.values())), abs=1e-12)
