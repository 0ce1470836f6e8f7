"""fastndcg compare and fastndcg explain: outputs, exit codes, errors in one line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from conftest import COMMAND, TEST_DATA

import fastndcg
from fastndcg._compare.report import COLUMNS
from fastndcg.cli import main

TREC = TEST_DATA / "real" / "trec_eval_test"
QRELS = TREC / "qrels.comment.test"  # 31 judged topics of the TREC 2024 RAG track


def run_main(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def on_runs(capsys, command, runs, *args, systems=("base", "better")):
    """``fastndcg COMMAND --qrels QRELS --run RUN ... ARGS`` on the named runs."""
    given = [part for name in systems for part in ("--run", runs[name])]
    return run_main(capsys, command, "--qrels", QRELS, *given, *args)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The RAG run and two perturbed copies: a better one and a much worse one."""
    folder = tmp_path_factory.mktemp("runs")
    qrels = fastndcg.trec.read_qrels(QRELS).to_pylist()
    relevant = {(str(r["qid"]), r["docid"]) for r in qrels if r["grade"] > 0}
    lines = (TREC / "results.comment.test").read_text().splitlines()
    rng = np.random.default_rng(0)
    paths = {"base": TREC / "results.comment.test"}
    for name, shift in (("better", 3.0), ("worse", -6.0)):
        out = []
        for line in lines:
            q, q0, doc, rank, score = line.split()[:5]
            bonus = shift if (q, doc) in relevant else 0.0
            out.append(f"{q} {q0} {doc} {rank} {float(score) + bonus + rng.normal(0, 0.01):.5f} x")
        paths[name] = folder / f"{name}.run"
        paths[name].write_text("\n".join(out) + "\n")
    return paths


def test_compare_runs_prints_the_table(capsys, runs):
    options = ("-k", "10,all", "--resamples", "999", "--baseline", "results.comment")
    status, out, err = on_runs(capsys, "compare", runs, *options)
    assert status == 0 and err == ""
    expected = fastndcg.compare_runs(
        QRELS,
        [runs["base"], runs["better"]],
        k=[10, None],
        n_resamples=999,
        baseline="results.comment",
    )
    assert out.strip() == repr(expected)
    assert "family: each system against baseline 'results.comment'" in out


def test_compare_formats(capsys, runs):
    status, out, _ = on_runs(capsys, "compare", runs, "-k", "10", "--format", "json", "--test", "t")
    data = json.loads(out)
    assert status == 0 and data["test"] == "t" and data["comparisons"][0]["system"] == "better"
    status, out, _ = on_runs(capsys, "compare", runs, "-k", "10", "--format", "csv", "--test", "t")
    header, row = out.strip().splitlines()
    assert header.split(",")[: len(COLUMNS)] == list(COLUMNS)
    assert header.split(",") == [
        "measure",
        "cutoff",
        "baseline",
        "system",
        "mean_baseline",
        "mean_system",
        "delta",
        "ci_low",
        "ci_high",
        "effect_size",
        "p_value",
        "p_adjusted",
        "significant",
        "wins",
        "ties",
        "losses",
        "n_queries",
        "definition",
        "test",
        "alternative",
        "ci",
        "interval",
        "n_resamples",
        "resamples",
        "seed",
        "correction",
        "family",
        "alpha",
    ]
    assert row.startswith("NDCG@10,10,results.comment,better,")
    import csv

    cells = dict(zip(header.split(","), next(csv.reader([row])), strict=True))
    assert cells["measure"] == "NDCG@10" and cells["test"] == "t" and cells["alpha"] == "0.05"
    assert "gain exp2 (2^g - 1)" in cells["definition"] and cells["correction"] == "holm"
    status, out, _ = on_runs(capsys, "compare", runs, "-k", "10", "--format", "markdown")
    assert out.startswith("**Paired randomization test**")
    status, out, _ = on_runs(
        capsys, "compare", runs, "-k", "10", "--format", "latex", "--correction", "none"
    )
    assert r"\toprule" in out and "no correction" in out


