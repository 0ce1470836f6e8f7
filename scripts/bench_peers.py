"""fastndcg against its peers: the same data, one run, times as ratios to a floor.

Generates synthetic ranking data (:func:`fastndcg.synthetic.make_synthetic`), then times
fastndcg, the baselines and every installed peer (ranx, pytrec_eval, scikit-learn, LightGBM,
XGBoost, torchmetrics) on it, checks that their values agree with fastndcg run under the peer's
own definition of NDCG, and prints a Markdown table with the machine description, the date and
the command line. The documentation's peers table (docs/benchmarks/peers.json, --json) comes
from it; ``scripts/bench_peers_measures.py`` writes the measures' case (nDCG, P, R, AP, RR in
one call) into the same file's ``measures`` section, which this command keeps.

Usage::

    python scripts/bench_peers.py                          # 100,000 queries, NDCG@10
    python scripts/bench_peers.py --queries 2000 --budget 5 --out peers.md

Method
------
Timings
    ``time.perf_counter`` around the timed call only. Every target first runs once on a slice
    of the data (same dtypes, same options), so Numba compilation and other first-call costs
    stay out of the timings. A measurement is repeated ``--repeat`` times (fewer when the
    repeats would exceed ``--budget`` seconds) and the minimum is kept. What each row times
    (a kernel on the tool's prebuilt structures, the metric only, or end to end from the NumPy
    arrays) is said in the table.
Ratios
    Every time is divided by the floor measured in the same run: one parallel streaming read of
    the grades and scores (``bench/baselines.py``), the lower bound for anything that reads
    every row; its time is the minimum of many runs at the start and at the end of the run.
    Shared machines are noisy; ratios travel better than seconds.
Slow peers
    Targets that build Python objects per row or per query (ranx, pytrec_eval, scikit-learn,
    torchmetrics) run on the first N queries only. N comes from a pilot run on a few hundred
    queries, so that one run, setup included, takes about ``--budget`` seconds. Their time is
    scaled to the full data per unit of work (rows; padded cells for scikit-learn's dense 2-D
    input, whose cost follows queries x longest list) and divided by the full-data floor. The
    scaling assumes cost linear in that unit, as it is for these per-query tools; the table
    says which rows were scaled and from how many queries.
Agreement
    The values of each target are compared with fastndcg's under the options that reproduce
    the target's definition (gain, tie order, zero-IDCG value, score precision), on the queries
    it was measured on: largest absolute difference per query, and how many queries differ by
    more than the tolerance (1e-9 for float64 tools, 1e-5 for float32 arithmetic). LightGBM and
    XGBoost report only the mean, which is compared instead. Disagreement is reported, never
    fatal; a target that fails is reported with its error.
Isolation
    The floor, fastndcg and the baselines run in the main process, before any peer is imported;
    each peer runs in a child process of its own (this script with ``--worker NAME``), which
    regenerates the same data from the seed (checked). Peers change process-wide state: ranx
    switches Numba to its ``workqueue`` threading layer on import and sets Numba's thread
    count; XGBoost and torch bring their own OpenMP runtimes.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.metadata
import importlib.util
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

import fastndcg
from fastndcg.synthetic import Synthetic, make_synthetic

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import report as bench_report
from baselines import floor, lexsort_ndcg, plain_numba_kernel

WARM_QUERIES = 2000  # warm-up slice of a fast target: enough rows for the parallel kernels
SLOW_WARM_QUERIES = 20  # warm-up slice of a slow target (first-call costs only)
PILOT_QUERIES = 200  # pilot run that sizes a slow target's subset
BUDGET_FILL = 0.8  # share of --budget a sized run aims at (the pilot's estimate is rough)
MAX_PADDED_CELLS = 100_000_000  # scikit-learn's dense input: two float64 matrices of 800 MB
DOC_ID_WIDTH = 7
DOC_ID_LIMIT = 10**DOC_ID_WIDTH
F64_TOL = 1e-9
F32_TOL = 1e-5
RESULT_TAG = "bench_peers result: "  # prefix of the JSON line a worker prints
DEFAULTS = dict(gain="exp2", ties="average", zero_idcg="skip", score_dtype="float64")


class Peer(NamedTuple):
    """A peer: the module to import, the distribution whose version is reported, its name."""

    module: str
    distribution: str
    label: str


PEERS = {  # --peers names
    "lightgbm": Peer("lightgbm", "lightgbm", "LightGBM"),
    "xgboost": Peer("xgboost", "xgboost", "XGBoost"),
    "ranx": Peer("ranx", "ranx", "ranx"),
    "pytrec_eval": Peer("pytrec_eval", "pytrec-eval-terrier", "pytrec_eval"),
    "sklearn": Peer("sklearn", "scikit-learn", "scikit-learn"),
    "torchmetrics": Peer("torchmetrics", "torchmetrics", "torchmetrics"),
}


def version(distribution: str) -> str:
    """Installed version of a distribution, or '?'."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "?"


