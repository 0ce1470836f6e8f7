"""ndcg_run on TREC files and tables: joins, missing and unjudged queries, docid ties, errors."""

from __future__ import annotations

import gzip
import itertools
import json
import re
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest
from conftest import NUMBA_BLOCKED, TEST_DATA
from reference import Item, reference_ndcg

import fastndcg
from fastndcg._errors import InputError
from fastndcg._io import trec_text
from fastndcg.trec import read_qrels, read_run

TREC = TEST_DATA / "real" / "trec_eval_test"


def trec_eval_values(path, measure):
    """Per-query values of ``measure`` in one of trec_eval's expected outputs (4 decimals)."""
    values = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split()
        if name == measure and qid != "all":
            values[qid] = float(value)
    return values


def reference_run(qrels_path, run_path, k, missing="zero"):
    """The oracle on a TREC pair of files (see :func:`reference_join`)."""
    judgments = []
    for line in qrels_path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            qid, _, doc, grade = line.split()[:4]
            judgments.append((qid, doc, float(grade)))
    run = []
    for line in run_path.read_text().splitlines():
        qid, _, doc, _, score = line.split()[:5]
        run.append((qid, doc, float(score)))
    return reference_join(judgments, run, k, missing)


def reference_join(judgments, run, k, missing="zero"):
    """The oracle on (qid, docid, grade) and (qid, docid, score) rows: docid-descending ties,
    linear gain, ideal from all judgments."""
    judged = {}
    for qid, doc, grade in judgments:
        judged.setdefault(qid, {})[doc] = max(grade, 0.0)
    runs = {}
    for qid, doc, score in run:
        runs.setdefault(qid, []).append((doc, score))
    qids = [q for q in runs if q in judged] + (
        [q for q in judged if q not in runs] if missing == "zero" else []
    )
    queries, ideal, keys, row = [], [], {}, 0
    for q in qids:
        items = []
        for doc, score in runs.get(q, []):
            items.append(Item(row, judged[q].get(doc, 0.0), score))
            keys[row] = tuple(-b for b in doc.encode())  # ascending key = descending bytes
            row += 1
        queries.append(items)
        ideal.append(list(judged[q].values()))
    key = [keys[r] + (1,) * 200 for r in range(row)]  # pad above -0: "a\x00" > "a" > ""
    result = reference_ndcg(
        queries,
        k=k,
        gain="linear",
        ideal="global",
        ideal_lists=ideal,
        ties="key",
        tie_key=key,
        zero_idcg="zero",
    )
    return qids, result


@pytest.mark.parametrize(
    ("qrels", "run", "out"),
    [
        ("qrels.test", "results.test", "out.test.aq"),
        ("qrels.comment.test", "results.comment.test", "out.comment.test"),
    ],
)
def test_real_runs_against_reference_and_trec_eval(backend, qrels, run, out):
    k = (5, 10, 100, None)
    result = fastndcg.ndcg_run(
        TREC / qrels,
        TREC / run,
        k=list(k),
        gain="linear",
        ties="docid_desc",
        zero_idcg="zero",
        backend=backend,
    )
    qids, expected = reference_run(TREC / qrels, TREC / run, k)
    assert list(result.query_ids) == qids
    np.testing.assert_allclose(result.per_query, np.array(expected.ndcg), rtol=1e-12, atol=1e-12)
    trec_eval = trec_eval_values(TREC / out, "ndcg")  # trec_eval 10's own output, 4 decimals
    for q, value in trec_eval.items():
        assert round(result.per_query[qids.index(q), 3], 4) == value, q


def test_missing_queries_and_the_c_flag(backend):
    truncated = fastndcg.ndcg_run(
        TREC / "qrels.test",
        TREC / "results.trunc",
        gain="linear",
        ties="docid_desc",
        zero_idcg="zero",
        missing="zero",
        backend=backend,
    )
    assert truncated.n_missing == 1 and truncated.n_queries == 3
    assert round(float(truncated), 4) == trec_eval_values_all(TREC / "out.test.aqc", "ndcg")
    skipped = fastndcg.ndcg_run(
        TREC / "qrels.test", TREC / "results.trunc", gain="linear", missing="skip", backend=backend
    )
    assert skipped.n_queries == 2 and skipped.n_missing == 1
    for preset in (None, *fastndcg.presets()):  # the default, whatever the preset
        options = {} if preset is None else {"preset": preset}
        with pytest.raises(InputError) as raised:
            fastndcg.ndcg_run(TREC / "qrels.test", TREC / "results.trunc", **options)
        assert str(raised.value) == (
            "1 judged query is not in the run (first: '302'); pass missing='zero' to score them 0 "
            "(trec_eval -c) or missing='skip' to leave them out (trec_eval without -c)"
        )
        assert raised.value.value == "302" and raised.value.where == "query '302'"


def test_a_missing_query_scores_zero_unless_its_ideal_is_empty(backend):
    """missing="zero" ranks nothing for an absent query: NDCG 0 against the judgments' ideal;
    with the ideal taken from the (empty) ranking, its IDCG is 0 and zero_idcg decides."""
    qrels = pa.table({"qid": ["a", "a", "b"], "docid": ["x", "y", "z"], "grade": [1, 0, 2]})
    run = pa.table({"qid": ["a", "a"], "docid": ["x", "y"], "score": [0.5, 0.7]})
    by_ideal = {}
    for ideal, zero_idcg in [("global", "skip"), ("recall", "skip"), ("recall", "zero")]:
        result = fastndcg.ndcg_run(
            qrels, run, ideal=ideal, zero_idcg=zero_idcg, k=[None], missing="zero", backend=backend
        )
        assert list(result.query_ids) == ["a", "b"] and result.n_missing == 1
        by_ideal[ideal, zero_idcg] = result
    assert by_ideal["global", "skip"].per_query[1, 0] == 0.0
    assert by_ideal["global", "skip"].n_skipped[0] == 0
    assert np.isnan(by_ideal["recall", "skip"].per_query[1, 0])
    assert by_ideal["recall", "skip"].n_skipped[0] == 1
    assert by_ideal["recall", "zero"].per_query[1, 0] == 0.0
    query_a = 1 / np.log2(3) / (1 / np.log2(2))  # the judged document ranked second
    for result in by_ideal.values():
        assert result.per_query[0, 0] == pytest.approx(query_a, rel=1e-15)


