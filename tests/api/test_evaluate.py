"""fastndcg.evaluate and the measures engine: every measure and choice against the oracle, both
backends bit-identical, nDCG the bits of fastndcg.ndcg, the result, and the refusals."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest
import reference_measures as ref
from conftest import BACKENDS
from hypothesis import given
from hypothesis import strategies as st
from strategies import cutoffs, gain_option, gains, ideals, judged_lists, ragged, ties

import fastndcg
from fastndcg import _backends
from fastndcg._backends import register_backend
from fastndcg._backends.numpy import NumpyBackend
from fastndcg._core.definition import Definition
from fastndcg._core.layout import build_layout
from fastndcg._core.measures import Measure
from fastndcg._core.measures.definitions import DEFAULT
from fastndcg._core.measures.engine import Judged, Scoring, compute
from fastndcg._errors import BackendUnavailableError, InputError, OptionError, OptionTypeError

# every value of every choice, in three sets (the first: trec_eval's)
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
        "iprec_rounding": "plus_0.9",
        "gm_per_query": "log",
        "no_relevant": "skip",
    },
    {"rbp_gain": "binary", "no_relevant": "one"},
]


def measures_of(k: int, level: int, p: float, recall: float) -> list[Measure]:
    """Every kind the measure kernels compute, with and without a cutoff where it takes one."""
    out = [Measure("NumQ"), Measure("NumRel", rel=level), Measure("GMAP", rel=level)]
    for kind in ("NumRet", "NumRelRet", "AP", "RR", "P", "R", "Success", "F1", "Judged", "ERR"):
        out += [Measure(kind, rel=level), Measure(kind, cutoff=k, rel=level)]
    out += [Measure("Rprec", rel=level), Measure("Bpref", rel=level)]
    out += [Measure("Unjudged", cutoff=k), Measure("IPrec", rel=level, param=recall)]
    out += [Measure("RBP", rel=level, param=p), Measure("RBP", cutoff=k, rel=level, param=p)]
    out += [Measure("RBPResid", param=p)]
    return out


def engine_values(queries, measures, rules, backend, ties="stable", n_threads=None):
    """The engine's per-query values of TREC-like ``queries`` (see strategies.judged_lists)."""
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
    definition = Definition.create(ties=ties, seed=seed, backend=backend, n_threads=n_threads)
    with definition.threads():
        layout = build_layout(
            np.fmax(labels, 0.0), scores, offsets=offsets, backend=definition.backend
        )
        return compute(definition, rules, tuple(measures), 1, Scoring(layout, labels, judgments))


def oracle_values(queries, measures, choices):
    out = np.empty((len(queries), len(measures)))
    for q, (labels, unretrieved, scores) in enumerate(queries):
        order = sorted(range(len(labels)), key=lambda i: -scores[i])  # stable
        judged = [g for g in labels if g is not None] + unretrieved
        query = ref.Query([labels[i] for i in order], judged)
        for j, m in enumerate(measures):
            out[q, j] = ref.value(
                m.kind,
                query,
                cutoff=m.cutoff,
                level=1 if m.rel is None else m.rel,
                param=m.param,
                **choices,
            )
    return out


@pytest.mark.parametrize("choices", CHOICE_SETS)
@given(
    queries=judged_lists(),
    k=st.integers(1, 12),
    level=st.integers(0, 3),
    p=st.sampled_from([0.5, 0.8, 0.95]),
    recall=st.sampled_from([0.0, 0.3, 0.5, 1.0]),
)
def test_every_measure_and_choice_equals_the_oracle(choices, queries, k, level, p, recall):
    measures = measures_of(k, level, p, recall)
    rules = replace(DEFAULT, **choices)
    results = [engine_values(queries, measures, rules, backend) for backend in BACKENDS]
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])  # bit-identical backends
    expected = oracle_values(queries, measures, choices)
    np.testing.assert_allclose(results[0], expected, rtol=0, atol=1e-12, equal_nan=True)


