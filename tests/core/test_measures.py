"""The measures' names, records, tools' definitions and trec_eval's layout (no scoring here).

The values are checked against the tools in tests/parity/test_measures_oracle.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fastndcg._core.measures import KINDS, Measure, parse_measure, parse_measures
from fastndcg._core.measures.definitions import (
    CHOICES,
    DEFAULT,
    RULES,
    MeasureRules,
    Provider,
    Route,
    rules_of,
)
from fastndcg._core.measures.kinds import (
    IR_MEASURES_NAMES,
    IR_MEASURES_SETS,
    RANX_NAMES,
    TREC_DEFAULTS,
    TREC_NAMES,
)
from fastndcg._core.measures.trec_layout import (
    format_trec_eval,
    summarize,
    trec_eval_measures,
    trec_eval_order,
)
from fastndcg._errors import OptionError, OptionTypeError
from fastndcg._presets.registry import PRESETS

# name as typed -> (kind, cutoff, rel, param, gain): the names of issue 37 in each syntax
NAMES = {
    # ir_measures
    "nDCG@10": ("nDCG", 10, None, None, None),
    "P@5": ("P", 5, None, None, None),
    "P(rel=2)@10": ("P", 10, 2, None, None),
    "R@100": ("R", 100, None, None, None),
    "AP": ("AP", None, None, None, None),
    "AP@100": ("AP", 100, None, None, None),
    "RR@10": ("RR", 10, None, None, None),
    "MRR": ("RR", None, None, None, None),
    "Rprec": ("Rprec", None, None, None, None),
    "Success@5": ("Success", 5, None, None, None),
    "ERR@20": ("ERR", 20, None, None, None),
    "Bpref": ("Bpref", None, None, None, None),
    "Judged@10": ("Judged", 10, None, None, None),
    "RBP(rel=1,p=0.8)": ("RBP", None, 1, 0.8, None),
    "IPrec@0.3": ("IPrec", None, None, 0.3, None),
    "NumRet": ("NumRet", None, None, None, None),
    "NumRet(rel=1)": ("NumRelRet", None, 1, None, None),
    "NumQ": ("NumQ", None, None, None, None),
    "SetP": ("P", None, None, None, None),
    "nDCG(dcg='exp-log2')@20": ("nDCG", 20, None, None, "exp2"),
    "F1@10": ("F1", 10, None, None, None),
    # trec_eval
    "ndcg_cut.10": ("nDCG", 10, None, None, None),
    "recall.100": ("R", 100, None, None, None),
    "map": ("AP", None, None, None, None),
    "map_cut.100": ("AP", 100, None, None, None),
    "recip_rank": ("RR", None, None, None, None),
    "success.5": ("Success", 5, None, None, None),
    "bpref": ("Bpref", None, None, None, None),
    "rbp.p=0.8": ("RBP", None, None, 0.8, None),
    "unj.5": ("Unjudged", 5, None, None, None),
    "iprec_at_recall.0.3": ("IPrec", None, None, 0.3, None),
    "gm_map": ("GMAP", None, None, None, None),
    "num_rel_ret": ("NumRelRet", None, None, None, None),
    "set_F": ("F1", None, None, None, None),
    "P_5": ("P", 5, None, None, None),
    "ndcg_cut_10": ("nDCG", 10, None, None, None),
    "iprec_at_recall_0.10": ("IPrec", None, None, 0.1, None),
    "rbp_p=0.95": ("RBP", None, None, 0.95, None),
    # ranx
    "ndcg@10": ("nDCG", 10, None, None, None),
    "ndcg_burges@10": ("nDCG", 10, None, None, "exp2"),
    "precision@10": ("P", 10, None, None, None),
    "recall@100": ("R", 100, None, None, None),
    "map@100": ("AP", 100, None, None, None),
    "mrr": ("RR", None, None, None, None),
    "mrr@10": ("RR", 10, None, None, None),
    "r-precision": ("Rprec", None, None, None, None),
    "hit_rate@5": ("Success", 5, None, None, None),
    "f1@10": ("F1", 10, None, None, None),
    "rbp.8": ("RBP", None, None, 0.8, None),
    "rbp.95": ("RBP", None, None, 0.95, None),
    "hits@10": ("NumRelRet", 10, None, None, None),
    "precision@10-l2": ("P", 10, 2, None, None),
    "ndcg_burges@20-l3": ("nDCG", 20, 3, None, "exp2"),
    "r-precision-l2": ("Rprec", None, 2, None, None),
}


@pytest.mark.parametrize(("name", "expected"), NAMES.items())
def test_a_name_in_any_syntax_reads_into_one_record(name, expected):
    measure = parse_measure(name)
    assert (measure.kind, measure.cutoff, measure.rel, measure.param, measure.gain) == expected
    assert measure.name == name == str(measure)


def test_the_same_measure_in_three_syntaxes_is_one_record_but_for_its_name():
    spellings = ["AP@100", "map_cut.100", "map_cut_100", "map@100", "AP(cutoff=100)"]
    records = {parse_measure(name) for name in spellings}
    assert len({(m.kind, m.cutoff, m.rel, m.param, m.gain) for m in records}) == 1
    assert {m.name for m in records} == set(spellings)


@pytest.mark.parametrize(
    ("name", "names"),
    [
        ("P.5,10", ["P_5", "P_10"]),
        ("P.10,5", ["P_5", "P_10"]),  # trec_eval sorts cutoffs
        ("P", [f"P_{k}" for k in TREC_DEFAULTS["P"]]),
        ("success", ["success_1", "success_5", "success_10"]),
        ("unj", ["unj_5", "unj_10", "unj_20"]),
        ("recall", [f"recall_{k}" for k in TREC_DEFAULTS["recall"]]),
        ("iprec_at_recall", [f"iprec_at_recall_{r / 10:3.2f}" for r in range(11)]),
        ("iprec_at_recall.0.25,0.5", ["iprec_at_recall_0.25", "iprec_at_recall_0.50"]),
    ],
)
def test_a_trec_eval_name_with_several_parameters_gives_one_record_each(name, names):
    found = parse_measures(name)
    assert [m.name for m in found] == names
    assert [m.trec_name() for m in found] == names


def test_a_trec_eval_name_with_one_parameter_keeps_its_name():
    (measure,) = parse_measures("P.10")
    assert (measure.name, measure.cutoff, measure.trec_name()) == ("P.10", 10, "P_10")


@pytest.mark.parametrize(
    ("name", "printed"),
    [
        ("nDCG@10", "ndcg_cut_10"),
        ("nDCG", "ndcg"),
        ("AP", "map"),
        ("AP@5", "map_cut_5"),
        ("P@5", "P_5"),
        ("SetP", "set_P"),
        ("R", "set_recall"),
        ("IPrec@0.3", "iprec_at_recall_0.30"),
        ("IPrec@0.25", "iprec_at_recall_0.25"),
        ("RBP", "rbp"),
        ("RBP(p=0.8)", "rbp_p=0.8"),
        ("NumRet(rel=1)", "num_rel_ret"),
        ("gm_map", "gm_map"),
        ("unj.10", "unj_10"),
        # what trec_eval lacks: named in its style
        ("ERR@20", "ERR_20"),
        ("RR@10", "RR_10"),
        ("Judged@10", "Judged_10"),
        ("hits@10", "NumRelRet_10"),
    ],
)
def test_trec_name_is_what_trec_eval_prints(name, printed):
    assert parse_measure(name).trec_name() == printed


def test_every_measure_trec_eval_has_reads_back_from_its_printed_name():
    for measure in parse_measures(
        [*TREC_NAMES, "ndcg_cut.7", "map_cut.3", "rbp.p=0.5", "rbp_resid.p=0.5"]
    ):
        again = parse_measure(measure.trec_name())
        assert (again.kind, again.cutoff, again.param) == (
            measure.kind,
            measure.cutoff,
            measure.param,
        )


def test_every_name_of_every_table_reads_into_its_kind():
    for name, (kind, _) in TREC_NAMES.items():
        assert {m.kind for m in parse_measures(name)} == {kind}, name
    for name, kind in IR_MEASURES_NAMES.items():
        if KINDS[kind].param == "recall":
            name += "@0.5"
        assert {m.kind for m in parse_measures(name)} == {kind}, name  # P: trec_eval's P_5...
    for name, kind in IR_MEASURES_SETS.items():
        assert parse_measure(name) == Measure(kind, name=name)
    for name, (kind, gain) in RANX_NAMES.items():
        spelled = f"{name}.9" if kind == "RBP" else name
        found = parse_measures(spelled)
        if name == "recall":  # trec_eval's word too: its nine cutoffs
            assert {m.kind for m in found} == {"R"} and len(found) == 9
            continue
        assert [(m.kind, m.gain) for m in found] == [(kind, gain)], name
    named = {kind for kind, _ in TREC_NAMES.values()} | set(IR_MEASURES_NAMES.values())
    assert named == set(KINDS)


# -- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("ndgc@10", "nearest: 'ndcg@10'"),
        ("Precison@10", "nearest: 'Precision@10'"),
        ("Succes@5", "nearest: 'Success@5'"),
        ("ndcg_cutt.10", "nearest: 'ndcg_cut.10'"),
        ("precission@10-l2", "nearest: 'precision@10-l2'"),
        ("reciprank", "'recip_rank'"),
        ("nothing_like_it", "see the measures page"),
    ],
)
def test_an_unknown_name_is_an_option_error_naming_the_nearest_valid_ones(name, words):
    with pytest.raises(OptionError) as raised:
        parse_measures(name)
    error = raised.value
    assert (error.option, error.value) == ("measures", name)
    text = str(error)
    assert text.startswith(f"unknown measure {name!r}; ")
    assert words in text
    if "nearest: " in text:
        for suggestion in text.split("nearest: ")[1].split(";")[0].split(", "):
            parse_measures(suggestion.strip("'"))  # every suggestion is a valid name


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("rbp.0.95", "ranx itself reads rbp.0.95 as p = 0"),
        ("rbp", None),  # trec_eval's rbp: valid
        ("map.5", "takes no parameters"),
        ("ndcg.1=3,2=9", "gain"),
        ("P.5,5", "twice"),
        ("P.x", "numbers separated by commas"),
        ("rbp.q=0.8", "p=<persistence>"),
        ("P(judged_only=True)@5", "judged_only=True"),
        ("nDCG(gains={1:3,2:9})@5", "gain={...}"),
        ("nDCG(dcg='exp')@5", "dcg='exp-log2'"),
        ("P(foo=1)@5", "unknown setting"),
        ("RR(rel=x)", "not a value"),
        ("IPrec", "recall level"),
        ("IPrec@x", None),  # not a name of any syntax
        ("RBP(recall=0.2)", "takes no recall"),
        ("SetP@10", "set measures take none"),
        ("mrr@0", "k >= 1"),
        ("P_0", ">= 1"),
        ("P(rel=-1)@5", ">= 0"),
        ("RBP(p=1)", "outside (0, 1)"),
        ("IPrec@1.5", "outside [0, 1]"),
        ("bpref@5", "takes no cutoff"),
        ("Rprec@10", "takes no cutoff"),
    ],
)
def test_a_name_with_bad_settings_is_refused_saying_what_to_write(name, words):
    if words is None and name == "rbp":
        assert parse_measure(name).kind == "RBP"
        return
    with pytest.raises(OptionError) as raised:
        parse_measures(name)
    assert raised.value.option == "measures" and raised.value.value == name
    if words is not None:
        assert words in str(raised.value)


def test_measure_lists():
    found = parse_measures(["P@10", Measure("AP"), "P.5,20"])
    assert [m.name for m in found] == ["P@10", "AP", "P_5", "P_20"]
    assert parse_measures("AP") == (Measure("AP", name="AP"),)
    with pytest.raises(OptionError, match="asked for twice"):
        parse_measures(["P@10", "P@10"])
    with pytest.raises(OptionError, match="empty"):
        parse_measures([])
    with pytest.raises(OptionTypeError, match="measure names"):
        parse_measures(["P@10", 10])
    with pytest.raises(OptionTypeError, match="a list of them"):
        parse_measures(10)
    with pytest.raises(OptionError, match="stands for 2 measures"):
        parse_measure("P.5,10")


def test_measure_records_check_their_fields():
    assert Measure("P", cutoff=np.int64(10)).cutoff == 10
    assert type(Measure("P", cutoff=np.int64(10)).cutoff) is int
    assert Measure("P", cutoff=10, rel=2).name == "P(rel=2)@10"
    assert Measure("RBP", param=0.5).canonical == "RBP(p=0.5)"
    assert Measure("nDCG", cutoff=5, gain="exp2").canonical == "nDCG(gain='exp2')@5"
    for bad in (
        dict(kind="Prec"),
        dict(kind="Rprec", cutoff=5),
        dict(kind="P", cutoff=0),
        dict(kind="P", rel=-1),
        dict(kind="P", param=0.5),
        dict(kind="IPrec"),
        dict(kind="RBP", param=0.0),
        dict(kind="P", gain="exp2"),
        dict(kind="nDCG", gain="log"),
    ):
        with pytest.raises(OptionError):
            Measure(**bad)
    for bad in (dict(kind="P", cutoff=2.0), dict(kind="P", rel=True), dict(kind="RBP", param="a")):
        with pytest.raises(OptionTypeError):
            Measure(**bad)


# -- the tools' definitions -----------------------------------------------------------------


def test_every_tool_rules_name_a_preset_and_declare_valid_choices():
    assert set(RULES) <= set(PRESETS)
    for rules in (*RULES.values(), DEFAULT):
        for choice, valid in CHOICES.items():
            assert getattr(rules, choice) in valid
        assert rules.notes or rules is DEFAULT
    with pytest.raises(ValueError, match="rbp_gain"):
        MeasureRules("x", "x", (Provider("x"),), (), rbp_gain="graded")


@pytest.mark.parametrize(
    ("preset", "name", "provider", "ties", "dtype", "decimals"),
    [
        ("trec_eval", "P@10", "trec_eval", "docid_desc", "float64", None),
        ("trec_eval9", "P@10", "trec_eval", "docid_desc", "float32", None),
        ("pytrec_eval", "map", "trec_eval", "docid_desc", "float32", None),
        ("ir_measures", "RR", "pytrec_eval", "docid_desc", "float32", None),
        ("ir_measures", "RR@10", "msmarco", "docid_asc", "float64", None),
        ("ir_measures", "Judged@10", "judged", "docid_asc", "float64", None),
        ("ir_measures", "ERR@10", "gdeval", "docid_desc", "float64", 5),
        ("ir_measures", "nDCG(dcg='exp-log2')@10", "gdeval", "docid_desc", "float64", 5),
        ("ir_measures", "nDCG@10", "pytrec_eval", "docid_desc", "float32", None),
        ("ir_measures", "RBP(rel=1)", "cwl_eval", "stable", "float64", None),
        ("ranx", "mrr@10", "ranx", "stable", "float64", None),
        ("gdeval", "ERR@20", "gdeval", "docid_desc", "float64", 5),
    ],
)
def test_each_measure_goes_to_the_provider_the_tool_uses(
    preset, name, provider, ties, dtype, decimals
):
    found = rules_of(preset).provider(parse_measure(name))
    assert (found.name, found.ties, found.score_dtype, found.decimals) == (
        provider,
        ties,
        dtype,
        decimals,
    )


@pytest.mark.parametrize(
    ("preset", "name"),
    [
        ("trec_eval", "RR@10"),  # trec_eval -M 10 -m recip_rank
        ("trec_eval", "ERR@20"),
        ("trec_eval", "Judged@10"),
        ("trec_eval", "ndcg_burges@10"),
        ("trec_eval9", "rbp"),  # 10.0 only
        ("trec_eval9", "unj.5"),
        ("ir_measures", "RBP"),  # cwl_eval needs rel
        ("ir_measures", "gm_map"),
        ("ir_measures", "unj.5"),
        ("ranx", "ERR@10"),
        ("ranx", "IPrec@0.3"),
        ("gdeval", "P@10"),
        ("gdeval", "ERR"),  # gdeval's k is required
    ],
)
def test_a_measure_the_tool_lacks_is_refused_under_its_preset(preset, name):
    rules = rules_of(preset)
    measure = parse_measure(name)
    assert not rules.has(measure)
    with pytest.raises(OptionError) as raised:
        rules.provider(measure)
    assert raised.value.option == "measures" and raised.value.where == f"preset {preset!r}"
    assert DEFAULT.has(measure)


def test_fastndcg_default_rules_take_the_call_s_settings():
    provider = DEFAULT.provider(parse_measure("P@10"))
    assert (provider.ties, provider.score_dtype) == (None, None)
    assert (DEFAULT.no_relevant, DEFAULT.missing) == (None, None)
    assert rules_of(None) is DEFAULT
    with pytest.raises(OptionError, match="defines NDCG only"):
        rules_of("sklearn")
    assert Route("P", "x", cutoff=True).takes(parse_measure("P@5"))
    assert not Route("P", "x", cutoff=True).takes(parse_measure("SetP"))


# -- trec_eval's layout ---------------------------------------------------------------------


def test_trec_eval_default_measures_are_its_official_ones():
    names = [m.trec_name() for m in trec_eval_measures()]
    assert names[:9] == [
        *("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref"),
        "recip_rank",
    ]
    assert len(names) == 9 + 11 + 9


def test_trec_eval_prints_in_its_table_order_and_its_formats():
    measures = parse_measures(["ERR@5", "P.10,5", "map", "num_ret", "gm_map", "recip_rank"])
    order = trec_eval_order(measures)
    assert [measures[j].trec_name() for j in order] == [
        *("num_ret", "map", "gm_map", "recip_rank", "P_5", "P_10", "ERR_5"),
    ]
    # ERR@5, P_5, P_10, map, num_ret, gm_map (the query's AP), recip_rank
    values = np.array(
        [
            [0.5, 0.2, 0.1, 0.25, 10, 0.25, 1.0],
            [0.25, 0.0, 0.0, 0.0, 3, 0.0, 0.5],
        ]
    )
    text = format_trec_eval(measures, ["q1", "q2"], values, run_id="sys", queries=True)
    lines = text.splitlines()
    assert lines[0] == "num_ret               \tq1\t10"
    assert "gm_map" not in "".join(lines[:12])  # printed in the summary only
    assert lines[5] == "ERR_5                 \tq1\t0.5000"
    assert lines[12] == "runid                 \tall\tsys"
    assert lines[13] == "num_ret               \tall\t13"
    assert lines[15] == f"gm_map                \tall\t{math.sqrt(0.25 * 1e-5):6.4f}"
    assert lines[-1] == "ERR_5                 \tall\t0.3750"
    assert text.endswith("\n") and len(lines) == 2 * 6 + 1 + 7
    assert lines[3] == "P_5                   \tq1\t0.2000"
    summary_only = format_trec_eval(measures, ["q1", "q2"], values).splitlines()
    assert summary_only == lines[13:]


def test_summaries_leave_skipped_queries_out():
    values = np.array([0.5, np.nan, 0.25])
    assert summarize(parse_measure("map"), values) == 0.375
    assert summarize(parse_measure("num_ret"), np.array([3.0, np.nan, 4.0])) == 7.0
    assert math.isnan(summarize(parse_measure("map"), np.array([np.nan])))
    assert summarize(parse_measure("gm_map"), np.array([0.0, 1.0])) == pytest.approx(
        math.sqrt(1e-5)
    )
