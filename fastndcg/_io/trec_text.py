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
        except pa.ArrowInvalid:  # irregular lines further down, or a line longer than a
            pass  # block (Arrow's "straddling object", after a block or two): read line by line
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
                    fix=f"found {_quote(found, len(found.encode()), 'field')}",
                ) from None
        arrays.append(array)
    return pa.table(arrays, names=wanted)


_LINE_BLOCK_BYTES = 1 << 20  # the line reader's reads, and the longest line it holds whole
_FIELD_BYTES = 1 << 24  # the longest field the line reader keeps (see _records)
_QUOTED_CHARS = 200  # of a line or a field, in messages
_QUOTED_BYTES = 4 * _QUOTED_CHARS + 3  # enough UTF-8 for that many characters, whatever they are
_SEPARATORS = b" \t\x0b\x0c"  # what bytes.split() splits a line at (lines end at CR and LF)
_FIELD = re.compile(rb"[^ \t\x0b\x0c]+")
_MARKS = bytes(32 if byte in _SEPARATORS else 120 for byte in range(256))  # " " or "x"


def _records(path: Path, kind: str, names, positions) -> Iterator[tuple[int, list[str]]]:
    """(line number, the fields at ``positions``) of every line with data, as trec_eval reads.

    Any run of spaces or tabs separates fields; ``#`` comment lines and blank lines are
    skipped. A run line may carry text after its last field (ignored); a qrels line has exactly
    its four fields. Lines end at a line feed, a carriage return or both, and a leading UTF-8
    byte order mark is skipped (as the fast reader does).

    Memory stays within a few blocks of :func:`_lines`, whatever the length of a line: a line
    longer than a block is read piece by piece, and only the fields at ``positions`` are kept,
    each up to 16 MiB (``_FIELD_BYTES``: four blocks of the fast reader; document ids of
    megabytes are read, while no real id comes near that). A longer kept field is an error
    naming the file, the line and that limit; the other fields, and a run line's text after its
    last field, are only skipped, however long. Messages quote at most 200 characters of a line.
    """
    width = len(names)
    exact = kind == "qrels"
    longest = _FIELD_BYTES
    number = 0

    def long_line(number: int) -> _LongLine:
        return _LongLine(number, width, positions, exact)

    def wrong_width(count: int, quoted: str, start: str) -> InputError:
        return InputError(
            f"{path}, line {number}: a TREC {kind} line has {width} fields ({' '.join(names)})",
            value=start.strip()[:_QUOTED_CHARS],
            where=f"line {number} of {path}",
            fix=f"found {count}: {quoted}",
        )

    try:
        with path.open("rb") as f:
            if f.read(len(_BOM)) != _BOM:
                f.seek(0)
            for first, lines in _lines(f, long_line):
                if isinstance(lines, _LongLine):
                    number = first
                    if lines.blank:
                        continue
                    if lines.count < width or (lines.count > width and exact):
                        raise wrong_width(
                            lines.count, lines.quoted, lines.head.decode(errors="replace")
                        )
                    yield number, [field.decode() for field in lines.fields()]
                    continue
                for number, raw in enumerate(lines, first):
                    line = raw.strip()
                    if not line or line[0] == _HASH:
                        continue
                    fields = line.split(maxsplit=width)
                    if len(fields) != width and (exact or len(fields) < width):
                        start = line[:_QUOTED_BYTES].decode(errors="replace")
                        quoted = _quote(start, len(raw), cut=len(line) > _QUOTED_BYTES)
                        raise wrong_width(_count_fields(line, inside=False), quoted, start)
                    if len(line) > longest:
                        for position in positions:
                            if len(fields[position]) > longest:
                                raise _FieldTooLong(number, position, fields[position])
                    yield number, [fields[position].decode() for position in positions]
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start : exc.start + 1]
        raise InputError(
            f"{path}, line {number}: not UTF-8 text ({exc.reason}: byte {byte!r})",
            value=byte,
            where=f"line {number} of {path}",
            fix="TREC files are read as UTF-8",
        ) from exc
    except _FieldTooLong as exc:
        start = exc.start[:_QUOTED_BYTES].decode(errors="replace")
        raise InputError(
            f"{path}, line {exc.number}: the {names[exc.position]} field is longer than "
            f"{longest:,} bytes ({longest / (1 << 20):g} MiB), the longest field read from a TREC "
            "file (ids and numbers)",
            value=start[:_QUOTED_CHARS],
            where=f"line {exc.number} of {path}",
            fix=f"it starts {start[:_QUOTED_CHARS]!r}",
        ) from None


def _quote(text: str, length: int, what: str = "line", cut: bool = False) -> str:
    """``text`` (of a ``what`` of ``length`` bytes) for a message: at most 200 characters.

    ``text`` is cut when longer, or when ``cut`` (it is only the start), and then says so.
    """
    text = text.strip()
    if len(text) <= _QUOTED_CHARS and not cut:
        return repr(text)
    return (
        f"{text[:_QUOTED_CHARS]!r} (its first {_QUOTED_CHARS} characters: "
        f"the {what} has {length:,} bytes)"
    )


def _count_fields(data: bytes, inside: bool) -> int:
    """The fields that start in ``data``: a field going on from before (``inside``) does not.

    Counted without splitting (a list of millions of fields would outweigh the line).
    """
    marked = data.translate(_MARKS)
    return marked.count(b" x") + (not inside and marked[:1] == b"x")