@given(
    queries=judged_lists(max_len=30),
    k=st.integers(1, 6),
    tie_rule=st.sampled_from(["stable", "pessimistic", "optimistic", "random"]),
)
def test_measures_of_the_top_k_alone_rank_only_the_top_k(queries, k, tie_rule):
    """Cutoffs only: the Numba kernel selects the top k instead of sorting (same values)."""
    measures = [m for m in measures_of(k, 1, 0.8, 0.3) if m.cutoff is not None]
    measures.append(Measure("NumRel"))
    rules = replace(DEFAULT, no_relevant="zero")
    values = [
        engine_values(queries, measures, rules, backend, ties=tie_rule) for backend in BACKENDS
    ]
    for other in values[1:]:
        np.testing.assert_array_equal(other, values[0])
    if tie_rule == "stable":
        expected = oracle_values(queries, measures, {"no_relevant": "zero"})
        np.testing.assert_allclose(values[0], expected, rtol=0, atol=1e-12, equal_nan=True)


@st.composite
def mostly_distinct_scores(draw, max_queries=5, max_len=40):
    """``judged_lists``' queries with scores from a wide pool: the ties are few, and the Numba
    scoring kernel's short path ranks most queries' best rows (the others it leaves)."""
    queries = draw(judged_lists(max_queries=max_queries, max_len=max_len))
    return [
        (labels, unretrieved, [draw(st.integers(0, 60)) / 4.0 for _ in labels])
        for labels, unretrieved, _ in queries
    ]


@given(
    queries=mostly_distinct_scores(),
    k=st.integers(1, 30),
    ndcg_k=st.integers(1, 30),
    tie_rule=st.sampled_from(["stable", "pessimistic", "optimistic", "random"]),
)
def test_the_measures_read_the_ranking_ndcg_s_kernel_made(queries, k, ndcg_k, tie_rule):
    """With nDCG in the call, the other measures read the best rows its kernel ranked (where
    they hold no tie): the values are those of the measures computed alone, on every backend."""
    alone = [m for m in measures_of(k, 1, 0.8, 0.3) if m.cutoff is not None]
    alone.append(Measure("NumRel"))
    rules = replace(DEFAULT, no_relevant="zero")
    for backend in BACKENDS:
        expected = engine_values(queries, alone, rules, backend, ties=tie_rule)
        together = [Measure("nDCG", cutoff=ndcg_k), *alone]
        values = engine_values(queries, together, rules, backend, ties=tie_rule)
        np.testing.assert_array_equal(values[:, 1:], expected)
    if tie_rule == "stable":
        oracle = oracle_values(queries, alone, {"no_relevant": "zero"})
        np.testing.assert_allclose(expected, oracle, rtol=0, atol=1e-12, equal_nan=True)


def _ranked_there(shared):
    """Which queries the scoring kernel ranked for the measures (see SharedRanking)."""
    if shared.level_counts.size:
        return (shared.level_counts[:, 0] >= 0) | (shared.level_counts[:, 0] == -2)
    return shared.rows[:, 0] >= 0