def test_compare_measures_with_m(capsys, runs):
    """-m on compare: the comparison of compare_runs(measures=...), each measure a block."""
    args = ("-m", "nDCG@10", "-m", "P.5", "-m", "map", "--test", "t", "--family", "all")
    status, out, err = on_runs(capsys, "compare", runs, *args, "-l", "2")
    assert status == 0 and err == ""
    expected = fastndcg.compare_runs(
        QRELS,
        [runs["base"], runs["better"]],
        measures=["nDCG@10", "P.5", "map"],
        relevance_level=2,
        test="t",
        family="all",
    )
    assert out.strip() == repr(expected)
    assert "nDCG@10 (normalised discounted cumulative gain), P.5 (precision), map" in out
    assert "relevance_level 2" in out and "(across every measure)" in out
    status, out, _ = on_runs(capsys, "compare", runs, *args, "--format", "csv")
    import csv

    rows = list(csv.DictReader(out.splitlines()))
    assert [r["measure"] for r in rows] == ["nDCG@10", "P.5", "map"]
    assert {r["family"] for r in rows} == {"all"}
    assert all("map (average precision)" in r["definition"] for r in rows)
    status, out, _ = on_runs(capsys, "compare", runs, *args, "--format", "json")
    assert json.loads(out)["measures"] == ["nDCG@10", "P.5", "map"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "P@5", "-k", "10"], "-k is nDCG's cutoff: with -m, name nDCG@k"),
        (["-l", "2"], "-l is the measures' relevance level: give it with -m"),
        (["-m", "ndgc@10"], "nearest"),
    ],
)
def test_compare_measures_errors(capsys, runs, args, message):
    status, out, err = on_runs(capsys, "compare", runs, *args)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert message in err


def test_compare_measures_of_predictions_files_refused(capsys, predictions):
    _, folder = predictions
    status, _, err = run_main(
        capsys,
        "compare",
        folder / "p.parquet",
        "--grade",
        "label",
        "--scores",
        "score_a,score_b",
        "-m",
        "P@5",
    )
    assert status == 2 and "-m compares measures of TREC runs: give --qrels and --run" in err


def test_compare_takes_every_test_option_as_a_flag(capsys, runs):
    """--alternative, --ci-method, --zero-method, --continuity, the corrections and the other
    tools' names: the same comparison as the Python call."""
    cases = [
        (["--test", "student", "--alternative", "greater", "--correction", "fdr_by"], {}),
        (["--test", "bootstrap", "--ci-method", "BCa", "--alternative", "less"], {}),
        (["--test", "wilcoxon", "--zero-method", "pratt", "--continuity"], {}),
        (["--test", "fisher", "--correction", "hommel", "--resamples", "300"], {}),
    ]
    for args, _ in cases:
        status, out, err = on_runs(capsys, "compare", runs, "-k", "10", "--format", "json", *args)
        assert status == 0, err
        data = json.loads(out)
        flags = dict(zip(args[::2], args[1::2], strict=False))
        expected = fastndcg.compare_runs(
            QRELS,
            [runs["base"], runs["better"]],
            k=10,
            test=flags["--test"],
            alternative=flags.get("--alternative", "two-sided"),
            ci_method=flags.get("--ci-method", "percentile"),
            zero_method=flags.get("--zero-method", "wilcox"),
            continuity="--continuity" in args,
            correction=flags.get("--correction", "holm"),
            n_resamples=int(flags.get("--resamples", 10_000)),
        )
        assert data == json.loads(expected.to_json()), args


def test_fail_if_worse_gates_a_regression(capsys, runs):
    gate = ("-k", "10", "--test", "t", "--fail-if-worse")
    status, _, err = on_runs(capsys, "compare", runs, *gate, systems=("base", "worse"))
    assert status == 1
    assert err.strip().count("\n") == 0  # one line
    assert err.startswith(
        "fastndcg: significantly worse than the baseline 'results.comment': worse ("
    )
    assert "NDCG@10 -" in err and "adjusted p" in err
    status, _, err = on_runs(capsys, "compare", runs, *gate)
    assert status == 0 and err == ""
    no_gate = gate[:-1]
    status, _, _ = on_runs(capsys, "compare", runs, *no_gate, systems=("base", "worse"))
    assert status == 0  # a regression without the gate: success


