"""A TREC run joined with its judgments: query codes, grades per run row, the ``-M`` cut.

Query codes number the run's queries in order of first appearance; the judgments' queries are
coded in the run's terms. The join itself (which judgment grades which run row, and whether a
document repeats within a query) is the backend's (``Backend.match_judgments``), query by
query, so no document id is compared with another query's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastndcg._contract import Backend, DocumentIds
from fastndcg._core.coerce import as_grade_vector, as_score_vector
from fastndcg._core.grouping import group_codes, positions
from fastndcg._core.layout import Layout, finish_layout
from fastndcg._core.options import parse
from fastndcg._errors import InputError, OptionError
from fastndcg._io.arrow import ids_to_numpy


def check_unique_pairs(
    table: pa.Table, ids: DocumentIds, kind: str, place: Callable[[int], str], backend: Backend
) -> tuple:
    """Raise an InputError (a ValueError) when a (query, document) pair appears twice in ``table``.

    ``ids`` are the table's document ids (see ``Backend.document_ids``); ``place`` names a row
    (see :func:`~fastndcg._io.trec_text.place_of_row`). Returns the query codes it made,
    ``((run_query, run_length), queries)`` (see :func:`_query_runs`).
    """
    (run_query, run_length), queries = _query_runs(table.column("qid"))
    offsets, order = _group_runs(run_query, run_length, len(queries))
    no_judgments = np.zeros(offsets.size, dtype=np.int64)
    no_rows = np.zeros(0, dtype=np.int64)
    _, repeated = backend.match_judgments(
        offsets, order, ids, no_judgments, no_rows, ids, np.zeros(0)
    )
    if repeated >= 0:
        row = int(repeated if order is None else order[repeated])
        run = int(np.searchsorted(np.cumsum(run_length), row, side="right"))
        raise _repeated_pair(kind, ids.column[row], queries[int(run_query[run])], place(row))
    return (run_query, run_length), queries


def _repeated_pair(kind: str, document: pa.Scalar, query: pa.Scalar, where: str) -> InputError:
    return InputError(
        f"{kind} lists document {document.as_py()!r} of query {query.as_py()!r} more than "
        f"once (again at {where})",
        value=(query.as_py(), document.as_py()),
        where=where,
        fix="each (query, document) pair must appear once",
    )


class RunCodes:
    """Integer codes for a run's queries, shared with the judgments, and both sides' document ids.

    Query codes number the run's queries in order of first appearance. Joining grades and
    finding repeated documents then work query by query, comparing the document ids of one
    query at a time (:func:`match_judgments`).
    """

    def __init__(self, query_runs, queries, ids, qrels_query, judged_ids):
        # runs of rows with the same query: each run's query code, and its length
        self.run_query, self.run_length = query_runs
        self.queries = queries  # distinct query ids of the run
        self.ids = ids  # the run's document ids
        self.qrels_query = qrels_query  # per qrels row: its run query code, -1 if not in the run
        self.judged_ids = judged_ids  # the judgments' document ids
        self.judged_query = np.zeros(len(queries), dtype=bool)  # per run query: has judgments
        self.judged_query[qrels_query[qrels_query >= 0]] = True
        self.n_unjudged = int((~self.judged_query).sum())

    @classmethod
    def encode(
        cls, run: pa.Table, ids: DocumentIds, qrels_codes: tuple, judged_ids: DocumentIds
    ) -> RunCodes:
        """Codes of ``run`` and of the judgments' queries in its terms.

        ``qrels_codes`` are the judgments' own query codes (see :func:`_check_unique_pairs`);
        only their distinct values are looked up among the run's.
        """
        query_runs, queries = _query_runs(run.column("qid"))
        (judged_runs, judged_lengths), judged_queries = qrels_codes
        qrels_query = np.repeat(positions(judged_queries, queries)[judged_runs], judged_lengths)
        return cls(query_runs, queries, ids, qrels_query, judged_ids)

    @cached_property
    def query(self) -> np.ndarray:
        """Per run row, its query code (made only when needed: 8 bytes a row)."""
        return np.repeat(self.run_query, self.run_length)

    @cached_property
    def grouping(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Offsets of the run's queries and the row order grouping them (None: grouped already)."""
        return _group_runs(self.run_query, self.run_length, len(self.queries))

    def reported(self, n_scored: int) -> np.ndarray | None:
        """Which of the ``n_scored`` lists make the result (None: all of them).

        Every query of the run is scored in place, its rows left where they are: dropping the
        queries without judgments would copy every row. The result leaves them out; the lists
        after the run's queries (judged queries absent from it) are all kept.
        """
        if not self.n_unjudged:
            return None
        n_run = len(self.queries)
        return np.concatenate([np.flatnonzero(self.judged_query), np.arange(n_run, n_scored)])

    def absent_queries(self, qrels: pa.Table) -> pa.Array:
        """Judged queries that the run does not contain, in order of first judgment."""
        return pc.unique(qrels.column("qid").filter(pa.array(self.qrels_query < 0)))

    def grades(
        self,
        judged_grades: np.ndarray,
        place: Callable[[int], str],
        backend: Backend,
        clip: bool = True,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Grade of every run row (0 if unjudged, negative grades clipped to 0), and judged or not.

        ``clip=False`` leaves the grades as judged (NaN: unjudged) for the measures.
        ``judged_grades`` are the judgments' grades, in qrels order. Judged means a grade >= 0:
        trec_eval counts a negative grade as "in the pool, not judged". Also checks that no
        document appears twice in a query of the run (``place`` names the run's rows).
        """
        offsets, order = self.grouping
        # the judgments of the run's queries, grouped like them
        judged_query = self.qrels_query
        rows = np.flatnonzero(judged_query >= 0)
        if rows.size < judged_query.size:
            judged_query = judged_query[rows]
        judged_offsets, _, grouping = group_codes(judged_query, range(offsets.size - 1))
        if grouping is not None:  # not already in the run's order
            rows = rows[grouping]
        labels, duplicate = backend.match_judgments(
            offsets, order, self.ids, judged_offsets, rows, self.judged_ids, judged_grades
        )
        if duplicate >= 0:
            row = int(duplicate if order is None else order[duplicate])
            query = self.queries[int(self.query[row])]
            raise _repeated_pair("run", self.ids.column[row], query, place(row))
        if order is not None:
            labels[order] = labels.copy()
        judged = labels >= 0  # NaN (unjudged) is not
        if clip:
            np.fmax(labels, 0.0, out=labels)  # negative grades and NaN (unjudged) become 0
        return labels, judged

    def ideal_lists(
        self, qrels: pa.Table, grades: np.ndarray, absent: pa.Array | None, clip: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every judgment grade (negative ones as 0, if ``clip``) by scored query, as CSR.

        ``grades`` are the judgments' grades, in qrels order. The scored queries are those of
        :func:`_run_layout`: the run's queries in run order, then the ``absent`` ones (when they
        are scored).
        """
        target = self.qrels_query
        n_queries = len(self.queries)
        if absent is not None and len(absent):
            elsewhere = _query_positions(qrels.column("qid"), absent)
            target = np.where(elsewhere >= 0, n_queries + elsewhere, target)
            n_queries += len(absent)
        kept = target >= 0
        if not kept.all():
            target, grades = target[kept], grades[kept]
        offsets, _, order = group_codes(target, range(n_queries))
        if order is not None:  # not already grouped in the scored order
            grades = grades[order]
        return offsets, np.maximum(grades, 0.0) if clip else grades.astype(np.float64)

    def docid_descending_key(self, scores: np.ndarray, backend: Backend) -> np.ndarray:
        """Per run row, the place of its document id in descending byte order (trec_eval's ties).

        Only the order between rows of a query with equal ``scores`` (as ranked, float64,
        read-only) counts.
        """
        offsets, order = self.grouping
        return backend.docid_ranks(offsets, order, self.ids, scores)


def _run_heads(values: pa.ChunkedArray) -> tuple[pa.ChunkedArray, np.ndarray]:
    """The first value of every run of equal consecutive values, and the length of each run.

    One linear pass of comparisons with the previous row. Query ids come grouped in TREC files,
    so hashing the run heads instead of every row touches a hash table a hundred times less;
    with a million queries that table no longer fits in the CPU caches, and the rows' hash
    lookups were most of the time of a large run. Correct for any order: a query that comes
    back later simply starts another run.
    """
    heads, starts, offset, previous = [], [], 0, None
    for chunk in values.chunks:
        n = len(chunk)
        if n == 0:
            continue
        changed = pc.not_equal(chunk.slice(1), chunk.slice(0, n - 1))
        local = np.flatnonzero(np.r_[True, changed.to_numpy(zero_copy_only=False)])
        if previous is not None and chunk[0] == previous:
            local = local[1:]  # the run goes on from the previous chunk
        heads.append(chunk.take(pa.array(local)))
        starts.append(local + offset)
        previous = chunk[n - 1]
        offset += n
    bounds = np.concatenate([*starts, [offset]]).astype(np.int64)
    return pa.chunked_array(heads, type=values.type), np.diff(bounds)


def _query_runs(values: pa.ChunkedArray) -> tuple[tuple[np.ndarray, np.ndarray], pa.Array]:
    """Runs of equal consecutive query ids: ((each run's code, its length), distinct ids).

    Codes (int64) number the distinct ids by first appearance; one value per run is hashed.
    """
    heads, lengths = _run_heads(values)
    uniques = pc.unique(heads)
    return (positions(heads, uniques), lengths), uniques


def _group_runs(
    run_query: np.ndarray, run_length: np.ndarray, n_queries: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """Offsets of queries given as runs of rows, and the row order grouping them.

    The order is None when every query is one run (its rows consecutive): the usual case,
    which needs no code per row.
    """
    if run_query.size == n_queries:  # codes number queries by first appearance: 0, 1, ...
        offsets = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum(run_length, out=offsets[1:])
        return offsets, None
    offsets, _, order = group_codes(np.repeat(run_query, run_length), range(n_queries))
    return offsets, order


def _query_positions(values: pa.ChunkedArray, value_set: pa.Array) -> np.ndarray:
    """Per row, the position of its query id in ``value_set`` (-1 if absent), by runs."""
    heads, lengths = _run_heads(values)
    return np.repeat(positions(heads, value_set), lengths)


def check_max_docs(max_docs: Any, ties: str) -> int:
    """``max_docs`` (not None) checked by the option table, then against the tie rule ``ties``."""
    max_docs = parse("max_docs", max_docs)
    if ties not in ("docid_desc", "stable"):
        raise OptionError(
            f"`max_docs={max_docs}` cuts each ranking after {max_docs} documents, "
            "which needs a fixed order of tied scores",
            option="max_docs",
            value=max_docs,
            fix=f"`ties='docid_desc'` or `ties='stable'`, not `ties={ties!r}`",
            joiner=": ",
        )
    return max_docs


def first_ranked(
    codes: RunCodes, scores: np.ndarray, max_docs: int, backend: Backend, tie_key: np.ndarray | None
) -> np.ndarray:
    """Which run rows are among the first ``max_docs`` of their query's ranking.

    The ranking is the one the definition scores: by ``scores`` (as ranked, float64)
    descending, ties by ``tie_key`` (trec_eval's document id order) or, when None, in run order.
    """
    offsets, order = codes.grouping
    return backend.first_ranked(offsets, order, scores, tie_key, max_docs)


def run_layout(
    codes: RunCodes,
    keep: np.ndarray | None,
    grades: np.ndarray,
    scores: np.ndarray,
    absent: pa.Array | None,
    run_row: Callable[[int], str],
    backend: Backend,
) -> Layout:
    """The kept run rows grouped by query, then the ``absent`` judged queries as empty rankings.

    ``keep`` selects the run rows (None: all of them; ``grades`` are those of the kept rows,
    ``scores`` those of every run row); errors name run row ``r`` as ``run_row(r)``.
    Every query of the run gets a list, even when no row of it was kept.
    """
    if keep is None:
        offsets, order = codes.grouping
    else:
        offsets, _, order = group_codes(codes.query[keep], codes.queries)
    query_ids = ids_to_numpy(codes.queries)
    if absent is not None and len(absent):
        offsets = np.concatenate([offsets, np.full(len(absent), offsets[-1])])
        query_ids = np.concatenate([query_ids, ids_to_numpy(absent)])
    scores = as_score_vector(scores if keep is None else scores[keep], "scores")
    return finish_layout(
        offsets,
        as_grade_vector(grades, "grades"),
        scores,
        query_ids,
        lambda r: run_row(r if keep is None else int(np.flatnonzero(keep)[r])),
        backend,
        order,
    )