ARRAY_MEASURES = ["nDCG@10", "P@10", "R@10", "RR@10", "AP@10", "Success@10", "ERR@10"]
ARRAY_MEASURES += ["P(rel=2)@5", "R(rel=3)@20", "RBP(p=0.8)@10", "NumRel", "Judged@10"]


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not available in this run")
@pytest.mark.parametrize(
    "grades",
    ["levels 0..4", "levels 0..7", "levels 0..11", "a 9 late", "fractions", "long lists"],
)
def test_arrays_share_their_labels_and_level_counts(monkeypatch, grades):
    """On arrays (every row judged), nDCG's kernel writes the labels of the best rows and each
    query's rows per grade level (0..7, where it counts every row): the measure kernel then reads
    no label of such a query. Its values and errors are those of the NumPy backend, bit for bit,
    on any grades: more levels, a grade outside the presumed ones late in the data (scored
    again), fractions (no levels), long lists (levels counted until the ideal is filled)."""
    from fastndcg._backends.numba import NumbaBackend

    handed = []
    measures = NumbaBackend.measures
    monkeypatch.setattr(
        NumbaBackend, "measures", lambda self, plan: handed.append(plan) or measures(self, plan)
    )
    rng = np.random.default_rng(len(grades))
    lengths = rng.integers(1, 60, 3000)
    if grades == "long lists":
        lengths[::7] = 1500
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    top = {"levels 0..4": 4, "levels 0..11": 11}.get(grades, 7)
    labels = rng.integers(0, top + 1, offsets[-1]).astype(np.float64)
    if grades == "a 9 late":
        labels[-5] = 9.0
    if grades == "fractions":
        labels /= 2.0
    scores = rng.standard_normal(offsets[-1]).astype(np.float32)
    names = [m for m in ARRAY_MEASURES if grades != "fractions" or not m.startswith("ERR")]
    options = dict(offsets=offsets, measures=names, ties="stable", zero_idcg="zero")
    try:
        expected = fastndcg.evaluate(labels, scores, backend="numpy", **options).per_query
    except InputError as exc:  # ERR's stopping probabilities take grades 0..4
        with pytest.raises(InputError, match=re.escape(str(exc))):
            fastndcg.evaluate(labels, scores, backend="numba", **options)
        assert grades != "levels 0..4"
        labels = np.minimum(labels, 4.0)
        expected = fastndcg.evaluate(labels, scores, backend="numpy", **options).per_query
        handed.clear()
    found = fastndcg.evaluate(labels, scores, backend="numba", **options).per_query
    np.testing.assert_array_equal(found, expected)
    shared = handed[-1].shared
    ranked = _ranked_there(shared)
    assert ranked.mean() > 0.9 or grades == "fractions"  # (no short path: the ideal sorts)
    counted = shared.level_counts[:, 0] >= 0
    # each ranked query's best rows, or where its levels are counted, their grades
    width = np.minimum(lengths, 10)
    for query in np.flatnonzero(ranked)[::7]:
        own = slice(offsets[query], offsets[query + 1])
        best = np.argsort(-scores[own], kind="stable")[: width[query]]  # (no tie among them)
        if counted[query]:
            np.testing.assert_array_equal(shared.grades[query, : width[query]], labels[own][best])
        else:
            np.testing.assert_array_equal(shared.rows[query, : width[query]], best)
    if grades == "fractions":
        assert not counted.any()
    else:
        assert counted.mean() > 0.7
        q = np.flatnonzero(counted)[:50]
        for query in q:
            own = labels[offsets[query] : offsets[query + 1]].astype(np.int64)
            np.testing.assert_array_equal(shared.level_counts[query], np.bincount(own, minlength=8))
    if grades == "long lists":
        assert not counted[lengths == 1500].any()


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not available in this run")
def test_the_ranking_is_shared_where_the_short_path_ranks(monkeypatch):
    """The measure kernel is handed nDCG's ranking for every query the short path ranked (no
    tie among the best rows; the scoring kernel ranks for the measures when no nDCG is asked),
    and the values do not depend on it nor on the thread count."""
    from fastndcg._backends.numba import NumbaBackend

    handed = []
    measures = NumbaBackend.measures
    monkeypatch.setattr(
        NumbaBackend, "measures", lambda self, plan: handed.append(plan) or measures(self, plan)
    )
    rng = np.random.default_rng(5)
    queries = []
    for q in range(20_000):  # past the rows the kernels split into chunks
        n = int(rng.integers(0, 40))
        labels = [None if g < 0 else int(g) for g in rng.integers(-1, 4, n)]
        scores = rng.permutation(n) / 2.0 if q % 3 else rng.integers(0, 4, n) / 2.0  # ties
        queries.append((labels, [1, 0], list(scores)))
    names = [Measure("nDCG", cutoff=10), Measure("P", cutoff=5), Measure("AP", cutoff=10)]
    names += [Measure("RR", cutoff=10), Measure("ERR", cutoff=10), Measure("R", cutoff=10)]
    one = engine_values(queries, names, DEFAULT, "numba", n_threads=1)
    ranked = _ranked_there(handed[-1].shared)
    lengths = np.array([len(q[0]) for q in queries])
    distinct = (np.arange(len(queries)) % 3 > 0) & (lengths > 0)
    assert ranked[distinct].all()  # every list without ties: ranked by nDCG's kernel
    assert ranked[~distinct].mean() < 0.5  # ties among the best: ranked again
    several = engine_values(queries, names, DEFAULT, "numba", n_threads=2)
    np.testing.assert_array_equal(several, one)
    np.testing.assert_array_equal(engine_values(queries, names, DEFAULT, "numpy"), one)
    alone = engine_values(queries, names[1:], DEFAULT, "numba", n_threads=1)
    np.testing.assert_array_equal(one[:, 1:], alone)
    assert _ranked_there(handed[-1].shared)[distinct].all()  # without nDCG: its kernel ranks


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not available in this run")
@pytest.mark.parametrize("tie_rule", ["stable", "random", "pessimistic"])
def test_whole_rankings_of_short_and_long_lists_agree_with_the_twin(tie_rule):
    """Whole rankings: counted up to 256 rows (ties by input order), merge-sorted beyond and
    under the other tie rules; the twin's stable sorts give the same values."""
    rng = np.random.default_rng(3)
    queries = []
    for n in (1, 2, 255, 256, 257, 600, 40, 300):
        labels = [None if g < 0 else int(g) for g in rng.integers(-1, 4, n)]
        queries.append((labels, [2], list(rng.integers(0, 30, n) / 4.0)))  # many ties
    names = [Measure("AP"), Measure("RR"), Measure("R", cutoff=100), Measure("Rprec")]
    names += [Measure("Bpref"), Measure("NumRelRet")]
    numba = engine_values(queries, names, DEFAULT, "numba", ties=tie_rule)
    np.testing.assert_array_equal(
        engine_values(queries, names, DEFAULT, "numpy", ties=tie_rule), numba
    )
    if tie_rule == "stable":
        expected = oracle_values(queries, names, {})
        np.testing.assert_allclose(numba, expected, rtol=0, atol=1e-12, equal_nan=True)


