"""TREC run and qrels text files read fast, with errors that name the file and line.

File formats (whitespace-separated, one line per document; lines starting with ``#`` are
comments):

- qrels: ``qid iteration docid grade``
- run: ``qid Q0 docid rank score tag`` (the rank column is ignored; documents are ranked by
  score)

Regular files (single spaces or single tabs between fields, no comment or blank line) go
through pyarrow's CSV reader; other files are read line by line, as trec_eval reads them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from fastndcg._backends import automatic_backend
from fastndcg._errors import ColumnNotFoundError, InputError, InputTypeError
from fastndcg._io.arrow import as_arrow

QRELS_COLUMNS = ("qid", "iteration", "docid", "grade")


RUN_COLUMNS = ("qid", "Q0", "docid", "rank", "score", "tag")


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
class ReadFile:
    """A qrels or run file read once to be scored several times; errors still name its lines."""

    path: Path
    table: pa.Table


def read_once(source: Any, kind: str) -> Any:
    """``source`` read now when it is a path (``kind``: "qrels" or "run"), else as it is.

    What it returns goes wherever :func:`ndcg_run` takes a path, and an error about one of its
    rows still names the line of the file.
    """
    if not isinstance(source, (str, Path)):
        return source
    read = read_qrels if kind == "qrels" else read_run
    return ReadFile(Path(source), read(source))


def _read(
    source: Any, kind: str, names: tuple[str, ...], value: dict[str, pa.DataType]
) -> pa.Table:
    wanted = ["qid", "docid", *value]
    if isinstance(source, ReadFile):
        return source.table
    if isinstance(source, (str, Path)):
        table = _read_text(Path(source), kind, names, wanted, value)
    else:
        table = as_arrow(source)
        if isinstance(table, pa.RecordBatch):
            table = pa.Table.from_batches([table])
        missing = [c for c in wanted if c not in table.schema.names]
        if missing:
            raise ColumnNotFoundError(
                f"the {kind} table needs columns {', '.join(wanted)}; {missing[0]!r} is missing "
                f"(it has {', '.join(table.schema.names)})",
                value=missing[0],
                where=f"the {kind} table",
            )
        table = table.select(wanted)
    columns = []
    for name in wanted:
        values = table.column(name)
        if values.null_count:
            row = int(pc.index(values.is_null(), True).as_py())
            raise InputError(
                f"{kind}: column {name!r} has a missing value at row {row}",
                value=None,
                where=f"{kind} row {row}",
            )
        target = value.get(name, pa.string())
        if values.type != target:
            try:
                values = values.cast(target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise InputTypeError(
                    f"{kind}: column {name!r} cannot be read as {target}: {exc}",
                    value=values.type,
                    where=f"column {name!r}",
                ) from exc
        columns.append(values)
    return pa.table(columns, names=wanted)


def _read_text(path: Path, kind: str, names, wanted, value) -> pa.Table:
    if not path.exists():
        raise FileNotFoundError(f"{kind} file not found: {path}")
    if path.is_dir():
        raise InputError(
            f"{kind} path {path} is a directory", where=str(path), fix=f"give the {kind} file"
        )
    types = {name: pa.string() for name in wanted}
    types.update(value)
    convert = pacsv.ConvertOptions(include_columns=wanted, column_types=types)
    read = pacsv.ReadOptions(column_names=list(names), block_size=_BLOCK_BYTES)
    with path.open("rb") as f:
        head = f.read(_SNIFF_BYTES)
    if head.startswith(_GZIP_MAGIC):
        raise InputError(
            f"{kind} file {path} is gzip-compressed",
            where=str(path),
            fix="decompress it first (gunzip)",
        )
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
    which splits at any whitespace. One pass over the file's bytes by the default backend: about
    25 ms per 100 MB with Numba, mapping the file included.
    """
    if path.stat().st_size == 0:
        return False
    separator = ord(delimiter)
    other = ord(" " if delimiter == "\t" else "\t")
    data = np.memmap(path, dtype=np.uint8, mode="r")
    return automatic_backend().stray_whitespace(data, separator, other)


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
                found = array[row].as_py()
                raise InputError(
                    f"{path}, line {number}: the {name} field must be a number",
                    value=found,
                    where=f"line {number} of {path}",
                    fix=f"found {found!r}",
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
                    raise InputError(
                        f"{path}, line {number}: a TREC {kind} line has {width} fields "
                        f"({' '.join(names)})",
                        value=text,
                        where=f"line {number} of {path}",
                        fix=f"found {len(line.split())}: {text!r}",
                    )
                yield number, [fields[position].decode() for position in positions]
        except UnicodeDecodeError as exc:
            byte = exc.object[exc.start : exc.start + 1]
            raise InputError(
                f"{path}, line {number}: not UTF-8 text ({exc.reason}: byte {byte!r})",
                value=byte,
                where=f"line {number} of {path}",
                fix="TREC files are read as UTF-8",
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


def place_of_row(source: Any, kind: str, names: tuple[str, ...]) -> Callable[[int], str]:
    """How errors name row ``r`` of a run or qrels: its line when ``source`` is a file.

    The line is found by reading the file again up to that row (only when an error is raised).
    """
    if isinstance(source, ReadFile):
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
