"""The records the core builds and the backends read: arrays and integer codes, named.

Nothing here validates: the core has checked every value before it builds these records.

- :class:`ColumnStats`: what one scan of a column found (validation and planning read it).
- :class:`Layout`: queries in CSR form, as the entry points build them.
- :class:`Plan`: everything a backend needs to score a layout.
- :class:`DocumentIds`: a TREC run's or its judgments' document ids, in the form a backend's
  join compares them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fastndcg._contract.protocol import Columns

# the dtypes kernels read without a copy: grades in any of them, scores in the first two
GRADE_SLOTS = tuple(
    np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.int16, np.int8, np.uint8)
)
SCORE_SLOTS = GRADE_SLOTS[:2]


def readonly(values: np.ndarray) -> np.ndarray:
    """``values``, or a read-only view of it (device arrays unchanged).

    Numba compiles a kernel once per array type, and writeability is part of the type: passing
    every column read-only (as Arrow hands them over) halves the signatures to compile.
    """
    if not isinstance(values, np.ndarray):
        return values
    if values.flags.writeable:
        values = values.view()
        values.flags.writeable = False
    return values


def input_row(row: int) -> str:
    """How an error names row ``row`` of flat input."""
    return f"row {row}"


@dataclass(frozen=True)
class ColumnStats:
    """What one pass over a column found.

    ``first_nonfinite``/``first_nonintegral`` are row numbers, -1 when there is none (or, for
    ``first_nonintegral``, when the scan was told not to look). ``low`` and ``high`` (the
    extreme values; inf/-inf for an empty column) are only meaningful when every value is
    finite.
    """

    low: float
    high: float
    first_nonfinite: int
    first_nonintegral: int

    @property
    def integral(self) -> bool:
        """True when every value is a whole number."""
        return self.first_nonintegral < 0


# What a layout says of float grades it has not scanned (``Layout.grades_checked``): integers
# 0..7, the levels most judgments use. A plan made on it counts 8 grade levels; a backend that
# checks the grades as it counts them reports any other, and the core then scans them.
PRESUMED_GRADES = ColumnStats(0.0, 7.0, -1, -1)


@dataclass(frozen=True)
class Layout:
    """Queries in CSR form.

    Attributes
    ----------
    offsets : ndarray of int64, shape (n_queries + 1,)
        Query ``q`` owns rows ``offsets[q]:offsets[q + 1]`` (always on the host).
    grades : array
        Relevance grade of every row (one of the kernel dtypes), where ``columns`` holds it.
    scores : array of float64 or float32, or None
        Model score of every row (held with the grades); None when rows are already in ranked
        order.
    query_ids : ndarray
        Identifier of every query, in layout order.
    grade_stats : ColumnStats
        Range and integrality of the grades (from the validation pass).
    row_order : ndarray of int64 or None
        ``row_order[r]`` is the input row that became layout row ``r``; None when no rows moved.
    scores_checked : bool
        False while the scores may still hold a NaN or an infinite value: a backend that checks
        scores as it reads them (``checks_scores``) counts them, and the core then names the
        first one.
    grades_checked : bool
        False while the float grades have not been scanned (``grade_stats`` is then
        :data:`PRESUMED_GRADES`): a backend that checks grades as it counts them
        (``checks_grades``) may be given a plan that presumes them, and reports the grades
        that are not; the core scans them otherwise (``fastndcg._core.layout.check_grades``).
    where : callable
        Words an input row for error messages.
    names : tuple of str
        How error messages name the grades and the scores (a table's column names).
    device_offsets : device array or None
        The offsets where the grades are, when given there in a form the backend reads in place.
    columns : Columns or None
        What holds the grades and scores (None: host memory); see
        :class:`fastndcg._contract.protocol.Columns`.
    """

    offsets: np.ndarray
    grades: np.ndarray
    scores: np.ndarray | None
    query_ids: np.ndarray
    grade_stats: ColumnStats
    row_order: np.ndarray | None = None
    scores_checked: bool = True
    where: Callable[[int], str] = input_row
    names: tuple[str, str] = ("grades", "scores")
    device_offsets: Any = None
    columns: Columns | None = None
    grades_checked: bool = True

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.offsets.size - 1

    def input_row(self, row: int) -> int:
        """Input row that became layout row ``row`` (for error messages)."""
        return int(row if self.row_order is None else self.row_order[row])

    def query_of_row(self, row: int) -> Any:
        """Query id of layout row ``row``."""
        query = self.query_ids[int(np.searchsorted(self.offsets, row, side="right")) - 1]
        return query.item() if isinstance(query, np.generic) else query


@dataclass(frozen=True)
class SharedRanking:
    """Where a backend's scoring kernel writes what the measures beside nDCG read of a query.

    ``rows`` (int32, n_queries x width): a backend whose short path ranks a query's best rows
    without a tie among them (so under every tie rule) writes their positions in the query
    there, best first (as many as it has, up to ``width``); -1 in column 0 says it did not.
    ``level_counts`` (int16, n_queries x levels; no columns: not asked): where given, it says
    instead what was written: how many of the query's rows hold each grade 0, 1, ..., where
    every grade of the query is one of them (integer grade levels, at most ``levels``, fewer
    than 32,768 rows), and then ``grades`` (int8, n_queries x width) holds the grades of its
    best rows in place of ``rows``; -2 in column 0: ``rows`` are written; -1: nothing.
    """

    rows: np.ndarray
    grades: np.ndarray
    level_counts: np.ndarray


@dataclass(frozen=True)
class Plan:
    """Everything a backend needs to score a layout, as arrays and integer codes."""

    offsets: np.ndarray
    grades: np.ndarray  # grades (any kernel dtype), or float64 gains when precomputed
    scores: np.ndarray | None  # float64 or float32; None: rows are in ranked order
    tie_mode: int
    tie_key: np.ndarray
    seed: int
    gain_mode: int
    gain_table: np.ndarray
    level_order: np.ndarray  # non-empty: ideal grades are integers in [0, size): IDCG by counting
    level_gain: np.ndarray
    discount: np.ndarray
    discount_prefix: np.ndarray
    cutoffs: np.ndarray  # int64, WHOLE_LIST for "no cutoff"
    k_max: int
    ideal_mode: int
    ideal_offsets: np.ndarray
    ideal_grades: np.ndarray
    max_gain: float
    device_offsets: Any = None  # ``offsets`` where the grades are, when given there
    # every cutoff at most codes.TOP_PATH_DEPTH, scores given, and an ideal without a sort
    # (integer grade levels, "max", "local", or float grades under gains that grow with the
    # grade): a backend may rank by its short-cutoff path
    top_path: bool = False
    # the grade levels are those of PRESUMED_GRADES, not yet checked: the backend counts the
    # grades that are not among them (see Layout.grades_checked)
    levels_presumed: bool = False
    # an output, when given: what a backend found of each query that the measures beside
    # nDCG read (see SharedRanking)
    shared: SharedRanking | None = None

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.offsets.size - 1


@dataclass(frozen=True)
class DocumentIds:
    """The document ids of a run or of judgments, as a backend's join compares them.

    ``column`` holds the ids themselves, for messages. The Numba join compares their bytes: id
    ``r`` is ``data[bounds[r]:bounds[r + 1]]``. The NumPy join compares integer ``codes``
    instead, shared by the run and the judgments (numbered in descending byte order of the ids
    when trec_eval's tie order is asked for).
    """

    column: Any  # pyarrow.ChunkedArray of strings
    bounds: np.ndarray | None = None
    data: np.ndarray | None = None
    codes: np.ndarray | None = None


@dataclass(frozen=True)
class MeasurePlan:
    """What a backend needs to compute the measures beside NDCG: arrays and integer codes.

    Every measure of a call is computed from one ranking per query (score descending, ties by
    ``tie_mode``). The counts that need the judgments and not only the ranking (``R``, bpref's
    ``N``, the largest grade) come from one pass over each query's judgments, in the same call.

    Attributes
    ----------
    offsets : ndarray of int64
        Query ``q`` owns rows ``offsets[q]:offsets[q + 1]``.
    scores : ndarray of float64 or None
        The scores as held (None: rows come in ranked order). Not checked: a backend counts the
        NaN and infinite scores of the queries it ranks (:class:`MeasureValues`).
    labels : ndarray of float64
        Each row's judgment grade; NaN when its document has no judgment.
    tie_mode, tie_key, seed
        The tie rule (a code of :mod:`~fastndcg._contract.codes`), its key, its seed.
    measures : ndarray of int64, shape (n_measures, codes.M_FIELDS)
        Each measure's kind, cutoff, column of the counts, and choices (see ``codes.M_*``).
    params : ndarray of float64, shape (n_measures, 2)
        Each measure's parameter (RBP's p, IPrec's recall level) and relevance level.
    judged_offsets, judged_grades : ndarray of int64, ndarray of float64
        Every judgment of each query (retrieved or not), as CSR aligned with ``offsets``; a
        negative grade is in the pool but not judged.
    levels : ndarray of float64
        The relevance level of each counts column: ``R`` counts the judgments at or above it,
        bpref's ``N`` those below it (but the negative ones where ``skip_negative``).
    skip_negative : bool
        Whether bpref's ``N`` leaves out negative grades.
    err_stop : ndarray of float64
        ERR's stopping probability of each integer grade ``0 .. err_stop.size - 1`` (empty
        without ERR): a backend reports the first label above 0 that is not one of them.
    depth : int
        The most ranks any measure reads (its largest cutoff), or -1 when one reads the whole
        ranking: a backend may rank only the top ``depth`` rows.
    shared : SharedRanking or None
        What the scoring kernel found of each query (:attr:`Plan.shared`): its best rows (the
        ranking made for nDCG, which a backend reads instead of ranking the query again: it
        holds no tie, so it is every tie rule's ranking), their labels and the query's labels
        counted by level, where given (then the labels are the grades, and the judgments the
        rows).
    """

    offsets: np.ndarray
    scores: np.ndarray | None
    labels: np.ndarray
    tie_mode: int
    tie_key: np.ndarray
    seed: int
    measures: np.ndarray
    params: np.ndarray
    judged_offsets: np.ndarray
    judged_grades: np.ndarray
    levels: np.ndarray
    skip_negative: bool
    err_stop: np.ndarray
    depth: int = -1
    shared: SharedRanking | None = None

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.offsets.size - 1


@dataclass(frozen=True)
class MeasureValues:
    """What a backend's measure kernel gives back for a :class:`MeasurePlan`.

    ``values`` (n_queries x n_measures): each measure of each query, NaN where a measure
    divides by ``R = 0``; ``relevant`` (n_queries x n_counts_columns): each query's ``R`` per
    counts column; ``nonfinite``: the NaN or infinite scores met in the queries it ranked;
    ``bad_err_label``: the first row whose label ERR cannot take (-1: none).
    """

    values: np.ndarray
    relevant: np.ndarray
    nonfinite: int
    bad_err_label: int
