"""The fastndcg command: end to end in a child process (``cli``), or its ``main`` in this process
(``run_main``) where a test checks only what it prints and its exit status (a child costs a
second or more of imports each)."""

from __future__ import annotations

import io
import json
import math
import os
import stat
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from conftest import COMMAND, TEST_DATA

import fastndcg
from fastndcg.cli import main

PREDICTIONS = TEST_DATA / "derived" / "lgb_mq2008" / "predictions.parquet"
TREC = TEST_DATA / "real" / "trec_eval_test"


def cli(*args, check=True):
    run = subprocess.run([*COMMAND, *map(str, args)], capture_output=True, text=True)
    if check:
        assert run.returncode == 0, run.stderr
    return run


def run_main(*args, check=True):
    """``cli`` in this process: ``main``'s exit status and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = main(list(map(str, args)))
        except SystemExit as exit_:  # argparse's errors and --help
            status = exit_.code
    if check:
        assert status == 0, err.getvalue()
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def test_score_parquet_table_output():
    out = cli("score", PREDICTIONS, "--grade", "label", "-k", "1,5,all").stdout.splitlines()
    assert out[0] == (  # what the numbers are, first
        "definition: gain exp2, discount log2, ties average, ideal recall, zero_idcg skip, "
        "aggregate mean; k 1,5,all"
    )
    out = out[1:]
    assert out[0].split() == ["source", "queries", "ndcg@1", "ndcg@5", "ndcg", "skipped"]
    expected = fastndcg.ndcg_parquet(PREDICTIONS, grade="label", k=[1, 5, None])
    assert out[1].split()[1:] == ["156", *(f"{m:.4f}" for m in expected.mean), "51"]


def test_score_json_and_csv_formats():
    data = json.loads(
        run_main(
            "score",
            PREDICTIONS,
            "--grade",
            "label",
            "-k",
            "10",
            "--format",
            "json",
            "--gain",
            "linear",
        ).stdout
    )
    assert data["definition"] == {
        "preset": None,
        "gain": "linear",
        "discount": "log2",
        "ties": "average",
        "ideal": "recall",
        "zero_idcg": "skip",
        "aggregate": "mean",
        "k": [10],
    }
    (data,) = data["results"]  # one shape, whatever the number of inputs
    assert data["queries"] == 156
    assert data["ndcg@10"] == pytest.approx(
        float(fastndcg.ndcg_parquet(PREDICTIONS, grade="label", k=10, gain="linear")), rel=1e-12
    )
    csv_lines = run_main(
        "score", PREDICTIONS, "--grade", "label", "--format", "csv", "--zero-idcg", "zero"
    ).stdout.splitlines()
    header, row = (line.split(",") for line in csv_lines)
    assert header[:4] == ["source", "queries", "ndcg", "skipped"] and row[3] == "0"
    settings = dict(zip(header[4:], row[4:], strict=True))  # the definition, in every row
    assert settings == {
        "preset": "",
        "gain": "exp2",
        "discount": "log2",
        "ties": "average",
        "ideal": "recall",
        "zero_idcg": "zero",
        "aggregate": "mean",
    }


def test_score_several_trec_runs_and_per_query_file(tmp_path):
    per_query = tmp_path / "per_query.parquet"
    args = [
        "score",
        "--qrels",
        TREC / "qrels.test",
        "--run",
        TREC / "results.test",
        "--run",
        TREC / "results.trunc",
        "--missing",
        "zero",
    ]
    out = run_main(
        *args,
        "-k",
        "10",
        "--gain",
        "linear",
        "--ties",
        "docid_desc",
        "--zero-idcg",
        "zero",
        "--per-query",
        per_query,
    ).stdout.splitlines()
    assert out[0].startswith(
        "definition: gain linear, discount log2, ties docid_desc, ideal global"
    )
    out = out[1:]  # the table after the definition
    assert len(out) == 3 and "results.trunc" in out[2]
    assert out[0].split()[-2:] == ["missing", "unjudged"]
    assert out[2].split()[-2:] == ["1", "0"]
    table = pq.read_table(per_query)
    assert table.column_names[:3] == ["source", "query_id", "ndcg@10"]
    assert table.num_rows == 6
    csv_path = tmp_path / "per_query.csv"
    run_main(*args, "--per-query", csv_path)
    assert pacsv.read_csv(csv_path).num_rows == 6


def test_the_judgments_are_read_once_for_several_runs(monkeypatch, capsys, tmp_path):
    """In process: the qrels file is parsed once, not once per run, and each run scores the
    same as on its own."""
    import shutil

    from fastndcg import cli as command
    from fastndcg._io import trec_text as trec

    read = trec._read_text
    kinds = []

    def counting(path, kind, *rest):
        kinds.append(kind)
        return read(path, kind, *rest)

    monkeypatch.setattr(trec, "_read_text", counting)
    copy = shutil.copy(TREC / "results.test", tmp_path / "results.copy")
    runs = [TREC / "results.test", TREC / "results.trunc", copy]
    argv = ["score", "--qrels", TREC / "qrels.test", "--format", "json", "-k", "10"]
    argv += [arg for run in runs for arg in ("--run", run)] + ["--missing", "zero"]
    assert command.main(list(map(str, argv))) == 0
    assert kinds.count("qrels") == 1 and kinds.count("run") == 3
    rows = json.loads(capsys.readouterr().out)["results"]
    alone = fastndcg.ndcg_run(TREC / "qrels.test", TREC / "results.trunc", k=10, missing="zero")
    assert rows[1]["ndcg@10"] == pytest.approx(float(alone), rel=1e-12)
    assert rows[0]["ndcg@10"] == rows[2]["ndcg@10"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "nope.parquet"], "no such file or directory: nope.parquet"),
        (["score", PREDICTIONS], "column 'grade' not found"),
        (
            ["score", PREDICTIONS, "--grade", "label", "--ties", "random", "--seed", "-1"],
            "--seed must be a non-negative int; got -1",  # no "or None": the flag left out
        ),
        (
            ["score", "--run", TREC / "results.test"],
            "TREC scoring needs --qrels and at least one --run",
        ),
        (["score"], "nothing to score"),
        (
            ["score", PREDICTIONS, "--grade", "label", "--per-query", "x.json"],
            "--per-query x.json has the suffix .json, which is not a format it writes; name it "
            "with one of: .csv, .parquet",
        ),
        (  # before the scoring
            ["score", PREDICTIONS, "--grade", "label", "--per-query", f"{PREDICTIONS}/x.csv"],
            f"--per-query {PREDICTIONS}/x.csv: there is no directory {PREDICTIONS}; create it",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--max-docs", "5", "--judged-only"],
            "--judged-only, --max-docs apply to TREC runs (--qrels/--run), not to prediction",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--max-docs", "5"],
            "--max-docs applies to TREC runs (--qrels/--run), not to prediction files",
        ),
        (
            [
                "score",
                "--qrels",
                TREC / "qrels.test",
                "--run",
                TREC / "results.test",
                "--score",
                "s",
            ],
            "--score applies to prediction files, not to TREC runs (--qrels/--run)",
        ),
        (
            [
                "score",
                "--qrels",
                TREC / "qrels.test",
                "--run",
                TREC / "results.test",
                "--qid",
                "q",
                "--grade",
                "g",
                "--batch-rows",
                "5",
                "--group",
                "memory",
                "--no-progress",
            ],
            "--qid, --grade, --batch-rows, --group, --progress/--no-progress apply to prediction "
            "files, not to TREC runs",
        ),
        (
            ["score", PREDICTIONS, "--qrels", TREC / "qrels.test", "--grade", "label"],
            "give either prediction files or --qrels/--run, not both",
        ),
        (
            [
                "score",
                "--qrels",
                TREC / "qrels.test",
                "--run",
                TREC / "results.test",
                "--run",
                TREC / "results.test",
            ],
            f"{TREC / 'results.test'} is given twice; give each input once",
        ),
        (
            ["score", PREDICTIONS, PREDICTIONS, "--grade", "label"],
            f"{PREDICTIONS} is given twice; give each input once",
        ),
        (
            ["score", "--qrels", TREC, "--run", TREC / "results.test"],
            "is a directory; give the qrels file",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--ideal", "global"],
            "--ideal global applies to TREC runs (--qrels/--run): it needs the qrels' judgment "
            "lists; choose another --ideal for prediction files",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--ties", "docid_desc"],
            "--ties docid_desc applies to TREC runs (--qrels/--run): it needs the run's document",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--cluster", ""],
            "--cluster is empty; give the address, or leave --cluster out",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--colocated"],
            "--cluster and --colocated go with --engine dask or --engine spark",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--engine", "dask", "--cluster", " "],
            "--cluster is empty; give the address, or leave --cluster out",
        ),
        # the library's advice, worded with the command's flags
        (
            ["score", PREDICTIONS, "--grade", "label", "--seed", "3"],
            "--seed is only used with --ties random",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--ideal", "max", "--max-grade", "1"],
            "--max-grade 1 is below the largest grade in the data (2); NDCG would exceed 1. "
            "Raise --max-grade or leave it unset",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--zero-idcg", "error"],
            "and --zero-idcg error; pass --zero-idcg skip, zero or one to score such",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--batch-rows", "0"],
            "--batch-rows must be a positive int; got 0",
        ),
        (["score", PREDICTIONS, "--grade", "label", "--threads", "0"], ": --threads must be "),
        (
            ["score", PREDICTIONS, "--grade", "label", "--ideal", "max", "--max-grade", "inf"],
            "--max-grade must be finite; got inf",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "-k", "1,all,5,all"],
            "-k lists the cutoff all more than once in '1,all,5,all'; give each cutoff once",
        ),
        (
            ["score", PREDICTIONS, "--grade", "label", "--preset", "trec_eval"],
            "--preset trec_eval orders tied scores by document id (--ties docid_desc), which needs "
            "document ids: score a TREC run with --qrels and --run, or pass --ties explicitly",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    run = run_main(*args, check=False)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastndcg: error: ") and message in lines[0]


def test_argument_errors_exit_2():
    for k in ("ten", "0", "3,-1"):
        run = run_main("score", PREDICTIONS, "--grade", "label", "-k", k, check=False)
        assert run.returncode == 2, run.stderr
        assert f"-k takes comma-separated positive ints (or 'all'); got {k!r}" in run.stderr
    for k in ("", "1,", ",1", "1,,3"):  # once, each read as a whole-list cutoff
        run = run_main("score", PREDICTIONS, "--grade", "label", "-k", k, check=False)
        assert run.returncode == 2 and f"-k has an empty cutoff in {k!r}" in run.stderr
        assert "'all' for the whole list" in run.stderr
    run = run_main("score", PREDICTIONS, "--ties", "first", check=False)
    assert run.returncode == 2 and "invalid choice" in run.stderr
    run = run_main("score", PREDICTIONS, "--digits", "-1", check=False)
    assert run.returncode == 2 and "--digits takes an int >= 0; got '-1'" in run.stderr
    for args in (("score", "--ties", "first"), ("scores",), ("score", "--nope")):
        run = run_main(*args, check=False)  # argparse's errors: one line too, without the usage
        assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
        assert run.stderr.startswith("fastndcg: error: ") and "--help)" in run.stderr


def test_library_advice_names_the_flags(tmp_path):
    """Errors raised by the library name the command's flags, not Python keywords."""
    (tmp_path / "x.csv").write_text("q,g\n1,1\n")
    run = run_main("score", tmp_path / "x.csv", "--qid", "q", "--score", "", check=False)
    assert run.returncode == 2 and run.stderr.rstrip().endswith("Pass --grade <column name>")
    (tmp_path / "run").write_text("2 Q0 d1 1 1.0 t\n")
    trec = ["--qrels", TREC / "qrels.test", "--run", tmp_path / "run"]
    run = run_main("score", *trec, check=False)
    assert run.returncode == 2
    assert "; pass --missing zero to score them 0 (trec_eval -c) or --missing skip" in run.stderr
    run = run_main("score", *trec, "-k", str(2**64), check=False)
    assert run.returncode == 2 and "fit in 64 bits; pass -k all to score whole lists" in run.stderr
    run = run_main("score", *trec, "--max-docs", "0", check=False)
    assert run.returncode == 2 and "--max-docs 0 keeps no document of a ranking" in run.stderr
    run = run_main("score", *trec, "--max-docs", "5", "--ties", "average", check=False)
    assert run.returncode == 2
    assert "--max-docs 5 cuts each ranking after 5 documents" in run.stderr
    assert "--ties docid_desc or --ties stable, not --ties average" in run.stderr
    pq.write_table(
        pa.table({"qid": [1, 2, 1], "grade": [1, 0, 2], "score": [0.1, 0.2, 0.3]}),
        tmp_path / "scattered.parquet",
    )
    run = run_main("score", tmp_path / "scattered.parquet", check=False)
    assert run.returncode == 2
    assert run.stderr.rstrip().endswith("or group it in memory (--group memory)")


