"""Inputs for the parity tests: the real data in tests/data and random, heavily tied data.

Everything here is read with plain Python/NumPy (not with fastndcg), so that the tools and
fastndcg both start from the same independent reading of the files.
"""

from __future__ import annotations

import importlib
import os
import string
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import NUMBA_BLOCKED, TEST_DATA

# scripts/test.sh sets this when it installed the parity extra: a missing tool then fails the
# run instead of skipping (except in the run with numba blocked, where ranx cannot load)
REQUIRE_TOOLS = os.environ.get("FASTNDCG_REQUIRE_PARITY") == "1" and not NUMBA_BLOCKED

REAL = TEST_DATA / "real"
DERIVED = TEST_DATA / "derived"
TREC = REAL / "trec_eval_test"

# (qrels, run) pairs of real TREC data
TREC_PAIRS = {
    "adhoc": (TREC / "qrels.test", TREC / "results.test"),  # 3 topics, 9 tied groups, binary
    "adhoc_graded": (TREC / "qrels.rel_level", TREC / "results.test"),  # labels -1..4
    "adhoc_missing": (TREC / "qrels.test", TREC / "results.trunc"),  # topic 302 not in the run
    "rag2024": (TREC / "qrels.comment.test", TREC / "results.comment.test"),  # 71 tied groups
    "cast2019": (REAL / "ir_measures" / "compat.qrels", REAL / "ir_measures" / "compat.run"),
}
PREDICTIONS = ("lgb_mq2008", "xgb_mq2008", "lgb_lambdarank_example", "xgb_lambdarank_example")


def tool(module: str, package: str):
    """Import a reference tool, or skip the calling test module saying why it cannot."""
    if REQUIRE_TOOLS:
        return importlib.import_module(module)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(
            f"{package} cannot be imported here ({exc}); it comes with pip install '.[parity]'",
            allow_module_level=True,
        )


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """qid -> docid -> integer label (trec_eval reads labels with atol)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            qid, _, doc, label = line.split()[:4]
            qrels.setdefault(qid, {})[doc] = int(label)
    return qrels


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """qid -> docid -> score, in file order."""
    run: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            qid, _, doc, _, score = line.split()[:5]
            run.setdefault(qid, {})[doc] = float(score)
    return run


def write_trec(folder: Path, qrels: dict, run: dict, name: str = "data") -> tuple[Path, Path]:
    """Write qrels and run dicts as TREC files; scores with 17 significant digits."""
    qrels_path = folder / f"{name}.qrels"
    run_path = folder / f"{name}.run"
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {label}\n" for q, docs in qrels.items() for d, label in docs.items())
    )
    run_path.write_text(
        "".join(
            f"{q} Q0 {d} {rank} {score!r} sys\n"
            for q, docs in run.items()
            for rank, (d, score) in enumerate(docs.items(), start=1)
        )
    )
    return qrels_path, run_path


def _docid(rng: np.random.Generator) -> str:
    alphabet = string.ascii_letters + string.digits + "-_#."
    return "".join(rng.choice(list(alphabet), size=int(rng.integers(1, 7))))


def random_trec(
    seed: int, n_queries: int = 60, numeric_qids: bool = False, tied: bool = True
) -> tuple[dict, dict]:
    """Random qrels and run with heavy ties (shared scores, and near-ties only float64 tells
    apart), docids of mixed case, digits and punctuation, labels -1..4, queries without
    relevant judgments, judged queries missing from the run and run-only queries."""
    rng = np.random.default_rng(seed)
    qrels: dict = {}
    run: dict = {}
    for q in range(n_queries):
        qid = str(100 + q) if numeric_qids else f"q{q}"
        docs = list(dict.fromkeys(_docid(rng) for _ in range(int(rng.integers(1, 40)))))
        labels = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3, 4], size=len(docs))
        if q % 7 == 3:
            labels = np.minimum(labels, 0)  # no relevant judgment
        judged = rng.random(len(docs)) < 0.7
        if q % 11 != 5:  # a few judged queries absent from the run
            if tied:
                levels = rng.choice([0.5, 0.25, 1.0, 1.0 + 1e-9, 1.0 + 2e-9, 2.0], size=len(docs))
            else:
                levels = rng.permutation(len(docs)) + rng.random()
            run[qid] = {d: float(s) for d, s in zip(docs, levels, strict=True)}
        qrels[qid] = {
            d: int(label) for d, label, j in zip(docs, labels, judged, strict=True) if j
        } or {docs[0]: 0}
    run["900" if numeric_qids else "run_only"] = {"x": 1.0, "y": 0.5}
    return qrels, run


@dataclass
class Lists:
    """Ranked lists as flat rows grouped by query (qid, grades, scores)."""

    qid: np.ndarray
    grades: np.ndarray
    scores: np.ndarray

    @property
    def bounds(self) -> np.ndarray:
        """CSR offsets of the queries."""
        change = np.flatnonzero(self.qid[1:] != self.qid[:-1]) + 1
        return np.concatenate([[0], change, [self.qid.size]])

    def queries(self):
        """(qid, grades, scores) per query, in order."""
        b = self.bounds
        for s, e in pairwise(b):
            yield self.qid[s], self.grades[s:e], self.scores[s:e]

    def dense(self, pad: float = -1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(grades, scores, mask) as (n_queries, longest) matrices; padding has grade ``pad``."""
        sizes = np.diff(self.bounds)
        width = int(sizes.max())
        grades = np.full((sizes.size, width), pad)
        scores = np.zeros((sizes.size, width))
        mask = np.zeros((sizes.size, width), dtype=bool)
        for i, (_, g, s) in enumerate(self.queries()):
            grades[i, : g.size], scores[i, : s.size], mask[i, : g.size] = g, s, True
        scores[~mask] = scores[mask].min() - 1.0
        return grades, scores, mask


