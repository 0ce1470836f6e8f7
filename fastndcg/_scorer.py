"""A scorer with its options resolved once, for callers scoring one ranked list at a time.

:func:`fastndcg.ndcg` checks every option and builds its kernel inputs on each call, about
150 us of Python for a single query. :class:`Scorer` does that once: per call it checks the
arrays with one compiled scan each and reuses the kernel inputs that depend only on the options
and on the list's length and grade range (built by the same code as :func:`fastndcg.ndcg` the
first time that length and range are seen): a 100-document query costs about 13 us (the
documentation's performance page has the measurement).
Anything outside that fast path (other dtypes, bad values, options the path does not cover)
goes through :func:`fastndcg.ndcg` itself, so results and errors are always the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fastndcg._api import DiscountSpec, GainSpec, ndcg
from fastndcg._backends.abi import GRADE_SLOTS, SCORE_SLOTS, KernelArgs, readonly, views
from fastndcg._core.coerce import from_torch
from fastndcg._core.definition import Definition
from fastndcg._core.device import on_device
from fastndcg._core.layout import build_layout
from fastndcg._errors import InputError, OptionError

_CACHED_SHAPES = 256  # (length, grade range) entries kept before the cache is emptied
_ONE_QUERY_IDS = readonly(np.zeros(1, dtype=np.int64))


class Scorer:
    r"""NDCG of one ranked list per call, with the options of :func:`fastndcg.ndcg` fixed.

    ``Scorer(k=10)(grades, scores)`` equals ``fastndcg.ndcg(grades, scores, k=10)`` for one
    query, bit for bit, with the option checks and set-up paid once instead of on every call:
    the tool for training and evaluation loops that score one list at a time.

    Parameters
    ----------
    k, gain, discount, ideal, max_grade, ties, seed, zero_idcg, backend, score_dtype
        As in :func:`fastndcg.ndcg`. ``ideal="global"`` is not available (it needs judgment
        lists per query); with ``ties="random"`` and no seed, one seed is drawn for the scorer.
        Tool presets, which also round or aggregate results, go through :func:`fastndcg.ndcg`.

    Examples
    --------
    >>> import fastndcg
    >>> score = fastndcg.Scorer(k=6)
    >>> round(score([3, 2, 3, 0, 1, 2], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]), 4)
    0.9488
    """

    def __init__(
        self,
        *,
        k: Any = None,
        gain: GainSpec = "exp2",
        discount: DiscountSpec = "log2",
        ideal: str = "recall",
        max_grade: float | None = None,
        ties: str = "average",
        seed: int | None = None,
        zero_idcg: str = "skip",
        backend: str = "auto",
        score_dtype: str = "float64",
    ) -> None:
        if ideal == "global":
            raise OptionError(
                "Scorer scores one list at a time and has no judgment lists for `ideal='global'`",
                option="ideal",
                value=ideal,
                fix="use fastndcg.ndcg(..., ideal='global', ideal_grades=...)",
            )
        options = dict(
            k=k,
            gain=gain,
            discount=discount,
            ideal=ideal,
            max_grade=max_grade,
            ties=ties,
            seed=seed,
            zero_idcg=zero_idcg,
            backend=backend,
            score_dtype=score_dtype,
        )
        self._definition = definition = Definition.create(**options)
        definition.check_tie_keys(known=False)
        # the options as fastndcg.ndcg takes them (a random seed drawn once stays fixed); "auto"
        # stays "auto", which picks cuda for lists in GPU memory
        seed = definition.seed if definition.ties == "random" else None
        chosen = "auto" if definition.requested_backend == "auto" else definition.backend_name
        self._options = dict(options, seed=seed, backend=chosen)
        table = definition.gain.table
        # the backend's per-list fast path, where the options allow it (else fastndcg.ndcg)
        self._fast = (
            definition.backend
            if definition.backend.serves_single_lists
            and definition.score_dtype == "float64"
            and definition.gain.kind in ("exp2", "linear", "table")
            and not (table is not None and np.isnan(table).any())
            else None
        )
        self._n_cutoffs = len(definition.cutoffs)
        self._single = self._n_cutoffs == 1
        self._shapes: dict[tuple[int, float, float, bool], KernelArgs] = {}

    @property
    def k(self) -> tuple[int | None, ...]:
        """The cutoffs, in order (None: the whole list)."""
        return self._definition.cutoffs

    def __repr__(self) -> str:
        options = self._definition.options(ranked=False)
        del options["aggregate"]  # not an option of a Scorer, which scores one list
        shown = ", ".join(f"{name}={value!r}" for name, value in options.items())
        return f"Scorer(k={self.k!r}, {shown})"

    def __call__(self, grades: Any, scores: Any) -> float | np.ndarray:
        """NDCG of one ranked list: a float for one cutoff, an array over the cutoffs otherwise.

        A list with no relevant item (IDCG = 0), an empty one too, scores as ``zero_idcg``
        says: NaN for "skip". CPU torch tensors are read as in :func:`fastndcg.ndcg`.
        """
        if on_device(grades) or on_device(scores):
            return self._general(grades, scores)  # read in place by backend="cuda"
        g = grades if type(grades) is np.ndarray else np.asarray(from_torch(grades, "grades"))
        s = scores if type(scores) is np.ndarray else np.asarray(from_torch(scores, "scores"))
        fast = self._fast
        if (
            fast is None
            or g.ndim != 1
            or s.shape != g.shape
            or g.size == 0
            or g.dtype not in GRADE_SLOTS
            or s.dtype not in SCORE_SLOTS
            or not (g.flags.c_contiguous and s.flags.c_contiguous)
        ):
            return self._general(grades, scores)
        n = g.size
        grade_views, grade_code = views(g, GRADE_SLOTS)
        score_views, score_code = views(s, SCORE_SLOTS)
        g, s = grade_views[grade_code], score_views[score_code]  # read-only: one signature
        low, high, bad, fractional = fast.scan_list(g, True)
        if bad or fast.scan_list(s, False)[2]:
            return self._general(grades, scores)  # raises the error that names the bad value
        key = (n, low, high, fractional == 0)
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shape(g, s)
            if len(self._shapes) >= _CACHED_SHAPES:
                self._shapes.clear()
            self._shapes[key] = shape
        args = shape.for_list(grade_views, grade_code, score_views, score_code)
        dcg = np.empty((self._n_cutoffs, 1))  # the kernel writes every entry, [cutoff, query]
        idcg = np.empty((self._n_cutoffs, 1))
        fast.score_range(args, 0, 1, dcg, idcg)
        if self._single and idcg[0, 0] > 0:
            return float(dcg[0, 0] / idcg[0, 0])
        values = self._definition.per_query(_ONE_QUERY_IDS, dcg.T, idcg.T)[0]
        return float(values[0]) if self._single else values

    def _general(self, grades: Any, scores: Any) -> float | np.ndarray:
        """The same value through :func:`fastndcg.ndcg` (and its checks and errors)."""
        values = ndcg(grades, scores, **self._options).per_query
        if values.shape[0] == 0:  # an empty list: no relevant item, IDCG = 0
            nothing = np.zeros((1, values.shape[1]))
            values = self._definition.per_query(_ONE_QUERY_IDS, nothing, nothing)
        if values.shape[0] != 1:
            raise InputError(
                f"Scorer scores one ranked list per call; these grades hold {values.shape[0]} "
                "queries",
                fix="Use fastndcg.ndcg(..., qid= or offsets=) for many",
                joiner=". ",
            )
        return float(values[0, 0]) if self._single else values[0]

    def _shape(self, grades: np.ndarray, scores: np.ndarray) -> KernelArgs:
        """Kernel inputs for lists of this length and grade range, built as ndcg builds them.

        Everything the plan derives from the data (gain table, grade levels, discount depth,
        largest gain) depends only on the length and on the grades' range and integrality,
        the key these inputs are cached under; each call puts its own grades and scores in.
        """
        definition = self._definition
        return KernelArgs.of(
            definition.plan(build_layout(grades, scores, backend=definition.backend))
        )