def test_fail_if_worse_names_the_measure(capsys, runs):
    gate = ("-m", "P.10", "-m", "map", "--test", "t", "--fail-if-worse")
    status, _, err = on_runs(capsys, "compare", runs, *gate, systems=("base", "worse"))
    assert status == 1 and err.strip().count("\n") == 0
    assert "worse (P.10 -" in err and ", worse (map -" in err


def test_fail_if_worse_exit_code_in_a_subprocess(runs):
    run = subprocess.run(
        [
            *COMMAND,
            "compare",
            "--qrels",
            str(QRELS),
            "--run",
            str(runs["base"]),
            "--run",
            str(runs["worse"]),
            "-k",
            "5",
            "--fail-if-worse",
            "--test",
            "t",
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1 and "worse" in run.stderr and "results.comment" in run.stdout


@pytest.fixture(scope="module")
def predictions(tmp_path_factory):
    rng = np.random.default_rng(1)
    qid = np.repeat(np.arange(50), 10)
    label = rng.integers(0, 4, qid.size)
    table = pa.table(
        {
            "qid": qid,
            "label": label,
            "score_a": label + rng.normal(0, 1.5, qid.size),
            "score_b": label + rng.normal(0, 1.0, qid.size),
        }
    )
    folder = tmp_path_factory.mktemp("predictions")
    pq.write_table(table, folder / "p.parquet")
    pacsv.write_csv(table, folder / "p.csv")
    for name in ("a", "b"):
        one = table.select(["qid", "label"]).append_column("score", table.column(f"score_{name}"))
        pq.write_table(one, folder / f"{name}.parquet")
    return table, folder


def test_compare_score_columns_of_a_predictions_file(capsys, predictions):
    table, folder = predictions
    for source in ("p.parquet", "p.csv"):
        status, out, _ = run_main(
            capsys,
            "compare",
            folder / source,
            "--grade",
            "label",
            "--scores",
            "A=score_a,B=score_b",
            "-k",
            "5",
            "--format",
            "json",
            "--resamples",
            "500",
        )
        assert status == 0
        expected = fastndcg.compare_table(
            table, grade="label", scores={"A": "score_a", "B": "score_b"}, k=5, n_resamples=500
        )
        assert json.loads(out) == json.loads(expected.to_json())


def test_compare_one_system_per_predictions_file(capsys, predictions):
    table, folder = predictions
    status, out, _ = run_main(
        capsys,
        "compare",
        folder / "a.parquet",
        folder / "b.parquet",
        "--grade",
        "label",
        "-k",
        "5",
        "--format",
        "json",
        "--test",
        "t",
    )
    data = json.loads(out)
    assert status == 0 and data["systems_compared"] == ["a", "b"]
    expected = fastndcg.compare_table(
        table, grade="label", scores={"a": "score_a", "b": "score_b"}, k=5, test="t"
    )
    assert data["comparisons"] == json.loads(expected.to_json())["comparisons"]


def test_compare_plot(capsys, runs, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "forest.png"
    plot = ("--plot", target, "--plot-kind", "waterfall")
    status, _, _ = on_runs(capsys, "compare", runs, "-k", "10", *plot, "--test", "t")
    assert status == 0 and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--baseline", "nope"],
            "unknown --baseline nope; the systems are 'results.comment', 'better'",
        ),
        (["--resamples", "0"], "--resamples must be a positive int; got 0"),
        (
            ["--resamples", "1000000000000"],
            "--resamples must be at most 1,000,000,000; got 1,000,000,000,000; 10,000 give a "
            "p-value near 0.05 to within 0.005 (two standard errors), 1,000,000 to within "
            "0.0005, and time grows with the count",
        ),
        (
            ["--test", "boostrap"],
            "unknown --test boostrap; valid values are randomization, t, bootstrap, wilcoxon "
            "(aliases: student, fisher); nearest: bootstrap",
        ),
        (
            ["--correction", "holm_sidak"],
            "unknown --correction holm_sidak; valid values are holm, bonferroni, bh, by, sidak, "
            "holm-sidak, hommel (aliases: fdr_bh, fdr_by), or None (no correction); nearest: "
            "holm-sidak, sidak",
        ),
        (["--alpha", "1.5"], "--alpha must be in (0, 1) (exclusive); got 1.5"),
        (["--seed", "-3"], "--seed must be an int with 0 <= seed < 2**64; got -3"),
        (["--scores", "A=x"], "--scores names columns of a predictions file, not of TREC runs"),
    ],
)
def test_compare_errors_are_one_line_and_exit_2(capsys, runs, args, message):
    status, out, err = on_runs(capsys, "compare", runs, *args)
    assert status == 2 and out == ""
    assert err == f"fastndcg: error: {message}\n"