LINEAR = ("NumRet", "NumRelRet", "P", "R", "F1", "Judged", "Unjudged", "RBP", "NumQ", "NumRel")
LINEAR_WHOLE = ("Rprec", "RBPResid", "RR", "Success", "AP")  # some: their own formulas


def averaged_oracle(queries, measures, choices):
    """The oracle's mean over every order of each query's tied scores."""
    out = np.empty((len(queries), len(measures)))
    for q, (labels, unretrieved, scores) in enumerate(queries):
        run = {f"d{i}": score for i, score in enumerate(scores)}
        judgments = {f"d{i}": g for i, g in enumerate(labels) if g is not None}
        judgments.update({f"u{i}": g for i, g in enumerate(unretrieved)})
        orders = ref.every_order(run, judgments)
        for j, m in enumerate(measures):
            settings = dict(cutoff=m.cutoff, level=1 if m.rel is None else m.rel, param=m.param)
            out[q, j] = ref.expected_value(m.kind, orders, **settings, **choices)
    return out


@pytest.mark.parametrize("choices", CHOICE_SETS)
@given(
    queries=judged_lists(max_len=7),
    k=st.integers(1, 8),
    level=st.integers(0, 3),
    p=st.sampled_from([0.5, 0.8]),
)
def test_tie_averaging_of_the_linear_measures_equals_the_mean_over_every_order(
    choices, queries, k, level, p
):
    measures = [m for m in measures_of(k, level, p, 0.3) if m.kind in LINEAR + LINEAR_WHOLE]
    measures.append(Measure("Rprec", rel=level))
    rules = replace(DEFAULT, **choices)
    results = [
        engine_values(queries, measures, rules, backend, ties="average") for backend in BACKENDS
    ]
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])
    expected = averaged_oracle(queries, measures, choices)
    np.testing.assert_allclose(results[0], expected, rtol=0, atol=1e-12, equal_nan=True)


@given(queries=judged_lists(max_queries=3), tie_rule=st.sampled_from(["pessimistic", "random"]))
def test_backends_rank_every_tie_rule_alike(queries, tie_rule):
    measures = measures_of(5, 1, 0.8, 0.3)
    values = [
        engine_values(queries, measures, DEFAULT, backend, ties=tie_rule) for backend in BACKENDS
    ]
    for other in values[1:]:
        np.testing.assert_array_equal(other, values[0])


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not available in this run")
def test_bits_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(7)
    queries = []
    for _ in range(30_000):  # past the rows the kernel splits into chunks
        n = int(rng.integers(0, 12))
        labels = [None if g < 0 else int(g) for g in rng.integers(-1, 4, n)]
        queries.append((labels, [1, 0], list(rng.integers(0, 4, n) / 2.0)))
    measures = measures_of(10, 1, 0.8, 0.3)
    one = engine_values(queries, measures, DEFAULT, "numba", n_threads=1)
    several = engine_values(queries, measures, DEFAULT, "numba", n_threads=2)
    np.testing.assert_array_equal(one, several)
    np.testing.assert_array_equal(engine_values(queries, measures, DEFAULT, "numpy"), one)