def test_an_error_in_the_qrels_names_its_file_and_line(tmp_path):
    """Not the run being scored, and the qrels file's line, not a row of a parsed table."""
    (tmp_path / "ok.run").write_text("q1 Q0 d2 1 0.9 s\nq1 Q0 d1 2 0.8 s\n")
    (tmp_path / "inf.qrels").write_text("# judgments\nq1 0 d1 2\n\nq1 0 d2 inf\n")
    (tmp_path / "twice.qrels").write_text("q1 0 d1 2\nq1 0 d2 0\nq1 0 d1 1\n")
    for qrels, said in (
        ("inf.qrels", "qrels grade has an infinite value at line 4 of {}"),
        (
            "twice.qrels",
            "qrels lists document 'd1' of query 'q1' more than once (again at line 3 of {})",
        ),
    ):
        path = tmp_path / qrels
        run = run_main("score", "--qrels", path, "--run", tmp_path / "ok.run", check=False)
        assert run.returncode == 2
        assert run.stderr.startswith("fastndcg: error: " + said.format(path))


@pytest.mark.parametrize(
    ("template", "python", "worded"),
    [
        (
            "pass `zero_idcg='skip'` or `k=None`",
            "pass zero_idcg='skip' or k=None",
            "pass --zero-idcg skip or -k all",
        ),
        (
            "`judged_only=True`; `max_docs=5`; `seed=` only",
            "judged_only=True; max_docs=5; seed= only",
            "--judged-only; --max-docs 5; --seed only",
        ),
        (
            "pass `n_threads=2`, `group='memory'`",
            "pass n_threads=2, group='memory'",
            "pass --threads 2, --group memory",
        ),
        # the values listed after a flag, and a reference's subject
        (
            "pass `zero_idcg='skip'`, `'zero'` or `'one'` to",
            "pass zero_idcg='skip', 'zero' or 'one' to",
            "pass --zero-idcg skip, zero or one to",
        ),
        (
            "x: `batch_rows` must be > 0; pass a smaller `k`",
            "x: batch_rows must be > 0; pass a smaller k",
            "x: --batch-rows must be > 0; pass a smaller -k",
        ),
        (
            "`seed` must be an int `or None`; got -1",
            "seed must be an int or None; got -1",
            "--seed must be an int; got -1",
        ),
        (
            "`k` must be an int, or `k=None` (whole list)",
            "k must be an int, or k=None (whole list)",
            "-k must be an int, or -k all (whole list)",
        ),
        (
            "`score=None` means ranked rows; pass `n_threads` `or None`",
            "score=None means ranked rows; pass n_threads or None",
            "--score '' means ranked rows; pass --threads",
        ),
        (
            "`preset 'x'` orders ties; `ideal='max'` fills all `k=1,000,000` slots",
            "preset 'x' orders ties; ideal='max' fills all k=1,000,000 slots",
            "--preset x orders ties; --ideal max fills all -k 1,000,000 slots",
        ),
        ("`k=[1, None]`", "k=[1, None]", "-k 1,all"),
        # unmarked words stay words: a column, its role, English, a call, a path
        (
            "column 'grade' (grade) has a null; grade, score must be numeric",
            "column 'grade' (grade) has a null; grade, score must be numeric",
            "column 'grade' (grade) has a null; grade, score must be numeric",
        ),
        (
            "ndcg@k of top-k: result.mean_at(k); /data/max_docs/x",
            "ndcg@k of top-k: result.mean_at(k); /data/max_docs/x",
            "ndcg@k of top-k: result.mean_at(k); /data/max_docs/x",
        ),
        ("no such file: /data/k=1/gain=2.parquet", None, None),
        # options the command does not have read as in Python; a user's backquotes stay
        (
            "`validate='exact'`, `ideal_grades=`",
            "validate='exact', ideal_grades=",
            "validate='exact', ideal_grades=",
        ),
        ("column 'the `Grade`!' not found", None, None),
    ],
)
def test_command_words(template, python, worded):
    """Option references in a message template read as keywords in Python and as flags in the
    command; everything else reads the same in both."""
    from fastndcg._errors import python_words
    from fastndcg.cli.messages import command_words

    assert python_words(template) == (python or template)
    assert command_words(template) == (worded or template)


