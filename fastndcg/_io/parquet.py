"""Parquet sources read in record batches with bounded memory: files, directories, datasets.

The pieces :func:`fastndcg.ndcg_parquet` streams with: opening a source as a dataset (a
directory's ``*.parquet`` files in sorted path order), checking its columns, decoding batches
in a background thread a bounded number ahead, and a progress bar. Every Parquet file is read
whole or not at all: the rows read are compared with those its footer promised when the dataset
counted them (a file rewritten or truncated meanwhile is an InputError, not a partial result).
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from fastndcg._errors import COMMAND, PYTHON, ColumnNotFoundError, InputError, OptionError

if TYPE_CHECKING:  # pyarrow.dataset imports pandas: a fifth of a second, paid on first use
    import pyarrow.dataset as ds


LARGEST_BATCH = (1 << 31) - 1  # Arrow's batch size is an int32
_PREFETCH = 2  # batches decoded (or being decoded) while the current one is scored


def open_dataset(source: Any) -> ds.Dataset:
    """A ``pyarrow.dataset`` over ``source``; a directory lists ``*.parquet`` in sorted order."""
    import pyarrow.dataset as ds

    if isinstance(source, ds.Dataset):
        return source
    if isinstance(source, (list, tuple)):
        paths = [str(p) for p in source]
        if not paths:
            raise InputError("no Parquet files given: the list is empty", value=source)
        seen: set[Path] = set()
        for p in paths:
            resolved = Path(p).resolve()
            if resolved in seen:
                raise InputError(
                    f"{p} is listed twice (its rows would count twice)",
                    value=p,
                    where=p,
                    fix="list it once",
                )
            seen.add(resolved)
    else:
        path = Path(source)
        if path.is_dir():  # Spark names directories *.parquet too
            paths = sorted(
                str(p)
                for p in path.rglob("*.parquet")
                if p.is_file() and not _hidden(p.relative_to(path))
            )
            if not paths:
                raise FileNotFoundError(
                    f"no *.parquet files under {path} (names starting with _ or . are skipped, "
                    "as pyarrow.dataset skips them)"
                )
        elif path.exists():
            paths = [str(path)]
        else:
            raise FileNotFoundError(f"no such file or directory: {path}")
    try:
        return ds.dataset(paths, format="parquet")
    except pa.ArrowInvalid as exc:  # Arrow's message names the file; the fix is ours to say
        raise InputError(
            str(exc).rstrip("."),
            fix="ndcg_parquet reads Parquet files: read other formats with pyarrow (e.g. "
            "pyarrow.csv.read_csv) and score the table with fastndcg.ndcg_table",
        ) from exc


def check_columns(
    dataset: ds.Dataset, roles: Mapping[str, str | None], source: Any, streaming: bool
) -> None:
    """Every file must hold the columns (partition keys aside, which streaming cannot read).

    ``roles`` are the column names by role (``qid``, ``grade``, ``score``; None: no column): a
    missing column's error names the option that names it.
    """
    columns = [name for name in roles.values() if name is not None]
    hint = _hive_hint(dataset, columns)
    _require(roles, dataset.schema.names, describe(source), hint or _PASS_THE_COLUMN)
    keys = _partition_keys(dataset) & set(columns)
    if keys:
        if streaming:
            key = sorted(keys)[0]
            raise OptionError(
                f"column {key!r} is a partition key of the dataset, which streaming file by file "
                "does not read",
                option="group",
                value="stream",
                where=f"column {key!r}",
                fix="pass `group='memory'`",
            )
        return
    for fragment in dataset.get_fragments():
        _require(roles, fragment.physical_schema.names, fragment.path, _WRITE_THE_COLUMN)


# the fix of a missing column, a template of its option's ``role`` and its ``name``: when the
# whole source lacks it, and when one of its files does
_PASS_THE_COLUMN = "Pass `{role}='<column name>'`"
_WRITE_THE_COLUMN = "every file needs it: write {name!r} into that file, or leave the file out"


def _require(
    roles: Mapping[str, str | None], names: list[str], where: str, fix: str | Mapping[str, str]
) -> None:
    given = [(role, name) for role, name in roles.items() if name is not None]
    missing = [(role, name) for role, name in given if name not in names]
    if missing:
        role, name = missing[0]
        raise ColumnNotFoundError(
            f"column {name!r} not found in {where}; it has columns: {', '.join(names)}",
            option=role,
            value=name,
            where=where,
            fix=fix.format(role=role, name=name)
            if isinstance(fix, str)
            else {front: text.format(role=role, name=name) for front, text in fix.items()},
            joiner=". ",
        )


def _hive_hint(dataset: ds.Dataset, columns: list[str]) -> dict[str, str] | None:
    """The fix, when a missing column names ``name=value`` directories of the files.

    That is hive partitioning, which a dataset opened from paths does not read. The fix is a
    template of the column's ``{name}``, per front end: Python passes a dataset that reads the
    directories; the command cannot, and says how to go on.
    """
    levels = {
        part.split("=", 1)[0]
        for path in getattr(dataset, "files", ())
        for part in Path(path).parts[:-1]
        if "=" in part
    }
    if not levels & set(columns):
        return None
    return {
        PYTHON: "{name!r} names directories of the files (hive partitioning): pass "
        "pyarrow.dataset.dataset(path, partitioning='hive') as the source, with "
        "`group='memory'`",
        COMMAND: "{name!r} names directories of the files (hive partitioning), which the command "
        "does not read: write {name!r} into the files as a column, or score them from Python "
        "with fastndcg.ndcg_parquet(pyarrow.dataset.dataset(path, partitioning='hive'), "
        "group='memory')",
    }


def _partition_keys(dataset: ds.Dataset) -> set[str]:
    """Columns known from the files' paths (hive partitioning), not stored in the files."""
    partitioning = getattr(dataset, "partitioning", None)
    return set(partitioning.schema.names) if partitioning is not None else set()