# -- data and units of work -----------------------------------------------------------------------


def head(data: Synthetic, n_queries: int) -> Synthetic:
    """The first ``n_queries`` queries (views, no copies)."""
    n_queries = min(n_queries, data.n_queries)
    end = int(data.offsets[n_queries])
    return Synthetic(data.offsets[: n_queries + 1], data.grades[:end], data.scores[:end])


def row_work(data: Synthetic) -> np.ndarray:
    """Work of every prefix of 1, 2, ... queries, in rows."""
    return data.offsets[1:].astype(np.float64)


def padded_work(data: Synthetic) -> np.ndarray:
    """Work of every prefix in padded cells: queries x longest list so far."""
    lengths = np.maximum(np.diff(data.offsets), 2)
    return np.arange(1, data.n_queries + 1) * np.maximum.accumulate(lengths).astype(np.float64)


def queries_within(prefix_work: np.ndarray, limit: float) -> int:
    """The most leading queries whose work stays within ``limit`` (at least one)."""
    return max(int(np.searchsorted(prefix_work, limit, side="right")), 1)


# -- what a row of the table is -------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One row of the table: how to set it up, what to time, what to compare it with.

    ``prepare`` builds what a run needs, untimed (a tool's own structures where the row times a
    kernel or the metric only); ``run`` is the timed call. ``values`` gives the values to check
    (default: what ``run`` returned): per-query NDCG, or the tool's mean when ``per_query`` is
    False. ``reference`` holds the :func:`fastndcg.ndcg` options that reproduce the target's
    definition; None means there is nothing to compare.
    """

    name: str
    timed: str
    run: Callable[[Any], Any]
    prepare: Callable[[Synthetic], Any] = lambda data: data
    values: Callable[[Any, Any], Any] | None = None  # (prepared, run output) -> values
    reference: dict[str, Any] | None = None
    tol: float = F64_TOL
    per_query: bool = True
    slow: bool = False  # measured on a budget-sized subset, then scaled
    work: Callable[[Synthetic], np.ndarray] = row_work
    max_work: float = float("inf")
    repeat: int | None = None  # None: --repeat


@dataclass
class Row:
    """A measured, failed or absent target."""

    name: str
    timed: str
    seconds: float | None = None  # for the full data (scaled when measured on a subset)
    measured_seconds: float | None = None
    n_queries: int = 0  # queries measured on
    n_rows: int = 0
    scale: float = 1.0
    unit: str = "row"
    agreement: str = ""
    reference: str = ""


@dataclass(frozen=True)
class Context:
    """Settings every target reads."""

    k: int
    threads: int
    budget: float
    repeat: int


def first_column(result: fastndcg.NDCGResult) -> np.ndarray:
    """Per-query values of the only cutoff."""
    return result.per_query[:, 0]


# -- baselines and fastndcg -----------------------------------------------------------------------


def floor_repeat(ctx: Context) -> int:
    """The floor is cheap and its minimum is the unit of every ratio: many more runs."""
    return max(40 * ctx.repeat, 100)


def floor_target(ctx: Context) -> Target:
    """One streaming read of grades and scores, the unit of every ratio."""
    return Target(
        "floor",
        "one parallel streaming read (sum of grades + scores)",
        lambda d: floor(d.grades, d.scores),
        repeat=floor_repeat(ctx),
    )


def fastndcg_target(ctx: Context, name: str, backend: str, threads: int | None) -> Target:
    """fastndcg's default definition: exp2 gain, tie-averaged, zero IDCG skipped (NaN)."""

    def run(data: Synthetic) -> np.ndarray:
        result = fastndcg.ndcg(
            data.grades,
            data.scores,
            offsets=data.offsets,
            k=ctx.k,
            backend=backend,
            n_threads=threads,
        )
        return first_column(result)

    call = f"backend={backend!r}" + (f", n_threads={threads}" if threads else "")
    return Target(name, f"`ndcg({call})` on the arrays", run, reference={})


def lexsort_target(ctx: Context) -> Target:
    """The textbook NumPy approach: one global lexsort by (query, -score)."""
    return Target(
        "NumPy lexsort",
        "global `np.lexsort` by (query, -score), `bincount` per query",
        lambda d: lexsort_ndcg(d.offsets, d.grades, d.scores, ctx.k),
        reference=dict(ties="stable"),
    )


def plain_numba_target(ctx: Context) -> Target:
    """The plain Numba kernel of the issue's table (a reference point, not part of fastndcg)."""
    kernel = plain_numba_kernel()
    return Target(
        "plain Numba kernel",
        "prange over queries, full `np.argsort` per query, exp2 gain",
        lambda d: kernel(d.offsets, d.grades, d.scores, ctx.k),
        reference=dict(ties="stable"),
    )


# -- peers: one adapter each ----------------------------------------------------------------------


