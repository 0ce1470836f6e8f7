"""A scorer with its options resolved once, for callers scoring one ranked list at a time.

:func:`fastndcg.ndcg` checks every option and builds its kernel inputs on each call, about
150 us of Python for a single query. :class:`Scorer` does that once, and hands each list to the
backend's per-list fast path where it has one (a :class:`~fastndcg._contract.ListScoringBackend`,
such as the Numba backend: a 100-document query costs about 13 us; the documentation's
performance page has the measurement). Anything outside that fast path (other dtypes, bad
values, options the path does not cover, inputs in device memory) goes through
:func:`fastndcg.ndcg` itself, so results and errors are always the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fastndcg._api import DiscountSpec, GainSpec, ndcg
from fastndcg._backends import holder_of
from fastndcg._contract import ListScoringBackend, capable, readonly
from fastndcg._core.coerce import from_torch
from fastndcg._core.definition import Definition
from fastndcg._core.layout import build_layout
from fastndcg._errors import InputError, OptionError

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
        backend = definition.backend
        # the backend's per-list fast path, where the options allow it (else fastndcg.ndcg):
        # gains it computes itself, scores held as given
        self._fast = (
            backend.list_scorer(self._plan_of, len(definition.cutoffs))
            if capable(backend, ListScoringBackend)
            and definition.score_dtype == "float64"
            and definition.gain.kind in ("exp2", "linear", "table")
            and not (table is not None and np.isnan(table).any())
            else None
        )
        self._single = len(definition.cutoffs) == 1

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
        fast = self._fast
        if fast is None:
            return self._general(grades, scores)
        g, s = grades, scores
        if type(g) is not np.ndarray or type(s) is not np.ndarray:
            if holder_of(g, s) is not None:
                return self._general(g, s)  # read in place by the backend holding them
            g, s = np.asarray(from_torch(g, "grades")), np.asarray(from_torch(s, "scores"))
        found = fast(g, s)
        if found is None:
            return self._general(grades, scores)  # raises the error that names a bad value
        dcg, idcg = found
        if self._single and idcg[0] > 0:
            return float(dcg[0] / idcg[0])
        values = self._definition.per_query(_ONE_QUERY_IDS, dcg[None, :], idcg[None, :])[0]
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

    def _plan_of(self, grades: np.ndarray, scores: np.ndarray) -> Any:
        """The plan of one list, built as :func:`fastndcg.ndcg` builds it."""
        definition = self._definition
        return definition.plan(build_layout(grades, scores, backend=definition.backend))