def read_whole(dataset: ds.Dataset, columns: list[str]) -> pa.Table:
    """The columns of every file, in one table whose types each file's promote to.

    int32 and int64 become int64, float32 and float64 float64, and so on; reading the dataset
    as one would cast every file to the first file's types (float64 scores rounded to float32
    could tie). Partition keys are only known to the whole dataset, which reads them.
    """
    if _partition_keys(dataset) & set(columns):
        return dataset.to_table(columns=columns)
    pieces = []
    for fragment in dataset.get_fragments():
        with _naming_the_file(fragment):
            promised = _promised_rows(fragment)
            pieces.append(fragment.to_table(columns=columns))
            _check_read_whole(fragment.path, pieces[-1].num_rows, promised)
    if not pieces:
        return dataset.to_table(columns=columns)
    return pa.concat_tables(pieces, promote_options="permissive")


def _hidden(relative: Path) -> bool:
    """Whether a file below a directory is skipped, as ``pyarrow.dataset``, Spark and Hive do.

    Names starting with ``_`` or ``.`` hold job leftovers (``_temporary/``), metadata or
    copies (``.ipynb_checkpoints/``), not the data.
    """
    return any(part.startswith(("_", ".")) for part in relative.parts)


def describe(source: Any) -> str:
    """A short name for ``source`` in messages."""
    import pyarrow.dataset as ds

    return "the dataset" if isinstance(source, ds.Dataset) else str(source)