def lightgbm_target(ctx: Context) -> Target:
    """LightGBM's lambdarank ``ndcg`` metric on the scores, given as ``init_score``.

    A Booster with no trees scores every row with its init score, so ``eval_train`` is the
    metric on the given scores. The metric caches 1/IDCG per query when the Booster is built;
    only ``eval_train`` is timed. Definition: gain table 2^g - 1, stable ties, a query without
    relevant items scores 1, mean over queries.
    """
    import lightgbm

    def prepare(data: Synthetic) -> Any:
        dataset = lightgbm.Dataset(
            np.zeros((data.n_rows, 1), np.float32),
            label=data.grades,
            group=np.diff(data.offsets),
            init_score=data.scores.astype(np.float64),
            params={"verbose": -1},
        )
        params = {
            "objective": "lambdarank",
            "metric": "ndcg",
            "eval_at": [ctx.k],
            "num_threads": ctx.threads,
            "verbose": -1,
        }
        return lightgbm.Booster(params=params, train_set=dataset)

    def run(booster: Any) -> float:
        (result,) = booster.eval_train()
        return float(result[2])

    return Target(
        f"LightGBM {version('lightgbm')}",
        f"`Booster.eval_train()`: ndcg@{ctx.k} of the init scores, metric only (Dataset, "
        "Booster and IDCG cache built before)",
        run,
        prepare,
        reference=dict(gain="exp2", ties="stable", zero_idcg="one"),
        per_query=False,
    )


def xgboost_target(ctx: Context) -> Target:
    """XGBoost's ``ndcg@k`` metric on the scores, given as ``base_margin``.

    With zero boosting rounds the prediction is the base margin, so ``Booster.eval`` is the
    metric on the given scores. A first evaluation (untimed) builds the metric's per-DMatrix
    IDCG cache. Definition: exp2 gain, stable ties, float32 predictions, a query without
    relevant items scores 1, mean over queries (capped at 1).
    """
    import xgboost

    def prepare(data: Synthetic) -> Any:
        matrix = xgboost.DMatrix(
            np.zeros((data.n_rows, 1), np.float32),
            label=data.grades,
            qid=data.qid(),
            base_margin=data.scores,
            nthread=ctx.threads,
        )
        params = {"objective": "rank:ndcg", "eval_metric": f"ndcg@{ctx.k}", "nthread": ctx.threads}
        booster = xgboost.train(params, matrix, num_boost_round=0)
        booster.eval(matrix)
        return booster, matrix

    def run(state: Any) -> float:
        booster, matrix = state
        return float(booster.eval(matrix).rsplit(":", 1)[1])

    return Target(
        f"XGBoost {version('xgboost')}",
        f"`Booster.eval(dmatrix)`: ndcg@{ctx.k} of the base margins, 0 rounds, metric only "
        "(DMatrix and IDCG cache built before)",
        run,
        prepare,
        reference=dict(gain="exp2", ties="stable", zero_idcg="one", score_dtype="float32"),
        per_query=False,
    )


def _query_ids(n_queries: int) -> list[str]:
    """Zero-padded query ids: their string order (ranx sorts by it) is the query order."""
    width = len(str(max(n_queries - 1, 1)))
    return [f"q{i:0{width}d}" for i in range(n_queries)]


def _doc_ids(data: Synthetic) -> list[str]:
    """Document ids by position in a list, decreasing, so that id-descending is input order.

    trec_eval (inside pytrec_eval) breaks score ties by document id descending; with these ids
    that is the input order, which fastndcg's ``ties="stable"`` reproduces. The ids have one
    width whatever the data: ranx compiles a kernel per id width.
    """
    longest = int(np.diff(data.offsets).max(initial=1))
    if longest > DOC_ID_LIMIT:
        raise ValueError(f"lists longer than {DOC_ID_LIMIT:,} items need wider document ids")
    return [f"d{DOC_ID_LIMIT - 1 - i:0{DOC_ID_WIDTH}d}" for i in range(longest)]


def as_dicts(data: Synthetic) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """qrels ``{qid: {docid: grade}}`` and run ``{qid: {docid: score}}`` from the arrays."""
    docs = _doc_ids(data)
    grades = data.grades.tolist()
    scores = data.scores.tolist()
    bounds = data.offsets.tolist()
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q, qid in enumerate(_query_ids(data.n_queries)):
        lo, hi = bounds[q], bounds[q + 1]  # docs has as many ids as the longest list
        qrels[qid] = dict(zip(docs, grades[lo:hi], strict=False))
        run[qid] = dict(zip(docs, scores[lo:hi], strict=False))
    return qrels, run


@contextlib.contextmanager
def numba_threads_kept() -> Iterator[None]:
    """Restore Numba's thread count afterwards: ranx sets it process-wide and leaves it."""
    import numba

    threads = numba.get_num_threads()
    try:
        yield
    finally:
        numba.set_num_threads(threads)


