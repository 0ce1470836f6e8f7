"""Data for the training-loop tests (tests/integrations): LightGBM's lambdarank example.

The file is read with plain Python and NumPy (svmlight: ``label index:value ...`` per row), not
with fastndcg or the libraries under test.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from conftest import TEST_DATA

LAMBDARANK = TEST_DATA / "real" / "lightgbm_lambdarank"


@dataclass(frozen=True)
class RankingData:
    """Rows grouped by query: features, grades, query sizes (and ids, offsets derived)."""

    features: np.ndarray
    grades: np.ndarray
    sizes: np.ndarray

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.sizes)])

    @property
    def qid(self) -> np.ndarray:
        return np.repeat(np.arange(self.sizes.size), self.sizes)

    def queries(self, first: int, last: int) -> RankingData:
        """Queries ``first`` to ``last - 1``."""
        rows = slice(self.offsets[first], self.offsets[last])
        return RankingData(self.features[rows], self.grades[rows], self.sizes[first:last])


@cache
def lambdarank() -> RankingData:
    """LightGBM's examples/lambdarank rank.test: 768 rows, 50 queries, 300 features, labels 0-4."""
    lines = (LAMBDARANK / "rank.test").read_text().splitlines()
    features = np.zeros((len(lines), 300))
    grades = np.zeros(len(lines))
    for row, line in enumerate(lines):
        label, *cells = line.split()
        grades[row] = float(label)
        for cell in cells:
            column, value = cell.split(":")
            features[row, int(column) - 1] = float(value)
    sizes = np.array((LAMBDARANK / "rank.test.query").read_text().split(), dtype=np.int64)
    assert sizes.sum() == len(lines)
    return RankingData(features, grades, sizes)
