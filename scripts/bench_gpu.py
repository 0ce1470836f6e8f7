"""fastndcg's GPU backend against the GPU floor, torch, torchmetrics and the CPU (issue 28).

One unattended command (a few minutes at most) printing a Markdown table::

    python scripts/bench_gpu.py                 # 1,000,000 queries (about 99 million rows)
    python scripts/bench_gpu.py --queries 50 --simulate   # numba-cuda's simulator, no GPU

Data: ``fastndcg.synthetic.make_synthetic(n)`` (lognormal list lengths, mean 99; int8 grades;
float32 scores), copied to the GPU once; then, best of ``--repeat`` runs each, with the device
synchronised around every timing:

- the GPU floor: one read of grades and scores on the device (a torch sum of each);
- the host -> device copy of offsets, grades and scores;
- fastndcg ``backend="cuda"`` on the device arrays: NDCG@10 (exp2 gain, log2 discount, ideal
  from the list, ``ties="average"``), six cutoffs (1, 3, 5, 10, 20, 100) in one pass, the whole
  list (``k=None``), and ``ties="stable"``; each as the whole ``fastndcg.ndcg`` call (host
  planning, aggregation and the copy of the per-query results included) and as the scoring
  alone (the backend's ``score`` on a plan built once: the kernels, their launches and the
  result copy);
- 1 billion rows: the k=10 scoring time scaled per row (ten calls on the default data);
- the torch baseline: two global stable argsorts (score descending, then query) and
  ``index_add_`` for DCG and IDCG (stable ties);
- torchmetrics ``RetrievalNormalizedDCG(top_k=10)`` on a prefix of the queries, scaled to all
  rows (it loops over queries in Python);
- fastndcg ``backend="numba"`` on all the CPU cores of the same machine (host arrays).

It checks the values against each other: cuda against numba at 1e-12 per query for every
variant, torch against ``ties="stable"``, torchmetrics against ``preset="torchmetrics"`` (float32
arithmetic on its side: 1e-5). A disagreement ends the command with status 1.

Targets (issue 28; an H100 or H200, data on the device, default options unless said):

- ``k=10`` within 4x the GPU floor (about 2 ms on an H200), ``ties="average"`` at most 1.3x
  ``ties="stable"``;
- at least 20x faster than the torch baseline;
- six cutoffs within 1.5x of ``k=10``; ``k=None`` within 3x of ``k=10``;
- 1 billion rows (in chunks) in under 50 ms.

The targets are checked against the scoring times and printed under the table.

Runs on a machine with Python 3.12, torch, CuPy, numba 0.68, numba-cuda 0.30.4 and NumPy 2.5
and no package index: fastndcg is imported from this checkout (no install needed); pyarrow,
which fastndcg imports but nothing here uses, is replaced by a stub when it is missing; torch,
CuPy and torchmetrics are optional (their rows say so when absent); the GPU floor and the copy
then use numba-cuda. ``--simulate`` sets ``NUMBA_ENABLE_CUDASIM=1`` before numba is imported:
the kernels then run in Python on the CPU (timings meaningless), on short lists (mean 8 rows).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIX = [1, 3, 5, 10, 20, 100]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000, help="number of queries")
    parser.add_argument("--repeat", type=int, default=5, help="runs per timing (best kept)")
    parser.add_argument("--prefix", type=int, default=2_000, help="queries torchmetrics scores")
    parser.add_argument(
        "--simulate", action="store_true", help="numba-cuda's simulator (no GPU needed)"
    )
    return parser.parse_args()


class _Anything:
    """What the pyarrow stub hands out: callable, subscriptable, hashable, never used."""

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __or__(self, other):
        return _Anything()

    __ror__ = __or__


class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return sys.modules.get(f"{self.__name__}.{name}") or _Anything()


def _import_fastndcg():
    """fastndcg from this checkout; pyarrow stubbed where it is not installed."""
    sys.path.insert(0, str(ROOT))
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        for name in ("pyarrow", "pyarrow.compute", "pyarrow.parquet", "pyarrow.csv", "pyarrow.lib"):
            sys.modules[name] = _Stub(name)
        print("(pyarrow is not installed: stubbed; nothing timed here uses it)", file=sys.stderr)
    import fastndcg

    return fastndcg


def _optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


def main() -> int:
    args = _arguments()
    if args.simulate:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        args.repeat = 1
        args.prefix = min(args.prefix, 5)
    fastndcg = _import_fastndcg()
    import numpy as np

    from fastndcg._backends import get_backend, resolve_backend
    from fastndcg._core.definition import Definition
    from fastndcg._core.layout import build_layout
    from fastndcg.synthetic import make_synthetic

    cuda_backend = resolve_backend("cuda")  # an error naming what is missing, if anything
    from numba import cuda

    torch = _optional("torch")
    gpu_torch = torch is not None and torch.cuda.is_available() and not args.simulate
    device_name = cuda_backend.device_name()

    data = make_synthetic(args.queries, mean_len=8.0 if args.simulate else 100.0)
    offsets, grades, scores = data.offsets, data.grades, data.scores
    qid = data.qid()
    rows = data.n_rows

    def synchronize():
        if not args.simulate:
            cuda.synchronize()
        if gpu_torch:
            torch.cuda.synchronize()

    def best(run, repeat=None):
        run()  # warm up (compiles)
        synchronize()
        times = []
        for _ in range(repeat or args.repeat):
            start = time.perf_counter()
            out = run()
            synchronize()
            times.append(time.perf_counter() - start)
        return min(times), out

    table: list[tuple[str, float | None, str]] = []

    # the data on the device
    if gpu_torch:
        copy_time, on_device = best(
            lambda: tuple(torch.from_numpy(a).cuda() for a in (offsets, grades, scores, qid)),
            repeat=2,
        )
        d_offsets, d_grades, d_scores, d_qid = on_device
        floor_time, _ = best(lambda: (d_grades.sum(dtype=torch.int64), d_scores.sum()))
        floor_how = "torch sum of both"
    else:
        copy_time, on_device = best(
            lambda: tuple(cuda.to_device(a) for a in (offsets, grades, scores)), repeat=1
        )
        d_offsets, d_grades, d_scores = on_device
        floor_time, _ = best(lambda: (cuda_backend.column_stats(d_grades, False),
                                      cuda_backend.column_stats(d_scores, False)))  # fmt: skip
        floor_how = "numba-cuda scans of both"
    table.append((f"GPU floor: one read of grades and scores ({floor_how})", floor_time, ""))
    table.append(("host -> device copy of offsets, grades and scores", copy_time, ""))

    # fastndcg cuda
    failures: list[str] = []
    host_name = "numba" if get_backend("numba") is not None else "numpy"
    variants = {
        "k=10": dict(k=10),
        "six cutoffs (1, 3, 5, 10, 20, 100)": dict(k=SIX),
        "k=None": dict(k=None),
        'k=10, ties="stable"': dict(k=10, ties="stable"),
    }
    scoring: dict[str, float] = {}
    for label, options in variants.items():
        call_time, result = best(
            lambda options=options: fastndcg.ndcg(
                d_grades, d_scores, offsets=d_offsets, backend="cuda", **options
            )
        )
        definition = Definition.create(backend="cuda", **options)
        layout = build_layout(d_grades, d_scores, offsets=d_offsets, backend=cuda_backend)
        plan = definition.plan(layout)
        score_time, _ = best(lambda plan=plan: cuda_backend.score(plan))
        scoring[label] = score_time
        table.append((f"fastndcg cuda, {label}", call_time, "the whole ndcg call"))
        table.append((f"fastndcg cuda, {label}, scoring only", score_time, "kernels + result copy"))
        cpu = fastndcg.ndcg(grades, scores, offsets=offsets, backend=host_name, **options)
        gap = np.nanmax(np.abs(result.per_query - cpu.per_query), initial=0.0)
        same_nan = np.array_equal(np.isnan(result.per_query), np.isnan(cpu.per_query))
        if not (gap <= 1e-12 and same_nan):
            failures.append(f"cuda {label} differs from {host_name} by {gap:g} per query")
        if label == "k=10":
            numba_time, _ = best(
                lambda: fastndcg.ndcg(grades, scores, offsets=offsets, backend=host_name, k=10)
            )
        if label == 'k=10, ties="stable"':
            stable = result

    ten_calls = scoring["k=10"] * 1e9 / rows  # ten calls on this data, for 1M queries
    table.append(("1 billion rows at the k=10 scoring rate (scaled per row)", ten_calls, "k=10"))

    # torch baseline
    if gpu_torch or torch is not None:
        device = "cuda" if gpu_torch else "cpu"
        t_offsets = d_offsets if gpu_torch else torch.from_numpy(offsets)
        t_grades = d_grades if gpu_torch else torch.from_numpy(grades)
        t_scores = d_scores if gpu_torch else torch.from_numpy(scores)
        t_qid = d_qid if gpu_torch else torch.from_numpy(qid)

        def torch_ndcg(k=10):
            starts = t_offsets[:-1]
            gains = torch.exp2(t_grades.double()) - 1.0

            def dcg_of(order):
                order = order[torch.argsort(t_qid[order], stable=True)]
                q = t_qid[order]
                rank = torch.arange(order.numel(), device=device) - starts[q]
                discount = 1.0 / torch.log2(rank.double() + 2.0)
                terms = torch.where(rank < k, gains[order] * discount, 0.0)
                return torch.zeros(starts.numel(), dtype=torch.float64, device=device).index_add_(
                    0, q, terms
                )

            dcg = dcg_of(torch.argsort(-t_scores, stable=True))
            idcg = dcg_of(torch.argsort(-gains, stable=True))
            return torch.where(idcg > 0, dcg / idcg, torch.nan)

        torch_time, values = best(torch_ndcg)
        values = values.cpu().numpy()
        gap = np.nanmax(np.abs(values - stable.per_query[:, 0]), initial=0.0)
        if not (
            gap <= 1e-12 and np.array_equal(np.isnan(values), np.isnan(stable.per_query[:, 0]))
        ):
            failures.append(f"torch two-argsort baseline differs from ties='stable' by {gap:g}")
        where = "" if gpu_torch else " (on the CPU: no CUDA torch here)"
        table.append(
            (f"torch: two stable argsorts + index_add_, stable ties{where}", torch_time, "")
        )
    else:
        table.append(("torch: two stable argsorts + index_add_ (torch not installed)", None, ""))

    # torchmetrics on a prefix
    torchmetrics = _optional("torchmetrics")
    if torchmetrics is not None and torch is not None:
        from torchmetrics.retrieval import RetrievalNormalizedDCG

        prefix = min(args.prefix, data.n_queries)
        end = int(offsets[prefix])
        device = "cuda" if gpu_torch else "cpu"
        p_grades = torch.from_numpy(grades[:end].astype(np.int64)).to(device)
        p_scores = torch.from_numpy(scores[:end]).to(device)
        p_qid = torch.from_numpy(qid[:end]).to(device)

        def metric():
            m = RetrievalNormalizedDCG(top_k=10).to(device)
            m.update(p_scores, p_grades, indexes=p_qid)
            return m.compute()

        tm_time, tm_value = best(metric, repeat=1)
        expected = fastndcg.ndcg(
            grades[:end], scores[:end], offsets=offsets[: prefix + 1], k=10, preset="torchmetrics"
        )
        if abs(float(tm_value) - float(expected.mean[0])) > 1e-5:
            failures.append(f"torchmetrics {float(tm_value)} != fastndcg {float(expected.mean[0])}")
        table.append(
            (
                f"torchmetrics RetrievalNormalizedDCG(top_k=10), {prefix:,} queries scaled per row",
                tm_time * rows / max(end, 1),
                f"measured {tm_time:.3g} s",
            )
        )
    else:
        table.append(("torchmetrics (not installed)", None, ""))

    cores = os.cpu_count()
    table.append(
        (f"fastndcg {host_name} on the CPU ({cores} cores), k=10", numba_time, "host arrays")
    )

    # the table
    print(f"\nGPU: {device_name}; {data.n_queries:,} queries, {rows:,} rows "
          f"(int8 grades, float32 scores); best of {args.repeat}\n")  # fmt: skip
    print("| what | time | relative to the GPU floor | note |")
    print("|---|--:|--:|---|")
    for what, seconds, note in table:
        if seconds is None:
            print(f"| {what} | - | - | {note} |")
        else:
            print(f"| {what} | {seconds * 1e3:.3f} ms | {seconds / floor_time:.1f}x | {note} |")
    ratio = lambda a, b: scoring[a] / scoring[b]  # noqa: E731
    targets = [
        ("k=10 within 4x the floor", scoring["k=10"] / floor_time, 4.0),
        ('ties="average" at most 1.3x "stable"', ratio("k=10", 'k=10, ties="stable"'), 1.3),
        (
            "six cutoffs within 1.5x of k=10",
            ratio("six cutoffs (1, 3, 5, 10, 20, 100)", "k=10"),
            1.5,
        ),
        ("k=None within 3x of k=10", ratio("k=None", "k=10"), 3.0),
        ("1 billion rows under 50 ms", ten_calls / 0.05, 1.0),
    ]
    if gpu_torch:
        targets.append(("20x faster than torch", 20.0 * scoring["k=10"] / torch_time, 1.0))
    simulated = " (simulated: the timings mean nothing)" if args.simulate else ""
    print(f"\nTargets (scoring times; ratio <= limit passes){simulated}:\n")
    for what, value, limit in targets:
        print(f"- {what}: {value:.2f} (limit {limit:g}) {'pass' if value <= limit else 'MISSED'}")
    if failures:
        print("\nvalues DISAGREE:\n" + "\n".join(f"- {f}" for f in failures))
        return 1
    print("\nvalues agree: cuda = numba at 1e-12 per query for every variant; torch = stable; "
          "torchmetrics = its preset")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