def ranx_targets(ctx: Context) -> list[Target]:
    """ranx end to end from the arrays, and its Numba kernel on prebuilt typed lists.

    Definition (``ndcg@k``): linear gain on labels >= 1 (lower labels count 0), zero IDCG
    scores 0. ``Run`` sorts each list with Numba's quicksort over insertion order, which keeps
    the input order of tie groups up to 16 items: fastndcg ``ties="stable"``.
    """
    import ranx
    from ranx.metrics import ndcg as ranx_ndcg

    reference = dict(gain="linear", ties="stable", zero_idcg="zero")

    def end_to_end(data: Synthetic) -> np.ndarray:
        qrels, run = as_dicts(data)
        qrels, run = ranx.Qrels(qrels), ranx.Run(run)
        with numba_threads_kept():
            # save_results_in_run stays True: with False, return_mean=False raises KeyError
            return ranx.evaluate(
                qrels, run, f"ndcg@{ctx.k}", return_mean=False, threads=ctx.threads
            )

    def typed_lists(data: Synthetic) -> Any:
        qrels, run = as_dicts(data)
        return ranx.Qrels(qrels).to_typed_list(), ranx.Run(run).to_typed_list()

    def kernel(lists: Any) -> np.ndarray:
        return ranx_ndcg(*lists, k=ctx.k)

    name = f"ranx {version('ranx')}"
    return [
        Target(
            f"{name} kernel",
            "`ranx.metrics.ndcg` on prebuilt typed lists (lists already sorted by `Run`)",
            kernel,
            typed_lists,
            reference=reference,
            slow=True,
        ),
        Target(
            f"{name} end to end",
            "dicts from the arrays, `Qrels`, `Run`, `evaluate`",
            end_to_end,
            reference=reference,
            slow=True,
        ),
    ]


def pytrec_eval_target(ctx: Context) -> Target:
    """pytrec_eval end to end: dicts from the arrays, evaluator, ``ndcg_cut_k``.

    trec_eval 9.0.8 inside: linear gain, scores held as float32, ties by document id
    descending (the ids make that the input order), zero IDCG scores 0.
    """
    import pytrec_eval

    measure = f"ndcg_cut_{ctx.k}"

    def run(data: Synthetic) -> np.ndarray:
        qrels, ranking = as_dicts(data)
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{ctx.k}"})
        values = evaluator.evaluate(ranking)
        return np.array([values[qid][measure] for qid in qrels])

    return Target(
        f"pytrec_eval {version('pytrec-eval-terrier')}",
        f"dicts from the arrays, `RelevanceEvaluator`, `evaluate` ({measure})",
        run,
        reference=dict(gain="linear", ties="stable", zero_idcg="zero", score_dtype="float32"),
        slow=True,
    )


def padded(data: Synthetic) -> tuple[np.ndarray, np.ndarray]:
    """Dense (queries x longest list) grades and scores; padding: grade 0, the lowest score.

    A padded item has no gain and ranks below every real item, so DCG@k and IDCG@k are those
    of the real items, and tie averaging only mixes padded items among themselves.
    """
    lengths = np.diff(data.offsets)
    width = max(int(lengths.max(initial=1)), 2)  # scikit-learn wants 2 columns at least
    real = np.arange(width) < lengths[:, None]
    y_true = np.zeros((data.n_queries, width))
    y_score = np.full((data.n_queries, width), float(data.scores.min(initial=0.0)) - 1.0)
    y_true[real] = data.grades
    y_score[real] = data.scores
    return y_true, y_score


def sklearn_target(ctx: Context) -> Target:
    """scikit-learn ``ndcg_score`` on padded 2-D arrays.

    Definition: linear gain, tie-averaged, zero IDCG scores 0. ``ndcg_score`` returns the mean
    only; the per-query values for the check come from ``_ndcg_sample_scores``, the helper
    whose values it averages (checked against the mean), outside the timing.
    """
    from sklearn.metrics import ndcg_score

    def sample_scores(arrays: tuple[np.ndarray, np.ndarray], mean: float) -> np.ndarray:
        from sklearn.metrics._ranking import _ndcg_sample_scores

        values = _ndcg_sample_scores(*arrays, k=ctx.k)
        if abs(values.mean() - mean) > 1e-12:
            raise RuntimeError("scikit-learn's _ndcg_sample_scores no longer gives ndcg_score")
        return values

    return Target(
        f"scikit-learn {version('scikit-learn')}",
        "`ndcg_score` on prebuilt padded 2-D arrays",
        lambda arrays: ndcg_score(*arrays, k=ctx.k),
        padded,
        sample_scores,
        reference=dict(gain="linear", ties="average", zero_idcg="zero"),
        slow=True,
        work=padded_work,
        max_work=MAX_PADDED_CELLS,
    )


