"""What a backend does: the operations every backend has, and the capabilities some declare.

:class:`Backend` is what the core calls on every backend. A backend may also declare optional
capabilities, each a runtime-checkable protocol the core tests with ``isinstance``:

- :class:`DeviceBackend`: it reads columns in memory of its own (a GPU's), through the
  :class:`Columns` it hands out;
- :class:`ListScoringBackend`: it scores one list at a time with little per-call work (the fast
  path of :class:`fastndcg.Scorer`);
- :class:`MeasuresBackend`: it computes the measures beside NDCG (P, R, AP, RR, ...);
- :class:`CompiledBackend`: its kernels are compiled on first use, into a cache that
  ``fastndcg warmup`` fills ahead (by calling the entry points with the backend).

All arrays are NumPy arrays on the host, but the grades and scores of a layout whose
``columns`` belong to a device backend.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import numpy as np

from fastndcg._contract.records import ColumnStats, DocumentIds, MeasurePlan, MeasureValues, Plan


class Backend(Protocol):
    """What every backend does.

    Attributes
    ----------
    name : str
        The name ``backend=`` takes.
    checks_scores : bool
        True when :meth:`score` counts NaN and infinite scores as it reads them, so that the
        caller need not scan the scores first (it names the bad row only when one is found).
    """

    name: str
    checks_scores: bool

    def threads(self, n_threads: int | None) -> AbstractContextManager[None]:
        """Run the block with ``n_threads`` threads (None: the current setting)."""
        ...

    def thread_ceiling(self) -> int | None:
        """The most threads :meth:`threads` accepts (None: no limit)."""
        ...

    def score(self, plan: Plan) -> tuple[np.ndarray, np.ndarray, int]:
        """DCG and IDCG ``(n_queries, n_cutoffs)`` of ``plan``, and the non-finite scores met."""
        ...

    def rank_query(self, plan: Plan, query: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ranking of one query of ``plan``, as :meth:`score` ranks it (for explanations).

        Returns ``(order, gains, ideal_gains)``: the positions of the query's rows in rank order
        (score descending, then the plan's tie rule), the gain of each row in row order, and
        the gain of each row of the query's ideal list (``plan.ideal_grades``) in its order.
        """
        ...

    def column_stats(self, values: np.ndarray, integral: bool = True) -> ColumnStats:
        """Scan a 1-D column (a kernel dtype) once; ``integral=False`` skips that check."""
        ...

    def run_bounds(self, ids: np.ndarray) -> np.ndarray:
        """Start row of every run of equal consecutive ids, and the row count at the end."""
        ...

    def stray_whitespace(self, data: np.ndarray, separator: int, other: int) -> bool:
        """Whether the bytes ``data`` hold whitespace besides single ``separator`` bytes."""
        ...

    def document_ids(self, judged: Any, run: Any, ordered: bool) -> tuple[DocumentIds, DocumentIds]:
        """The judgments' and the run's document ids (Arrow string columns) for the join.

        ``ordered``: the ids will also rank ties (trec_eval's descending byte order).
        """
        ...

    def match_judgments(
        self,
        offsets: np.ndarray,
        order: np.ndarray | None,
        ids: DocumentIds,
        judged_offsets: np.ndarray,
        judged_rows: np.ndarray,
        judged_ids: DocumentIds,
        judged_labels: np.ndarray,
    ) -> tuple[np.ndarray, int]:
        """Labels of the run rows grouped by query (NaN: unjudged), and a repeated position.

        Position ``p`` of the CSR ``offsets`` is run row ``order[p]`` (``order`` None: row
        ``p``); position ``p`` of ``judged_offsets`` is judgment ``judged_rows[p]``. The second
        value is the first position whose document repeats within its query (-1: none).
        """
        ...

    def docid_ranks(
        self, offsets: np.ndarray, order: np.ndarray | None, ids: DocumentIds, scores: np.ndarray
    ) -> np.ndarray:
        """Per run row, a key ordering each query's rows by descending document id bytes.

        Only the order between rows of a query with equal ``scores`` counts.
        """
        ...

    def first_ranked(
        self,
        offsets: np.ndarray,
        order: np.ndarray | None,
        scores: np.ndarray,
        tie_key: np.ndarray | None,
        max_docs: int,
    ) -> np.ndarray:
        """Which run rows are among the first ``max_docs`` of their query's ranking.

        By ``scores`` descending, ties by ``tie_key`` ascending (None: run order).
        """
        ...

    def signflip_sums(
        self,
        diffs: np.ndarray,
        key: int,
        exact: bool,
        n_resamples: int,
        n_chunks: int | None = None,
        first: int = 0,
    ) -> np.ndarray:
        r"""Sign-flipped sums :math:`T^*_{ic} = \sum_j s_{ij} d_{cj}`: (n_resamples, n_columns).

        Resamples ``first .. first + n_resamples - 1``, one per row of the result.
        ``diffs`` (float64, C-contiguous, shape (n_columns, n)) holds one comparison per row.
        Resample ``i`` negates query ``j`` when bit ``j mod 64`` of its ``j // 64``-th random
        word is set (the streams of :mod:`fastndcg._compare.rng`, keyed by ``key``); with
        ``exact`` (``n <= 63``) when bit ``j`` of ``i`` itself is set. Sums run over the
        queries in order: every backend, thread count and split into ``n_chunks`` chunks of
        resamples gives the same bits.
        """
        ...

    def bootstrap_sums(
        self,
        values: np.ndarray,
        key: int,
        thresholds: np.ndarray,
        n_resamples: int,
        n_chunks: int | None = None,
        first: int = 0,
    ) -> np.ndarray:
        """Paired bootstrap sums of each row of ``values`` (n_columns, n): (n_resamples, n_columns).

        Resamples ``first .. first + n_resamples - 1``, one per row of the result. Resample
        ``i`` draws ``n`` queries with replacement (the same draws for every row) from
        the streams keyed by ``key``, with the Poisson ``thresholds`` of
        :func:`fastndcg._compare.rng.poisson_bounds`; bit-identical on every backend, thread
        count and chunking.
        """
        ...


