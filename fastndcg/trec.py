"""TREC runs and relevance judgments (qrels): reading them fast, and scoring a run against them.

File formats (whitespace-separated, one line per document; lines starting with ``#`` are
comments):

- qrels: ``qid iteration docid grade``
- run: ``qid Q0 docid rank score tag`` (the rank column is ignored; documents are ranked by
  score)
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from fastndcg._arrow import as_arrow, ids_to_numpy
from fastndcg._backends import numba_available
from fastndcg._engine import Engine, split_options
from fastndcg._layout import (
    Layout,
    as_grade_vector,
    as_score_vector,
    checked_stats,
    finish_layout,
    group_codes,
)
from fastndcg._presets import accepts_preset
from fastndcg._result import NDCGResult

QRELS_COLUMNS = ("qid", "iteration", "docid", "grade")
RUN_COLUMNS = ("qid", "Q0", "docid", "rank", "score", "tag")
MISSING = ("zero", "skip", "error")
_SNIFF_BYTES = 1 << 16
_BLOCK_BYTES = 1 << 22  # the CSV reader's blocks: enough of them to keep every thread busy
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_HASH = ord("#")


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


@dataclass(frozen=True)
class _ReadFile:
    """A qrels or run file read once to be scored several times; errors still name its lines."""

    path: Path
    table: pa.Table


def _read_once(source: Any, kind: str) -> Any:
    """``source`` read now when it is a path (``kind``: "qrels" or "run"), else as it is.

    What it returns goes wherever :func:`ndcg_run` takes a path, and an error about one of its
    rows still names the line of the file.
    """
    if not isinstance(source, (str, Path)):
        return source
    read = read_qrels if kind == "qrels" else read_run
    return _ReadFile(Path(source), read(source))


def _read(
    source: Any, kind: str, names: tuple[str, ...], value: dict[str, pa.DataType]
) -> pa.Table:
    wanted = ["qid", "docid", *value]
    if isinstance(source, _ReadFile):
        return source.table
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
    if path.is_dir():
        raise ValueError(f"{kind} path {path} is a directory; give the {kind} file")
    types = {name: pa.string() for name in wanted}
    types.update(value)
    convert = pacsv.ConvertOptions(include_columns=wanted, column_types=types)
    read = pacsv.ReadOptions(column_names=list(names), block_size=_BLOCK_BYTES)
    with path.open("rb") as f:
        head = f.read(_SNIFF_BYTES)
    if head.startswith(_GZIP_MAGIC):
        raise ValueError(f"{kind} file {path} is gzip-compressed; decompress it first (gunzip)")
    delimiter = _delimiter(head)
    if delimiter is not None:
        parse = pacsv.ParseOptions(delimiter=delimiter, quote_char=False)
        try:
            table = pacsv.read_csv(
                path, read_options=read, parse_options=parse, convert_options=convert
            )
        except pa.ArrowInvalid:
            pass  # irregular lines further down: read line by line
        else:
            if _regular(table, wanted, value) and not _stray_whitespace(path, delimiter):
                return table
    return _read_loose(path, kind, names, wanted, value)


def _regular(table: pa.Table, wanted: list[str], value: dict[str, pa.DataType]) -> bool:
    """Whether the fast reader read every kept column as the line-by-line reader would.

    The delimiter was chosen from the file's first bytes; further down a comment line (read
    as a query ``#...``), an empty field or a missing value would be read differently, so such
    files are read line by line. The checks read the columns' offsets and bytes. Whitespace
    besides single separators, in any column, is found by :func:`_stray_whitespace`.
    """
    for name in wanted:
        column = table.column(name)
        if column.null_count:
            return False
        if name in value:
            continue
        for starts, data in _string_chunks(column):
            if starts.size > 1 and np.diff(starts).min() == 0:  # an empty field
                return False
            if name == "qid" and _HASH in data and (data[starts[:-1] - starts[0]] == _HASH).any():
                return False
    return True


def _stray_whitespace(path: Path, delimiter: str) -> bool:
    r"""Whether the file holds whitespace besides single ``delimiter`` bytes and line ends.

    The fast reader splits lines at the delimiter only: a tab or an empty field (``7\t9``, two
    spaces) in any column, also one it skips, would shift the fields of the line reader,
    which splits at any whitespace. One pass over the file's bytes, 8 at a time: about 25 ms
    per 100 MB with Numba, mapping the file included.
    """
    size = path.stat().st_size
    if size == 0:
        return False
    separator = ord(delimiter)
    other = ord(" " if delimiter == "\t" else "\t")
    data = np.memmap(path, dtype=np.uint8, mode="r")
    if not numba_available() or sys.byteorder != "little":  # the kernel reads words' bytes
        from fastndcg import _numpy  # in little-endian order

        return _numpy.stray_whitespace(data, separator, other)
    import numba

    from fastndcg._kernels import stray_whitespace
    from fastndcg._scan import run_chunks

    body = size // 8 - 1  # whole words followed by another whole word
    if body > 0:
        words = data[: (body + 1) * 8].view(np.uint64)
        chunks = 4 * numba.get_num_threads()
        bounds = np.linspace(0, body, chunks + 1).astype(np.int64)
        found = run_chunks(
            lambda c: stray_whitespace(words, bounds[c], bounds[c + 1], separator, other),
            chunks,
            numba.get_num_threads(),
        )
        if any(found):
            return True
    tail = np.zeros(24, dtype=np.uint8)  # the last 8-15 bytes (or all of a short file), padded
    rest = data[max(body, 0) * 8 :]
    tail[: rest.size] = rest
    tail.setflags(write=False)  # read-only like the mapped file: one compiled signature
    return bool(stray_whitespace(tail.view(np.uint64), 0, 2, separator, other))


def _string_chunks(column: pa.ChunkedArray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(value offsets, bytes) of every chunk of a string column, as NumPy views."""
    for chunk in column.chunks:
        if len(chunk) == 0:
            continue
        offsets, data = chunk.buffers()[1:3]
        starts = np.frombuffer(offsets, dtype=np.int32)[
            chunk.offset : chunk.offset + len(chunk) + 1
        ]
        values = np.frombuffer(data, dtype=np.uint8) if data is not None else np.empty(0, np.uint8)
        yield starts, values[starts[0] : starts[-1]]