def trec_eval_values_all(path, measure):
    for line in path.read_text().splitlines():
        name, qid, value = line.split()
        if name == measure and qid == "all":
            return float(value)
    raise KeyError(measure)


def test_comments_tabs_and_trailing_fields_are_read():
    plain = read_qrels(TREC / "qrels.test")
    commented = read_qrels(TREC / "qrels.test.with-comments")
    assert commented.num_rows == plain.num_rows  # the three '#' lines are comments...
    assert "CR#93E-1860" in commented.column("docid").to_pylist()  # ...a '#' inside a docid is not
    run = read_run(TREC / "results.test")  # tab-separated, padded scores
    assert run.schema.names == ["qid", "docid", "score"] and run.num_rows == 1500
    assert read_run(TREC / "results.trunc").num_rows > 0  # lines with text after the tag


@pytest.mark.parametrize("separator", [" ", "\t"])
def test_regular_files_take_arrows_reader(tmp_path, monkeypatch, separator):
    """Files with one space or one tab between fields are read by pyarrow's CSV reader, to the
    same table as line by line; irregular lines past the sniffed head fall back to that."""
    lines = [separator.join((f"q{i // 7}", "0", f"d{i}", str(i % 3))) for i in range(20_000)]
    regular = tmp_path / "regular.qrels"
    regular.write_text("\n".join(lines) + "\n")
    mixed = tmp_path / "mixed.qrels"  # past the 64 KiB sniffed: other separators, a comment
    mixed.write_text("\n".join(lines) + "\nq9  0 x\t2\n# the end\n")
    expected = trec_text._read_loose(
        regular, "qrels", trec_text.QRELS_COLUMNS, ["qid", "docid", "grade"], {}
    )
    assert expected.num_rows == 20_000
    with monkeypatch.context() as patched:
        patched.setattr(trec_text, "_read_loose", None)  # any line-by-line read would fail
        table = read_qrels(regular)
    assert table.column("docid").to_pylist() == expected.column("docid").to_pylist()
    assert table.column("grade").to_pylist() == [float(i % 3) for i in range(20_000)]
    table = read_qrels(mixed)
    assert table.num_rows == 20_001 and table.column("docid")[-1].as_py() == "x"


def test_tables_unjudged_documents_and_negative_judgments(backend):
    qrels = pa.table(
        {"qid": ["a", "a", "a", "b"], "docid": ["d1", "d2", "d3", "d9"], "grade": [2, -1, 1, 1]}
    )
    run = pa.table(
        {
            "qid": ["a", "a", "a", "c"],
            "docid": ["d2", "d4", "d1", "d1"],
            "score": [0.9, 0.8, 0.7, 0.5],
        }
    )
    result = fastndcg.ndcg_run(
        qrels, run, gain="linear", k=[3], backend=backend, missing="zero", zero_idcg="zero"
    )
    assert list(result.query_ids) == ["a", "b"] and result.n_unjudged == 1 and result.n_missing == 1
    # a: ranking d2 (judged non-relevant: 0), d4 (unjudged: 0), d1 (2); ideal 2, 1, 0
    expected = (2 / np.log2(4)) / (2 + 1 / np.log2(3))
    assert result.per_query[0, 0] == pytest.approx(expected, rel=1e-14)
    assert result.per_query[1, 0] == 0.0
    judged = fastndcg.ndcg_run(
        qrels, run, gain="linear", k=[3], judged_only=True, backend=backend, missing="skip"
    )
    # judged_only keeps d1 alone: d4 is unjudged and d2's negative grade means "in the pool,
    # not judged", which trec_eval's -J also removes (tests/test_parity_trec.py checks -J)
    assert judged.per_query[0, 0] == pytest.approx(2 / (2 + 1 / np.log2(3)), rel=1e-14)


@pytest.mark.parametrize(
    ("query", "cut"),
    [
        ("a", {}),  # judged
        ("c", {}),  # without judgments
        # the NaN row cut away, or rows before it removed (the row named is still the run's)
        ("a", {"max_docs": 2, "ties": "stable"}),
        ("c", {"max_docs": 2, "ties": "docid_desc"}),
        ("a", {"judged_only": True}),
        ("c", {"judged_only": True}),  # a row left out as unjudged is checked too
    ],
)
def test_a_nonfinite_score_names_its_run_row(backend, query, cut):
    qrels = pa.table({"qid": ["a", "a"], "docid": ["d1", "d3"], "grade": [1, 0]})
    run = pa.table(
        {"qid": ["a", "a", query], "docid": ["d1", "d2", "d3"], "score": [0.5, 0.4, np.nan]}
    )
    with pytest.raises(ValueError, match="scores has a NaN value at run row 2"):
        fastndcg.ndcg_run(qrels, run, backend=backend, **cut)


@pytest.mark.parametrize("header", ["", "# a comment\n\n"])  # fast reader / line reader
@pytest.mark.parametrize("cut", [{}, {"max_docs": 2, "ties": "stable"}, {"judged_only": True}])
def test_a_nonfinite_value_in_a_file_names_its_line(tmp_path, backend, header, cut):
    qrels = tmp_path / "qrels"
    qrels.write_text(header + "a 0 d1 1\na 0 d3 0\n")
    run = tmp_path / "run"
    run.write_text(header + "a Q0 d1 1 0.5 t\na Q0 d2 2 0.4 t\na Q0 d3 3 nan t\n")
    line = header.count("\n") + 3
    with pytest.raises(
        ValueError, match=re.escape(f"scores has a NaN value at line {line} of {run};")
    ):
        fastndcg.ndcg_run(qrels, run, backend=backend, **cut)
    qrels.write_text(header + "a 0 d1 1\na 0 d3 inf\n")
    line = header.count("\n") + 2
    with pytest.raises(
        ValueError, match=re.escape(f"grade has an infinite value at line {line} of {qrels};")
    ):
        fastndcg.ndcg_run(qrels, run, backend=backend, **cut)


@pytest.mark.parametrize(("grade", "kind"), [(np.nan, "a NaN"), (np.inf, "an infinite")])
def test_a_nonfinite_grade_names_its_qrels_row(backend, grade, kind):
    qrels = pa.table({"qid": ["a", "b", "a"], "docid": ["d1", "d1", "d3"], "grade": [1, 2, grade]})
    run = pa.table({"qid": ["a", "a"], "docid": ["d1", "d3"], "score": [0.5, 0.4]})
    with pytest.raises(ValueError, match=f"qrels grade has {kind} value at qrels row 2"):
        fastndcg.ndcg_run(qrels, run, backend=backend)