class Columns(Protocol):
    """Where a layout's grades and scores live, and how they are read and checked there.

    The core builds every layout with one of these: its own for host memory
    (:class:`fastndcg._core.coerce.HostColumns`), or the one a :class:`DeviceBackend` hands out
    for inputs in its memory. ``where(row)`` words an input row for error messages.
    """

    def array(self, values: Any, name: str) -> Any:
        """``values`` as an array of this memory (host values converted, then copied once)."""
        ...

    def numeric(self, values: Any, name: str, where: Callable[[int], str]) -> None:
        """Raise an InputTypeError unless ``values`` hold bool, int or float."""
        ...

    def flatten(self, matrix: Any, keep: np.ndarray | None) -> Any:
        """A 2-D array's cells row after row, only those ``keep`` (boolean, host) marks."""
        ...

    def grades(self, values: Any, name: str, where: Callable[[int], str]) -> Any:
        """1-D grades in a kernel dtype (:data:`~fastndcg._contract.records.GRADE_SLOTS`)."""
        ...

    def scores(self, values: Any, name: str, where: Callable[[int], str]) -> Any:
        """1-D scores as float64 or float32."""
        ...

    def checked(
        self, values: Any, name: str, where: Callable[[int], str], integral: bool = True
    ) -> ColumnStats:
        """One scan of a column; an InputError names its first non-finite or inexact value."""
        ...

    def take(self, values: Any, rows: np.ndarray) -> Any:
        """``values[rows]`` (``rows`` a host array)."""
        ...

    def host(self, values: Any) -> Any:
        """``values`` readable on the host (a copy of what is held elsewhere)."""
        ...

    def first_where(
        self, values: Any, test: str, mask: Callable[[np.ndarray], np.ndarray], **bounds: Any
    ) -> int:
        """First row of ``values`` passing ``test`` (-1: none).

        ``mask`` computes the test on a host array; ``test`` names it for other memory
        (``"negative"``, ``"outside"`` with ``low``/``high``, ``"nonintegral"``, ``"unmapped"``
        with ``table``).
        """
        ...

    def as_float32(self, values: Any) -> Any:
        """``values`` rounded to float32 (beyond its range: +-inf)."""
        ...

    def kernel_offsets(self, offsets: Any) -> Any:
        """``offsets`` where the kernels can read them in place, or None (the host copy is read)."""
        ...