def test_an_unexpected_error_is_a_fault_of_fastndcg(monkeypatch, capsys):
    """Not the user's bad input: exit 1, says so, and --debug shows the traceback."""
    from fastndcg import cli as command

    def broken(*args, **kwargs):
        raise TypeError("an internal slip")

    monkeypatch.setattr(command, "score_sources", broken)
    argv = ["score", str(PREDICTIONS)]
    assert command.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("fastndcg: internal error: TypeError: an internal slip")
    assert "--debug" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(TypeError, match="an internal slip"):
        command.main(["--debug", *argv])
    monkeypatch.setenv("FASTNDCG_DEBUG", "1")
    with pytest.raises(TypeError, match="an internal slip"):
        command.main(argv)


def test_interrupt_is_one_line_and_exit_130(monkeypatch, capsys):
    from fastndcg import cli as command

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "score_sources", interrupted)
    assert command.main(["score", str(PREDICTIONS)]) == 130
    assert capsys.readouterr().err == "fastndcg: interrupted\n"


def test_hive_partitioned_query_ids_get_advice_the_command_can_follow(tmp_path):
    """The library's fix (a pyarrow dataset as the source) is Python: the command says it cannot
    read a query id held in directory names, and how to go on."""
    table = pa.table({"qid": [1, 1, 2, 2], "grade": [1, 0, 0, 1], "score": [0.9, 0.1, 0.8, 0.2]})
    pq.write_to_dataset(table, tmp_path / "hive", partition_cols=["qid"])
    for group in ("stream", "memory"):
        run = run_main("score", tmp_path / "hive", "--group", group, check=False)
        assert run.returncode == 2
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("fastndcg: error: column 'qid' not found")
        assert lines[0].endswith(
            "'qid' names directories of the files (hive partitioning), which the command does "
            "not read: write 'qid' into the files as a column, or score them from Python with "
            "fastndcg.ndcg_parquet(pyarrow.dataset.dataset(path, partitioning='hive'), "
            "group='memory')"
        )
        assert "as the source" not in lines[0] and "--group memory" not in lines[0]


