"""What the command writes: summary rows and per-query files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastndcg._core.vocabulary import plain
from fastndcg._io.paths import write_whole
from fastndcg._result import NDCGResult, cutoff_label
from fastndcg.cli.sources import UsageError

# what states the definition a number was computed with, in every output format
DEFINITION = ("preset", "gain", "discount", "ties", "ideal", "zero_idcg", "aggregate")


def definition_of(result: Any, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The definition ``result`` was computed with, and its cutoffs (None: the whole list).

    A TREC run's result adds what its judged queries absent from the run got (``missing``).
    A result without its options (the totals Dask and Spark send back) is described by the
    ``options`` of the call.
    """
    known = getattr(result, "options", None) or options or {}
    shown = {name: known.get(name) for name in DEFINITION}
    if "missing" in known:
        shown["missing"] = known["missing"]
    shown["k"] = list(result.k)
    return shown


def definition_line(definition: dict[str, Any]) -> str:
    """The definition in one line, as the table output starts."""
    cutoffs = ",".join("all" if k is None else str(k) for k in definition["k"])
    settings = ", ".join(
        f"{name} {value}" for name, value in definition.items() if name not in ("preset", "k")
    )
    preset = f"preset {definition['preset']}; " if definition["preset"] else ""
    return f"definition: {preset}{settings}; k {cutoffs}"


def summary_rows(results: list[tuple[str, NDCGResult]], trec: bool) -> list[dict[str, Any]]:
    """One row per scored source: queries, the aggregate per cutoff, skipped (and TREC counts)."""
    rows = []
    for source, result in results:
        row: dict[str, Any] = {"source": source, "queries": result.n_queries}
        for j, k in enumerate(result.k):
            row[f"ndcg{cutoff_label(k)}"] = float(result.mean[j])
        row["skipped"] = int(result.n_skipped.max()) if result.n_skipped.size else 0
        if trec:
            row["missing"] = result.n_missing
            row["unjudged"] = result.n_unjudged
        rows.append(row)
    return rows


def query_lines(results: list[tuple[str, NDCGResult]], digits: int, trec_eval: bool) -> str:
    """Per-query values as trec_eval -q prints them, then the means as query ``all``.

    Measure, query id and value, tab-separated (the measure padded to 22 characters), each
    query's measures together. The measures are named as trec_eval names them (``ndcg``,
    ``ndcg_cut_10``) only when ``trec_eval`` (under a trec_eval preset, which computes its
    numbers); otherwise with fastndcg's labels (``ndcg``, ``ndcg@10``). Skipped queries (NaN)
    have no line. With several sources, each line starts with its source.
    """
    lines = []
    for source, result in results:
        lead = f"{source}\t" if len(results) > 1 else ""
        if trec_eval:
            names = ["ndcg" if k is None else f"ndcg_cut_{k}" for k in result.k]
        else:
            names = [f"ndcg{cutoff_label(k)}" for k in result.k]
        ids = [str(plain(q)) for q in result.query_ids]
        for q, query in enumerate(ids):
            for j, name in enumerate(names):
                value = result.per_query[q, j]
                if value == value:
                    lines.append(f"{lead}{name:<22}\t{query}\t{value:.{digits}f}")
        for j, name in enumerate(names):
            mean = result.mean[j]
            if mean == mean:
                lines.append(f"{lead}{name:<22}\tall\t{mean:.{digits}f}")
    return "\n".join(lines)


def per_query_rows(results: list[tuple[str, NDCGResult]]) -> list[dict[str, Any]]:
    """Per-query values as rows (source, query id, NDCG per cutoff), for JSON and CSV."""
    rows = []
    for source, result in results:
        names = [f"ndcg{cutoff_label(k)}" for k in result.k]
        for q, query in enumerate(result.query_ids):
            row: dict[str, Any] = {"source": source, "query_id": plain(query)}
            row.update(zip(names, map(float, result.per_query[q]), strict=True))
            rows.append(row)
    return rows


def _text_ids(ids: Any) -> Any:
    """Query ids as a string column; None for bytes that are not UTF-8 text."""
    import pyarrow as pa

    try:
        return ids.cast(pa.string())
    except pa.ArrowInvalid:
        return None


def _byte_ids(ids: Any) -> Any:
    """Query ids as a binary column (ids that are not bytes: their text's UTF-8 bytes)."""
    import pyarrow as pa

    if not (pa.types.is_binary(ids.type) or pa.types.is_large_binary(ids.type)):
        ids = ids.cast(pa.string())
    return ids.cast(pa.binary())


def write_per_query(path: str, results: list[tuple[str, NDCGResult]]) -> None:
    """Write every source's per-query values to one .parquet or .csv file (``--per-query``)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    suffix = Path(path).suffix.lower()  # checked before the work (sources.check_inputs)
    tables = [result.to_arrow() for _, result in results]
    # one query id type for every run: text, or bytes where some ids are not UTF-8 text
    ids = [_text_ids(table.column("query_id")) for table in tables]
    if any(column is None for column in ids):
        if suffix == ".csv":
            raise UsageError(
                "query ids are bytes that are not UTF-8 text, which a CSV file cannot hold; "
                "write --per-query to a .parquet file (it keeps them as bytes)"
            )
        ids = [_byte_ids(table.column("query_id")) for table in tables]
    combined = pa.concat_tables(
        table.set_column(0, "query_id", column).add_column(
            0, "source", pa.array([source] * table.num_rows, pa.string())
        )
        for (source, _), table, column in zip(results, tables, ids, strict=True)
    )
    write = pq.write_table if suffix == ".parquet" else pacsv.write_csv
    write_whole(path, lambda partial: write(combined, partial))