def iter_batches(
    dataset: ds.Dataset, columns: list[str], batch_rows: int
) -> Iterator[pa.RecordBatch]:
    """Record batches of ``columns``, fragment by fragment, in order.

    Parquet files are read by ``pyarrow.parquet``'s reader: the fragment's row groups in order,
    ``batch_rows`` rows at a time, each column read from the file in pieces of 1 MiB
    (``_READ_BUFFER``), so that a row group far larger than a batch (Spark writes 128 MB ones)
    is not held whole. Nothing is decoded before it is asked for: :func:`prefetch` keeps a
    fixed number of batches ahead. The dataset scanner (``Fragment.to_batches``), which other
    formats still go through, read up to about 1 GB ahead of a consumer slower than decoding,
    whatever its read-ahead options. Each file's batches have the types of its own schema
    (its physical schema, as the scanner gives them), read with the dataset's Parquet options.

    A Parquet file's rows read are compared with those its footer promised when the dataset
    counted them (:func:`_check_read_whole`), and the footer the reader finds with that one.
    """
    import pyarrow.dataset as ds

    file_format = getattr(dataset, "format", None)
    parquet = isinstance(file_format, ds.ParquetFileFormat)
    # no pre-buffering: it would hold whole row groups (and more) in memory ahead of decoding
    options = ds.ParquetFragmentScanOptions(pre_buffer=False) if parquet else None
    for fragment in dataset.get_fragments():
        with _naming_the_file(fragment):
            promised = _promised_rows(fragment)
            read = 0
            if not (parquet and _own_reader(fragment, file_format)):
                for batch in fragment.to_batches(
                    columns=columns,
                    batch_size=batch_rows,
                    batch_readahead=1,
                    fragment_readahead=0,
                    fragment_scan_options=options,
                ):
                    read += batch.num_rows
                    yield batch
                _check_read_whole(fragment.path, read, promised)
                continue
            row_groups = fragment.row_groups
            with fragment.open() as source:
                reader = _parquet_file(source, file_format)
                _check_footer(fragment.path, row_groups, reader.metadata)
                if row_groups:
                    for batch in reader.iter_batches(
                        batch_size=batch_rows,
                        row_groups=[group.id for group in row_groups],
                        columns=columns,
                    ):
                        read += batch.num_rows
                        yield batch
                _check_read_whole(fragment.path, read, promised)
                if not read:  # as the scanner gives a file without rows: one batch of its types
                    schema = reader.schema_arrow
                    fields = [schema.field(name) for name in columns]
                    yield pa.RecordBatch.from_pylist([], pa.schema(fields, schema.metadata))


def promised_rows(dataset: ds.Dataset) -> int:
    """The rows the footers of a dataset's Parquet files promise (an unreadable one is named)."""
    total = 0
    for fragment in dataset.get_fragments():
        with _naming_the_file(fragment):
            total += _promised_rows(fragment) or 0
    return total


def _promised_rows(fragment: Any) -> int | None:
    """The rows of a Parquet fragment's row groups, by the footer read when it was first counted.

    Fragments keep the metadata they first read, so this is the footer the dataset's row count
    (``ndcg_parquet``'s progress total) came from. None for other formats.
    """
    row_groups = getattr(fragment, "row_groups", None)  # Parquet fragments only
    return None if row_groups is None else sum(group.num_rows for group in row_groups)


def _check_footer(path: str, row_groups: list[Any], footer: Any) -> None:
    """The footer a reader finds must give each row group the rows promised before."""
    found = [footer.row_group(i).num_rows for i in range(footer.num_row_groups)]
    if any(group.id >= len(found) or found[group.id] != group.num_rows for group in row_groups):
        promised = sum(group.num_rows for group in row_groups)
        raise changed_while_read(path, 0, promised, footer.num_rows)


def _check_read_whole(path: str, read: int, promised: int | None) -> None:
    if promised is not None and read != promised:
        raise changed_while_read(path, read, promised)


def changed_while_read(where: str, read: int, promised: int, now: int | None = None) -> InputError:
    """The InputError for ``read`` rows of ``where`` whose Parquet metadata promised others.

    ``now`` is the row count of a footer found changed when the file was opened to be read.
    """
    return InputError(
        f"{where}: {read:,} rows read of the {promised:,} its Parquet metadata promised"
        f"{'' if now is None else f' (it now says {now:,})'}: a file changed while it was read",
        value=read,
        where=where,
        fix="score it once it is written whole: a writer should write a new file and rename it "
        "over the old one, not rewrite it in place",
    )


@contextlib.contextmanager
def _naming_the_file(fragment: Any) -> Iterator[None]:
    """A file that cannot be read (corrupt pages, a truncated file) is named in the error."""
    try:
        yield
    except (OSError, pa.ArrowException) as exc:
        path = getattr(fragment, "path", "a file of the dataset")
        raise InputError(
            f"{path}: {exc}".rstrip("."),
            where=path,
            fix="the file cannot be read as Parquet: write it again, or leave it out",
        ) from exc


