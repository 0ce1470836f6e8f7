"""File benchmarks: ndcg_parquet against reading the columns, ndcg_run against parsing the files.

Measured in one run on the same files (ratios, because the machines are shared and noisy),
each task timed in turn with its baseline, the best of ``--repeat`` calls:

- Parquet: ``fastndcg.ndcg_parquet`` (streaming, k=10) against ``pyarrow`` reading the same
  three columns batch by batch (the floor for any file-based scorer), on a file of ``--rows``.
- TREC: ``fastndcg.ndcg_run`` (k=10) against parsing the run and qrels with ``pyarrow.csv``
  alone, and against ``pytrec_eval`` end to end (parsing the same files into its dicts in Python,
  then evaluating ``ndcg_cut_10``) on ``--trec-queries`` queries with a budget.

Usage: ``python scripts/bench_files.py --rows 100000000 --trec-queries 1000000``
(``--json docs/benchmarks/files.json`` also writes the table for the documentation)
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

import fastndcg
from fastndcg.synthetic import make_synthetic

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import report


def best_in_turn(funcs, repeat):
    """Minimum wall time of ``repeat`` calls of each function after one untimed call each.

    The functions are called in turn, so that a change in the machine's speed during the
    measurement (minutes, on a shared machine) weighs on a task and its baseline alike.
    Returns ``[(minimum seconds, last result), ...]`` in the order of ``funcs``.
    """
    results = [func() for func in funcs]  # imports, kernels, thread pools, OS file cache warm
    times = [[] for _ in funcs]
    for _ in range(repeat):
        for i, func in enumerate(funcs):
            start = time.perf_counter()
            results[i] = func()
            times[i].append(time.perf_counter() - start)
    return [(min(t), r) for t, r in zip(times, results, strict=True)]


def write_parquet(path: Path, rows: int, seed: int) -> int:
    """Write ``rows`` (about) query-grouped rows in row groups; return the exact row count."""
    written = 0
    writer = None
    piece = 0
    while written < rows:
        data = make_synthetic(min(200_000, max(1, (rows - written) // 100)), seed=seed + piece)
        qid = data.qid() + written  # unique and increasing across pieces
        table = pa.table({"qid": qid, "grade": data.grades, "score": data.scores})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=1 << 20)
        written += table.num_rows
        piece += 1
    writer.close()
    return written


def read_columns(path: Path, batch_rows: int) -> int:
    rows = 0
    for batch in pq.ParquetFile(path).iter_batches(
        batch_size=batch_rows, columns=["qid", "grade", "score"]
    ):
        rows += batch.num_rows
    return rows


COLLECTION = 8_841_823  # documents to draw ids from: the size of MS MARCO's passage collection


def write_trec(folder: Path, queries: int, seed: int) -> tuple[Path, Path, int]:
    """A run (every document, score order irrelevant) and qrels (the documents with grade > 0).

    Document ids spread over a collection of :data:`COLLECTION` documents (row ``r`` gets
    ``D{r * 2654435761 % COLLECTION}``: distinct within each query, most of them distinct in
    the run), as in a real run; ids repeated across queries would flatter the join.
    """
    data = make_synthetic(queries, seed=seed)
    rows = np.arange(data.n_rows, dtype=np.int64)
    position = rows - np.repeat(data.offsets[:-1], np.diff(data.offsets))
    qid = pa.array(data.qid()).cast(pa.string())
    document = rows * 2654435761 % COLLECTION
    docid = pc.binary_join_element_wise("D", pa.array(document).cast(pa.string()), "")
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run = pa.table(
        {
            "qid": qid,
            "q0": pa.array(np.full(data.n_rows, "Q0")),
            "docid": docid,
            "rank": pa.array(position + 1),
            "score": pa.array(data.scores.astype(np.float64)),
            "tag": pa.array(np.full(data.n_rows, "bench")),
        }
    )
    judged = pa.array(data.grades > 0)
    qrels = pa.table(
        {
            "qid": qid.filter(judged),
            "iteration": pa.array(np.zeros(int(np.sum(data.grades > 0)), dtype=np.int64)),
            "docid": docid.filter(judged),
            "grade": pa.array(data.grades[data.grades > 0].astype(np.int64)),
        }
    )
    run_path, qrels_path = folder / "bench.run", folder / "bench.qrels"
    pacsv.write_csv(run, run_path, options)
    pacsv.write_csv(qrels, qrels_path, options)
    return run_path, qrels_path, data.n_rows


def parse_trec(run_path: Path, qrels_path: Path) -> int:
    """pyarrow's CSV reader on both files: the floor for any TREC-file scorer."""
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False)
    run = pacsv.read_csv(
        run_path, read_options=pacsv.ReadOptions(column_names=list("abcdef")), parse_options=parse
    )
    qrels = pacsv.read_csv(
        qrels_path, read_options=pacsv.ReadOptions(column_names=list("abcd")), parse_options=parse
    )
    return run.num_rows + qrels.num_rows