@given(data=ragged(), k=cutoffs, gain=gains, ideal=ideals, tie_rule=ties)
def test_ndcg_in_evaluate_is_the_bits_of_ndcg(data, k, gain, ideal, tie_rule):
    offsets, grades, scores = data
    cuts = k if isinstance(k, list) else [k]
    names = [Measure("nDCG", cutoff=c) for c in cuts] + [Measure("DCG", cutoff=cuts[0])]
    options = {
        "gain": gain_option(gain),
        "ties": tie_rule,
        "seed": 3 if tie_rule == "random" else None,
    }
    if ideal == "global":
        options.update(ideal_grades=grades, ideal_offsets=offsets)
    options["ideal"] = ideal
    for backend in BACKENDS:
        try:
            expected = fastndcg.ndcg(
                grades, scores, offsets=offsets, k=cuts, backend=backend, **options
            )
        except (InputError, OptionError) as exc:
            with pytest.raises(type(exc)):
                fastndcg.evaluate(
                    grades, scores, offsets=offsets, measures=names, backend=backend, **options
                )
            continue
        result = fastndcg.evaluate(
            grades, scores, offsets=offsets, measures=names, backend=backend, **options
        )
        np.testing.assert_array_equal(result.per_query[:, :-1], expected.per_query)
        np.testing.assert_array_equal(result.per_query[:, -1], expected.dcg[:, 0])
        np.testing.assert_array_equal(result.mean[:-1], expected.mean)


# -- the entry point and the result ------------------------------------------------------------


def test_evaluate_reads_names_of_every_syntax_and_keeps_them():
    grades, scores = [2, 0, 1, 0, 1], [0.9, 0.8, 0.7, 0.6, 0.5]
    names = ["P@2", "P.2,4", "precision@2", "map", "RR", "mrr", "ndcg_cut_3", "nDCG@3"]
    result = fastndcg.evaluate(grades, scores, measures=names, ties="stable", gain="linear")
    assert result.measures == ("P@2", "P_2", "P_4", "precision@2", "map", "RR", "mrr",
                               "ndcg_cut_3", "nDCG@3")  # fmt: skip
    assert result["P@2"] == result["P_2"] == result["precision@2"] == 0.5
    assert result["P_4"] == 0.5
    assert result["map"] == result["mrr"] * 0 + (1 + 2 / 3 + 3 / 5) / 3
    assert result["RR"] == result["mrr"] == 1.0
    assert result["ndcg_cut_3"] == result["nDCG@3"]
    frame = result.to_pandas()
    assert list(frame.columns) == ["query_id", *result.measures]
    table = result.to_arrow()
    assert table.column_names == ["query_id", *result.measures]
    assert table.column("map").to_pylist() == [result["map"]]
    with pytest.raises(KeyError, match="P@3"):
        result["P@3"]
    assert "MeasuresResult(n_queries=1" in repr(result)