_READ_BUFFER = 1 << 20  # bytes of a column read from a Parquet file at a time


def _own_reader(fragment: Any, file_format: Any) -> bool:
    """Whether :func:`iter_batches` reads ``fragment`` with ``pyarrow.parquet``'s reader.

    Not when the format's options cannot be passed on to it (a decryption configuration of
    the dataset API): that fragment is scanned as before.
    """
    import pyarrow.dataset as ds

    scan = file_format.default_fragment_scan_options
    decryption = getattr(scan, "parquet_decryption_config", None)
    return isinstance(fragment, ds.ParquetFileFragment) and decryption is None


# the dataset format's options that ParquetFile takes too, by where they are kept; which exist
# depends on the pyarrow version
_READ_OPTIONS = ("binary_type", "list_type", "coerce_int96_timestamp_unit")
_SCAN_OPTIONS = (
    "decryption_properties",
    "thrift_string_size_limit",
    "thrift_container_size_limit",
    "schema_depth_limit",
    "page_checksum_verification",
    "arrow_extensions_enabled",
)


def _parquet_file(source: pa.NativeFile, file_format: Any) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` over ``source`` with the dataset format's options.

    Its types are then those of the fragment's physical schema, which the scanner gave.
    """
    import inspect

    import pyarrow.parquet as pq

    read = file_format.read_options
    scan = file_format.default_fragment_scan_options
    takes = inspect.signature(pq.ParquetFile).parameters
    options = {
        name: getattr(kept, name)
        for names, kept in ((_READ_OPTIONS, read), (_SCAN_OPTIONS, scan))
        for name in names
        if name in takes and hasattr(kept, name)
    }
    return pq.ParquetFile(
        source,
        buffer_size=_READ_BUFFER,  # a buffered stream: pages are read as they are decoded
        pre_buffer=False,
        read_dictionary=sorted(read.dictionary_columns) or None,
        **options,
    )


def prefetch(batches: Iterator[pa.RecordBatch], depth: int = _PREFETCH) -> Iterator[pa.RecordBatch]:
    """Decode ``batches`` in a background thread, at most ``depth`` batches ahead of the consumer.

    A batch is ahead from the moment the reader starts decoding it until the consumer takes
    it: the reader waits for room before it decodes the next one, so that besides the batch
    being scored at most ``depth`` batches are decoded or being decoded (a queue of ``depth``
    let the reader hold one more, decoded, while it waited for a free slot).
    """
    slots: queue.SimpleQueue = queue.SimpleQueue()  # bounded by ``room``
    room = threading.Semaphore(depth)
    stop = threading.Event()
    done = object()

    def wait_for_room() -> bool:
        """Wait for room for one more batch unless the consumer has stopped; whether it came."""
        while not stop.is_set():
            if room.acquire(timeout=0.1):
                return True
        return False

    def produce() -> None:
        try:
            iterator = iter(batches)
            while wait_for_room():
                item = next(iterator, done)
                slots.put(item)
                if item is done:
                    return
        except BaseException as exc:  # handed to the consumer, which re-raises it
            slots.put(exc)

    worker = threading.Thread(target=produce, name="fastndcg-reader", daemon=True)
    worker.start()
    try:
        while True:
            item = slots.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            room.release()
            yield item
    finally:
        stop.set()
        worker.join(timeout=5)


class Progress:
    """A progress bar over rows, with queries per second; silent when not wanted."""

    def __init__(self, total_rows: int, enabled: bool | None) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.enabled = bool(enabled)
        self.queries = 0
        self.started = time.perf_counter()
        self.bar = None
        if self.enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total_rows, unit="row", unit_scale=True, desc="fastndcg")

    def update(self, rows: int, queries: int) -> None:
        """Count ``rows`` read and ``queries`` scored."""
        self.queries += queries
        if self.bar is not None:
            rate = self.queries / max(time.perf_counter() - self.started, 1e-9)
            self.bar.set_postfix_str(
                f"{self.queries:,} queries, {rate:,.0f} queries/s", refresh=False
            )
            self.bar.update(rows)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.close()