def _delimiter(head: bytes) -> str | None:
    """The one separator of a regular file's first bytes, a space or a tab; None if irregular.

    Regular: single spaces or single tabs (not both) between fields, no comment, blank or
    indented line. Irregular files are read line by line (:func:`_read_loose`), ten times
    slower; MS MARCO's qrels, for one, are tab-separated and regular.
    """
    if re.search(rb"(^|\n)[#\s]", head):
        return None
    tab, space = b"\t" in head, b" " in head
    if tab == space:
        return None
    separator = b"\t" if tab else b" "
    return None if separator * 2 in head else separator.decode()


def _read_loose(path: Path, kind: str, names, wanted, value) -> pa.Table:
    """Read line by line, for files the fast reader rejects (see :func:`_records`)."""
    positions = [names.index(name) for name in wanted]
    columns: list[list[str]] = [[] for _ in wanted]
    for _, fields in _records(path, kind, names, positions):
        for column, field in zip(columns, fields, strict=True):
            column.append(field)
    arrays = []
    for name, column in zip(wanted, columns, strict=True):
        array = pa.array(column, type=pa.string())
        if name in value:
            try:
                array = array.cast(value[name])
            except pa.ArrowInvalid:
                row = _first_invalid(array, value[name])
                lines = _records(path, kind, names, positions)
                number, _ = next(itertools.islice(lines, row, None))
                raise ValueError(
                    f"{path}, line {number}: the {name} field must be a number; "
                    f"found {array[row].as_py()!r}"
                ) from None
        arrays.append(array)
    return pa.table(arrays, names=wanted)


def _records(path: Path, kind: str, names, positions) -> Iterator[tuple[int, list[str]]]:
    """(line number, the fields at ``positions``) of every line with data, as trec_eval reads.

    Any run of spaces or tabs separates fields; ``#`` comment lines and blank lines are
    skipped. A run line may carry text after its last field (ignored); a qrels line has exactly
    its four fields. Lines end at a line feed, a carriage return or both, and a leading UTF-8
    byte order mark is skipped (as the fast reader does).
    """
    width = len(names)
    number = 0
    with path.open("rb") as f:
        if f.read(len(_BOM)) != _BOM:
            f.seek(0)
        try:
            for number, raw in enumerate(_lines(f), start=1):
                line = raw.strip()
                if not line or line.startswith(b"#"):
                    continue
                fields = line.split(maxsplit=width)
                if len(fields) < width or (len(fields) > width and kind == "qrels"):
                    text = raw.decode(errors="replace").strip()
                    raise ValueError(
                        f"{path}, line {number}: a TREC {kind} line has {width} fields "
                        f"({' '.join(names)}); found {len(line.split())}: {text!r}"
                    )
                yield number, [fields[position].decode() for position in positions]
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{path}, line {number}: not UTF-8 text ({exc.reason}: byte "
                f"{exc.object[exc.start : exc.start + 1]!r}); TREC files are read as UTF-8"
            ) from exc