def test_evaluate_groups_rows_by_query_and_summarises():
    qid = ["b", "a", "b", "a", "c"]
    grades = [1, 0, 0, 2, 0]
    scores = [0.1, 0.9, 0.8, 0.2, 0.5]
    result = fastndcg.evaluate(
        grades, scores, qid=qid, measures=["P@1", "R@2", "num_rel"], ties="stable"
    )
    assert list(result.query_ids) == ["b", "a", "c"]
    np.testing.assert_array_equal(result.per_query[:, 0], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(result.per_query[:, 1], [1.0, 1.0, np.nan])  # c: skipped
    assert list(result.n_skipped) == [0, 1, 0]
    assert result["R@2"] == 1.0 and result["num_rel"] == 2.0  # a count is summed
    zero = fastndcg.evaluate(
        grades, scores, qid=qid, measures=["R@2"], ties="stable", zero_idcg="zero"
    )
    assert zero["R@2"] == pytest.approx(2 / 3)


def test_relevance_level_and_the_names_own_level():
    grades, scores = [2, 1, 0], [0.9, 0.8, 0.7]
    result = fastndcg.evaluate(
        grades, scores, measures=["P@2", "P(rel=1)@2"], relevance_level=2, ties="stable"
    )
    assert list(result.mean) == [0.5, 1.0]
    assert result.options["relevance_level"] == 2


def test_the_callers_data_is_not_modified():
    grades = np.array([2.0, 0.0, 1.0])
    scores = np.array([0.1, 0.3, 0.2])
    before = grades.copy(), scores.copy()
    fastndcg.evaluate(grades, scores, measures=["AP", "nDCG@2", "ERR@2"], ties="stable")
    np.testing.assert_array_equal(grades, before[0])
    np.testing.assert_array_equal(scores, before[1])


def test_a_preset_gives_its_tools_choices():
    # ranx: bpref NaN without a judged non-relevant document; trec_eval: 1 per relevant
    grades, scores = [1, 1], [0.9, 0.8]
    assert math.isnan(fastndcg.evaluate(grades, scores, measures=["bpref"], preset="ranx").mean[0])
    trec = fastndcg.evaluate(grades, scores, measures=["bpref"], preset="trec_eval", ties="stable")
    assert trec["bpref"] == 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_bpref_caps_its_penalty_where_the_judgment_list_lacks_non_relevant_rows(backend):
    """Judged non-relevant rows rank above a relevant one, but the judgment list holds fewer
    non-relevant judgments (N) than rank above it, none at all in the first case: the penalty
    min(above, R) / min(N, R) is taken as 1, so that term is 0 (it was a ZeroDivisionError in
    the Numba kernel and -inf in the NumPy one for N = 0, and below 0 for 0 < N < above)."""
    cases = [
        ([0, 0, 1, 2], [1.5, -0.7, 0.8, 1.7], [1, 2, 1, 4, 2, 2], 1 / 6),  # N = 0, R = 6
        ([0, 0, 1], [0.9, 0.8, 0.7], [0, 1, 1, 1], 0.0),  # N = 1, two above, R = 3
    ]
    for grades, scores, judged, expected in cases:
        lists = dict(ideal="global", ideal_grades=judged, ideal_offsets=[0, len(judged)])
        options = dict(ties="stable", backend=backend, **lists)
        result = fastndcg.evaluate(grades, scores, measures=["bpref"], **options)
        assert result["bpref"] == pytest.approx(expected, abs=1e-15)
        explained = fastndcg.explain(grades, scores, measure="bpref", **options)
        assert sum(row["share"] for row in explained.rows) == pytest.approx(expected, abs=1e-15)


# -- refusals --------------------------------------------------------------------------------


def test_unknown_names_name_the_nearest_valid_ones():
    with pytest.raises(OptionError, match="ndcg@10") as info:
        fastndcg.evaluate([1, 0], [0.2, 0.1], measures=["ndgc@10"])
    assert info.value.option == "measures"
    with pytest.raises(OptionTypeError):
        fastndcg.evaluate([1, 0], [0.2, 0.1], measures=[10])


@pytest.mark.parametrize("name", ["gm_map", "ERR@10", "bpref", "IPrec@0.5", "iprec_at_recall.0.3"])
def test_tie_averaging_is_refused_for_measures_that_need_an_order(name):
    with pytest.raises(OptionError, match="tie order") as info:
        fastndcg.evaluate([1, 0], [0.2, 0.1], measures=["nDCG@2", name])
    assert info.value.option == "ties"


def test_tie_averaging_of_precision():
    """Two of four tied documents are relevant: P@1 is 1/2 in the mean over the orders."""
    result = fastndcg.evaluate([1, 0, 1, 0], [0.5] * 4, measures=["P@1", "P@4", "nDCG@1"])
    assert list(result.mean[:2]) == [0.5, 0.5]
    assert result.mean[2] == float(fastndcg.ndcg([1, 0, 1, 0], [0.5] * 4, k=1))


def test_a_preset_refuses_what_its_tool_lacks():
    with pytest.raises(OptionError, match="gdeval") as info:
        fastndcg.evaluate([1, 0], [0.2, 0.1], measures=["P@10"], preset="gdeval")
    assert "P@10" in str(info.value)


def test_err_refuses_grades_above_its_maximum():
    with pytest.raises(InputError, match="row 1 has 5"):
        fastndcg.evaluate([1, 5], [0.2, 0.1], measures=["ERR@2"], ties="stable")


@pytest.mark.parametrize(("level", "error"), [(-1, OptionError), ("1", OptionTypeError)])
def test_relevance_level_is_checked(level, error):
    with pytest.raises(error) as info:
        fastndcg.evaluate([1], [0.1], measures=["P@1"], relevance_level=level, ties="stable")
    assert info.value.option == "relevance_level"


class _NDCGOnly(NumpyBackend):
    """A backend without the measure kernels, as the CUDA backend is."""

    name = "ndcg_only"
    measures = None  # type: ignore[assignment]


def test_a_backend_without_the_measure_kernels_refuses_them(monkeypatch):
    monkeypatch.setattr(_backends, "_REGISTRY", dict(_backends._REGISTRY))
    monkeypatch.setattr(_backends, "_LOADED", dict(_backends._LOADED))
    register_backend("ndcg_only", _NDCGOnly, automatic=False, missing="nothing")
    grades, scores = [1, 0], [0.2, 0.1]
    assert fastndcg.evaluate(grades, scores, measures=["nDCG@2"], backend="ndcg_only")["nDCG@2"]
    with pytest.raises(BackendUnavailableError, match="backend='numba'") as info:
        fastndcg.evaluate(grades, scores, measures=["P@2"], backend="ndcg_only", ties="stable")
    assert info.value.option == "backend"


def test_zero_idcg_error_is_about_the_measures_dividing_by_r():
    grades, scores = [0, 0], [0.2, 0.1]
    assert fastndcg.evaluate(grades, scores, measures=["DCG@2"], zero_idcg="error")["DCG@2"] == 0
    for name in ("nDCG@2", "AP"):
        with pytest.raises(InputError, match="no relevant"):
            fastndcg.evaluate(grades, scores, measures=[name], zero_idcg="error", ties="stable")


@pytest.mark.parametrize(
    ("option", "error"),
    [({"weights": [1.0]}, OptionTypeError), ({"decimals": 4}, OptionTypeError),
     ({"aggregate": "ratio"}, OptionError), ({"aggregate": "lightgbm"}, OptionError),
     ({"zero_idcg": "never"}, OptionError), ({"colour": 1}, OptionTypeError)],
)  # fmt: skip
def test_options_the_measures_do_not_take_are_refused(option, error):
    with pytest.raises(error) as info:
        fastndcg.evaluate([1, 0], [0.2, 0.1], measures=["P@1"], ties="stable", **option)
    assert info.value.option == next(iter(option))


def test_rows_in_ranked_order_need_no_tie_rule():
    result = fastndcg.evaluate([0, 2, 1], measures=["RR", "P@2", "nDCG@3"], gain="linear")
    assert result["RR"] == 0.5 and result["P@2"] == 0.5
    assert result.options["ties"] == "ranked input"
    expected = fastndcg.ndcg([0, 2, 1], k=3, gain="linear")
    assert result["nDCG@3"] == float(expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_run_scores_every_judged_query_as_an_empty_ranking(backend):
    import pyarrow as pa

    qrels = pa.table({"qid": ["1", "1", "2"], "docid": ["a", "b", "c"], "grade": [1, 0, 2]})
    run = pa.table(
        {
            "qid": pa.array([], pa.string()),
            "docid": pa.array([], pa.string()),
            "score": pa.array([], pa.float64()),
        }
    )
    names = ["map", "P@5", "nDCG@5", "num_rel", "num_q"]
    result = fastndcg.evaluate_run(
        qrels, run, measures=names, preset="trec_eval", missing="zero", backend=backend
    )
    assert list(result.query_ids) == ["1", "2"]
    assert result.per_query.tolist() == [[0.0, 0.0, 0.0, 1.0, 1.0]] * 2
    assert result.n_missing == 2
