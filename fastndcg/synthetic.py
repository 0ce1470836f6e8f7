"""Synthetic ranking data for demos, benchmarks and tests.

List lengths are log-normal (skewed: many short lists, a long tail), clipped to
``[min_len, max_len]``; grades are 0..4 with mostly irrelevant items; scores are float32 and
correlated with the grades (``grade * signal + N(0, 1)``), like a fair but imperfect model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRADE_PROBABILITIES = (0.50, 0.25, 0.13, 0.08, 0.04)


@dataclass(frozen=True)
class Synthetic:
    """A generated dataset in CSR form."""

    offsets: np.ndarray  # int64, n_queries + 1
    grades: np.ndarray  # int8
    scores: np.ndarray  # float32

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.offsets.size - 1

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return self.grades.size

    def qid(self) -> np.ndarray:
        """Query id of every row (int64), for APIs that take ``qid=``."""
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), np.diff(self.offsets))


def make_synthetic(
    n_queries: int,
    *,
    mean_len: float = 100.0,
    min_len: int = 1,
    max_len: int = 1000,
    sigma: float = 1.0,
    signal: float = 0.6,
    seed: int = 0,
) -> Synthetic:
    """Generate ``n_queries`` ranked lists with skewed lengths (mean about ``mean_len``).

    Parameters
    ----------
    n_queries : int
        Number of queries.
    mean_len : float, default=100.0
        Target mean list length (before clipping to ``[min_len, max_len]``).
    min_len, max_len : int, default=1, 1000
        Bounds on the list length.
    sigma : float, default=1.0
        Log-normal shape: larger is more skewed.
    signal : float, default=0.6
        How strongly scores follow grades.
    seed : int, default=0
        Random seed; the same seed gives the same data.

    Returns
    -------
    Synthetic
        ``offsets`` (int64), ``grades`` (int8, 0..4) and ``scores`` (float32).
    """
    rng = np.random.default_rng(seed)
    mu = np.log(mean_len) - sigma**2 / 2.0
    lengths = np.clip(np.rint(rng.lognormal(mu, sigma, n_queries)), min_len, max_len)
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(lengths.astype(np.int64), out=offsets[1:])
    n_rows = int(offsets[-1])
    grades = rng.choice(
        np.arange(len(GRADE_PROBABILITIES), dtype=np.int8), size=n_rows, p=GRADE_PROBABILITIES
    )
    scores = rng.standard_normal(n_rows, dtype=np.float32)
    scores += np.float32(signal) * grades
    return Synthetic(offsets, grades, scores)