def test_compare_input_errors(capsys, runs, predictions):
    _, folder = predictions
    status, _, err = on_runs(capsys, "compare", runs, systems=("base",))
    assert status == 2 and "compare needs at least 2 systems" in err
    status, _, err = run_main(
        capsys,
        "compare",
        "--qrels",
        TREC / "qrels.test",
        "--run",
        TREC / "results.test",
        "--run",
        TREC / "results.trunc",
    )
    assert status == 2 and err.count("\n") == 1
    assert "--missing error: the results do not cover the same queries" in err
    assert "pass --missing zero" in err
    status, _, err = run_main(capsys, "compare", folder / "p.parquet", "--grade", "label")
    assert status == 2 and "name the systems' score columns with --scores" in err
    status, _, err = run_main(
        capsys, "compare", folder / "p.parquet", "--grade", "label", "--scores", "A=nope,B=score_b"
    )
    assert status == 2 and "nope" in err


def test_explain_a_query(capsys, runs):
    status, out, err = on_runs(capsys, "explain", runs, "--query", "2024-127266", "-k", "10")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "query '2024-127266', NDCG@10 (k=10)"
    assert any(line.startswith("     | results.comment") and "| better" in line for line in lines)
    expected = fastndcg.ndcg_run(QRELS, runs["better"], k=10)
    q = [str(x) for x in expected.query_ids].index("2024-127266")
    assert f"better: DCG@10 = {expected.dcg[q, 0]:.6f}" in out
    query = ("--query", "2024-127266", "-k", "5", "--system", "better")
    status, out, _ = on_runs(capsys, "explain", runs, *query, "--format", "json")
    data = json.loads(out)
    assert [s["system"] for s in data["systems"]] == ["better"] and data["k"] == 5
    assert len(data["systems"][0]["rows"]) == 100
    status, out, _ = on_runs(capsys, "explain", runs, *query, "--format", "markdown")
    assert status == 0 and out.startswith("**query '2024-127266', NDCG@5 (k=5)**")
    assert "| ideal doc | grade | gain | IDCG |" in out
    assert sum(line.startswith("|---|") for line in out.splitlines()) == 2
    status, out, _ = on_runs(capsys, "explain", runs, *query, "--format", "latex")
    assert status == 0 and out.count(r"\begin{tabular}") == 2
    status, _, err = on_runs(capsys, "explain", runs, *query, "--format", "csv")
    assert status == 2 and "explain writes --format table, json, markdown or latex" in err


def test_explain_one_run_and_errors(capsys, runs, predictions):
    _, folder = predictions
    one = {"systems": ("base",)}
    status, out, _ = on_runs(capsys, "explain", runs, "--query", "2024-127266", "-k", "3", **one)
    assert status == 0 and "[results.comment]" in out
    status, _, err = on_runs(capsys, "explain", runs, **one)
    assert status == 2 and err == "fastndcg: error: explain needs --query QID (the query to show)\n"
    status, _, err = on_runs(capsys, "explain", runs, "--query", "2024-127266", "-k", "3,5", **one)
    assert status == 2 and "one cutoff" in err
    status, _, err = on_runs(capsys, "explain", runs, "--query", "999", **one)
    assert status == 2 and "query '999' is not among the compared queries" in err
    status, out, _ = run_main(
        capsys,
        "explain",
        folder / "p.parquet",
        "--grade",
        "label",
        "--scores",
        "score_a,score_b",
        "--query",
        "7",
        "-k",
        "3",
    )
    assert status == 0 and "| score_a" in out and "row " in out