def _lines(f: Any) -> Iterator[bytes]:
    """The lines of a binary file, each ending at a line feed, a carriage return or both.

    The file streams in pieces ending at line feeds; a piece holding a carriage return
    (rare) is split at it too.
    """
    for piece in f:
        if b"\r" not in piece:
            yield piece
            continue
        if piece.endswith(b"\r\n"):
            piece = piece[:-2]
        elif piece.endswith(b"\n"):
            piece = piece[:-1]
        yield from piece.split(b"\r")


def _place_of_row(source: Any, kind: str, names: tuple[str, ...]) -> Callable[[int], str]:
    """How errors name row ``r`` of a run or qrels: its line when ``source`` is a file.

    The line is found by reading the file again up to that row (only when an error is raised).
    """
    if isinstance(source, _ReadFile):
        source = source.path
    if not isinstance(source, (str, Path)):
        return lambda r: f"{kind} row {r}"
    path = Path(source)

    def place(row: int) -> str:
        number, _ = next(itertools.islice(_records(path, kind, names, [0]), row, None))
        return f"line {number} of {path}"

    return place


def _first_invalid(values: pa.Array, target: pa.DataType) -> int:
    """Position of the first of ``values`` that cannot be cast to ``target`` (one must fail).

    Halves the range holding it: about two casts of the whole array.
    """
    start, stop = 0, len(values)
    while stop - start > 1:
        middle = (start + stop) // 2
        try:
            values.slice(start, middle - start).cast(target)
        except pa.ArrowInvalid:
            stop = middle
        else:
            start = middle
    return start


def _check_unique_pairs(
    table: pa.Table, ids: _DocumentIds, kind: str, place: Callable[[int], str], use_numba: bool
) -> tuple:
    """Raise a ValueError when a (query, document) pair appears twice in ``table``.

    ``ids`` are the table's document ids (see :func:`_document_ids`); ``place`` names a row (see
    :func:`_place_of_row`). Returns the query codes it made, ``((run_query, run_length),
    queries)`` (see :func:`_query_runs`).
    """
    (run_query, run_length), queries = _query_runs(table.column("qid"))
    offsets, order = _group_runs(run_query, run_length, len(queries))
    no_judgments = np.zeros(offsets.size, dtype=np.int64)
    no_rows = np.zeros(0, dtype=np.int64)
    _, repeated = _match(offsets, order, ids, no_judgments, no_rows, ids, np.zeros(0), use_numba)
    if repeated >= 0:
        row = int(repeated if order is None else order[repeated])
        run = int(np.searchsorted(np.cumsum(run_length), row, side="right"))
        raise _repeated_pair(kind, ids.column[row], queries[int(run_query[run])], place(row))
    return (run_query, run_length), queries