@runtime_checkable
class DeviceBackend(Protocol):
    """A backend that reads columns in memory of its own (a GPU's)."""

    def holds(self, values: Any) -> bool:
        """Whether ``values`` live in this backend's memory (nothing is imported)."""
        ...

    def columns(self) -> Columns:
        """The :class:`Columns` of this backend's memory."""
        ...


class ListScorer(Protocol):
    """Scores one list per call with the kernel inputs of its length and grade range reused."""

    def __call__(self, grades: Any, scores: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """DCG and IDCG at every cutoff of one list, or None where it leaves the fast path.

        None for anything the fast path does not take (other dtypes or shapes, an empty list,
        a non-finite value): the caller then scores it the general way, which raises the error.
        """
        ...


@runtime_checkable
class ListScoringBackend(Protocol):
    """A backend with a per-list fast path (:class:`fastndcg.Scorer`)."""

    def list_scorer(
        self, plan_of: Callable[[np.ndarray, np.ndarray], Plan], n_cutoffs: int
    ) -> ListScorer:
        """A :class:`ListScorer` whose kernel inputs come from ``plan_of(grades, scores)``.

        ``plan_of`` builds the plan of one list as :func:`fastndcg.ndcg` would; it is called
        once per length and grade range.
        """
        ...


@runtime_checkable
class MeasuresBackend(Protocol):
    """A backend that computes the measures beside NDCG (:func:`fastndcg.evaluate`).

    ``shares_rankings``: its :meth:`Backend.score` writes :attr:`Plan.shared` when asked,
    so that the measures of a call read the ranking nDCG's kernel made (one ranking a query).
    """

    shares_rankings: bool

    def measures(self, plan: MeasurePlan) -> MeasureValues:
        """Every measure of every query, and what the core checks (:class:`MeasureValues`).

        Bit-identical to the other backends' for any thread count; NaN where a measure
        dividing by ``R`` meets a query without a relevant judgment.
        """
        ...


@runtime_checkable
class GradeCheckingBackend(Protocol):
    """A backend that checks grades as it counts them, so that the core need not scan them.

    Given a plan with ``levels_presumed`` (made before the float grades were scanned, on
    :data:`~fastndcg._contract.records.PRESUMED_GRADES`), its :meth:`Backend.score` adds to
    the count it returns the grades that are not among the plan's levels (its numbers are
    then not used: the core scans the grades and plans again).
    """

    checks_grades: bool


@runtime_checkable
class CompiledBackend(Protocol):
    """A backend whose kernels are compiled on first use and cached on disk."""

    def compiled(self) -> bool:
        """Whether the scoring kernel is compiled here or in the cache (no compile ahead)."""
        ...

    def cache_dir(self) -> str:
        """The directory the compiled kernels are cached in."""
        ...

    def compile_part(self, plan: Plan, part: str) -> None:
        """Compile ``part`` of the scoring kernel, for ``plan``'s types, into the cache.

        ``"short"`` (the short-cutoff path) and ``"general"`` compile independently:
        ``fastndcg warmup`` compiles them in two processes at once, and then ``"whole"`` (what
        links them) in one.
        """
        ...

    def facts(self) -> dict[str, Any]:
        """Versions and threading facts for ``fastndcg info``."""
        ...


_CAPABLE: dict[tuple[type, type], bool] = {}


def capable(backend: object, capability: type) -> bool:
    """Whether ``backend`` declares ``capability`` (``isinstance``), remembered per class.

    An ``isinstance`` check against a protocol walks the protocol's members each time (about
    6 us; a scoring call asks four times). Backends declare capabilities on their class.
    """
    key = (type(backend), capability)
    found = _CAPABLE.get(key)
    if found is None:
        found = _CAPABLE[key] = isinstance(backend, capability)
    return found