def torchmetrics_target(ctx: Context) -> Target:
    """torchmetrics ``RetrievalNormalizedDCG`` end to end from the arrays.

    Definition: linear gain, tie-averaged, float32 scores and arithmetic, a query without
    relevant items scores 0 (``empty_target_action="neg"``). Runs on one torch thread. The per-query values come from
    the ``aggregation`` callable, which receives them before averaging.
    """
    import torch
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    # compute() loops over queries in Python with tiny tensor ops: intra-op threads cannot help,
    # and on a loaded 2-core machine 2 torch threads made it 10-20x slower than 1.
    torch.set_num_threads(1)

    def run(data: Synthetic) -> np.ndarray:
        captured = []

        def mean(values: Any, dim: Any = None) -> Any:
            captured.append(values)
            return values.mean()

        metric = RetrievalNormalizedDCG(top_k=ctx.k, aggregation=mean)
        metric.update(
            torch.from_numpy(data.scores),
            torch.from_numpy(data.grades.astype(np.int64)),
            indexes=torch.from_numpy(data.qid()),
        )
        metric.compute()
        return captured[0].double().numpy()

    return Target(
        f"torchmetrics {version('torchmetrics')}",
        "tensors from the arrays, `RetrievalNormalizedDCG` `update` + `compute` (1 torch thread)",
        run,
        reference=dict(gain="linear", ties="average", zero_idcg="zero", score_dtype="float32"),
        tol=F32_TOL,
        slow=True,
    )


ADAPTERS: dict[str, Callable[[Context], Target | list[Target]]] = {
    "lightgbm": lightgbm_target,
    "xgboost": xgboost_target,
    "ranx": ranx_targets,
    "pytrec_eval": pytrec_eval_target,
    "sklearn": sklearn_target,
    "torchmetrics": torchmetrics_target,
}


# -- measuring ------------------------------------------------------------------------------------


def best_of(run: Callable[[Any], Any], state: Any, repeat: int, budget: float) -> tuple[float, Any]:
    """Minimum time of up to ``repeat`` runs (one at least; no new run past ``budget``)."""
    times: list[float] = []
    while True:
        start = time.perf_counter()
        out = run(state)
        times.append(time.perf_counter() - start)
        if len(times) >= repeat or sum(times) + times[-1] > budget:
            return min(times), out


def subset_size(target: Target, data: Synthetic, ctx: Context) -> int:
    """Queries a slow target runs on: a pilot's cost per unit of work, extrapolated."""
    prefix_work = target.work(data)
    limit = queries_within(prefix_work, target.max_work)
    pilot = head(data, min(PILOT_QUERIES, limit))
    start = time.perf_counter()
    target.run(target.prepare(pilot))
    per_unit = max(time.perf_counter() - start, 1e-9) / prefix_work[pilot.n_queries - 1]
    affordable = queries_within(prefix_work, BUDGET_FILL * ctx.budget / per_unit)
    return max(min(affordable, limit), pilot.n_queries)


def agreement(target: Target, values: Any, data: Synthetic, ctx: Context) -> str:
    """Largest difference from fastndcg under the target's definition, and how many differ."""
    options = {**target.reference, "k": ctx.k}
    expected = fastndcg.ndcg(data.grades, data.scores, offsets=data.offsets, **options)
    if not target.per_query:
        return f"mean only: {abs(float(values) - float(expected)):.1e} (no per-query values)"
    values = np.asarray(values, dtype=np.float64)
    expected = first_column(expected)
    if values.shape != expected.shape:
        return f"{values.size:,} values for {expected.size:,} queries"
    diff = np.abs(values - expected)
    both_nan = np.isnan(values) & np.isnan(expected)
    diff = np.where(both_nan, 0.0, np.where(np.isnan(diff), np.inf, diff))
    differing = int(np.count_nonzero(diff > target.tol))
    return f"{diff.max(initial=0.0):.1e}; {differing:,} of {diff.size:,} > {target.tol:.0e}"


def describe_reference(reference: dict[str, Any] | None) -> str:
    """The fastndcg options a target is compared under."""
    if reference is None:
        return ""
    options = {**DEFAULTS, **reference}
    return ", ".join(f"{key}={value!r}" for key, value in options.items())


def measure(target: Target, data: Synthetic, ctx: Context) -> Row:
    """Warm up, size (slow targets), time, and check one target."""
    row = Row(target.name, target.timed, reference=describe_reference(target.reference))
    warm = head(data, SLOW_WARM_QUERIES if target.slow else WARM_QUERIES)
    target.run(target.prepare(warm))
    subset = head(data, subset_size(target, data, ctx)) if target.slow else data
    state = target.prepare(subset)
    seconds, out = best_of(target.run, state, target.repeat or ctx.repeat, ctx.budget)
    row.measured_seconds = seconds
    row.n_queries, row.n_rows = subset.n_queries, subset.n_rows
    full, part = target.work(data)[-1], target.work(subset)[-1]
    row.scale = float(full / part)
    row.unit = "padded cell" if target.work is padded_work else "row"
    row.seconds = seconds * row.scale
    if target.reference is not None:
        values = out if target.values is None else target.values(state, out)
        row.agreement = agreement(target, values, subset, ctx)
    return row