def _strict_json(text):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_json_output_is_json_when_no_query_counts(tmp_path):
    """A mean over no query (every query skipped, or no query at all) is null, not NaN."""
    skipped = tmp_path / "skipped.parquet"
    pq.write_table(
        pa.table({"qid": [1, 1, 2], "grade": [0, 0, 0], "score": [0.1, 0.2, 0.3]}), skipped
    )
    empty = tmp_path / "empty.csv"
    empty.write_text("qid,grade,score\n")
    for path, table in ((skipped, pq.read_table(skipped)),):
        expected = fastndcg.ndcg_table(table, k=[1, None])
        assert all(math.isnan(mean) for mean in expected.mean)  # no query counts
        out = _strict_json(run_main("score", path, "-k", "1,all", "--format", "json").stdout)
        (row,) = out["results"]
        assert row == {
            "source": str(path),
            "queries": expected.n_queries,
            "ndcg@1": None,
            "ndcg": None,
            "skipped": int(expected.n_skipped.max()) if expected.n_skipped.size else 0,
        }
    # an input without rows is an error, not a mean over nothing
    run = run_main("score", empty, "-k", "1,all", "--format", "json", check=False)
    assert run.returncode == 2 and run.stdout == ""
    assert f"{empty}: no query to score (no rows)" in run.stderr
    rows = _strict_json(
        run_main(
            "score",
            skipped,
            "--compare-presets",
            "sklearn,torchmetrics",
            "--zero-idcg",
            "skip",
            "--format",
            "json",
        ).stdout
    )["results"]
    assert [row["definition"] for row in rows] == ["sklearn", "torchmetrics"]
    assert all(row["mean"] is None and row["max_diff"] is None for row in rows)


def test_max_grade_help_says_when_it_is_required(tmp_path):
    """The default (the largest grade in the data) holds in memory; streaming needs the flag."""
    text = " ".join(run_main("score", "--help").stdout.split())
    assert (
        "grade of every slot for --ideal max (default: the largest grade in the data; required "
        "for Parquet streamed with --group stream, the default, or with --engine) --ties"
    ) in text
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"qid": [1, 1, 2], "grade": [2, 0, 1], "score": [0.1, 0.2, 0.3]}), path)
    run = run_main("score", path, "--ideal", "max", check=False)
    assert run.returncode == 2 and "--ideal max needs --max-grade when streaming" in run.stderr
    expected = fastndcg.ndcg_parquet(path, ideal="max", group="memory")
    out = _strict_json(
        run_main("score", path, "--ideal", "max", "--group", "memory", "--format", "json").stdout
    )
    assert out["results"][0]["ndcg"] == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.subprocess