def test_explain_a_measure_with_m(capsys, runs):
    """-m on explain: one measure's ranked lists, the values evaluate_run's."""
    query = ("--query", "2024-127266", "-m", "P@5", "-l", "2")
    status, out, err = on_runs(capsys, "explain", runs, *query)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "query '2024-127266', P@5 (precision)"
    assert any(line.startswith("     | results.comment") and "| better" in line for line in lines)
    expected = fastndcg.evaluate_run(
        QRELS, runs["better"], measures=["P@5"], relevance_level=2, missing="zero"
    )
    q = [str(x) for x in expected.query_ids].index("2024-127266")
    assert f"better: P@5 = {expected.per_query[q, 0]:.6f}; the shares are divided by k = 5" in out
    status, out, _ = on_runs(capsys, "explain", runs, *query, "--format", "json")
    data = json.loads(out)
    assert data["measure"] == "P@5" and data["systems"][1]["value"] == expected.per_query[q, 0]
    assert data["systems"][1]["facts"]["relevance_level"] == 2
    status, out, _ = on_runs(capsys, "explain", runs, *query, "--format", "markdown")
    assert status == 0 and out.startswith("**query '2024-127266', P@5 (precision)**")
    status, out, _ = on_runs(capsys, "explain", runs, *query, "--format", "latex")
    assert status == 0 and out.count(r"\begin{tabular}") == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "P@5", "-m", "map"], "explain shows one measure: give one -m, not 2"),
        (["-m", "P.5,10"], "explain shows one measure, not 2"),
        (["-m", "F1@5"], "sums over the ranks; 'F1@5'"),
        (["-m", "P@5", "-k", "10"], "-k is nDCG's cutoff: with -m"),
        (["-l", "2"], "-l is the measures' relevance level: give it with -m"),
    ],
)
def test_explain_measure_errors(capsys, runs, args, message):
    status, out, err = on_runs(capsys, "explain", runs, "--query", "2024-127266", *args)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert message in err


