"""TREC runs and relevance judgments (qrels): reading them fast, and scoring a run against them.

File formats (whitespace-separated, one line per document; lines starting with ``#`` are
comments):

- qrels: ``qid iteration docid grade``
- run: ``qid Q0 docid rank score tag`` (the rank column is ignored; documents are ranked by
  score)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from fastndcg._core.coerce import checked_stats
from fastndcg._core.definition import Definition
from fastndcg._core.layout import Layout
from fastndcg._core.options import RUN, data_options, parse, split_options
from fastndcg._errors import InputError, OptionError
from fastndcg._io.trec_join import (
    RunCodes,
    check_max_docs,
    check_unique_pairs,
    first_ranked,
    run_layout,
)
from fastndcg._io.trec_text import (
    QRELS_COLUMNS,
    RUN_COLUMNS,
    ReadFile,
    place_of_row,
    read_qrels,
    read_run,
)
from fastndcg._presets import accepts_preset
from fastndcg._presets.apply import resolve
from fastndcg._result import NDCGResult

__all__ = ["QRELS_COLUMNS", "RUN_COLUMNS", "ndcg_run", "read_qrels", "read_run"]


@accepts_preset("ndcg_run")
def ndcg_run(
    qrels: Any,
    run: Any,
    *,
    judged_only: bool = False,
    missing: str = "error",
    max_docs: int | None = None,
    real_grades: bool = False,
    preset: Any = None,
    **options: Any,
) -> NDCGResult:
    """NDCG of a TREC run against relevance judgments.

    Parameters
    ----------
    qrels : path or table
        Judgments: a TREC qrels file (``qid 0 docid grade``) or a table with ``qid``, ``docid``,
        ``grade`` columns. A negative grade means "in the pool but not judged" (as in trec_eval):
        gain 0, not part of the ideal ranking, and removed by ``judged_only``.
    run : path or table
        A TREC run file (``qid Q0 docid rank score tag``) or a table with ``qid``, ``docid``,
        ``score`` columns. Documents are ranked by score; the rank column is ignored.
    judged_only : bool, default=False
        Remove documents without a judgment (a grade >= 0) before ranking, as trec_eval's ``-J``
        does (otherwise they get grade 0).
    missing : {"error", "zero", "skip"}, default="error"
        What a judged query absent from the run gets: an error naming it (the default, whatever
        the preset: trec_eval's answer depends on ``-c``, so the choice is the caller's), an
        empty ranking (``"zero"``, trec_eval ``-c``), or nothing (``"skip"``: left out of the
        result and the mean, trec_eval without ``-c``). The empty ranking scores NDCG 0 when
        its IDCG is above 0; when it is 0 the ``zero_idcg`` rule applies: the query has no
        relevant judgment, or its ideal comes from the ranking itself (``ideal="recall"`` or
        ``"local"``), which is empty. An empty run (no line) is an error unless ``"zero"``
        scores every judged query 0. ``n_missing`` counts these queries either way.
    max_docs : int, optional
        Keep only the first ``max_docs`` documents of each query's ranking (trec_eval's ``-M``),
        before ``judged_only`` applies; the ideal ranking is not cut. Needs a fixed tie order
        (``ties="docid_desc"`` or ``"stable"``).
    real_grades : bool, default=False
        Accept qrels grades that are not whole numbers. TREC grades are integers (trec_eval
        reads ``1.5`` as 1), so by default such a grade is an :class:`~fastndcg.InputError`
        naming its line (or row, for a table).
    preset : str, optional
        A tool's definition by name (see :func:`fastndcg.presets`); the options given override
        its settings. ``preset="trec_eval"`` is ``trec_eval``'s ``ndcg`` (add ``k`` for
        ``ndcg_cut``).
    **options
        The options of :func:`fastndcg.ndcg`. The default ideal here is ``"global"``: all judged
        documents of the query, retrieved or not. ``ties="docid_desc"`` breaks score ties by
        document id in descending byte order, as trec_eval does.

    Returns
    -------
    NDCGResult
        One row per judged query (run order, then missing queries in judgment order);
        ``n_missing`` counts judged queries absent from the run and ``n_unjudged`` the run's
        queries without judgments (ignored).
    """
    prepared = _prepare(qrels, run, judged_only, missing, max_docs, real_grades, options)
    definition, layout = prepared.definition, prepared.layout
    with definition.threads():
        try:
            dcg, idcg = definition.score(
                layout, tie_key=prepared.tie_key, rows_judged=False, **prepared.ideal
            )
        except OptionError as exc:
            judged_grades = prepared.judged_grades
            if exc.option != "gain" or not judged_grades.size:
                raise
            # gains too large for float64 sums: every grade comes from the judgments
            row = int(np.argmax(np.abs(judged_grades)))
            place = prepared.qrels_row(row)
            raise exc.extended(
                f" (the largest grade, {judged_grades[row]:g}, is on {place})", where=place
            ) from exc
    codes = prepared.codes
    query_ids = layout.query_ids
    reported = codes.reported(len(query_ids))
    if reported is not None:  # the run's queries without judgments are scored, not reported
        query_ids, dcg, idcg = query_ids[reported], dcg[reported], idcg[reported]
    return definition.finish(
        query_ids,
        dcg,
        idcg,
        extra={"n_missing": len(prepared.absent), "n_unjudged": codes.n_unjudged},
    )


class Prepared(NamedTuple):
    """A run joined with its judgments, as :func:`ndcg_run` scores it (before the kernel)."""

    definition: Definition
    layout: Layout
    tie_key: np.ndarray | None
    ideal: dict[str, np.ndarray]
    codes: RunCodes
    absent: Any
    judged_grades: np.ndarray
    qrels_row: Callable[[int], str]
    run_rows: np.ndarray | None  # the run row of each kept row (None: every row kept)
    run_table: Any
    # for the measures: each layout row's grade as judged (NaN: unjudged), every judgment of
    # each scored query (offsets, grades as judged)
    labels: np.ndarray | None = None
    judgments: tuple[np.ndarray, np.ndarray] | None = None


def _prepare(
    qrels: Any,
    run: Any,
    judged_only: bool,
    missing: str,
    max_docs: int | None,
    real_grades: bool,
    options: dict[str, Any],
    measures: bool = False,
) -> Prepared:
    """Read, check and join ``run`` with ``qrels``: what :func:`ndcg_run` then scores.

    ``measures``: also the grades as judged, which the measures beside NDCG read.
    """
    missing = parse("missing", missing)
    ours, _ = split_options(options, "ndcg_run()", data_options(RUN))
    ours.setdefault("ideal", "global")
    definition = Definition.create(**ours)
    backend = definition.backend
    if max_docs is not None:
        max_docs = check_max_docs(max_docs, definition.ties)
    judged_only = parse("judged_only", judged_only)
    real_grades = parse("real_grades", real_grades)
    judgments_table = read_qrels(qrels)
    judged_grades = judgments_table.column("grade").to_numpy()  # one copy, for every use below
    qrels_row = place_of_row(qrels, "qrels", QRELS_COLUMNS)
    stats = checked_stats(judged_grades, "qrels grade", qrels_row, backend, not real_grades)
    if not stats.integral:
        row = stats.first_nonintegral
        raise InputError(
            f"the qrels grade {judged_grades[row]:g} on {qrels_row(row)} is not a whole number",
            value=float(judged_grades[row]),
            where=qrels_row(row),
            fix="TREC grades are integers (trec_eval reads 1.5 as 1): correct it, or pass "
            "`real_grades=True` to score real-valued grades",
        )
    run_table = read_run(run)
    run_row = place_of_row(run, "run", RUN_COLUMNS)
    run_scores = run_table.column("score").to_numpy()
    judged_ids, run_ids = backend.document_ids(
        judgments_table.column("docid"),
        run_table.column("docid"),
        ordered=definition.ties == "docid_desc",
    )
    judgment_codes = check_unique_pairs(judgments_table, judged_ids, "qrels", qrels_row, backend)
    codes = RunCodes.encode(run_table, run_ids, judgment_codes, judged_ids)

    labels, judged = codes.grades(judged_grades, run_row, backend, clip=False)
    grades = np.fmax(labels, 0.0)  # negative grades and NaN (unjudged) become 0
    absent = codes.absent_queries(judgments_table)
    if missing == "error" and len(absent):
        checked_stats(run_scores, "scores", run_row, backend, integral=False)  # the rows' first
        raise _absent_error(absent, run, run_table.num_rows == 0)
    cut = max_docs is not None and max_docs < run_table.num_rows  # else no query is cut
    ranked = None  # the scores as ranked, in float64 (float32 ones keep their order and ties)
    if definition.ties == "docid_desc" or cut:
        ranked = definition.held(run_scores).astype(np.float64, copy=False).view()
        ranked.setflags(write=False)  # whether Arrow's or a copy: one compiled signature
    tie_key = None
    if definition.ties == "docid_desc":
        tie_key = codes.docid_descending_key(ranked, backend)
    keep = None  # the run rows scored (None: every row, then nothing is copied)
    if cut or judged_only:
        # every score takes part in the cut, and a non-finite score is an error wherever it
        # is: rows cut away or unjudged are checked too, not only those scored
        checked_stats(run_scores, "scores", run_row, backend, integral=False)
    if cut:
        keep = first_ranked(codes, ranked, max_docs, backend, tie_key)
    if judged_only:
        keep = judged if keep is None else keep & judged
    if keep is not None and keep.all():
        keep = None
    if keep is not None:
        grades, labels = grades[keep], labels[keep]
        tie_key = None if tie_key is None else tie_key[keep]

    with definition.threads():
        layout = run_layout(
            codes,
            keep,
            grades,
            run_scores,
            absent if missing == "zero" else None,
            run_row,
            backend,
        )
        if tie_key is not None and layout.row_order is not None:
            tie_key = tie_key[layout.row_order]
        ideal = {}
        if definition.ideal == "global":
            ideal_offsets, ideal_grades = codes.ideal_lists(
                judgments_table, judged_grades, absent if missing == "zero" else None
            )
            ideal = {"ideal_grades": ideal_grades, "ideal_offsets": ideal_offsets}
    judgments = None
    if measures:
        judgments = codes.ideal_lists(
            judgments_table, judged_grades, absent if missing == "zero" else None, clip=False
        )
        if layout.row_order is not None:
            labels = labels[layout.row_order]
    return Prepared(
        definition,
        layout,
        tie_key,
        ideal,
        codes,
        absent,
        judged_grades,
        qrels_row,
        None if keep is None else np.flatnonzero(keep),
        run_table,
        labels if measures else None,
        judgments,
    )


def _absent_error(absent: Any, run: Any, empty: bool) -> InputError:
    """The error for judged queries ``absent`` from ``run`` under ``missing='error'``.

    An ``empty`` run says so: trec_eval refuses one too.
    """
    first = absent[0].as_py()
    count = f"{len(absent)} judged quer{'y is' if len(absent) == 1 else 'ies are'}"
    if empty:
        path = run.path if isinstance(run, ReadFile) else run
        source = f"the run {path}" if isinstance(path, (str, Path)) else "the run"
        return InputError(
            f"{source} is empty (no line ranks a document): {count} not in it",
            value=first,
            where=source.removeprefix("the run "),
            fix="give the run its rankings; or, for every judged query to score 0, pass "
            "`missing='zero'`",
        )
    return InputError(
        f"{count} not in the run (first: {first!r})",
        value=first,
        where=f"query {first!r}",
        fix="pass `missing='zero'` to score them 0 (trec_eval -c) or `missing='skip'` to leave "
        "them out (trec_eval without -c)",
    )


def prepare_run(qrels: Any, run: Any, *, preset: Any = None, **options: Any) -> Prepared:
    """``run`` joined with ``qrels`` as :func:`ndcg_run` with these options scores it.

    For :meth:`fastndcg.PairedComparison.explain`. Options are those of :func:`ndcg_run` (a
    preset's settings merged as there).
    """
    _, options, _ = resolve("ndcg_run", preset, options)
    judged_only = options.pop("judged_only", False)
    missing = options.pop("missing", "error")
    max_docs = options.pop("max_docs", None)
    real_grades = options.pop("real_grades", False)
    options.pop("weights", None)
    return _prepare(qrels, run, judged_only, missing, max_docs, real_grades, options)