def _repeated_pair(kind: str, document: pa.Scalar, query: pa.Scalar, where: str) -> ValueError:
    return ValueError(
        f"{kind} lists document {document.as_py()!r} of query {query.as_py()!r} more than "
        f"once (again at {where}); each (query, document) pair must appear once"
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
        What a judged query absent from the run gets: an empty ranking, nothing (left out), or
        an error. The empty ranking scores NDCG 0 when its IDCG is above 0; when it is 0 the
        ``zero_idcg`` rule applies: the query has no relevant judgment, or its ideal comes
        from the ranking itself (``ideal="recall"`` or ``"local"``), which is empty.
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
        max_docs = _check_max_docs(max_docs, engine.ties)
    if not isinstance(judged_only, (bool, np.bool_)):
        raise TypeError(f"judged_only must be True or False; got {judged_only!r}")
    judgments_table = read_qrels(qrels)
    judged_grades = judgments_table.column("grade").to_numpy()  # one copy, for every use below
    qrels_row = _place_of_row(qrels, "qrels", QRELS_COLUMNS)
    checked_stats(judged_grades, "qrels grade", qrels_row, engine.use_numba, integral=False)
    run_table = read_run(run)
    run_row = _place_of_row(run, "run", RUN_COLUMNS)
    run_scores = run_table.column("score").to_numpy()
    judged_ids, run_ids = _document_ids(
        judgments_table.column("docid"),
        run_table.column("docid"),
        engine.use_numba,
        ordered=engine.ties == "docid_desc",
    )
    judgment_codes = _check_unique_pairs(
        judgments_table, judged_ids, "qrels", qrels_row, engine.use_numba
    )
    codes = _RunCodes.encode(run_table, run_ids, judgment_codes, judged_ids)

    absent = codes.absent_queries(judgments_table)
    if missing == "error" and len(absent):
        raise ValueError(
            f"{len(absent)} judged quer{'y is' if len(absent) == 1 else 'ies are'} not in the run "
            f"(first: {absent[0].as_py()!r}); pass missing='zero' or missing='skip'"
        )
    grades, judged = codes.grades(judged_grades, run_row, engine.use_numba)
    cut = max_docs is not None and max_docs < run_table.num_rows  # else no query is cut
    ranked = None  # the scores as ranked, in float64 (float32 ones keep their order and ties)
    if engine.ties == "docid_desc" or cut:
        ranked = engine.held(run_scores).astype(np.float64, copy=False).view()
        ranked.setflags(write=False)  # whether Arrow's or a copy: one compiled signature
    tie_key = None
    if engine.ties == "docid_desc":
        tie_key = codes.docid_descending_key(ranked, engine.use_numba)
    keep = None  # the run rows scored (None: every row, then nothing is copied)
    if cut or judged_only:
        # every score takes part in the cut, and a non-finite score is an error wherever it
        # is: rows cut away or unjudged are checked too, not only those scored
        checked_stats(run_scores, "scores", run_row, engine.use_numba, integral=False)
    if cut:
        keep = _first_ranked(codes, ranked, max_docs, engine.use_numba, tie_key)
    if judged_only:
        keep = judged if keep is None else keep & judged
    if keep is not None and keep.all():
        keep = None
    if keep is not None:
        grades = grades[keep]
        tie_key = None if tie_key is None else tie_key[keep]

    with engine.threads():
        layout = _run_layout(
            codes,
            keep,
            grades,
            run_scores,
            absent if missing == "zero" else None,
            run_row,
            engine.use_numba,
        )
        if tie_key is not None and layout.row_order is not None:
            tie_key = tie_key[layout.row_order]
        ideal = {}
        if engine.ideal == "global":
            ideal_offsets, ideal_grades = codes.ideal_lists(
                judgments_table, judged_grades, absent if missing == "zero" else None
            )
            ideal = {"ideal_grades": ideal_grades, "ideal_offsets": ideal_offsets}
        dcg, idcg = engine.score(layout, tie_key=tie_key, **ideal)
    query_ids = layout.query_ids
    reported = codes.reported(len(query_ids))
    if reported is not None:  # the run's queries without judgments are scored, not reported
        query_ids, dcg, idcg = query_ids[reported], dcg[reported], idcg[reported]
    return engine.finish(
        query_ids,
        dcg,
        idcg,
        extra={"n_missing": len(absent), "n_unjudged": codes.n_unjudged},
    )


class _RunCodes:
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
        cls, run: pa.Table, ids: _DocumentIds, qrels_codes: tuple, judged_ids: _DocumentIds
    ) -> _RunCodes:
        """Codes of ``run`` and of the judgments' queries in its terms.

        ``qrels_codes`` are the judgments' own query codes (see :func:`_check_unique_pairs`);
        only their distinct values are looked up among the run's.
        """
        query_runs, queries = _query_runs(run.column("qid"))
        (judged_runs, judged_lengths), judged_queries = qrels_codes
        qrels_query = np.repeat(_positions(judged_queries, queries)[judged_runs], judged_lengths)
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
        self, judged_grades: np.ndarray, place: Callable[[int], str], use_numba: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """Grade of every run row (0 if unjudged, negative grades clipped to 0), and judged or not.

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
        labels, duplicate = _match(
            offsets,
            order,
            self.ids,
            judged_offsets,
            rows,
            self.judged_ids,
            judged_grades,
            use_numba,
        )
        if duplicate >= 0:
            row = int(duplicate if order is None else order[duplicate])
            query = self.queries[int(self.query[row])]
            raise _repeated_pair("run", self.ids.column[row], query, place(row))
        if order is not None:
            labels[order] = labels.copy()
        judged = labels >= 0  # NaN (unjudged) is not
        np.fmax(labels, 0.0, out=labels)  # negative grades and NaN (unjudged) become 0
        return labels, judged

    def ideal_lists(
        self, qrels: pa.Table, grades: np.ndarray, absent: pa.Array | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every judgment grade (negative ones as 0) grouped by the scored queries, as CSR.

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
        return offsets, np.maximum(grades, 0.0)

    def docid_descending_key(self, scores: np.ndarray, use_numba: bool) -> np.ndarray:
        """Per run row, the place of its document id in descending byte order (trec_eval's ties).

        Only the order between rows of a query with equal ``scores`` (as ranked, float64,
        read-only) counts: with Numba, the ids of each query with such a tie are sorted on their
        own; the NumPy codes already number all ids in that order.
        """
        if not use_numba:
            return self.ids.codes
        from fastndcg._kernels import descending_id_ranks

        offsets, order = self.grouping
        ranks = np.empty(len(self.ids.column), dtype=np.int64)
        order = _NO_ORDER if order is None else order
        _by_query_chunks(
            offsets,
            lambda q0, q1: descending_id_ranks(
                q0,
                q1,
                offsets,
                order,
                self.ids.bounds,
                self.ids.data,
                scores,
                scores.view(np.uint64),
                ranks,
            ),
        )
        return ranks


_NO_ORDER = np.zeros(0, dtype=np.int64)  # rows already grouped by query


@dataclass(frozen=True)
class _DocumentIds:
    """The document ids of a run or of judgments, as the join compares them.

    With Numba, their bytes: id ``r`` is ``data[bounds[r]:bounds[r + 1]]``. The NumPy join
    compares integer codes (``codes``) instead, shared by the run and the judgments; with
    ``ties="docid_desc"`` numbered in descending byte order of the ids (trec_eval's tie order).
    """

    column: pa.ChunkedArray  # the ids, for messages
    bounds: np.ndarray | None = None
    data: np.ndarray | None = None
    codes: np.ndarray | None = None


def _document_ids(
    judged: pa.ChunkedArray, run: pa.ChunkedArray, use_numba: bool, ordered: bool
) -> tuple[_DocumentIds, _DocumentIds]:
    """The judgments' and the run's document ids (string columns) as the join takes them.

    Numba joins each query on its own ids' bytes, so nothing is hashed globally: with millions
    of distinct ids (a real collection) a global hash table outgrows the CPU caches and costs
    seconds. The NumPy join needs integer codes, made by hashing every id once; ``ordered``
    numbers them in descending byte order of the ids (trec_eval's ties), which sorts the
    distinct ids (seconds for millions).
    """
    if use_numba:
        return (
            _DocumentIds(judged, *_id_bytes(judged)),
            _DocumentIds(run, *_id_bytes(run)),
        )
    both = pa.chunked_array([*judged.chunks, *run.chunks], type=pa.string())
    encoded = pc.dictionary_encode(both)  # every chunk refers to the one dictionary of all ids
    codes = pa.chunked_array([c.indices for c in encoded.chunks], type=pa.int32()).to_numpy()
    codes = codes.astype(np.int64)
    if ordered and codes.size:
        distinct = encoded.chunk(0).dictionary.cast(pa.binary())
        descending = pc.array_sort_indices(distinct, order="descending").to_numpy()
        rank = np.empty(len(distinct), dtype=np.int64)
        rank[descending] = np.arange(len(distinct), dtype=np.int64)
        codes = rank[codes]
    return (
        _DocumentIds(judged, codes=codes[: len(judged)]),
        _DocumentIds(run, codes=codes[len(judged) :]),
    )


def _id_bytes(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """``(bounds, data)`` of a string column without nulls: value ``r`` is ``data[b[r]:b[r + 1]]``.

    Arrow combines the chunks into one buffer (with 64-bit offsets: no 2 GiB limit), in its own
    memory pool, which reuses what the CSV reader freed; both arrays are views of it.
    """
    combined = column.cast(pa.large_string()).combine_chunks()
    n = len(combined)
    _, offsets, data = combined.buffers()
    if offsets is None:  # no values
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    bounds = np.frombuffer(offsets, dtype=np.int64)[combined.offset : combined.offset + n + 1]
    return bounds, np.zeros(0, dtype=np.uint8) if data is None else np.frombuffer(data, np.uint8)


def _by_query_chunks(offsets: np.ndarray, work) -> list:
    """``work(q0, q1)`` over chunks of queries of about equal rows, on fastndcg's threads."""
    import numba

    from fastndcg._backends import chunk_bounds
    from fastndcg._scan import run_chunks

    threads = numba.get_num_threads()
    bounds = chunk_bounds(offsets, 4 * threads)
    return run_chunks(lambda c: work(bounds[c], bounds[c + 1]), bounds.size - 1, threads)


def _match(offsets, order, ids, judged_offsets, judged_rows, judged_ids, judged_labels, use_numba):
    """Labels of the run rows grouped by query (NaN: unjudged), and a repeated position (-1).

    Position ``p`` of the CSR ``offsets`` is run row ``order[p]`` (``order`` None: row ``p``);
    position ``p`` of ``judged_offsets`` is judgment ``judged_rows[p]``.
    """
    labels = np.asarray(judged_labels, dtype=np.float64)
    if not use_numba:
        from fastndcg._numpy import match_judgments

        documents = ids.codes if order is None else ids.codes[order]
        judged = judged_ids.codes[judged_rows]
        return match_judgments(offsets, documents, judged_offsets, judged, labels[judged_rows])
    from fastndcg._kernels import match_judgments

    out = np.empty(len(ids.column))
    order = _NO_ORDER if order is None else order

    def join(q0: int, q1: int) -> int:
        duplicate = np.full(1, -1, dtype=np.int64)
        match_judgments(
            q0,
            q1,
            offsets,
            order,
            ids.bounds,
            ids.data,
            judged_offsets,
            judged_rows,
            judged_ids.bounds,
            judged_ids.data,
            labels,
            out,
            duplicate,
        )
        return int(duplicate[0])

    found = [d for d in _by_query_chunks(offsets, join) if d >= 0]
    return out, min(found) if found else -1


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
    return (_positions(heads, uniques), lengths), uniques


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


def _positions(values: pa.Array, value_set: pa.Array) -> np.ndarray:
    """Position of each of ``values`` in ``value_set`` (int64, -1 if absent)."""
    return pc.index_in(values, value_set=value_set).fill_null(-1).to_numpy().astype(np.int64)


def _query_positions(values: pa.ChunkedArray, value_set: pa.Array) -> np.ndarray:
    """Per row, the position of its query id in ``value_set`` (-1 if absent), by runs."""
    heads, lengths = _run_heads(values)
    return np.repeat(_positions(heads, value_set), lengths)


def _check_max_docs(max_docs: Any, ties: str) -> int:
    if isinstance(max_docs, bool) or not isinstance(max_docs, (int, np.integer)):
        raise TypeError(
            f"max_docs must be an int (documents kept per ranking) or None; got {max_docs!r}"
        )
    if max_docs < 1:
        raise ValueError(
            f"max_docs={int(max_docs)} keeps no document of a ranking; give the positive number "
            "of documents to keep"
        )
    if ties not in ("docid_desc", "stable"):
        raise ValueError(
            f"max_docs={int(max_docs)} cuts each ranking after {int(max_docs)} documents, which "
            "needs a fixed order of tied scores: ties='docid_desc' or ties='stable', not "
            f"ties={ties!r}"
        )
    return int(max_docs)  # a NumPy integer would make the kernel compile another signature


def _first_ranked(
    codes: _RunCodes, scores: np.ndarray, max_docs: int, use_numba: bool, tie_key: np.ndarray | None
) -> np.ndarray:
    """Which run rows are among the first ``max_docs`` of their query's ranking.

    The ranking is the one the engine scores: by ``scores`` (as ranked, float64) descending, ties by
    ``tie_key`` (trec_eval's document id order) or, when None, in run order. With Numba, a
    selection within each query (:func:`first_ranked`); the NumPy backend sorts the whole run.
    """
    n = scores.size
    keep = np.zeros(n, dtype=bool)
    if use_numba:
        from fastndcg._kernels import first_ranked

        offsets, order = codes.grouping
        order = _NO_ORDER if order is None else order
        key = _NO_ORDER if tie_key is None else tie_key
        _by_query_chunks(
            offsets,
            lambda q0, q1: first_ranked(q0, q1, offsets, order, scores, key, max_docs, keep),
        )
        return keep
    query = codes.query
    tie = np.arange(n) if tie_key is None else tie_key
    order = np.lexsort((tie, -scores, query))
    grouped = query[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    keep[order[rank < max_docs]] = True
    return keep


def _run_layout(
    codes: _RunCodes,
    keep: np.ndarray | None,
    grades: np.ndarray,
    scores: np.ndarray,
    absent: pa.Array | None,
    run_row: Callable[[int], str],
    use_numba: bool,
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
        use_numba,
        order,
    )