def test_an_empty_csv_file_is_named(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    run = cli("score", str(tmp_path / "empty.csv"), check=False)
    assert run.returncode == 2
    assert run.stderr.strip() == f"fastndcg: error: {tmp_path / 'empty.csv'}: Empty CSV file"


@pytest.mark.subprocess
def test_help_shows_options_with_defaults():
    text = cli("score", "--help").stdout
    for fragment in (
        "--zero-idcg",
        "(default: skip)",
        "--ties",
        "(default: average)",
        "--per-query",
        "--format",
    ):
        assert fragment in text


@pytest.mark.subprocess
def test_help_states_each_default_once_and_truly():
    """No "(default: None)", "[None]" or a flag's False/True; options whose default is said in
    words (--ideal, --threads, -k, --progress) say it once (--help lists the options in
    groups: a group's title follows the last option of the group before)."""
    text = " ".join(cli("score", "--help").stdout.split())  # help lines unwrapped
    for wrong in ("(default: None)", "(default: [", "(default: False)", "(default: True)"):
        assert wrong not in text
    for fragment in (  # each followed by the next option: no second default
        "-k K cutoffs, e.g. 1,3,5,10 ('all': the whole list) (default: all) --gain",
        "ideal DCG (default: recall; global for TREC runs) --max-grade",
        "Numba threads (default: all cores; one per task with --engine) Output: --format",
        "always show a progress bar (default: only on an interactive terminal) --no-progress",
        "--no-progress never show a progress bar Computation: --backend",
        "--zero-idcg {skip,zero,one,error} queries without relevant items (default: skip) --agg",
    ):
        assert fragment in text, fragment


def test_prediction_files_may_follow_options(tmp_path):
    """The usage's [predictions ...] come before, between or after options."""
    import shutil

    second = shutil.copy(PREDICTIONS, tmp_path / "second.parquet")
    out = run_main(
        "score", PREDICTIONS, "--grade", "label", second, "-k", "3", "--format", "csv"
    ).stdout.splitlines()
    expected = fastndcg.ndcg_parquet(PREDICTIONS, grade="label", k=3)
    assert [line.split(",")[:2] for line in out[1:]] == [
        [str(PREDICTIONS), "156"],
        [str(second), "156"],
    ]
    assert float(out[2].split(",")[2]) == pytest.approx(float(expected), rel=1e-12)


def test_compressed_csv_is_read_as_csv(tmp_path):
    import gzip

    table = pq.read_table(PREDICTIONS)
    plain = tmp_path / "predictions.csv"
    pacsv.write_csv(table, plain)
    packed = tmp_path / "predictions.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    out = run_main("score", packed, "--grade", "label", "-k", "5", "--format", "json").stdout
    (row,) = json.loads(out)["results"]
    expected = fastndcg.ndcg_parquet(PREDICTIONS, grade="label", k=5)
    assert row["queries"] == 156 and row["ndcg@5"] == pytest.approx(float(expected), rel=1e-12)


def test_a_file_read_the_wrong_way_says_how_names_pick_readers(tmp_path):
    table = pq.read_table(PREDICTIONS)
    comma = tmp_path / "predictions.txt"  # .txt is read as tab-separated
    pacsv.write_csv(table, comma)
    tabs = tmp_path / "predictions.csv"
    pacsv.write_csv(table, tabs, pacsv.WriteOptions(delimiter="\t"))
    other = tmp_path / "predictions.json"
    other.write_text("{}")
    naming = ".csv as comma-separated, .tsv and .txt as tab-separated"
    for path, said in (
        (comma, f"{comma} was read as tab-separated, but its header"),
        (tabs, f"{tabs} was read as comma-separated, but its header"),
        (other, f"{other} is not a Parquet file; files are read by name"),
    ):
        run = run_main("score", path, "--grade", "label", check=False)
        assert run.returncode == 2
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and naming in lines[0], lines
        assert ".gz" in lines[0] and "rename the file" in lines[0]


@pytest.mark.subprocess
def test_info_and_warmup():
    info = cli("info").stdout
    for key in ("fastndcg:", "backends:", "numpy:"):
        assert key in info
    if "numba" in fastndcg.available_backends():
        assert "threading layer:" in info and "cache dir:" in info
    assert cli("warmup").stdout.startswith("kernels ready in")


def test_the_command_sees_the_backends_this_run_sees():
    """With numba blocked in this run, the command runs without it too (its NumPy fallback)."""
    backends = cli("info").stdout.split("backends:")[1].splitlines()[0].split(", ")
    assert [name.strip() for name in backends] == list(fastndcg.available_backends())


def test_console_script_is_installed():
    import shutil

    assert shutil.which("fastndcg") or (
        sys.prefix and (__import__("pathlib").Path(sys.executable).parent / "fastndcg").exists()
    )


def test_an_error_in_one_of_several_runs_names_it(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("301 Q0 FR940202-2-00045 1 inf sys\n")
    run = run_main(
        "score",
        "--qrels",
        TREC / "qrels.test",
        "--run",
        TREC / "results.test",
        "--run",
        bad,
        check=False,
    )
    assert run.returncode == 2
    assert run.stderr.strip() == (
        f"fastndcg: error: scores has an infinite value at line 1 of {bad}; scores must "
        "be finite: drop or fill those rows first"
    )


@pytest.mark.subprocess
def test_a_closed_output_pipe_is_not_an_error():
    """``fastndcg score ... | head -1``: no traceback when the reader stops early."""
    command = [*COMMAND, "score", str(PREDICTIONS), "--grade", "label"]
    command += ["-k", ",".join(str(k) for k in range(1, 200)), "--format", "csv"]
    producer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    producer.stdout.close()  # nobody reads
    _, err = producer.communicate()
    assert b"Traceback" not in err and b"BrokenPipe" not in err


def test_per_query_file_with_query_ids_that_are_not_text(tmp_path):
    """Bytes query ids that are not UTF-8 text stay bytes in Parquet; CSV refuses them."""
    import pyarrow as pa

    predictions = tmp_path / "bytes.parquet"
    qid = pa.array([b"\xff\x01", b"\xff\x01", b"ab"], pa.binary())
    pq.write_table(
        pa.table({"qid": qid, "grade": [1, 0, 2], "score": [0.1, 0.5, 0.3]}), predictions
    )
    per_query = tmp_path / "per_query.parquet"
    run_main("score", predictions, "--per-query", per_query)
    table = pq.read_table(per_query)
    assert table.column("query_id").to_pylist() == [b"\xff\x01", b"ab"]
    expected = fastndcg.ndcg_parquet(predictions)
    assert table.column("ndcg").to_pylist() == expected.per_query.ravel().tolist()
    run = run_main("score", predictions, "--per-query", tmp_path / "per_query.csv", check=False)
    assert run.returncode == 2
    assert "not UTF-8 text, which a CSV file cannot hold; write --per-query to a .parquet" in (
        run.stderr
    )


@pytest.mark.parametrize(
    "where", ["same", "spelled otherwise", "in the input directory", "qrels", "link", "hard link"]
)
def test_per_query_never_overwrites_an_input(tmp_path, monkeypatch, capsys, where):
    """Before, --per-query v.parquet on the input v.parquet replaced the predictions."""
    import shutil

    from fastndcg import cli as command

    monkeypatch.chdir(tmp_path)
    predictions = tmp_path / "v.parquet"
    shutil.copy(PREDICTIONS, predictions)
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copy(PREDICTIONS, folder / "part-0.parquet")
    qrels = tmp_path / "q.csv"
    shutil.copy(TREC / "qrels.test", qrels)
    (tmp_path / "link.parquet").symlink_to(predictions)
    os.link(predictions, tmp_path / "hard.parquet")
    argv, target = {
        "same": (["score", "v.parquet"], "v.parquet"),
        "spelled otherwise": (["score", "v.parquet"], "./folder/../v.parquet"),
        "in the input directory": (["score", "folder"], "folder/results.parquet"),
        "qrels": (["score", "--qrels", "q.csv", "--run", str(TREC / "results.test")], "q.csv"),
        "link": (["score", "v.parquet"], "link.parquet"),
        "hard link": (["score", "v.parquet"], "hard.parquet"),
    }[where]
    before = {path: path.read_bytes() for path in (predictions, qrels)}
    assert command.main([*argv, "--per-query", target]) == 2
    err = capsys.readouterr().err
    assert "--per-query" in err and "overwrite" in err and len(err.strip().splitlines()) == 1
    assert {path: path.read_bytes() for path in before} == before
    assert sorted(p.name for p in folder.iterdir()) == ["part-0.parquet"]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_failed_per_query_write_leaves_nothing(tmp_path, monkeypatch, capsys, suffix):
    """A full disk mid-write: no file left (not a truncated one), and exit status 2."""
    import errno

    import pyarrow.csv
    import pyarrow.parquet

    from fastndcg import cli as command

    def full_disk(table, where, *args, **kwargs):
        with open(where, "wb") as file:
            file.write(b"the first bytes of a file")
        raise OSError(errno.ENOSPC, "No space left on device", str(where))

    monkeypatch.setattr(pyarrow.parquet, "write_table", full_disk)
    monkeypatch.setattr(pyarrow.csv, "write_csv", full_disk)
    target = tmp_path / f"per_query{suffix}"
    argv = ["score", str(PREDICTIONS), "--grade", "label", "--per-query", str(target)]
    assert command.main(argv) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_per_query_files_are_created_with_the_umask_and_written_through_links(
    tmp_path, monkeypatch
):
    """Before, --per-query files were 0600 whatever the umask, and a link was replaced by a
    regular file. Now as open(path, "w"): the umask for a new file, the mode of a file replaced,
    and a link written through (the file it points to replaced, the link kept)."""
    from fastndcg import cli as command

    monkeypatch.chdir(tmp_path)
    argv = ["score", str(PREDICTIONS), "--grade", "label", "--per-query"]
    old = os.umask(0o022)
    try:
        assert command.main([*argv, "new.csv"]) == 0
        assert stat.S_IMODE(os.stat("new.csv").st_mode) == 0o644
        os.umask(0o077)
        assert command.main([*argv, "new.csv"]) == 0  # replaced: its mode stays
        assert stat.S_IMODE(os.stat("new.csv").st_mode) == 0o644
        os.mkdir("out")
        os.symlink("out/values.parquet", "latest.parquet")  # dangling until written
        assert command.main([*argv, "latest.parquet"]) == 0
    finally:
        os.umask(old)
    assert os.path.islink("latest.parquet")
    assert stat.S_IMODE(os.stat("out/values.parquet").st_mode) == 0o600
    assert pacsv.read_csv("new.csv").num_rows == pq.read_table("out/values.parquet").num_rows > 0
    assert sorted(os.listdir("out")) == ["values.parquet"]


def test_a_per_query_path_that_cannot_be_written_is_refused_before_the_work(
    tmp_path, monkeypatch, capsys
):
    from fastndcg import cli as command

    def no_work(*args, **kwargs):
        raise AssertionError("scored before the --per-query path was checked")

    monkeypatch.setattr(command, "score_sources", no_work)
    for target, message in (
        (tmp_path / "values.txt", "has the suffix .txt, which is not a format it writes"),
        (tmp_path / "no" / "values.csv", f"there is no directory {tmp_path / 'no'}"),
        (tmp_path, "is a directory"),
    ):
        argv = ["score", str(PREDICTIONS), "--grade", "label", "--per-query", str(target)]
        assert command.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"fastndcg: error: --per-query {target}") and message in err
    assert list(tmp_path.iterdir()) == []


def test_an_existing_per_query_file_is_replaced_whole(tmp_path):
    target = tmp_path / "per_query.csv"
    target.write_text("old contents\n")
    run_main("score", PREDICTIONS, "--grade", "label", "--per-query", target)
    expected = fastndcg.ndcg_parquet(PREDICTIONS, grade="label").n_queries
    assert pacsv.read_csv(target).num_rows == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["per_query.csv"]


def test_a_warning_is_one_line(monkeypatch, capsys):
    import warnings

    from fastndcg import cli as command

    def warned(*args, **kwargs):
        warnings.warn("fastndcg: something to know", RuntimeWarning, stacklevel=1)
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "score_sources", warned)
    assert command.main(["score", str(PREDICTIONS)]) == 130
    err = capsys.readouterr().err.splitlines()
    assert err == ["fastndcg: warning: something to know", "fastndcg: interrupted"]