def pytrec_eval_end_to_end(run_path: Path, qrels_path: Path, k: int) -> dict:
    import pytrec_eval

    qrels: dict = {}
    with qrels_path.open() as f:
        for line in f:
            qid, _, doc, grade = line.split()
            qrels.setdefault(qid, {})[doc] = int(grade)
    run: dict = {}
    with run_path.open() as f:
        for line in f:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"})
    return evaluator.evaluate(run)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=20_000_000, help="rows of the Parquet file")
    parser.add_argument(
        "--trec-queries", type=int, default=100_000, help="queries of the TREC files"
    )
    parser.add_argument(
        "--pytrec-queries", type=int, default=20_000, help="queries for pytrec_eval (slow)"
    )
    parser.add_argument("--batch-rows", type=int, default=1 << 20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--dir", default=None, help="where to write the files (default: a temp dir)"
    )
    parser.add_argument("--json", type=Path, help="also write the table here (docs/benchmarks/)")
    args = parser.parse_args()

    fastndcg.warmup()
    folder = Path(args.dir or tempfile.mkdtemp(prefix="fastndcg-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    cells: list[list[str]] = []

    parquet = folder / "bench.parquet"
    rows = write_parquet(parquet, args.rows, seed=0)
    (read_time, _), (score_time, result) = best_in_turn(
        [
            lambda: read_columns(parquet, args.batch_rows),
            lambda: fastndcg.ndcg_parquet(
                parquet, k=10, batch_rows=args.batch_rows, progress=False
            ),
        ],
        args.repeat,
    )
    cells += [
        [f"pyarrow: read the 3 columns of {rows:,} rows, batch by batch", f"{read_time:.2f}",
         "1.00", f"{rows / read_time:,.0f}"],
        [f"`fastndcg.ndcg_parquet`, k=10, streaming ({result.n_queries:,} queries)",
         f"{score_time:.2f}", f"{score_time / read_time:.2f}", f"{rows / score_time:,.0f}"],
    ]  # fmt: skip

    run_path, qrels_path, run_rows = write_trec(folder, args.trec_queries, seed=1)
    (parse_time, _), (trec_time, trec_result) = best_in_turn(
        [
            lambda: parse_trec(run_path, qrels_path),
            lambda: fastndcg.ndcg_run(
                qrels_path, run_path, k=10, gain="linear", ties="docid_desc", zero_idcg="zero"
            ),
        ],
        args.repeat,
    )
    cells += [
        [f"pyarrow.csv: parse the run ({run_rows:,} rows) and its qrels", f"{parse_time:.2f}",
         "1.00", f"{run_rows / parse_time:,.0f}"],
        [f"`fastndcg.ndcg_run`, k=10, trec_eval's ties ({trec_result.n_queries:,} queries)",
         f"{trec_time:.2f}", f"{trec_time / parse_time:.2f}", f"{run_rows / trec_time:,.0f}"],
    ]  # fmt: skip
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        cells.append(["pytrec_eval", "not installed", "", ""])
    else:
        small = folder / "small"
        small.mkdir(exist_ok=True)
        small_run, small_qrels, small_rows = write_trec(small, args.pytrec_queries, seed=2)
        # parsing alone bounds any scorer that parses with pyarrow: pytrec_eval's time over it
        (ours, _), (theirs, _), (small_parse, _) = best_in_turn(
            [
                lambda: fastndcg.ndcg_run(
                    small_qrels, small_run, k=10, gain="linear", ties="docid_desc"
                ),
                lambda: pytrec_eval_end_to_end(small_run, small_qrels, 10),
                lambda: parse_trec(small_run, small_qrels),
            ],
            args.repeat,
        )
        cells += [
            [f"`fastndcg.ndcg_run` on {args.pytrec_queries:,} queries ({small_rows:,} rows)",
             f"{ours:.2f}", "1.00", f"{small_rows / ours:,.0f}"],
            ["pytrec_eval end to end on the same files (Python parsing, `evaluate`)",
             f"{theirs:.2f}", f"{theirs / ours:.1f}", f"{small_rows / theirs:,.0f}"],
            [f"pyarrow.csv: parse the same files (pytrec_eval / parse: {theirs / small_parse:.1f})",
             f"{small_parse:.2f}", f"{small_parse / ours:.2f}", f"{small_rows / small_parse:,.0f}"],
        ]  # fmt: skip
    columns = ["task", "seconds", "relative", "rows/s"]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"Python {platform.python_version()}, pyarrow {pa.__version__}, "
        f"fastndcg {fastndcg.__version__}\n"
    )
    print("| " + " | ".join(columns) + " |\n|---|--:|--:|--:|")
    print("\n".join("| " + " | ".join(row) + " |" for row in cells))
    if args.json:
        report.write(
            args.json,
            title="Parquet and TREC files",
            command=report.command_line(),
            columns=columns,
            rows=cells,
            data=f"a {rows:,}-row Parquet file (`make_synthetic`, int8 grades, float32 scores; "
            f"read in {args.batch_rows:,}-row batches by both), TREC files of "
            f"{args.trec_queries:,} queries and of {args.pytrec_queries:,} queries, written by "
            "this script; the files in the OS cache",
            notes=[
                f"Each task is timed in turn with its baseline, the best of {args.repeat} "
                "calls; *relative* is the time over the baseline of its group (the first row "
                "of each pair or triple).",
            ],
            tools=("pytrec-eval-terrier",),
        )


if __name__ == "__main__":
    main()
