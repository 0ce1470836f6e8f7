"""NDCG in a validation loop: fastndcg.torch.NDCG against torchmetrics' RetrievalNormalizedDCG.

One validation epoch of 8,000 queries x 40 documents (torchmetrics issue 2287's case): a fresh
metric, ``update`` with the whole epoch, ``compute``. Both metrics run in this one process on the
same CPU tensors, round by round (each round: torchmetrics once, then ten fastndcg epochs in a
row per input form, as a validation loop runs them; medians over the rounds); fastndcg uses
``preset="torchmetrics"`` so that both compute the same number (checked). Inputs: 1-D rows with
``indexes`` in query order, the same rows shuffled, and fastndcg's 2-D ``[queries, documents]``
form. Also prints the memory the accumulated state holds (rows x bytes per row).

Usage: ``python scripts/bench_training.py [--queries 8000] [--documents 40] [--json PATH]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from torchmetrics.retrieval import RetrievalNormalizedDCG

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import report

from fastndcg.torch import NDCG


def epoch(make, *inputs, **more) -> tuple[float, float, object]:
    """Seconds for a fresh metric's update + compute, the value, and the metric."""
    metric = make()
    start = time.perf_counter()
    metric.update(*inputs, **more)
    value = metric.compute()
    return time.perf_counter() - start, float(value), metric


def state_bytes(metric) -> int:
    return sum(
        part.numel() * part.element_size()
        for name in metric._defaults
        for part in getattr(metric, name)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=8000)
    parser.add_argument("--documents", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5, help="torchmetrics runs (fastndcg: 10x)")
    parser.add_argument("--json", type=Path, help="also write the table here (docs/benchmarks/)")
    args = parser.parse_args()
    n_queries, n_documents = args.queries, args.documents
    generator = torch.Generator().manual_seed(0)
    preds = torch.rand(n_queries * n_documents, generator=generator)
    target = torch.randint(0, 5, (n_queries * n_documents,), generator=generator)
    indexes = torch.arange(n_queries).repeat_interleave(n_documents)
    shuffle = torch.randperm(indexes.numel(), generator=generator)
    cases = {
        "1-D, indexes in query order": (preds, target, {"indexes": indexes}),
        "1-D, rows shuffled": (preds[shuffle], target[shuffle], {"indexes": indexes[shuffle]}),
        "2-D [queries, documents]": (
            preds.view(n_queries, n_documents),
            target.view(n_queries, n_documents),
            {},
        ),
    }
    ours = lambda: NDCG(preset="torchmetrics")  # noqa: E731
    theirs = RetrievalNormalizedDCG
    epoch(ours, *cases["2-D [queries, documents]"][:2])  # compile the kernels once
    times: dict[str, list[float]] = {name: [] for name in cases}
    times["torchmetrics"] = []
    values, memory = {}, {}
    for _ in range(args.rounds):
        seconds, values["torchmetrics"], metric = epoch(theirs, preds, target, indexes=indexes)
        memory["torchmetrics"] = state_bytes(metric)
        times["torchmetrics"].append(seconds)
        for name, (p, t, more) in cases.items():
            for _ in range(10):  # epochs in a row, as a validation loop runs them
                seconds, values[name], metric = epoch(ours, p, t, **more)
                times[name].append(seconds)
                memory[name] = state_bytes(metric)
    for name in cases:
        assert abs(values[name] - values["torchmetrics"]) < 2e-6, (name, values)
    reference = statistics.median(times["torchmetrics"])
    rows_in_epoch = n_queries * n_documents
    columns = ["metric", "input", "update + compute (median)", "speed-up", "state"]
    rows = [
        [
            "torchmetrics RetrievalNormalizedDCG",
            "1-D, indexes in query order",
            f"{reference * 1e3:,.0f} ms",
            "1x",
            f"{memory['torchmetrics']:,} bytes ({memory['torchmetrics'] / rows_in_epoch:.1f} per row)",
        ]
    ]
    for name in cases:
        median = statistics.median(times[name])
        rows.append(
            [
                "fastndcg.torch.NDCG(preset='torchmetrics')",
                name,
                f"{median * 1e3:.2f} ms",
                f"{reference / median:,.0f}x",
                f"{memory[name]:,} bytes ({memory[name] / rows_in_epoch:.1f} per row)",
            ]
        )
    print(
        f"{n_queries:,} queries x {n_documents} documents, CPU tensors, torch {torch.__version__}"
    )
    print("| " + " | ".join(columns) + " |")
    print("|---|---|--:|--:|--:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.json:
        report.write(
            args.json,
            title="NDCG in a validation loop: fastndcg.torch.NDCG and torchmetrics",
            command=report.command_line(),
            columns=columns,
            rows=rows,
            data=f"{n_queries:,} queries x {n_documents} documents: float32 predictions, int64 "
            "targets 0-4 (torch.Generator seed 0); a fresh metric per epoch",
            seconds={name: statistics.median(found) for name, found in times.items()},
            tools=("torch", "torchmetrics"),
        )


if __name__ == "__main__":
    main()