def test_a_qrels_grade_too_large_is_blamed_on_the_qrels(tmp_path):
    """Before: 'good.run: gains reach inf ...', naming the run for a grade of the qrels."""
    qrels, run = tmp_path / "grade_huge.qrels", tmp_path / "good.run"
    qrels.write_text("q1 0 d1 1\nq2 0 d9 0\nq1 0 d2 1000000\n")
    run.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\n")
    done = run_main(
        "score", "--qrels", qrels, "--run", run, "--gain", "exp2", "--missing", "skip", check=False
    )
    assert done.returncode == 2
    line = done.stderr.strip()
    assert line.startswith("fastndcg: error: gains reach inf") and "good.run" not in line
    assert f"(the largest grade, 1e+06, is on line 3 of {qrels})" in line


@pytest.mark.subprocess
def test_version():
    run = cli("--version")
    assert run.stdout.strip() == f"fastndcg {fastndcg.__version__}"


@pytest.mark.subprocess
def test_presets_lists_every_preset_with_its_settings():
    text = cli("presets").stdout
    for name, preset in fastndcg.presets().items():
        assert f"{name}: {preset.tool}\n" in text
    assert "lightgbm: LightGBM ndcg@k" in text and "zero_idcg 'one'" in text


@pytest.mark.parametrize("how", [["-q"], ["--per-query", "-"]])
def test_per_query_lines_are_trec_eval_s(how):
    """The per-query lines of trec_eval -q, bit for bit on its own test files (4 decimals)."""
    out = run_main(
        "score", TREC / "qrels.test", TREC / "results.test", "--preset", "trec_eval",
        "-k", "all,5,10,15,20,30,100,200,500,1000", *how,
    ).stdout  # fmt: skip
    expected = [
        line
        for line in (TREC / "out.test.aq").read_text().splitlines()
        if line.split("\t")[0].strip() == "ndcg" or line.startswith("ndcg_cut_")
    ]
    assert sorted(out.splitlines()) == sorted(expected)