def measure_safely(target: Target, data: Synthetic, ctx: Context) -> Row:
    """:func:`measure`, with a failure reported in the row instead of ending the run."""
    print(f"measuring {target.name} ...", file=sys.stderr, flush=True)
    try:
        row = measure(target, data, ctx)
    except Exception as error:
        reason = f"failed: {type(error).__name__}: {error}"
        print(f"  {reason}", file=sys.stderr, flush=True)
        return Row(target.name, target.timed, agreement=reason)
    print(f"  {row.seconds:.4g} s  {row.agreement}", file=sys.stderr, flush=True)
    return row


# -- report ---------------------------------------------------------------------------------------


def machine_lines(peers: list[str]) -> list[str]:
    """Header lines describing the machine and the software."""
    import pyarrow

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    software = [
        f"Python {platform.python_version()}",
        f"numpy {np.__version__}",
        f"pyarrow {pyarrow.__version__}",
        f"fastndcg {fastndcg.__version__}",
    ]
    if "numba" in fastndcg.available_backends():
        import numba

        described = f"numba {numba.__version__}"
        with contextlib.suppress(ValueError):  # raised when no parallel region has run yet
            described += f" ({numba.threading_layer()} threading layer)"
        software.insert(2, described)
    tools = [
        f"{PEERS[name].label} {version(PEERS[name].distribution)}"
        for name in peers
        if importlib.util.find_spec(PEERS[name].module) is not None
    ]
    if "torchmetrics" in peers and importlib.util.find_spec("torch") is not None:
        tools.append(f"torch {version('torch')}")
    return [
        f"- Machine: {bench_report.cpu_model()}, {os.cpu_count()} logical CPUs ({usable} usable), "
        f"{bench_report.ram_gib()}, {platform.platform()}",
        f"- Software: {', '.join(software)}",
        f"- Peers: {', '.join(tools) or 'none'}",
    ]


def fmt_seconds(seconds: float) -> str:
    """Three significant digits."""
    return f"{seconds:.0f}" if seconds >= 100 else f"{seconds:.3g}"


def fmt_ratio(ratio: float) -> str:
    """1.0x, 42x, 3,100x."""
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:,.0f}x"


def fmt_rate(rate: float) -> str:
    """Rows per second in K or M."""
    return f"{rate / 1e6:,.1f} M" if rate >= 1e6 else f"{rate / 1e3:,.1f} K"


TABLE_COLUMNS = [
    "implementation",
    "what is timed",
    "seconds",
    "relative to floor",
    "rows/s",
    "agreement with fastndcg (max abs diff; queries differing)",
]


def table_cells(rows: list[Row], data: Synthetic) -> list[list[str]]:
    """The table's cells, row by row (the Markdown table and the JSON file)."""
    floor_seconds = next((row.seconds for row in rows if row.name == "floor"), None)
    cells = []
    for row in rows:
        timed = row.timed
        if row.seconds is None:
            cells.append([row.name, timed, "", "", "", row.agreement])
            continue
        if row.n_queries < data.n_queries:
            timed += (
                f"; measured on {row.n_queries:,} queries ({row.n_rows:,} rows, "
                f"{fmt_seconds(row.measured_seconds)} s), scaled x{row.scale:,.1f} per {row.unit}"
            )
        ratio = fmt_ratio(row.seconds / floor_seconds) if floor_seconds else ""
        cells.append(
            [
                row.name,
                timed,
                fmt_seconds(row.seconds),
                ratio,
                fmt_rate(data.n_rows / row.seconds),
                row.agreement,
            ]
        )
    return cells


def table(rows: list[Row], data: Synthetic) -> list[str]:
    """The Markdown table."""
    lines = ["| " + " | ".join(TABLE_COLUMNS) + " |", "|---|---|--:|--:|--:|---|"]
    return lines + ["| " + " | ".join(cells) + " |" for cells in table_cells(rows, data)]


