"""TREC runs and relevance judgments (qrels): reading them fast, and scoring a run against them.

File formats (whitespace-separated, one line per document; lines starting with ``#`` are
comments):

- qrels: ``qid iteration docid grade``
- run: ``qid Q0 docid rank score tag`` (the rank column is ignored; documents are ranked by
  score)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from fastndcg._arrow import as_arrow, group_column, ids_to_numpy
from fastndcg._engine import Engine, split_options
from fastndcg._layout import Judgments, Layout, as_grade_vector, as_score_vector, finish_layout
from fastndcg._presets import accepts_preset
from fastndcg._result import NDCGResult

QRELS_COLUMNS = ("qid", "iteration", "docid", "grade")
RUN_COLUMNS = ("qid", "Q0", "docid", "rank", "score", "tag")
MISSING = ("zero", "skip", "error")
_SNIFF_BYTES = 1 << 16


def read_qrels(source: Any) -> pa.Table:
    """Judgments as a table (qid: string, docid: string, grade: float64).

    ``source`` is a path to a TREC qrels file, or a table/DataFrame with those columns.
    """
    return _read(source, "qrels", QRELS_COLUMNS, {"grade": pa.float64()})


def read_run(source: Any) -> pa.Table:
    """A run as a table (qid: string, docid: string, score: float64).

    ``source`` is a path to a TREC run file, or a table/DataFrame with those columns.
    """
    return _read(source, "run", RUN_COLUMNS, {"score": pa.float64()})


def _read(
    source: Any, kind: str, names: tuple[str, ...], value: dict[str, pa.DataType]
) -> pa.Table:
    wanted = ["qid", "docid", *value]
    if isinstance(source, (str, Path)):
        table = _read_text(Path(source), kind, names, wanted, value)
    else:
        table = as_arrow(source)
        if isinstance(table, pa.RecordBatch):
            table = pa.Table.from_batches([table])
        missing = [c for c in wanted if c not in table.schema.names]
        if missing:
            raise KeyError(
                f"the {kind} table needs columns {', '.join(wanted)}; {missing[0]!r} is missing "
                f"(it has {', '.join(table.schema.names)})"
            )
        table = table.select(wanted)
    columns = []
    for name in wanted:
        values = table.column(name)
        if values.null_count:
            row = int(pc.index(values.is_null(), True).as_py())
            raise ValueError(f"{kind}: column {name!r} has a missing value at row {row}")
        target = value.get(name, pa.string())
        if values.type != target:
            try:
                values = values.cast(target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise TypeError(
                    f"{kind}: column {name!r} cannot be read as {target}: {exc}"
                ) from exc
        columns.append(values)
    return pa.table(columns, names=wanted)


def _read_text(path: Path, kind: str, names, wanted, value) -> pa.Table:
    if not path.exists():
        raise FileNotFoundError(f"{kind} file not found: {path}")
    types = {name: pa.string() for name in wanted}
    types.update(value)
    convert = pacsv.ConvertOptions(include_columns=wanted, column_types=types)
    read = pacsv.ReadOptions(column_names=list(names), block_size=1 << 24)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False)
    with path.open("rb") as f:
        head = f.read(_SNIFF_BYTES)
    tidy = b"\t" not in head and b"  " not in head and not re.search(rb"(^|\n)[#\s]", head)
    if tidy:
        try:
            return pacsv.read_csv(
                path, read_options=read, parse_options=parse, convert_options=convert
            )
        except pa.ArrowInvalid:
            pass  # irregular lines further down: read line by line
    return _read_loose(path, kind, names, wanted, value)


def _read_loose(path: Path, kind: str, names, wanted, value) -> pa.Table:
    """Read line by line, for files the fast reader rejects.

    Any run of spaces or tabs separates fields; text after the last field and ``#`` comment
    lines are ignored, as trec_eval does.
    """
    positions = [names.index(name) for name in wanted]
    columns: list[list[str]] = [[] for _ in wanted]
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            line = raw.strip()
            if not line or line.startswith(b"#"):
                continue
            fields = line.split(maxsplit=len(names) - 1)
            if len(fields) < len(names):
                text = raw.decode(errors="replace").strip()
                raise ValueError(
                    f"{path}, line {number}: a TREC {kind} line has {len(names)} fields "
                    f"({' '.join(names)}); found {len(fields)}: {text!r}"
                )
            for column, position in zip(columns, positions, strict=True):
                column.append(fields[position].decode())
    arrays = []
    for name, column in zip(wanted, columns, strict=True):
        array = pa.array(column, type=pa.string())
        if name in value:
            try:
                array = array.cast(value[name])
            except pa.ArrowInvalid as exc:
                raise ValueError(f"{path}: column {name!r} must be numeric: {exc}") from exc
        arrays.append(array)
    return pa.table(arrays, names=wanted)


def _check_unique_pairs(table: pa.Table, kind: str) -> None:
    pairs = table.group_by(["qid", "docid"]).aggregate([([], "count_all")])
    if pairs.num_rows != table.num_rows:
        repeated = pairs.filter(pc.greater(pairs.column("count_all"), 1)).slice(0, 1).to_pylist()[0]
        raise ValueError(
            f"{kind} lists document {repeated['docid']!r} of query {repeated['qid']!r} "
            f"{repeated['count_all']} times; each (query, document) pair must appear once"
        )


@accepts_preset("ndcg_run")
def ndcg_run(
    qrels: Any,
    run: Any,
    *,
    judged_only: bool = False,
    missing: str = "zero",
    max_docs: int | None = None,
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
    missing : {"zero", "skip", "error"}, default="zero"
        What a judged query absent from the run gets: an empty ranking (NDCG 0, or the
        ``zero_idcg`` rule when it has no relevant judgment), nothing (left out), or an error.
    max_docs : int, optional
        Keep only the first ``max_docs`` documents of each query's ranking (trec_eval's ``-M``),
        before ``judged_only`` applies; the ideal ranking is not cut. Needs a fixed tie order
        (``ties="docid_desc"`` or ``"stable"``).
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
    if missing not in MISSING:
        raise ValueError(f"unknown missing={missing!r}; valid values are 'zero', 'skip', 'error'")
    engine_options, _ = split_options(options, "ndcg_run()", ())
    engine_options.setdefault("ideal", "global")
    engine = Engine.create(**engine_options)
    if max_docs is not None:
        _check_max_docs(max_docs, engine.ties)
    judgments_table = read_qrels(qrels)
    run_table = read_run(run)
    _check_unique_pairs(judgments_table, "qrels")
    _check_unique_pairs(run_table, "run")

    judged_queries = pc.unique(judgments_table.column("qid"))
    run_queries = pc.unique(run_table.column("qid"))
    in_judged = pc.is_in(run_table.column("qid"), value_set=judged_queries)
    n_unjudged = len(
        pc.filter(run_queries, pc.invert(pc.is_in(run_queries, value_set=judged_queries)))
    )
    absent = pc.filter(judged_queries, pc.invert(pc.is_in(judged_queries, value_set=run_queries)))
    if missing == "error" and len(absent):
        raise ValueError(
            f"{len(absent)} judged quer{'y is' if len(absent) == 1 else 'ies are'} not in the run "
            f"(first: {absent[0].as_py()!r}); pass missing='zero' or missing='skip'"
        )

    grade_of_row, judged = _join_grades(run_table, judgments_table)
    keep = in_judged.to_numpy(zero_copy_only=False)
    if max_docs is not None:
        keep &= _first_ranked(run_table, max_docs, engine)
    if judged_only:
        keep &= judged
    kept = run_table.filter(pa.array(keep))
    grades = grade_of_row[keep]
    tie_key = _docid_descending_key(kept.column("docid")) if engine.ties == "docid_desc" else None
    # judged run queries left without documents (judged_only) are scored as empty rankings
    evaluated = pc.filter(run_queries, pc.is_in(run_queries, value_set=judged_queries))
    emptied = pc.filter(
        evaluated, pc.invert(pc.is_in(evaluated, value_set=pc.unique(kept.column("qid"))))
    )
    empty = pa.concat_arrays([emptied, absent]) if missing == "zero" else emptied

    with engine.threads():
        layout = _run_layout(kept, grades, empty, engine.use_numba)
        if tie_key is not None and layout.row_order is not None:
            tie_key = tie_key[layout.row_order]
        judgments = None
        if engine.ideal == "global":
            ideal_grades = np.maximum(judgments_table.column("grade").to_numpy(), 0.0)
            judgments = Judgments.build(
                ideal_grades, ids_to_numpy(judgments_table.column("qid")), engine.use_numba
            )
        dcg, idcg = engine.score(layout, judgments=judgments, tie_key=tie_key)
    return engine.finish(
        layout.query_ids,
        dcg,
        idcg,
        extra={"n_missing": len(absent), "n_unjudged": int(n_unjudged)},
    )


def _join_grades(run: pa.Table, qrels: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """Grade of every run row (0 if unjudged, negative grades clipped to 0), and judged or not.

    Judged means a grade >= 0: trec_eval counts a negative grade as "in the pool, not judged".
    """
    rows = pa.array(np.arange(run.num_rows, dtype=np.int64))
    left = pa.table([run.column("qid"), run.column("docid"), rows], names=["qid", "docid", "row"])
    joined = left.join(qrels, keys=["qid", "docid"], join_type="inner")
    where = joined.column("row").to_numpy()
    labels = joined.column("grade").to_numpy()
    grades = np.zeros(run.num_rows)
    grades[where] = np.maximum(labels, 0.0)
    judged = np.zeros(run.num_rows, dtype=bool)
    judged[where] = labels >= 0
    return grades, judged


def _check_max_docs(max_docs: Any, ties: str) -> None:
    if isinstance(max_docs, bool) or not isinstance(max_docs, (int, np.integer)) or max_docs < 1:
        raise ValueError(f"max_docs must be a positive int or None; got {max_docs!r}")
    if ties not in ("docid_desc", "stable"):
        raise ValueError(
            f"max_docs cuts each ranking after a fixed number of documents, which needs a fixed "
            f"order of tied scores: ties='docid_desc' or 'stable', not ties={ties!r}"
        )


def _first_ranked(run: pa.Table, max_docs: int, engine: Engine) -> np.ndarray:
    """Which run rows are among the first ``max_docs`` of their query's ranking.

    The ranking is the one the engine scores: by score as held (``score_dtype``) descending,
    ties by document id descending or in run order (``engine.ties``).
    """
    n = run.num_rows
    codes = pc.dictionary_encode(run.column("qid")).combine_chunks().indices.to_numpy()
    scores = engine.held(run.column("score").to_numpy())
    if engine.ties == "docid_desc":
        tie = _docid_descending_key(run.column("docid"))
    else:
        tie = np.arange(n)
    order = np.lexsort((tie, -scores, codes))
    grouped = codes[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    keep = np.zeros(n, dtype=bool)
    keep[order[rank < max_docs]] = True
    return keep


def _docid_descending_key(docids: pa.ChunkedArray) -> np.ndarray:
    """Per row, the position of its document id in descending byte order (trec_eval's ties)."""
    order = pc.array_sort_indices(docids.combine_chunks().cast(pa.binary()), order="descending")
    key = np.empty(len(docids), dtype=np.int64)
    key[order.to_numpy()] = np.arange(len(docids), dtype=np.int64)
    return key


def _run_layout(run: pa.Table, grades: np.ndarray, empty: pa.Array, use_numba: bool) -> Layout:
    """Layout of the run grouped by query, then the queries in ``empty`` as empty lists."""
    offsets, ids, order = group_column(run.column("qid"), "qid", use_numba)
    query_ids = ids_to_numpy(ids)
    if len(empty):
        offsets = np.concatenate([offsets, np.full(len(empty), offsets[-1])])
        query_ids = np.concatenate([query_ids, ids_to_numpy(empty)])
    scores = as_score_vector(run.column("score").to_numpy(), "scores")
    return finish_layout(
        offsets,
        as_grade_vector(grades, "grades"),
        scores,
        query_ids,
        lambda r: f"run row {r}",
        use_numba,
        order,
    )