@pytest.mark.parametrize("preset", [None, "trec_eval", "trec_eval9", "ir_measures"])
def test_per_query_lines_use_trec_eval_s_names_only_for_its_numbers(preset):
    """Before, -q without a preset labelled fastndcg's own numbers ndcg_cut_10, trec_eval's name
    for a different number."""
    chosen = [] if preset is None else ["--preset", preset]
    args = ["score", TREC / "qrels.test", TREC / "results.test", "-k", "10,all", *chosen]
    lines = [line.split("\t") for line in run_main(*args, "-q").stdout.splitlines()]
    trec_eval = preset is not None and preset.startswith("trec_eval")
    names = ["ndcg_cut_10", "ndcg"] if trec_eval else ["ndcg@10", "ndcg"]
    assert {name.strip() for name, _, _ in lines} == set(names)
    options = {} if preset is None else {"preset": preset}
    expected = fastndcg.ndcg_run(
        TREC / "qrels.test", TREC / "results.test", k=[10, None], **options
    )
    for j, name in enumerate(names):
        values = {q: float(v) for n, q, v in lines if n.strip() == name and q != "all"}
        column = expected.per_query[:, j]
        assert values == {
            str(q): round(float(v), 4) for q, v in zip(expected.query_ids, column, strict=True)
        }


def test_trec_eval_s_argument_order_is_read_and_the_other_order_named(tmp_path):
    qrels, run = TREC / "qrels.test", TREC / "results.test"
    named = run_main("score", "--qrels", qrels, "--run", run, "-k", "10", "--format", "json")
    positional = run_main("score", qrels, run, "-k", "10", "--format", "json")
    assert json.loads(positional.stdout) == json.loads(named.stdout)
    swapped = run_main("score", run, qrels, check=False)
    assert swapped.returncode == 2
    assert "looks like a TREC run" in swapped.stderr and "--qrels QRELS --run RUN" in swapped.stderr
    alone = run_main("score", qrels, check=False)  # a qrels file alone
    assert alone.returncode == 2
    assert f"{qrels} looks like a TREC qrels file, with no run: give TREC files in" in alone.stderr


