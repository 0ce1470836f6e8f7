"""One ranked list per call through the scoring kernel: the Numba backend's ``ListScorer``.

:func:`fastndcg.ndcg` checks every option and builds its kernel inputs on each call, about
150 us of Python for a single query. A :class:`NumbaListScorer` checks the arrays with one
compiled scan each and reuses the kernel inputs that depend only on the options and on the
list's length and grade range (the plan of the first list of that length and range, built as
:func:`fastndcg.ndcg` builds it): a 100-document list costs about 13 us.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fastndcg._backends.numba.args import KernelArgs, views
from fastndcg._contract import GRADE_SLOTS, SCORE_SLOTS, Plan

_CACHED_SHAPES = 256  # (length, grade range) entries kept before the cache is emptied


class NumbaListScorer:
    """DCG and IDCG of one list per call (see :class:`fastndcg._contract.ListScorer`)."""

    def __init__(
        self, backend: Any, plan_of: Callable[[np.ndarray, np.ndarray], Plan], n_cutoffs: int
    ) -> None:
        self._scan = backend.scan_list
        self._kernel = backend.kernels.score_queries
        self._plan_of = plan_of
        self._n_cutoffs = n_cutoffs
        self._shapes: dict[tuple[int, float, float, bool], KernelArgs] = {}

    def __call__(self, grades: Any, scores: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """DCG and IDCG at every cutoff, or None where the list leaves the fast path."""
        g, s = grades, scores
        if (
            type(g) is not np.ndarray
            or type(s) is not np.ndarray
            or g.ndim != 1
            or s.shape != g.shape
            or g.size == 0
            or g.dtype not in GRADE_SLOTS
            or s.dtype not in SCORE_SLOTS
            or not (g.flags.c_contiguous and s.flags.c_contiguous)
        ):
            return None
        grade_views, grade_code = views(g, GRADE_SLOTS)
        score_views, score_code = views(s, SCORE_SLOTS)
        g, s = grade_views[grade_code], score_views[score_code]  # read-only: one signature
        low, high, bad, fractional = self._scan(g, True)
        if bad or self._scan(s, False)[2]:
            return None  # the general path names the bad value
        key = (g.size, low, high, fractional == 0)
        shape = self._shapes.get(key)
        if shape is None:
            # everything the plan derives from the data (gain table, grade levels, discount
            # depth, largest gain) depends only on the length and on the grades' range and
            # integrality: each call puts its own grades and scores in
            shape = KernelArgs.of(self._plan_of(g, s))
            if len(self._shapes) >= _CACHED_SHAPES:
                self._shapes.clear()
            self._shapes[key] = shape
        args = shape.for_list(grade_views, grade_code, score_views, score_code)
        dcg = np.empty((self._n_cutoffs, 1))  # the kernel writes every entry, [cutoff, query]
        idcg = np.empty((self._n_cutoffs, 1))
        self._kernel(0, 1, args.packed(), dcg, idcg)
        return dcg[:, 0], idcg[:, 0]