def rows_table(rows, names):
    return pa.table(dict(zip(names, zip(*rows, strict=True), strict=True)))


def first_ranked_by_sorting(run_rows, max_docs, ties, score_dtype):
    """The oracle's cut: each query's rows sorted by (score as held, descending; tie order),
    the first ``max_docs`` kept, in run order."""
    held = np.float32 if score_dtype == "float32" else np.float64
    by_query = {}
    for row, (qid, doc, score) in enumerate(run_rows):
        tie = (*(-b for b in doc.encode()), 1) if ties == "docid_desc" else (row,)
        by_query.setdefault(qid, []).append(((-float(held(score)), tie), row))
    kept = {row for ranked in by_query.values() for _, row in sorted(ranked)[:max_docs]}
    return [r for row, r in enumerate(run_rows) if row in kept]


@pytest.mark.parametrize(
    ("tied", "score_dtype"),
    [((0.0, -0.0), "float64"), ((1.0, 1.0 + 1e-12), "float32"), ((2.5, 2.5), "float64")],
)
@pytest.mark.parametrize("cut", [{}, {"max_docs": 1}])
def test_trec_eval_ties_in_a_query_among_queries_without(backend, tied, score_dtype, cut):
    """Query "a" ties its two documents (0.0 and -0.0 are equal; scores apart by less than
    float32 resolution are equal when held as float32): the larger id, "d2", ranks first, so
    the relevant "d1" is second. Only queries with a tie have their ids sorted (Numba): the
    untied queries around it must not hide the tie."""
    run = pa.table(
        {
            "qid": ["b", "b", "a", "a", "c"],
            "docid": ["x9", "x1", "d1", "d2", "y1"],
            "score": [0.3, 0.2, tied[0], tied[1], 0.7],
        }
    )
    qrels = pa.table({"qid": ["a", "b", "c"], "docid": ["d1", "x1", "y1"], "grade": [1, 1, 1]})
    result = fastndcg.ndcg_run(
        qrels, run, k=[1, 2], ties="docid_desc", score_dtype=score_dtype, backend=backend, **cut
    )
    second = 1 / np.log2(3)  # the relevant document at rank 2
    expected = [[0.0, second], [0.0, second], [1.0, 1.0]]  # b, a, c
    if cut:  # only each query's first document is kept; the ideal is not cut
        expected = [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    np.testing.assert_allclose(result.per_query, expected, rtol=1e-15)


@pytest.mark.parametrize("score_dtype", ["float64", "float32"])
@pytest.mark.parametrize("ties", ["docid_desc", "stable"])
@pytest.mark.parametrize("seed", range(3))
def test_max_docs_keeps_each_querys_first_ranked_rows(backend, seed, ties, score_dtype):
    """max_docs scores what remains of the run once each query is sorted and cut: long and
    short queries, interleaved, with many scores tied at the cut (and scores apart by less than
    float32 resolution), ids in and out of the judgments."""
    rng = np.random.default_rng(seed)
    run_rows = []
    for q in range(30):
        n = int(rng.choice([1, 5, 40, 300]))
        levels = rng.integers(1, 6)  # few distinct scores: long tie groups
        scores = rng.integers(0, levels, n) + rng.choice([0.0, 1e-12], n)
        docs = rng.choice(100_000, n, replace=False)
        run_rows += [(f"q{q}", f"d{d}", float(x)) for d, x in zip(docs, scores, strict=True)]
    order = rng.permutation(len(run_rows))
    order[: len(order) // 2].sort()  # half the rows grouped by query, the rest shuffled
    run_rows = [run_rows[i] for i in order]
    judgments = [(qid, doc, int(rng.integers(-1, 4))) for qid, doc, _ in run_rows[::3]]
    qrels = rows_table(judgments, ("qid", "docid", "grade"))
    for max_docs in (1, 7, 40, 299, 301, 2**70):  # the last: more than a machine integer
        options = dict(k=[5, None], ties=ties, score_dtype=score_dtype, backend=backend)
        result = fastndcg.ndcg_run(
            qrels,
            rows_table(run_rows, ("qid", "docid", "score")),
            max_docs=max_docs,
            **options,
        )
        cut = first_ranked_by_sorting(run_rows, max_docs, ties, score_dtype)
        expected = fastndcg.ndcg_run(qrels, rows_table(cut, ("qid", "docid", "score")), **options)
        # the cut run can list its queries in another order (a query's first row cut away)
        place = {q: i for i, q in enumerate(expected.query_ids)}
        assert sorted(place) == sorted(result.query_ids)
        order = [place[q] for q in result.query_ids]
        np.testing.assert_array_equal(result.per_query, expected.per_query[order])


@pytest.mark.parametrize(
    ("qid", "docid", "pair", "again"),
    [
        (["a", "a"], ["d1", "d1"], "document 'd1' of query 'a'", 1),
        # queries interleaved (grouped by a row order), the repeat in a later run of rows
        (
            ["a", "b", "c", "b", "a"],
            ["d1", "d2", "d3", "d4", "d1"],
            "document 'd1' of query 'a'",
            4,
        ),
        (
            ["a", "b", "c", "b", "a"],
            ["d1", "d2", "d3", "d2", "d5"],
            "document 'd2' of query 'b'",
            3,
        ),
    ],
)
def test_duplicate_pairs_are_errors(qid, docid, pair, again, backend, tmp_path):
    qrels = pa.table({"qid": qid, "docid": docid, "grade": list(range(len(qid)))})
    run = pa.table({"qid": ["a"], "docid": ["d1"], "score": [0.5]})
    with pytest.raises(
        ValueError, match=f"qrels lists {pair} more than once .again at qrels row {again}."
    ):
        fastndcg.ndcg_run(qrels, run, backend=backend)
    # in a file, the repeat is named by its line (comments and blank lines counted)
    lines = [f"{q} 0 {d} {g}\n" for q, d, g in zip(qid, docid, range(len(qid)), strict=True)]
    path = tmp_path / "judged.qrels"
    path.write_text("# judgments\n\n" + "".join(lines))
    with pytest.raises(
        ValueError,
        match=f"{pair} more than once .again at line {again + 3} of {re.escape(str(path))}.",
    ):
        fastndcg.ndcg_run(path, run, backend=backend)
    qrels = pa.table({"qid": ["a"], "docid": ["d1"], "grade": [1]})
    run = tmp_path / "twice.run"
    run.write_text("a Q0 d1 1 0.5 x\na Q0 d2 2 0.4 x\na Q0 d1 3 0.3 x\n")
    with pytest.raises(
        ValueError,
        match=f"run lists document 'd1' of query 'a' more than once .again at line 3 of {re.escape(str(run))}.",
    ):
        fastndcg.ndcg_run(qrels, run, backend=backend)


def test_the_first_repeated_run_row_is_reported(backend):
    """Long lists (hash tables with collisions): the error names the document of the first run
    row that repeats one before it in its query, whatever the backend."""
    rng = np.random.default_rng(3)
    qids, docids = [], []
    for q in range(40):
        for d in rng.choice(5000, 300, replace=False):
            qids.append(f"q{q}")
            docids.append(f"d{d}")
    qids.insert(7000, "q23")  # q23 holds rows 6900-7199: repeat its 51st document late
    docids.insert(7000, docids[6950])
    qids.insert(7100, "q23")  # then its 6th, whose document code is smaller
    docids.insert(7100, docids[6905])
    qids.insert(9000, "q30")  # and a later repeat in another query
    docids.insert(9000, docids[9010])
    run = pa.table({"qid": qids, "docid": docids, "score": rng.random(len(qids))})
    qrels = pa.table({"qid": qids[:500], "docid": docids[:500], "grade": [1] * 500})
    with pytest.raises(
        ValueError, match=f"run lists document '{docids[6950]}' of query 'q23' .* run row 7000\\)"
    ):
        fastndcg.ndcg_run(qrels, run, backend=backend)


def test_bad_files(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1\n")
    with pytest.raises(
        ValueError,
        match=r"line 1: a TREC run line has 6 fields \(qid Q0 docid rank score tag\); found 4",
    ):
        read_run(bad)
    with pytest.raises(FileNotFoundError, match="run file not found"):
        read_run(tmp_path / "nope")
    with pytest.raises(
        KeyError, match="the qrels table needs columns qid, docid, grade; 'grade' is missing"
    ):
        read_qrels(pa.table({"qid": ["a"], "docid": ["d"]}))
    with pytest.raises(ValueError, match="unknown missing='drop'"):
        fastndcg.ndcg_run(TREC / "qrels.test", TREC / "results.test", missing="drop")


def test_file_errors_name_the_line(tmp_path):
    """Bad values name their file line (comments and blank lines counted); a qrels line with
    text after its grade is malformed, as in trec_eval, while a run line may carry it."""
    run = tmp_path / "bad.run"
    run.write_text("# a comment\nq1 Q0 d1 1 0.5 tag\n\nq1 Q0 d2 2 high tag\nq1 Q0 d3 3 x tag\n")
    with pytest.raises(
        ValueError,
        match=r"bad.run, line 4: the score field must be a number; found 'high'",
    ):
        read_run(run)
    qrels = tmp_path / "bad.qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 2 # relevant\n")
    with pytest.raises(
        ValueError,
        match=r"bad.qrels, line 2: a TREC qrels line has 4 fields \(qid iteration docid grade\); "
        r"found 6: 'q1 0 d2 2 # relevant'",
    ):
        read_qrels(qrels)
    qrels.write_text("q1 0 d1 1\nq1 0 d2 one\n")
    with pytest.raises(ValueError, match=r"line 2: the grade field must be a number; found 'one'"):
        read_qrels(qrels)
    run.write_text("q1 Q0 d1 1 0.5 tag and more\nq1 Q0 d2 2 0.25 tag\n")
    assert read_run(run).column("score").to_pylist() == [0.5, 0.25]


def test_derived_runs_match_the_predictions_files(backend):
    """The same LightGBM predictions as Parquet rows and as a TREC run give the same values."""
    folder = TEST_DATA / "derived" / "lgb_mq2008"
    table = fastndcg.ndcg_parquet(
        folder / "predictions.parquet",
        grade="label",
        k=[5, 10],
        ties="stable",
        ideal="recall",
        zero_idcg="zero",
        backend=backend,
    )
    run = fastndcg.ndcg_run(
        folder / "qrels.revpad.txt",
        folder / "run.revpad.txt",
        k=[5, 10],
        ties="docid_desc",
        gain="exp2",
        ideal="recall",
        zero_idcg="zero",
        backend=backend,
    )
    assert list(map(str, table.query_ids)) == list(run.query_ids)
    np.testing.assert_allclose(run.per_query, table.per_query, rtol=1e-12)


@pytest.mark.parametrize("missing", ["skip", "zero"])
@pytest.mark.parametrize("seed", range(4))
def test_join_matches_a_plain_merge_on_shuffled_tables(backend, seed, missing):
    """Run and judgment rows in any order, judgments for documents in and out of the run,
    unjudged queries, judged queries missing from the run; the run as given, without its
    unjudged queries (no row is dropped), and with categorical (dictionary) query ids."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    run_rows = [
        (f"q{q}", f"d{d}", float(rng.integers(0, 4)))
        for q in range(12)
        for d in rng.choice(40, rng.integers(0, 15), replace=False)
    ]
    qrels_rows = [
        (f"q{q}", f"d{d}", int(rng.integers(-1, 4)))
        for q in range(3, 16)
        for d in rng.choice(40, 10, replace=False)
    ]
    run = pd.DataFrame(run_rows, columns=["qid", "docid", "score"]).sample(
        frac=1.0, random_state=seed
    )
    qrels = pd.DataFrame(qrels_rows, columns=["qid", "docid", "grade"]).sample(
        frac=1.0, random_state=seed + 100
    )
    runs = [
        run,
        run[run["qid"].isin(set(qrels["qid"]))],
        run.astype({"qid": "category"}),
    ]
    for run_given, judged_only in itertools.product(runs, (False, True)):
        result = fastndcg.ndcg_run(
            qrels,
            run_given,
            k=[5, None],
            gain="linear",
            missing=missing,
            judged_only=judged_only,
            zero_idcg="zero",
            backend=backend,
        )
        merged = run.merge(qrels, on=["qid", "docid"], how="left")
        if judged_only:
            merged = merged[merged["grade"] >= 0]
        merged = merged[merged["qid"].isin(set(qrels["qid"]))]
        for q, value in zip(result.query_ids, result.per_query, strict=True):
            rows = merged[merged["qid"] == q]
            ideal = np.maximum(qrels[qrels["qid"] == q]["grade"].to_numpy(float), 0.0)
            if rows.empty:  # every document removed by judged_only: an empty ranking
                assert np.all(value == 0.0)
                continue
            expected = fastndcg.ndcg(
                np.maximum(rows["grade"].fillna(0).to_numpy(float), 0.0),
                rows["score"].to_numpy(),
                k=[5, None],
                gain="linear",
                ideal="global",
                ideal_grades=ideal,
                ideal_offsets=[0, ideal.size],
                zero_idcg="zero",
            )
            np.testing.assert_allclose(value, expected.per_query[0], rtol=1e-13)


@pytest.mark.parametrize("seed", range(3))
def test_document_ids_are_joined_and_ordered_by_their_bytes(backend, seed):
    """Ids that are prefixes of each other, share their first 8 bytes (or every id of their
    query shares its first 13), hold multi-byte characters or are empty join exactly, and tied
    scores follow the ids' descending byte order; the columns come in sliced chunks."""
    ids = ["", "a", "a\x00", "ab", "abc", "a\u00e9", "b", "e", "\u00e9", "z", "zz", "Z", "\u4e2d"]
    ids += ["a b", "msmarco_doc_1", "msmarco_doc_10", "msmarco_doc_2"]  # 8 bytes alike
    rng = np.random.default_rng(seed)
    run = [
        (f"q{q}", ids[d], float(rng.integers(0, 2)))  # few score levels: many ties
        for q in range(6)
        for d in rng.choice(len(ids), rng.integers(1, len(ids) + 1), replace=False)
    ]
    # a query whose ids all start with the same 13 bytes, one of them no more than those
    alike = ["msmarco_doc_0", "msmarco_doc_00", "msmarco_doc_01", "msmarco_doc_0123456789_b"]
    alike += ["msmarco_doc_0123456789_a", "msmarco_doc_0123456789", "msmarco_doc_09"]
    run += [("q_alike", alike[d], float(rng.integers(0, 2))) for d in rng.permutation(7)]
    judgments = [
        (f"q{q}", ids[d], float(rng.integers(-1, 4)))
        for q in range(1, 8)
        for d in rng.choice(len(ids), 6, replace=False)
    ]
    judgments += [("q_alike", doc, float(rng.integers(0, 4))) for doc in alike]

    def sliced_table(rows, names):
        columns = {}
        for name, values in zip(names, zip(*rows, strict=True), strict=True):
            array = pa.array(values)
            cut = int(rng.integers(0, len(values) + 1))
            columns[name] = pa.chunked_array([array.slice(0, cut), array.slice(cut)])
        return pa.table(columns)

    result = fastndcg.ndcg_run(
        sliced_table(judgments, ("qid", "docid", "grade")),
        sliced_table(run, ("qid", "docid", "score")),
        k=[1, 3, None],
        gain="linear",
        ties="docid_desc",
        zero_idcg="zero",
        missing="zero",
        backend=backend,
    )
    qids, expected = reference_join(judgments, run, (1, 3, None))
    assert list(result.query_ids) == qids
    np.testing.assert_allclose(result.per_query, np.array(expected.ndcg), rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(NUMBA_BLOCKED, reason="needs numba")
def test_the_join_tells_ids_apart_when_their_hashes_collide(monkeypatch):
    """With every id hashing alike, each query's table still tells ids apart by their bytes."""
    from fastndcg._backends.numba import _id_bytes
    from fastndcg._backends.numba import trec as _kernels

    monkeypatch.setattr(_kernels, "_id_hash", lambda data, a, b: np.uint64(7))
    join = _kernels.match_judgments.py_func  # the Python function sees the patched hash
    judged_bounds, judged_data = _id_bytes(pa.chunked_array([["a", "ab", "b", "ab"]]))
    judged_labels = np.array([1.0, 2.0, 3.0, 9.0])  # the repeated "ab" keeps its first label
    for run_ids, labels, repeated in [
        (["ab", "a", "c", "b", "abc"], [2.0, 1.0, np.nan, 3.0, np.nan], -1),
        (["a", "ab", "a"], [1.0, 2.0, 1.0], 2),
    ]:
        bounds, data = _id_bytes(pa.chunked_array([run_ids]))
        out = np.empty(len(run_ids))
        duplicate = np.full(1, -1, dtype=np.int64)
        with np.errstate(over="ignore"):  # hashing wraps around, as compiled
            join(
                0,
                1,
                np.array([0, len(run_ids)]),
                np.zeros(0, dtype=np.int64),
                bounds,
                data,
                np.array([0, 4]),
                np.arange(4),
                judged_bounds,
                judged_data,
                judged_labels,
                out,
                duplicate,
            )
        np.testing.assert_array_equal(out, labels)
        assert duplicate[0] == repeated


def test_run_heads_across_chunks_and_returning_queries():
    from fastndcg._io.trec_join import _run_heads

    values = pa.chunked_array([["a", "a"], ["a", "b"], [], ["b", "a"], ["c"]], type=pa.string())
    heads, lengths = _run_heads(values)
    assert heads.to_pylist() == ["a", "b", "a", "c"]
    assert lengths.tolist() == [3, 2, 1, 1]
    empty_heads, empty_lengths = _run_heads(pa.chunked_array([], type=pa.string()))
    assert len(empty_heads) == 0 and empty_lengths.size == 0


@pytest.mark.parametrize(
    "tail",
    [
        "# a b 1\n",  # a comment line, not a query '#'
        "q9\t0\td2 \t2\n",  # a space inside a tab-separated field separates fields
        "q9 \t0\td0\t2\n",
        "   \n",  # a line of whitespace is blank
    ],
)
@pytest.mark.parametrize("separator", [" ", "\t"])
def test_lines_past_the_sniffed_head_read_as_line_by_line(tmp_path, separator, tail):
    """The fast reader's separator comes from the file's first 64 KiB; a line further down
    that it would read otherwise than the line-by-line reader sends the file to that reader."""
    lines = [separator.join((f"q{i // 7}", "0", f"d{i % 7}", str(i % 3))) for i in range(8_000)]
    path = tmp_path / "late.qrels"
    path.write_text("\n".join(lines) + "\n" + tail)
    assert len("\n".join(lines)) > trec_text._SNIFF_BYTES
    wanted, types = ["qid", "docid", "grade"], {"grade": pa.float64()}
    expected = trec_text._read_loose(path, "qrels", trec_text.QRELS_COLUMNS, wanted, types)
    table = read_qrels(path)
    assert table.equals(expected)
    assert "#" not in table.column("qid").to_pylist()
    assert all(" " not in d and d for d in table.column("docid").to_pylist())


@pytest.mark.parametrize("spaces", [" ", "  "], ids=["regular", "irregular"])
@pytest.mark.parametrize("start", ["", "\ufeff"], ids=["", "bom"])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_both_readers_read_byte_order_marks_and_line_ends_alike(tmp_path, spaces, start, newline):
    qrels = tmp_path / "q"
    run = tmp_path / "r"
    qrels_lines = ["q1 0 d1 2", "q1 0 d2 0", "q1 0 d3 1"]
    run_lines = ["q1 Q0 d2 1 0.9 sys", "q1 Q0 d1 2 0.8 sys", "q1 Q0 d5 3 0.8 sys"]
    qrels.write_bytes(
        (start + newline.join(qrels_lines) + newline).encode().replace(b" ", spaces.encode())
    )
    run.write_bytes(
        (start + newline.join(run_lines) + newline).encode().replace(b" ", spaces.encode())
    )
    result = fastndcg.ndcg_run(qrels, run, gain="linear")
    expected = fastndcg.ndcg_run(
        pa.table({"qid": ["q1"] * 3, "docid": ["d1", "d2", "d3"], "grade": [2.0, 0.0, 1.0]}),
        pa.table({"qid": ["q1"] * 3, "docid": ["d2", "d1", "d5"], "score": [0.9, 0.8, 0.8]}),
        gain="linear",
    )
    assert list(result.query_ids) == ["q1"]
    np.testing.assert_array_equal(result.per_query, expected.per_query)


def test_mixed_line_ends_are_each_a_line_end(tmp_path):
    """Line feeds, carriage returns and both end lines wherever they are in a file, also
    when the line reader takes it (a comment) and the first line ends at a lone CR."""
    run = tmp_path / "run"
    body = "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\r\nq1 Q0 d3 3 0.3 t\rq1 Q0 d4 4 0.2 t\n"
    run.write_bytes(("# my run\r" + body).encode())
    table = read_run(run)
    assert table.column("docid").to_pylist() == ["d1", "d2", "d3", "d4"]
    assert table.column("score").to_pylist() == [0.5, 0.4, 0.3, 0.2]
    lines = "".join(f"q1 Q0 e{i} {i} 0.5 t\n" for i in range(5000))  # beyond the first 64 KiB
    run.write_bytes(("# my run\n" + lines + "q2 Q0 d1 1 0.5 t\rq2 Q0 d2 2 bad t\n").encode())
    with pytest.raises(ValueError, match=r"line 5003: the score field must be a number"):
        read_run(run)


@pytest.mark.parametrize("at", range(8))
def test_stray_whitespace_past_the_head_is_read_line_by_line(tmp_path, at):
    """A tab in a column the fast reader skips, or an empty one (two separators), past the
    first 64 KiB: the fast reader would read such a line otherwise than trec_eval, which
    splits at any whitespace, so these files are read line by line. ``at`` moves the stray
    bytes across the 8-byte words the check reads."""
    regular = "".join(f"q1 Q0 e{i} {i} 0.5 t\n" for i in range(5000))  # beyond 64 KiB
    document = "d" + "x" * at
    run = tmp_path / "run"
    run.write_text(regular + f"q2 Q0 {document} 7\t9 0.25 t\n")
    assert read_run(run).column("score").to_pylist()[-1] == 9.0  # split at the tab too
    run.write_text(regular + f"q2 Q0 {document}  0.25 t\n")
    with pytest.raises(ValueError, match=r"line 5001: a TREC run line has 6 fields"):
        read_run(run)  # the rank is missing
    run.write_text(regular + f"q2 Q0 {document} 3 0.25 t\n")
    assert read_run(run).column("score").to_pylist()[-1] == 0.25
    qrels = tmp_path / "qrels"
    judged = "".join(f"q1 0 e{i} 1\n" for i in range(8000))
    qrels.write_text(judged + f"q2 0\tX {document} 1\n")
    with pytest.raises(ValueError, match=r"line 8001: a TREC qrels line has 4 fields"):
        read_qrels(qrels)


def test_unreadable_trec_inputs_are_clear_errors(tmp_path):
    run = tmp_path / "run"
    run.write_bytes(b"q1 Q0 d1 1 0.9 sys\nq1 Q0 d\xff2 2 0.8 sys\n")
    with pytest.raises(ValueError, match=r"run, line 2: not UTF-8 text .*read as UTF-8"):
        read_run(run)
    packed = tmp_path / "run.gz"
    packed.write_bytes(gzip.compress(b"q1 Q0 d1 1 0.9 sys\n"))
    with pytest.raises(ValueError, match="is gzip-compressed; decompress it first"):
        read_run(packed)
    with pytest.raises(ValueError, match="is a directory; give the qrels file"):
        read_qrels(tmp_path)
    with pytest.raises(TypeError, match="judged_only must be True or False; got 'no'"):
        fastndcg.ndcg_run(TREC / "qrels.test", TREC / "results.test", judged_only="no")


def test_max_docs_of_a_numpy_integer(backend):
    options = dict(ties="docid_desc", backend=backend, k=10)
    ours = fastndcg.ndcg_run(
        TREC / "qrels.test", TREC / "results.test", max_docs=np.uint64(3), **options
    )
    plain = fastndcg.ndcg_run(TREC / "qrels.test", TREC / "results.test", max_docs=3, **options)
    np.testing.assert_array_equal(ours.per_query, plain.per_query)


def test_compare_definitions_on_files_names_their_lines(tmp_path):
    """The files are read once for every definition, and errors still name their lines."""
    qrels = tmp_path / "judged.qrels"
    qrels.write_text("a 0 d1 1\na 0 d2 0\n")
    run = tmp_path / "twice.run"
    run.write_text("a Q0 d1 1 0.5 x\n\na Q0 d1 2 0.3 x\n")
    with pytest.raises(ValueError, match=re.escape(f"(again at line 3 of {run})")):
        fastndcg.compare_definitions(qrels, run, using="ndcg_run", definitions=["trec_eval"])


def test_messages_quote_at_most_200_characters_of_a_line(tmp_path):
    """A malformed line or value of any length is quoted in part: its first 200 characters and
    its length, not the whole of it (a 100 MB line made a 105 MB message)."""
    qrels = tmp_path / "wide.qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 1 " + "x " * 50_000 + "\n")
    with pytest.raises(ValueError) as caught:
        read_qrels(qrels)
    message = str(caught.value)
    assert len(message) < 600, len(message)
    quoted = "'q1 0 d2 1 " + "x " * 95 + "'"  # its first 200 characters
    assert message.endswith(
        "line 2: a TREC qrels line has 4 fields (qid iteration docid grade); found 50004: "
        f"{quoted} (its first 200 characters: the line has 100,010 bytes)"
    )
    run = tmp_path / "long_score.run"
    run.write_text("q1 Q0 d1 1 0.5 t\n\nq1 Q0 d2 2 " + "9" * 50_000 + "x t\n")
    with pytest.raises(ValueError) as caught:
        read_run(run)
    message = str(caught.value)
    assert len(message) < 600, len(message)
    assert message.endswith(
        f"line 3: the score field must be a number; found '{'9' * 200}' "
        "(its first 200 characters: the field has 50,001 bytes)"
    )


def test_a_kept_field_longer_than_16_mib_is_refused(tmp_path):
    """Document ids of megabytes are read; a query id, document id or value longer than 16 MiB
    is an error naming the file, the line and the limit. Fields that are not kept (a run's tag,
    its text after the tag) are skipped whatever their length."""
    document = "d" * 10_000_000
    run = tmp_path / "big_ids.run"
    run.write_text(f"q1 Q0 d1 1 0.5 t\nq1 Q0 {document} 2 0.4 t\nq1 Q0 d3 3 0.3 t\n")
    assert read_run(run).column("docid").to_pylist() == ["d1", document, "d3"]
    qrels = tmp_path / "big_ids.qrels"
    qrels.write_text(f"q1 0 {document} 1\n")
    assert read_qrels(qrels).column("docid").to_pylist() == [document]
    tag = "t" * (17 << 20)
    run.write_text(f"q1 Q0 d1 1 0.5 {tag}\nq1 Q0 d2 2 0.4 t {tag}\n")
    assert read_run(run).column("docid").to_pylist() == ["d1", "d2"]
    document = "d" * ((16 << 20) + 1)
    run.write_text(f"q1 Q0 d1 1 0.5 t\n# a comment\nq1 Q0 {document} 2 0.4 t\n")
    with pytest.raises(ValueError) as caught:
        read_run(run)
    assert str(caught.value) == (
        f"{run}, line 3: the docid field is longer than 16,777,216 bytes (16 MiB), the longest "
        f"field read from a TREC file (ids and numbers); it starts '{'d' * 200}'"
    )
    qrels.write_text(f"q1 0 d1 1\r\n{document}\n")
    with pytest.raises(ValueError, match=r"qrels, line 2: the qid field is longer than 16,777,"):
        read_qrels(qrels)
    from fastndcg._io import trec_text as trec

    assert trec._FIELD_BYTES == 16 << 20  # as documented


HUGE_LINE_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    from fastndcg._io import trec_text as trec

    def status(name):
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) << 10 for l in f if l.startswith(name + ":"))

    kind, path, warm = sys.argv[1:]
    read = trec.read_run if kind == "run" else trec.read_qrels
    for text in ("q1 Q0 d1 1 0.5 t", "# both readers\\nq1 Q0 d1 1 0.5 t"):
        with open(warm, "w") as f:
            f.write(text + "\\n")
        trec.read_run(warm)  # imports, Arrow's CSV reader, the check of regular files
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak (VmHWM) starts again from here: a compile's peak is past
    before = status("VmRSS")
    resource.setrlimit(resource.RLIMIT_AS, (status("VmSize") + (3 << 30), resource.RLIM_INFINITY))
    try:
        outcome = f"{read(path).num_rows} rows"
    except (ValueError, MemoryError) as exc:
        outcome = f"{type(exc).__name__} ({len(str(exc))} characters): {str(exc)[:300]}"
    print(json.dumps({"growth": status("VmHWM") - before, "outcome": outcome}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.subprocess  # numba is not blocked in the child: the blocked pass would repeat it
def test_huge_lines_are_read_in_bounded_memory(tmp_path):
    """A 100 MB line without spaces and a 300 MB line of repeated fields are read in a few
    blocks of memory: the first is refused (its query id is over the 16 MiB limit), the second
    is a run line with text after its tag (ignored) or a qrels line of 95 million fields (an
    error, counted without splitting). The fast reader's first try (the files start with
    regular lines) fails on them without holding them. Before, such lines took 0.6 GiB, 2 GiB
    and more than 3 GiB (a MemoryError under the limit set here)."""
    nospace = tmp_path / "nospace.txt"
    with nospace.open("wb") as f:
        f.write(b"q1 0 d1 1\n")
        for _ in range(100):
            f.write(b"x" * 1_000_000)
        f.write(b"\nq1 0 d2 1\n")
    fields = tmp_path / "fields.txt"
    with fields.open("wb") as f:
        unit = b"q1 Q0 d1 1 0.5 tag "  # 19 bytes
        for _ in range(300):
            f.write(unit * 52_632)  # 1 MB
        f.write(b"\nq1 Q0 d2 2 0.4 t\n")
    outcomes, growths = {}, {}
    for kind, path in (("qrels", nospace), ("run", fields), ("qrels", fields)):
        child = subprocess.run(
            [sys.executable, "-c", HUGE_LINE_CHILD, kind, str(path), str(tmp_path / "warm")],
            capture_output=True,
            text=True,
            check=True,
        )
        measured = json.loads(child.stdout)
        outcomes[kind, path.stem] = measured["outcome"]
        growths[kind, path.stem] = measured["growth"]
    nospace.unlink()
    fields.unlink()
    assert re.match(
        r"InputError \(\d{3} characters\): .*nospace.txt, line 2: the qid field is longer than "
        r"16,777,216 bytes \(16 MiB\)",
        outcomes["qrels", "nospace"],
    ), outcomes
    assert outcomes["run", "fields"] == "2 rows", outcomes
    assert re.match(
        r"InputError \(\d{3} characters\): .*fields.txt, line 1: a TREC qrels line has 4 fields "
        r"\(qid iteration docid grade\); found 94737600: 'q1 Q0 d1 1 0.5 tag q1 Q0",
        outcomes["qrels", "fields"],
    ), outcomes
    # a few blocks (1 MiB) and the 16 MiB of the longest field, with the Arrow reader's try
    assert max(growths.values()) < 96 << 20, growths


@pytest.mark.parametrize("block", [1, 2, 3, 5, 16])
def test_lines_across_the_reader_blocks(tmp_path, monkeypatch, block):
    """The line reader reads the file in blocks (tiny ones here, so that every kind of line end,
    comment, byte order mark and multi-byte character falls across their bounds, and lines are
    longer than a block): it reads what it reads with the usual 1 MiB blocks, and names the
    same lines in errors."""
    from fastndcg._io import trec_text as trec

    text = (
        "\ufeff# a run\r\n"
        "q1\tQ0 d\u00e91  1 0.5 t\r"
        "\r\n"
        "  # indented comment\n"
        "q1 Q0 d\u20ac2 2 0.25 t and more\r\n"
        "\t\r"
        "q\U0001f600 Q0  d3 3   -1e3 tag\n"
        "q2 Q0 d4 4 0.125"
        " t\r\r\n\n"
        "q2 Q0 d5 5 7 " + "x" * 40 + "\r\n"
        "q2 Q0 d6 6 8 t"  # no line end at the end of the file
    )
    run = tmp_path / "run"
    run.write_bytes(text.encode())
    expected = list(trec._records(run, "run", trec.RUN_COLUMNS, [0, 2, 4]))
    assert [number for number, _ in expected] == [2, 5, 7, 8, 11, 12]
    assert expected[0][1] == ["q1", "d\u00e91", "0.5"]
    assert expected[2][1] == ["q\U0001f600", "d3", "-1e3"]
    monkeypatch.setattr(trec, "_LINE_BLOCK_BYTES", block)
    assert list(trec._records(run, "run", trec.RUN_COLUMNS, [0, 2, 4])) == expected
    table = read_run(run)
    assert table.column("docid").to_pylist() == ["d\u00e91", "d\u20ac2", "d3", "d4", "d5", "d6"]
    assert table.column("score").to_pylist() == [0.5, 0.25, -1000.0, 0.125, 7.0, 8.0]

    bad = text.encode().replace("d\u20ac2".encode(), b"d\xe2\x82")  # a cut character, line 5
    run.write_bytes(bad)
    with pytest.raises(
        ValueError, match=r"run, line 5: not UTF-8 text \(unexpected end of data: byte b'\\xe2'\)"
    ):
        read_run(run)
    run.write_bytes(text.encode().replace(b"-1e3", b"high"))
    with pytest.raises(ValueError, match=r"run, line 7: the score field must be a number"):
        read_run(run)
    run.write_bytes(text.encode().replace(b"d4 4", b"d4"))
    with pytest.raises(
        ValueError,
        match=r"run, line 8: a TREC run line has 6 fields .*; found 5: 'q2 Q0 d4 0.125 t'",
    ):
        read_run(run)
    qrels = tmp_path / "qrels"
    qrels.write_bytes(
        b"\xef\xbb\xbfq1 0 d1 1\rq1 0 d2 2\r\n\r\n# c\rq1 0 d3 3 " + b"x " * 30 + b"\n"
    )
    with pytest.raises(
        ValueError,
        match=r"qrels, line 5: a TREC qrels line has 4 fields .*; found 34: 'q1 0 d3 3 x",
    ):
        read_qrels(qrels)
    qrels.write_bytes(b"\xef\xbb\xbfq1 0 d1 1\rq1 0 d2 2\r\n\r\n# c\rq1 0 d3 3")
    assert read_qrels(qrels).column("grade").to_pylist() == [1.0, 2.0, 3.0]
    monkeypatch.setattr(trec, "_FIELD_BYTES", 8)
    qrels.write_bytes(b"#\nq1 0 d1 1\r\nq1 0 d2345678 2\nq1 0 d23456789 3\n")  # line by line
    with pytest.raises(ValueError, match=r"qrels, line 4: the docid field is longer than 8 bytes"):
        read_qrels(qrels)


def test_a_qrels_grade_must_be_whole_unless_real_grades(tmp_path):
    """TREC grades are integers: 1.5 (which trec_eval reads as 1) is an InputError naming its
    line or row; real_grades=True scores it as given."""
    run = pa.table({"qid": ["a", "a"], "docid": ["x", "y"], "score": [0.7, 0.5]})
    path = tmp_path / "q.txt"
    path.write_text("a 0 x 1\na 0 y 1.5\n")
    table = pa.table({"qid": ["a", "a"], "docid": ["x", "y"], "grade": [1.0, 1.5]})
    for qrels, where in ((path, f"line 2 of {path}"), (table, "qrels row 1")):
        with pytest.raises(InputError) as raised:
            fastndcg.ndcg_run(qrels, run)
        assert (raised.value.value, raised.value.where) == (1.5, where)
        assert "`real_grades=True`" in raised.value.fix
        result = fastndcg.ndcg_run(qrels, run, gain="linear", k=[None], real_grades=True)
        items = [Item(0, 1.0, 0.7), Item(1, 1.5, 0.5)]
        expected = reference_ndcg([items], k=[None], gain="linear").ndcg[0][0]
        assert result.per_query[0, 0] == pytest.approx(expected, rel=1e-15) and expected < 1
        assert result.options["real_grades"] is True
    with pytest.raises(fastndcg.OptionTypeError):
        fastndcg.ndcg_run(table, run, real_grades="yes")


def test_an_empty_run_is_an_error_unless_missing_zero(tmp_path):
    qrels = pa.table({"qid": ["a", "b"], "docid": ["x", "y"], "grade": [1, 2]})
    path = tmp_path / "empty.run"
    path.write_text("")
    for run, where in ((path, str(path)), (pa.table({"qid": [], "docid": [], "score": []}), None)):
        with pytest.raises(InputError) as raised:
            fastndcg.ndcg_run(qrels, run)
        assert "is empty (no line ranks a document): 2 judged queries are not in it" in str(
            raised.value
        )
        assert raised.value.where == (where or "the run")
    zeros = fastndcg.ndcg_run(qrels, path, missing="zero")
    assert zeros.n_queries == 2 and float(zeros) == 0.0 and zeros.n_missing == 2