def tied_queries(data: Synthetic) -> tuple[int, np.ndarray]:
    """Rows whose score equals another score of their query, and which queries hold them."""
    qid = data.qid()
    order = np.lexsort((data.scores, qid))
    same = (qid[order][1:] == qid[order][:-1]) & (data.scores[order][1:] == data.scores[order][:-1])
    tied = np.zeros(data.n_rows, dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    holding = np.zeros(data.n_queries, dtype=bool)
    holding[qid[order][tied]] = True
    return int(tied.sum()), holding


def tied_rows(data: Synthetic) -> tuple[int, int]:
    """Rows whose score equals another score of their query, and the queries holding them."""
    rows, holding = tied_queries(data)
    return rows, int(holding.sum())


def report(rows: list[Row], data: Synthetic, ctx: Context, peers: list[str], **facts: Any) -> str:
    """Header, table and notes as one Markdown document."""
    lengths = np.diff(data.offsets)
    lines = [
        f"## NDCG@{ctx.k} on {data.n_queries:,} queries: fastndcg and its peers",
        "",
        f"- Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- Command: `{facts['command']}`",
        *machine_lines(peers),
        f"- Data: `make_synthetic({data.n_queries}, seed={facts['seed']})`: {data.n_queries:,} "
        f"queries, {data.n_rows:,} rows (lists of 1..{lengths.max()}, mean {lengths.mean():.1f}), "
        f"int8 grades 0..4, float32 scores; {facts['ties'][0]:,} rows in {facts['ties'][1]:,} "
        "queries tie with another score of their query",
        f"- Threads: {ctx.threads} for fastndcg (unless said), the floor, the Numba baselines, "
        "ranx, LightGBM and XGBoost; pytrec_eval, scikit-learn and torchmetrics run on one. "
        "Each peer runs in a fresh process of its own",
        f"- Compile time kept out: fastndcg warm-up {facts['warmup']:.1f} s; every target runs "
        "once on a slice before it is timed",
        f"- Each time: the minimum of up to {ctx.repeat} runs within a {ctx.budget:g} s budget; "
        f"the floor: of up to {floor_repeat(ctx)} runs at the start and as many at the end",
        "",
        *table(rows, data),
        "",
        "How to read it:",
        "",
        "- *relative to floor*: seconds over the floor's seconds, the floor being one parallel "
        "streaming read of grades and scores measured in the same run.",
        "- *scaled*: slow peers run on the first N queries, N sized from a pilot run so that one "
        f"run takes about {BUDGET_FILL:g} x the budget; their seconds are scaled to the full data "
        "per row (scikit-learn: per padded cell, queries x longest list, since it is fed a "
        "dense matrix) and divided by the full-data floor.",
        "- *agreement*: per-query values against fastndcg run under the options below, on the "
        "queries measured; NaN (no relevant item, zero_idcg='skip') equals NaN. LightGBM and "
        "XGBoost give only the mean, compared instead.",
        "",
        "fastndcg options each implementation is compared under:",
        "",
    ]
    lines += [f"- {row.name}: {row.reference}" for row in rows if row.reference]
    return "\n".join(lines) + "\n"


# -- main -----------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Time fastndcg against its peers on the same synthetic data (Markdown out)."
    )
    parser.add_argument("--queries", type=int, default=100_000, help="queries (default 100000)")
    parser.add_argument("--k", type=int, default=10, help="cutoff (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="data seed (default 0)")
    parser.add_argument(
        "--threads", type=int, default=None, help="threads for fastndcg and the peers (default all)"
    )
    parser.add_argument(
        "--peers",
        default=",".join(PEERS),
        help=f"comma-separated peers (default all installed: {','.join(PEERS)})",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=60.0,
        help="seconds for one run of a slow peer, and for a target's repeats (default 60)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per target (default 5)")
    parser.add_argument("--out", type=Path, help="also write the Markdown to this file")
    parser.add_argument(
        "--json", type=Path, help="also write the table as JSON here (docs/benchmarks/)"
    )
    parser.add_argument("--worker", choices=list(PEERS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.peers = [name.strip() for name in args.peers.split(",") if name.strip()]
    unknown = sorted(set(args.peers) - set(PEERS))
    if unknown:
        parser.error(f"unknown peers {unknown}; choose from {', '.join(PEERS)}")
    if args.queries < 1 or args.k < 1 or args.repeat < 1 or args.budget <= 0:
        parser.error("--queries, --k, --repeat and --budget must be positive")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be positive")
    return args


def setup(args: argparse.Namespace) -> tuple[Context, Synthetic]:
    """Thread count (Numba's, process-wide) and the data; the same in every process."""
    threads = args.threads
    if "numba" in fastndcg.available_backends():
        import numba

        threads = min(threads or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS)
        numba.set_num_threads(threads)  # the floor, the plain kernel and ranx run on it
    threads = threads or os.cpu_count() or 1
    ctx = Context(k=args.k, threads=threads, budget=args.budget, repeat=args.repeat)
    return ctx, make_synthetic(args.queries, seed=args.seed)


def fingerprint(data: Synthetic) -> str:
    """A cheap check that a worker generated the same data."""
    return f"{data.n_rows}:{int(data.grades.sum())}:{float(data.scores.sum(dtype=np.float64))!r}"


def own_targets(ctx: Context) -> list[Target]:
    """The floor, fastndcg and the baselines, measured in the main process."""
    entries = [floor_target(ctx)]
    if "numba" in fastndcg.available_backends():
        entries.append(fastndcg_target(ctx, "fastndcg, 1 thread", "numba", 1))
        if ctx.threads > 1:
            name = f"fastndcg, {ctx.threads} threads"
            entries.insert(1, fastndcg_target(ctx, name, "numba", ctx.threads))
        entries += [
            fastndcg_target(ctx, "fastndcg, NumPy backend", "numpy", None),
            plain_numba_target(ctx),
        ]
    else:
        entries.append(fastndcg_target(ctx, "fastndcg, NumPy backend", "numpy", None))
    entries.append(lexsort_target(ctx))
    return entries


def worker(args: argparse.Namespace) -> None:
    """Measure one peer in this (fresh) process; print its rows as one tagged JSON line."""
    ctx, data = setup(args)
    try:
        made = ADAPTERS[args.worker](ctx)
        made = made if isinstance(made, list) else [made]
        rows = [measure_safely(target, data, ctx) for target in made]
    except Exception as error:  # installed but cannot be imported or set up
        reason = f"failed to load: {type(error).__name__}: {error}"
        rows = [Row(PEERS[args.worker].label, "", agreement=reason)]
    payload = {"data": fingerprint(data), "rows": [dataclasses.asdict(row) for row in rows]}
    print(RESULT_TAG + json.dumps(payload), flush=True)


def run_peer(name: str, args: argparse.Namespace, ctx: Context, data: Synthetic) -> list[Row]:
    """Measure a peer in a child process of its own (see the module notes on isolation)."""
    label = PEERS[name].label
    if importlib.util.find_spec(PEERS[name].module) is None:
        return [Row(label, "", agreement="not installed")]
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name]
    for option in ("queries", "k", "seed", "budget", "repeat"):
        command += [f"--{option}", str(getattr(args, option))]
    command += ["--threads", str(ctx.threads)]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    results = [line for line in done.stdout.splitlines() if line.startswith(RESULT_TAG)]
    if done.returncode != 0 or not results:
        return [Row(label, "", agreement=f"failed: worker exit status {done.returncode}")]
    payload = json.loads(results[-1][len(RESULT_TAG) :])
    if payload["data"] != fingerprint(data):
        return [Row(label, "", agreement="failed: the worker generated different data")]
    return [Row(**row) for row in payload["rows"]]


def main(argv: list[str] | None = None) -> None:
    """Generate the data, measure everything, print (and write) the Markdown."""
    args = parse_args(argv)
    if args.worker:
        worker(args)
        return
    command = shlex.join(["python", *(sys.argv if argv is None else ["bench_peers.py", *argv])])
    print(f"generating {args.queries:,} queries ...", file=sys.stderr, flush=True)
    ctx, data = setup(args)
    warmup = fastndcg.warmup()
    rows = [measure_safely(target, data, ctx) for target in own_targets(ctx)]
    for name in args.peers:
        rows += run_peer(name, args, ctx, data)
    floor_again = measure_safely(floor_target(ctx), data, ctx)  # a floor less prone to noise
    if floor_again.seconds is not None and rows[0].seconds is not None:
        rows[0].seconds = min(rows[0].seconds, floor_again.seconds)
    facts = dict(command=command, seed=args.seed, warmup=warmup, ties=tied_rows(data))
    markdown = report(rows, data, ctx, args.peers, **facts)
    print(markdown)
    if args.out:
        args.out.write_text(markdown)
    if args.json:
        write_json(args.json, rows, data, ctx, args.peers, **facts)


def write_json(
    path: Path, rows: list[Row], data: Synthetic, ctx: Context, peers: list[str], **facts: Any
) -> None:
    """The table as the documentation renders it (bench/report.py)."""

    lengths = np.diff(data.offsets)
    tools = tuple(PEERS[name].distribution for name in peers)
    if "torchmetrics" in peers:
        tools += ("torch",)
    bench_report.write(
        path,
        title=f"NDCG@{ctx.k} on {data.n_queries:,} queries: fastndcg and its peers",
        command=facts["command"],
        columns=TABLE_COLUMNS,
        rows=table_cells(rows, data),
        data=f"`make_synthetic({data.n_queries}, seed={facts['seed']})`: {data.n_queries:,} "
        f"queries, {data.n_rows:,} rows (lists of 1-{lengths.max()}, mean {lengths.mean():.1f}), "
        f"int8 grades 0-4, float32 scores; {facts['ties'][0]:,} rows in {facts['ties'][1]:,} "
        f"queries tie with another score of their query; {ctx.threads} threads for fastndcg "
        "(unless said), the floor, the Numba baselines, ranx, LightGBM and XGBoost; "
        "pytrec_eval, scikit-learn and torchmetrics on one",
        notes=[
            "*relative to floor*: seconds over the floor's, the floor being one parallel "
            "streaming read of grades and scores measured in the same run. Each time is the "
            f"minimum of up to {ctx.repeat} runs within a {ctx.budget:g} s budget, compile "
            "time kept out (every target runs once on a slice first); each peer runs in a "
            "fresh process of its own.",
            "*scaled*: slow peers run on the first N queries; their seconds are scaled to the "
            "full data per row (scikit-learn: per padded cell, as it is fed a dense matrix).",
            "*agreement*: per-query values against fastndcg under the options that reproduce "
            "the peer's definition: "
            + "; ".join(f"{row.name}: {row.reference}" for row in rows if row.reference)
            + ". LightGBM and XGBoost give only the mean, compared instead.",
        ],
        tools=tools,
    )


if __name__ == "__main__":
    main()