def test_help_lists_the_comparison_options(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    out = capsys.readouterr().out
    for flag in (
        "--baseline",
        "--test",
        "--resamples",
        "--correction",
        "--alpha",
        "--ci",
        "--seed",
        "--missing",
        "--fail-if-worse",
        "--plot",
        "--scores",
    ):
        assert flag in out
    assert "Paired comparison:" in out and "--engine {" not in out and "--per-query" not in out


@pytest.mark.parametrize("command", ["score", "compare", "explain"])
def test_help_mentions_only_the_command_s_own_flags(command):
    """Before, compare --help and explain --help said --max-grade is required "with --group
    stream ... or with --engine" and --threads "one per task with --engine", flags they lack."""
    import argparse
    import re

    from fastndcg.cli.parser import build_parser

    (commands,) = (
        action
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    parser = commands.choices[command]
    own = {flag for action in parser._actions for flag in action.option_strings}
    mentioned = set(re.findall(r"--[a-z][a-z-]*", parser.format_help()))
    assert mentioned <= own, sorted(mentioned - own)
    assert "--max-grade" in mentioned and "--threads" in mentioned


def test_explain_s_help_says_it_takes_one_measure():
    """Before, explain --help said of -m "repeat it for several", which explain refuses."""
    from fastndcg.cli.parser import build_parser

    def measure_help(command: str) -> str:
        parser = build_parser()
        sub = next(
            a for a in parser._actions if getattr(a, "choices", None) and command in a.choices
        )
        action = next(a for a in sub.choices[command]._actions if "-m" in a.option_strings)
        return action.help

    assert "once" in measure_help("explain") and "several" not in measure_help("explain")
    assert "several" in measure_help("score")


SMALL_QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 0\n"
SMALL_RUNS = {
    "a": "q1 Q0 d2 1 0.9 A\nq1 Q0 d1 2 0.8 A\nq2 Q0 d4 1 0.7 A\n",
    "b": "q1 Q0 d1 1 0.9 B\nq1 Q0 d3 2 0.8 B\nq2 Q0 d5 1 0.7 B\nq2 Q0 d4 2 0.6 B\n",
}


@pytest.mark.parametrize("named", ["run", "qrels", "predictions", "link to a run"])
def test_compare_plot_never_overwrites_an_input(capsys, tmp_path, monkeypatch, named):
    """Before, --plot replaced a run named .png, qrels named .svg or predictions named .pdf
    (exit 0); a link to an input is refused as the input."""
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    Path("q.svg").write_text(SMALL_QRELS)
    for name, text in SMALL_RUNS.items():
        Path(f"{name}.png").write_text(text)
    Path("link.png").symlink_to("a.png")
    table = pa.table({"qid": [1, 1, 2, 2], "grade": [1, 0, 2, 0], "x": [0.1, 0.2, 0.3, 0.4]})
    pq.write_table(table.append_column("y", pa.array([0.4, 0.3, 0.2, 0.1])), "p.pdf")
    trec = ["--qrels", "q.svg", "--run", "a.png", "--run", "b.png"]
    argv, target = {
        "run": (trec, "a.png"),
        "qrels": (trec, "./q.svg"),
        "predictions": (["p.pdf", "--scores", "x,y"], "p.pdf"),
        "link to a run": (trec, "link.png"),
    }[named]
    before = {path: path.read_bytes() for path in tmp_path.iterdir()}
    status, out, err = run_main(capsys, "compare", *argv, "--plot", target)
    assert status == 2 and out == ""
    assert err.startswith(f"fastndcg: error: --plot {target} is the input ") and "overwrite" in err
    assert {path: path.read_bytes() for path in tmp_path.iterdir()} == before
    assert Path("link.png").is_symlink()


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "forest.xyz",
            "--plot forest.xyz has the suffix .xyz, which is not a format it writes; name it",
        ),
        ("forest", "--plot forest has no suffix, which is not a format it writes; name it"),
        ("nowhere/forest.png", "there is no directory"),
        (".", "--plot . is a directory; give a file name in it"),
    ],
)
def test_a_plot_path_that_cannot_be_written_is_refused_before_the_work(
    capsys, tmp_path, monkeypatch, target, message
):
    """Before, an unsupported suffix or a missing directory was an "internal error" (exit 1)
    after the whole comparison ran."""
    pytest.importorskip("matplotlib")
    from fastndcg.cli import compare as command

    monkeypatch.chdir(tmp_path)
    Path("q.txt").write_text(SMALL_QRELS)
    for name, text in SMALL_RUNS.items():
        Path(f"{name}.run").write_text(text)

    def no_work(*args, **kwargs):
        raise AssertionError("the comparison ran before the plot path was checked")

    monkeypatch.setattr(command, "score_runs", no_work)
    trec = ["--qrels", "q.txt", "--run", "a.run", "--run", "b.run"]
    status, out, err = run_main(capsys, "compare", *trec, "--plot", target)
    assert status == 2 and out == ""
    assert err.startswith("fastndcg: error: --plot ") and message in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.run", "b.run", "q.txt"]


def test_a_plot_is_written_whole_through_a_link_with_the_umask(capsys, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    Path("q.txt").write_text(SMALL_QRELS)
    for name, text in SMALL_RUNS.items():
        Path(f"{name}.run").write_text(text)
    Path("figures").mkdir()
    Path("latest.svg").symlink_to("figures/forest.svg")  # dangling until written
    old = os.umask(0o027)
    try:
        status, _, _ = run_main(
            capsys, "compare", "--qrels", "q.txt", "--run", "a.run", "--run", "b.run",
            "--plot", "latest.svg",
        )  # fmt: skip
    finally:
        os.umask(old)
    assert status == 0 and Path("latest.svg").is_symlink()
    written = Path("figures/forest.svg")
    assert b"<svg" in written.read_bytes()[:400]
    assert stat.S_IMODE(written.stat().st_mode) == 0o640
    assert sorted(p.name for p in Path("figures").iterdir()) == ["forest.svg"]