def predictions(name: str) -> Lists:
    """A LightGBM/XGBoost model's predictions on real data (derived/<name>/predictions.parquet)."""
    table = pq.read_table(DERIVED / name / "predictions.parquet")
    return Lists(
        table.column("qid").to_numpy(zero_copy_only=False).astype(str),
        table.column("label").to_numpy().astype(np.float64),
        table.column("score").to_numpy(),
    )


def trec_lists(name: str) -> Lists:
    """A real TREC run joined with its qrels (unjudged 0, negative labels 0), run order."""
    qrels_path, run_path = TREC_PAIRS[name]
    qrels, run = read_qrels(qrels_path), read_run(run_path)
    qid, grades, scores = [], [], []
    for q, docs in run.items():
        if q in qrels:
            for d, s in docs.items():
                qid.append(q)
                grades.append(max(qrels[q].get(d, 0), 0))
                scores.append(s)
    return Lists(np.array(qid), np.array(grades, dtype=np.float64), np.array(scores))


def random_lists(
    seed: int, n_queries: int = 200, tied: bool = True, max_len: int = 30, max_grade: int = 4
) -> Lists:
    """Random lists; ``tied``: scores from a few levels plus float32-only near-ties, and every
    ninth query without a relevant item; otherwise all scores distinct (also in float32)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_len + 1, size=n_queries)
    n = int(sizes.sum())
    qid = np.repeat(np.arange(n_queries), sizes)
    grades = rng.integers(0, max_grade + 1, size=n).astype(np.float64)
    grades[np.isin(qid, np.arange(0, n_queries, 9))] = 0.0
    if tied:
        levels = np.array([0.1, 0.2, 0.2, 0.5, 1.0, 1.0 + 1e-9, 1.0 + 3e-9, -3.0])
        scores = rng.choice(levels, size=n)
    else:
        scores = (rng.permutation(n) + 1.0) / n  # distinct, well apart in float32
    return Lists(qid, grades, scores)


def assert_same_values(ours: dict, theirs: dict, atol: float, what: str = "") -> None:
    """Same query ids, and every per-query value within ``atol`` (both NaN counts as equal)."""
    assert set(ours) == set(theirs), (
        f"{what}: query sets differ; only ours: {sorted(set(ours) - set(theirs))[:5]}, "
        f"only theirs: {sorted(set(theirs) - set(ours))[:5]}"
    )
    keys = sorted(theirs)
    a = np.array([ours[q] for q in keys], dtype=np.float64)
    b = np.array([theirs[q] for q in keys], dtype=np.float64)
    gap = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(a - b))
    bad = np.flatnonzero(~(gap <= atol))
    assert bad.size == 0, (
        f"{what}: {bad.size} of {len(keys)} queries differ by more than {atol:g}; first "
        + ", ".join(f"{keys[i]!r}: ours {a[i]!r} theirs {b[i]!r}" for i in bad[:3])
    )


def per_query(result, j: int = 0) -> dict:
    """{query id (str): value at cutoff index j} of an NDCGResult."""
    return {str(q): float(v) for q, v in zip(result.query_ids, result.per_query[:, j], strict=True)}