class _FieldTooLong(Exception):
    """A kept field, at ``position`` of line ``number``, longer than ``_FIELD_BYTES``."""

    def __init__(self, number: int, position: int, start: bytes) -> None:
        super().__init__(number, position)
        self.number, self.position, self.start = number, position, bytes(start[:_QUOTED_BYTES])


class _LongLine:
    """A line longer than a block of :func:`_lines`, fed piece by piece without its line end.

    Keeps the bytes of the fields at ``positions`` (each up to ``_FIELD_BYTES``), counts the
    fields and keeps the line's first bytes, for messages. Once a line is a comment, or a run
    line (not ``exact``) has all its ``width`` fields, the rest is only measured; the fields of
    a qrels line (``exact``) beyond its width are counted for the message.
    """

    def __init__(self, number: int, width: int, positions, exact: bool) -> None:
        self.number = number
        self.width = width
        self.exact = exact
        self.positions = positions
        self.kept = {position: bytearray() for position in positions}
        self.longest = _FIELD_BYTES
        self.count = 0  # fields started
        self.inside = False  # the last piece ended inside a field
        self.comment = False
        self.parsed = False  # nothing more to keep: only count (exact) or skip the rest
        self.length = 0  # bytes of the line
        self.lead = 0  # whitespace bytes before the first field
        self.head = b""  # the line's first bytes from its first field on

    def feed(self, piece: bytes) -> None:
        """Read the next ``piece`` of the line."""
        self.length += len(piece)
        if not self.head:
            start = piece.lstrip(_SEPARATORS)
            self.lead += len(piece) - len(start)
            piece_head = start
        else:
            piece_head = piece
        if len(self.head) <= _QUOTED_BYTES:
            self.head += piece_head[: _QUOTED_BYTES + 1 - len(self.head)]
        if self.comment or not piece:
            return
        if self.parsed:
            if self.exact:
                self.count += _count_fields(piece, self.inside)
            self.inside = piece[-1] not in _SEPARATORS
            return
        inside, self.inside = self.inside, False
        for match in _FIELD.finditer(piece):
            start, end = match.span()
            if not (start == 0 and inside):  # a new field
                if self.count == 0 and piece[start] == _HASH:
                    self.comment = True
                    return
                if self.count >= self.width:  # beyond the line's fields
                    self.parsed = True
                    if self.exact:
                        self.count += _count_fields(piece[start:], inside=False)
                        self.inside = piece[-1] not in _SEPARATORS
                    return
                self.count += 1
            position = self.count - 1
            field = self.kept.get(position)
            if field is not None:
                field += piece[start:end]
                if len(field) > self.longest:
                    raise _FieldTooLong(self.number, position, field)
            self.inside = end == len(piece)
        if self.count >= self.width and not self.exact and self.width - 1 not in self.kept:
            self.parsed = True  # a run line's last field and what follows it are skipped

    @property
    def blank(self) -> bool:
        """Whether the line is blank or a comment."""
        return self.comment or self.count == 0

    @property
    def quoted(self) -> str:
        """The line's start, for messages."""
        whole = self.lead + len(self.head) == self.length
        return _quote(self.head.decode(errors="replace"), self.length, cut=not whole)

    def fields(self) -> list[bytes]:
        """The kept fields, in order of ``positions``."""
        return [bytes(self.kept[position]) for position in self.positions]


def _lines(f: Any, long_line: Callable[[int], _LongLine]) -> Iterator[tuple[int, Any]]:
    """The lines of a binary file, each ending at LF, CR or both (CRLF), in batches.

    Yields (number of the first line, its lines): the lines of a block of ``_LINE_BLOCK_BYTES``
    (as bytes without their line ends), or a line longer than a block as a ``long_line(number)``
    fed its pieces; memory stays within a few blocks, whatever the length of a line.
    """
    size = _LINE_BLOCK_BYTES
    number = 0
    data = b""  # the start of a line whose end is not read yet (at most a block)
    line = None  # a line longer than a block, whose end is not read yet
    after_cr = False  # the bytes read so far end with a line end at CR, which LF may complete
    while True:
        block = f.read(size)
        end_of_file = not block
        if after_cr and block[:1] == b"\n":
            block = block[1:]
        after_cr = False
        if line is not None:
            end = _line_end(block)
            line.feed(block if end < 0 else block[:end])
            if end < 0 and not end_of_file:
                continue
            yield number, line
            line = None
            if end < 0:
                return
            if block[end] == 13:  # CR
                if end + 1 == len(block):
                    after_cr = True
                elif block[end + 1] == 10:  # CRLF
                    end += 1
            block = block[end + 1 :]
            if not block:
                continue
        elif end_of_file:
            if data:
                yield number + 1, [data]
            return
        elif not block:  # only the LF of a CRLF
            continue
        data = data + block if data else block
        end = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if end >= 0:
            lines = data[: end + 1].splitlines()
            yield number + 1, lines
            number += len(lines)
            after_cr = end + 1 == len(data) and data[end] == 13
            data = data[end + 1 :]
        if len(data) > size:  # no line end in more than a block: read it piece by piece
            number += 1
            line = long_line(number)
            line.feed(data)
            data = b""


def _line_end(data: bytes) -> int:
    """Position of the first LF or CR in ``data``; -1 if none."""
    lf, cr = data.find(b"\n"), data.find(b"\r")
    return cr if lf < 0 or 0 <= cr < lf else lf


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