def test_trec_files_are_told_by_their_content_whatever_their_names(tmp_path, monkeypatch, capsys):
    """Before, `fastndcg score qrels.txt run.txt` read qrels.txt as a TSV file ("column 'grade'
    not found"), and `qrels.txt a.run` suggested `fastndcg score QRELS RUN`, what was typed."""
    from fastndcg import cli as command

    monkeypatch.chdir(tmp_path)
    (tmp_path / "qrels.txt").write_bytes((TREC / "qrels.test").read_bytes())
    (tmp_path / "run.txt").write_bytes((TREC / "results.test").read_bytes())
    (tmp_path / "b.csv").write_bytes((TREC / "results.trunc").read_bytes())
    named = ["score", "--qrels", "qrels.txt", "--run", "run.txt", "--run", "b.csv", "-k", "10"]
    assert command.main([*named, "--format", "json", "--missing", "zero"]) == 0
    expected = capsys.readouterr().out
    for argv in (
        ["score", "qrels.txt", "run.txt", "b.csv"],  # trec_eval's order, several runs
        ["score", "--qrels", "qrels.txt", "run.txt", "b.csv"],  # the runs of --qrels
    ):
        assert command.main([*argv, "-k", "10", "--format", "json", "--missing", "zero"]) == 0
        assert capsys.readouterr().out == expected
    # compare takes them the same way
    compare = ["compare", "qrels.txt", "run.txt", "b.csv", "--missing", "zero", "--test", "t"]
    assert command.main([*compare, "--format", "csv"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    pair = [header.split(",").index(name) for name in ("baseline", "system")]
    assert [[row.split(",")[i] for i in pair] for row in rows] == [["run", "b"]]
    # each error says which file is out of place, and its advice works
    for argv, message in (
        (["run.txt"], "run.txt looks like a TREC run, where a TREC qrels file is expected: "),
        (["run.txt", "qrels.txt"], "run.txt looks like a TREC run, where a TREC qrels file is"),
        (["qrels.txt", str(PREDICTIONS)], "predictions.parquet is not a TREC file, where a TREC"),
    ):
        assert command.main(["score", *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and "trec_eval's order, QRELS RUN [RUN ...], or as --qrels" in err
    assert command.main(["score", "qrels.txt", "run.txt"]) == 0


def test_trec_runs_without_a_preset_say_how_trec_eval_differs():
    args = ["score", "--qrels", TREC / "qrels.test", "--run", TREC / "results.test", "-k", "10"]
    note = run_main(*args).stderr.strip()
    assert note.startswith("fastndcg: note: ") and "--preset trec_eval" in note
    assert len(note.splitlines()) == 1
    assert run_main(*args, "--preset", "trec_eval").stderr == ""


def test_json_has_one_shape_whatever_the_number_of_inputs():
    runs = [TREC / "results.test", TREC / "results.trunc"]
    for n in (1, 2):
        argv = ["score", "--qrels", TREC / "qrels.test", "-k", "10", "--format", "json"]
        argv += [arg for run in runs[:n] for arg in ("--run", run)] + ["--missing", "zero"]
        out = json.loads(run_main(*argv).stdout)
        assert set(out) == {"definition", "results"} and len(out["results"]) == n


def test_a_long_compile_is_noted_on_stderr(monkeypatch, capsys):
    """The backend's log record of a long first compile reaches the command's stderr."""
    import logging

    from fastndcg import cli as command
    from fastndcg._backends.numpy import NumpyBackend

    original = NumpyBackend.score

    def score(self, plan):
        logging.getLogger("fastndcg").info("compiled the scoring kernel in %.1f s", 12.0)
        return original(self, plan)

    monkeypatch.setattr(NumpyBackend, "score", score)
    argv = ["score", str(PREDICTIONS), "--grade", "label", "--backend", "numpy"]
    assert command.main(argv) == 0
    assert "fastndcg: note: compiled the scoring kernel in 12.0 s\n" in capsys.readouterr().err
    assert logging.getLogger("fastndcg").handlers == []  # the command's handler is gone after


def test_the_first_compile_announces_itself_on_a_terminal(monkeypatch, capsys):
    from fastndcg import cli as command
    from fastndcg._backends import get_backend

    backend = get_backend("numba")
    if backend is None:
        pytest.skip("numba is not available in this run")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(type(backend), "compiled", lambda self: False)
    args = command.build_parser().parse_args(["score", str(PREDICTIONS)])
    command._announce_a_compile(args)
    err = capsys.readouterr().err
    assert err.startswith("fastndcg: compiling the kernels on first use") and err.count("\n") == 1
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)  # piped or logged: silent
    command._announce_a_compile(args)
    assert capsys.readouterr().err == ""


def test_one_rule_for_judged_queries_absent_from_a_run(capsys):
    """Before, the default was "zero" in score (as --help said), an error under --preset
    trec_eval or in compare, "skip" under --preset trec_eval9 or pytrec_eval. Now an error
    everywhere, stated in --help and the output, until --missing says what they get."""
    from fastndcg import cli as command

    trec = ["--qrels", str(TREC / "qrels.test"), "--run", str(TREC / "results.trunc")]
    advice = (
        "1 judged query is not in the run (first: '302'); pass --missing zero to score them 0 "
        "(trec_eval -c) or --missing skip to leave them out (trec_eval without -c)"
    )
    for preset in (None, *fastndcg.presets()):
        chosen = [] if preset is None else ["--preset", preset]
        assert command.main(["score", *trec, *chosen]) == 2, preset
        err = capsys.readouterr().err
        assert err == f"fastndcg: error: {TREC / 'results.trunc'}: {advice}\n", preset
    compare = ["compare", *trec, "--run", str(TREC / "results.test"), "--test", "t"]
    assert command.main(compare) == 2
    assert "--missing error: the results do not cover the same queries" in capsys.readouterr().err
    for rule, queries in (("zero", 3), ("skip", 2)):
        assert command.main(["score", *trec, "--missing", rule, "--format", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["definition"]["missing"] == rule
        assert (out["results"][0]["queries"], out["results"][0]["missing"]) == (queries, 1)
        score = ["score", *trec, "--missing", rule, "--preset", "trec_eval", "-k", "all"]
        assert command.main(score) == 0
        assert f"missing {rule}; k all" in capsys.readouterr().out.splitlines()[0]
    help_text = " ".join(run_main("score", "--help").stdout.split())
    assert "TREC: judged queries absent from a run: an error, whatever the preset; zero" in (
        help_text
    )
    assert "skip leaves them out (trec_eval without -c) (default: error)" in help_text


@pytest.mark.parametrize("content", ["", "# no run lines\n\n"])
def test_an_empty_run_is_refused_unless_every_judged_query_should_score_0(
    tmp_path, capsys, content
):
    """Before, an empty run file scored 0.0000 with exit 0; trec_eval refuses it."""
    from fastndcg import cli as command

    empty = tmp_path / "empty.run"
    empty.write_text(content)
    qrels = str(TREC / "qrels.test")
    for argv in (["--qrels", qrels, "--run", str(empty)], [qrels, str(empty)]):
        assert command.main(["score", *argv]) == 2
        assert capsys.readouterr().err == (
            f"fastndcg: error: the run {empty} is empty (no line ranks a document): 3 judged "
            "queries are not in it; give the run its rankings; or, for every judged query to "
            "score 0, pass --missing zero\n"
        )
    assert command.main(["score", qrels, str(empty), "--missing", "zero", "--format", "csv"]) == 0
    header, row = (line.split(",") for line in capsys.readouterr().out.splitlines())
    values = dict(zip(header, row, strict=True))
    assert (values["queries"], values["ndcg"], values["missing"]) == ("3", "0.0", "3")
    assert values["missing_rule"] == "zero"
    assert command.main(["score", qrels, str(empty), "--missing", "skip"]) == 2
    assert "no query to score" in capsys.readouterr().err


def test_a_qrels_grade_that_is_not_a_whole_number_is_named(tmp_path, capsys):
    """Before, a grade of 1.5 was scored silently (trec_eval reads it as 1)."""
    from fastndcg import cli as command

    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 2\n# a comment\nq1 0 d2 1.5\nq2 0 d3 1\n")
    run = tmp_path / "r.txt"
    run.write_text("q1 Q0 d1 1 0.9 s\nq1 Q0 d2 2 0.5 s\nq2 Q0 d3 1 0.3 s\n")
    assert command.main(["score", str(qrels), str(run)]) == 2
    assert capsys.readouterr().err == (
        f"fastndcg: error: the qrels grade 1.5 on line 3 of {qrels} is not a whole number; TREC "
        "grades are integers (trec_eval reads 1.5 as 1): correct it, or pass --real-grades to "
        "score real-valued grades\n"
    )
    argv = ["score", str(qrels), str(run), "--real-grades", "--gain", "linear", "--format", "json"]
    assert command.main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    expected = fastndcg.ndcg_run(qrels, run, gain="linear", real_grades=True)
    assert row["ndcg"] == float(expected) and expected.per_query[0, 0] == 1.0
    other = tmp_path / "other.txt"
    other.write_text(run.read_text())
    assert command.main(["compare", str(qrels), str(run), str(other), "--test", "t"]) == 2
    assert "is not a whole number" in capsys.readouterr().err
