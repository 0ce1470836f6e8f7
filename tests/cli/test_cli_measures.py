"""``fastndcg score -m``: the measures of TREC runs (and trec_eval's own printed layout) and of
prediction files."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from conftest import TEST_DATA

import fastndcg
from fastndcg import cli as command

TREC = TEST_DATA / "real" / "trec_eval_test"
QRELS, RUN = TREC / "qrels.test", TREC / "results.test"


def run(capsys, *args):
    status = command.main(["score", *map(str, args)])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize(
    ("qrels", "results", "expected"),
    [
        ("qrels.test", "results.test", "out.test"),
        ("qrels.comment.test", "results.comment.test", "out.comment.test"),
    ],
)
def test_the_trec_eval_preset_without_measures_prints_what_trec_eval_prints(
    capsys, qrels, results, expected
):
    status, out, _ = run(capsys, "--qrels", TREC / qrels, "--run", TREC / results, "--preset",
                         "trec_eval")  # fmt: skip
    assert status == 0
    assert out == (TREC / expected).read_text()


def test_per_query_lines_are_trec_eval_s_under_its_preset(capsys):
    status, out, _ = run(capsys, "--qrels", QRELS, "--run", RUN, "--preset", "trec_eval", "-q")
    assert status == 0
    ours = out.splitlines()
    names = {line.split("\t")[0] for line in ours}
    theirs = [
        line
        for line in (TREC / "out.test.aq").read_text().splitlines()
        if line.split("\t")[0] in names
    ]
    assert ours == theirs
    assert len(ours) > 3 * 25


def test_measures_by_trec_eval_names(capsys):
    status, out, _ = run(
        capsys, "--qrels", QRELS, "--run", RUN, "-m", "map", "-m", "P.10", "--preset", "trec_eval"
    )
    assert status == 0
    expected = (TREC / "out.test").read_text().splitlines()
    keep = ("runid", "map ", "P_10 ")
    assert out.splitlines() == [line for line in expected if line.startswith(keep)]


def test_measures_by_any_name_as_a_table_or_json(capsys):
    names = ["P@10", "map", "nDCG@10", "recip_rank"]
    flags = [x for name in names for x in ("-m", name)]
    expected = fastndcg.evaluate_run(QRELS, RUN, measures=names, ties="stable")
    status, out, _ = run(capsys, "--qrels", QRELS, "--run", RUN, *flags, "--ties", "stable",
                         "--format", "json")  # fmt: skip
    assert status == 0
    row = json.loads(out)["results"][0]
    assert [row[name] for name in names] == list(expected.mean)
    assert row["queries"] == expected.n_queries
    status, out, _ = run(capsys, "--qrels", QRELS, "--run", RUN, *flags, "--ties", "stable")
    header, values = out.splitlines()
    assert header.split()[-4:] == names
    assert values.split()[-4:] == [f"{v:.4f}" for v in expected.mean]
    status, out, _ = run(capsys, "--qrels", QRELS, "--run", RUN, "-m", "P@5", "-q", "--ties",
                         "stable", "--format", "csv")  # fmt: skip
    lines = out.splitlines()
    assert lines[0] == "run,query_id,P@5" and len(lines) == 1 + expected.n_queries


def test_relevance_level_flag(capsys):
    """trec_eval -l2 (out.test.aql): P_10 with grades >= 2 relevant."""
    qrels = TREC / "qrels.rel_level"
    status, out, _ = run(capsys, "--qrels", qrels, "--run", RUN, "-m", "P@10", "-l", "2",
                         "--preset", "trec_eval")  # fmt: skip
    assert status == 0
    expected = [
        line for line in (TREC / "out.test.aql").read_text().splitlines()
        if line.startswith("P_10 ") and "\tall\t" in line
    ]  # fmt: skip
    assert out.splitlines()[-1] == expected[0]
    assert expected[0] != (TREC / "out.test").read_text().splitlines()[-8]  # -l changes it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "ndgc@10"], "ndcg@10"),
        (["-m", "bpref"], "--ties"),
        (["-m", "P@10", "-k", "10", "--ties", "stable"], "name nDCG@k"),
        (["-m", "P@10", "--preset", "gdeval"], "gdeval"),
    ],
)
def test_refusals_are_one_line(capsys, args, message):
    status, out, err = run(capsys, "--qrels", QRELS, "--run", RUN, *args)
    assert status == 2 and out == ""
    assert err.startswith("fastndcg: error: ") and message in err
    assert err.count("\n") == 1


PREDICTIONS = TEST_DATA / "derived" / "lgb_mq2008" / "predictions.parquet"


def test_measures_of_prediction_files_are_those_of_evaluate_parquet(capsys, tmp_path):
    names = ["P@10", "AP", "nDCG@10", "RR@10"]
    flags = [x for name in names for x in ("-m", name)]
    expected = fastndcg.evaluate_parquet(PREDICTIONS, grade="label", measures=names)
    status, out, _ = run(capsys, PREDICTIONS, "--grade", "label", *flags, "--format", "json")
    assert status == 0
    row = json.loads(out)["results"][0]
    assert row["source"] == str(PREDICTIONS) and row["queries"] == expected.n_queries
    assert [row[name] for name in names] == list(expected.mean)
    # a CSV file of the same rows: the same numbers, through evaluate_table
    csv = tmp_path / "predictions.csv"
    pq.read_table(PREDICTIONS).to_pandas().to_csv(csv, index=False)
    status, out, _ = run(capsys, csv, "--grade", "label", *flags, "--format", "json")
    assert [json.loads(out)["results"][0][name] for name in names] == list(expected.mean)
    # -q: one row per query; --per-query: a file of them
    per_query = tmp_path / "per_query.parquet"
    status, out, _ = run(capsys, PREDICTIONS, "--grade", "label", "-m", "P@5", "-q",
                         "--format", "csv", "--per-query", per_query)  # fmt: skip
    lines = out.splitlines()
    assert lines[0] == "source,query_id,P@5" and len(lines) == 1 + expected.n_queries
    written = pq.read_table(per_query)
    assert written.column_names == ["source", "query_id", "P@5"]
    p5 = fastndcg.evaluate_parquet(PREDICTIONS, grade="label", measures="P@5")
    assert written.column("P@5").to_pylist() == p5.per_query[:, 0].tolist()
    assert written.column("query_id").to_pylist() == [str(q) for q in p5.query_ids]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "P@10", "-k", "10"], "name nDCG@k"),
        (["-m", "P@10", "--grade", "relevance"], "--grade <column name>"),
        (["-m", "bpref", "--grade", "label"], "--ties"),
        (["-m", "P@10", "--grade", "label", "--compare-presets"], "--compare-presets"),
    ],
)
def test_refusals_on_prediction_files_are_one_line(capsys, args, message):
    status, out, err = run(capsys, PREDICTIONS, *args)
    assert status == 2 and out == ""
    assert err.startswith("fastndcg: error: ") and message in err
    assert err.count("\n") == 1


def test_per_query_file_of_trec_runs_beside_trec_eval_s_layout(capsys, tmp_path):
    per_query = tmp_path / "per_query.csv"
    status, out, _ = run(capsys, "--qrels", QRELS, "--run", RUN, "-m", "map", "--preset",
                         "trec_eval", "--per-query", per_query)  # fmt: skip
    assert status == 0 and out.splitlines()[-1].startswith("map ")
    expected = fastndcg.evaluate_run(QRELS, RUN, measures="map", preset="trec_eval")
    lines = per_query.read_text().splitlines()
    assert lines[0] == '"source","query_id","map"' and len(lines) == 1 + expected.n_queries
