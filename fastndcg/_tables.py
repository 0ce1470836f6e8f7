"""NDCG of a table in memory: Arrow, pandas, polars, or anything speaking the Arrow C interface."""

from __future__ import annotations

from typing import Any

from fastndcg._core.definition import Definition
from fastndcg._core.options import TABLE, data_options, split_options
from fastndcg._io.arrow import as_arrow, table_layout
from fastndcg._presets import accepts_preset
from fastndcg._result import NDCGResult


@accepts_preset("ndcg_table")
def ndcg_table(
    table: Any,
    *,
    qid: str | None = "qid",
    grade: str = "grade",
    score: str | None = "score",
    preset: Any = None,
    **options: Any,
) -> NDCGResult:
    """NDCG of every query of a table, with the options of :func:`fastndcg.ndcg`.

    Parameters
    ----------
    table : pyarrow.Table, RecordBatch, RecordBatchReader, DataFrame or Arrow-capsule object
        One row per (query, item). Rows of a query need not be contiguous.
    qid, grade, score : str
        Column names. ``qid=None``: the whole table is one query; ``score=None``: rows are
        already in ranked order.
    **options
        Any keyword option of :func:`fastndcg.ndcg` (``k``, ``gain``, ``ties``, ...), including
        ``ideal_grades``/``ideal_qid``/``ideal_offsets`` and per-query ``weights``.
    preset : str, optional
        A tool's definition by name (see :func:`fastndcg.presets`); the options given override
        its settings.

    Returns
    -------
    NDCGResult
        As :func:`fastndcg.ndcg`; ``query_ids`` hold the qid values in order of first
        appearance.

    Notes
    -----
    Numeric columns without nulls held in one chunk reach the kernels without a copy when the
    kernels read their type (grades int8, int16, int32, int64, uint8, float32 or float64;
    scores float32 or float64); other numeric types and booleans are converted once.
    A pandas DataFrame's named index levels are columns too. Multi-chunk columns are
    concatenated, string or dictionary query ids encoded once, and rows are regrouped (copied)
    only when a query's rows are not contiguous.

    Examples
    --------
    >>> import pyarrow as pa, fastndcg
    >>> t = pa.table({"qid": [1, 1, 2, 2], "grade": [2, 0, 0, 1], "score": [.9, .1, .8, .7]})
    >>> round(float(fastndcg.ndcg_table(t, k=2)), 4)
    0.8155
    """
    ours, data = split_options(options, "ndcg_table()", data_options(TABLE))
    definition = Definition.create(**ours)
    weights = data.pop("weights", None)
    definition.check_ideal_inputs(**data)
    arrow = as_arrow(table)
    with definition.threads():
        layout = table_layout(arrow, qid, grade, score, definition.backend)
        dcg, idcg = definition.score(layout, **data)
    return definition.finish(
        layout.query_ids, dcg, idcg, weights=weights, ranked=layout.scores is None
    )
