"""NDCG of a table in memory: Arrow, pandas, polars, or anything speaking the Arrow C interface."""

from __future__ import annotations

from typing import Any

from fastndcg._arrow import (
    as_arrow,
    column,
    group_column,
    ids_to_numpy,
    numeric_column,
    value_names,
)
from fastndcg._engine import Engine, split_options
from fastndcg._layout import Layout, as_grade_vector, as_score_vector, finish_layout
from fastndcg._presets import accepts_preset
from fastndcg._result import NDCGResult

TABLE_DATA_OPTIONS = ("ideal_grades", "ideal_qid", "ideal_offsets", "weights")


@accepts_preset("ndcg_table")
def ndcg_table(
    table: Any,
    *,
    qid: str | None = "qid",
    grade: str = "grade",
    score: str | None = "score",
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
    engine_options, data_options = split_options(options, "ndcg_table()", TABLE_DATA_OPTIONS)
    engine = Engine.create(**engine_options)
    weights = data_options.pop("weights", None)
    engine.check_ideal_inputs(**data_options)
    data = as_arrow(table)
    with engine.threads():
        layout = table_layout(data, qid, grade, score, engine.use_numba)
        dcg, idcg = engine.score(layout, **data_options)
    return engine.finish(layout.query_ids, dcg, idcg, weights=weights, ranked=layout.scores is None)


def table_layout(
    data: Any, qid: str | None, grade: str, score: str | None, use_numba: bool
) -> Layout:
    """The CSR layout of an Arrow table or record batch (views of its buffers where possible)."""
    names = value_names(grade, score)
    grades = as_grade_vector(numeric_column(column(data, grade, "grade"), grade, "grade"), names[0])
    scores = None
    if score is not None:
        scores = as_score_vector(
            numeric_column(column(data, score, "score"), score, "score"), names[1]
        )
    if qid is None:
        import numpy as np

        n = grades.size
        offsets = np.array([0, n] if n else [0], dtype=np.int64)
        ids, order = np.arange(offsets.size - 1), None
    else:
        offsets, ids, order = group_column(column(data, qid, "qid"), qid, use_numba)
    return finish_layout(
        offsets, grades, scores, ids_to_numpy(ids), lambda r: f"row {r}", use_numba, order, names
    )
