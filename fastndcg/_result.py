"""The value returned by :func:`fastndcg.ndcg`, and how summary rows are shown."""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fastndcg._errors import OptionTypeError


def cutoff_label(k: int | None) -> str:
    """Column label of a cutoff: ``"ndcg@10"`` style suffix ``"@10"``, or ``""`` for no cutoff."""
    return "" if k is None else f"@{k}"


@dataclass(frozen=True, repr=False, eq=False)
class NDCGResult:
    """NDCG of many queries at one or more cutoffs.

    Attributes
    ----------
    k : tuple of (int or None)
        The cutoffs, in the order asked for; None means the whole list.
    per_query : ndarray of float64, shape (n_queries, len(k))
        NDCG of each query at each cutoff; NaN where the query was skipped
        (``zero_idcg="skip"`` and no relevant item).
    dcg, idcg : ndarray of float64, shape (n_queries, len(k))
        Discounted cumulative gain of the ranking and of the ideal ranking.
    mean : ndarray of float64, shape (len(k),)
        The aggregate per cutoff (``aggregate="mean"``: weighted mean of ``per_query`` over the
        queries not skipped; ``"ratio"``: sum of DCG over sum of IDCG). NaN when no query counts.
    query_ids : ndarray, shape (n_queries,)
        Query identifiers in result order (first appearance for ``qid=`` input; 0..n-1 for
        ``offsets=`` or 2-D input).
    n_queries : int
        Number of queries.
    n_skipped : ndarray of int64, shape (len(k),)
        Queries left out of the aggregate at each cutoff because their IDCG is 0.
    options : dict
        The options the values were computed with (for display and reports).
    n_missing : int
        Judged queries absent from the run (:func:`fastndcg.ndcg_run`).
    n_unjudged : int
        Queries of the run without judgments, ignored (:func:`fastndcg.ndcg_run`).
    """

    k: tuple[int | None, ...]
    per_query: np.ndarray
    dcg: np.ndarray
    idcg: np.ndarray
    mean: np.ndarray
    query_ids: np.ndarray
    n_skipped: np.ndarray
    options: dict[str, Any] = field(default_factory=dict)
    n_missing: int = 0
    n_unjudged: int = 0

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return int(self.per_query.shape[0])

    def __float__(self) -> float:
        if len(self.k) != 1:
            raise TypeError(
                f"float() needs a result with one cutoff; this one has k={self.k}. "
                "Use result.mean[i] or result.mean_at(k)"
            )
        return float(self.mean[0])

    def mean_at(self, k: int | None) -> float:
        """Aggregate NDCG at cutoff ``k`` (one of ``self.k``).

        Raises
        ------
        TypeError
            If ``k`` is not an int or None (as :func:`fastndcg.ndcg` refuses it).
        KeyError
            If ``k`` was not computed.
        """
        if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral)):
            raise OptionTypeError(
                f"`k` must be an int or None (whole list), one of the computed cutoffs {self.k}",
                option="k",
                value=k,
                fix=f"got {k!r}",
            )
        if k not in self.k:
            raise KeyError(f"k={k!r} was not computed; computed cutoffs are {self.k}")
        return float(self.mean[self.k.index(k)])

    def _columns(self) -> dict[str, np.ndarray]:
        columns: dict[str, np.ndarray] = {"query_id": self.query_ids}
        for j, k in enumerate(self.k):
            suffix = cutoff_label(k)
            columns[f"ndcg{suffix}"] = self.per_query[:, j]
            columns[f"dcg{suffix}"] = self.dcg[:, j]
            columns[f"idcg{suffix}"] = self.idcg[:, j]
        return columns

    def to_arrow(self) -> Any:
        """Per-query values as a ``pyarrow.Table`` (query_id, then ndcg/dcg/idcg per cutoff)."""
        import pyarrow as pa

        return pa.table(self._columns())

    def to_pandas(self) -> Any:
        """Per-query values as a ``pandas.DataFrame`` (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from exc
        return pd.DataFrame(self._columns())

    def __repr__(self) -> str:
        head = f"NDCGResult(n_queries={self.n_queries}"
        shown = ", ".join(f"{key}={value!r}" for key, value in self.options.items())
        lines = [f"{head}{', ' if shown else ''}{shown})"]
        if self.n_missing or self.n_unjudged:
            lines.append(
                f"  judged queries missing from the run: {self.n_missing}; "
                f"run queries without judgments (ignored): {self.n_unjudged}"
            )
        lines.append(f"  {'k':>6}  {'ndcg':>10}  {'skipped':>8}")
        for j, k in enumerate(self.k):
            label = "all" if k is None else str(k)
            lines.append(f"  {label:>6}  {self.mean[j]:>10.6f}  {int(self.n_skipped[j]):>8}")
        return "\n".join(lines)


@dataclass(frozen=True, repr=False, eq=False)
class MeasuresResult:
    """Several measures of many queries (:func:`fastndcg.evaluate`, :func:`fastndcg.evaluate_run`).

    Attributes
    ----------
    measures : tuple of str
        The measures' names as given (a trec_eval name standing for several measures, such as
        ``P.5,10``, gives one name per measure as trec_eval prints it: ``P_5``, ``P_10``).
    per_query : ndarray of float64, shape (n_queries, len(measures))
        Each query's value of each measure; NaN where the query is skipped (no relevant
        judgment under ``zero_idcg="skip"``).
    mean : ndarray of float64, shape (len(measures),)
        The summary of each measure over the queries not skipped: the mean, the sum for counts
        (``NumRet``, ``NumRel``, ``NumRelRet``, ``NumQ``), the geometric mean for ``GMAP``.
    query_ids : ndarray, shape (n_queries,)
        Query identifiers in result order.
    n_skipped : ndarray of int64, shape (len(measures),)
        Queries left out of each measure's summary.
    options : dict
        The options the values were computed with.
    n_missing : int
        Judged queries absent from the run (:func:`fastndcg.evaluate_run`).
    n_unjudged : int
        Queries of the run without judgments, ignored (:func:`fastndcg.evaluate_run`).
    """

    measures: tuple[str, ...]
    per_query: np.ndarray
    mean: np.ndarray
    query_ids: np.ndarray
    n_skipped: np.ndarray
    options: dict[str, Any] = field(default_factory=dict)
    n_missing: int = 0
    n_unjudged: int = 0

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return int(self.per_query.shape[0])

    def __getitem__(self, name: str) -> float:
        """The summary of measure ``name`` (one of :attr:`measures`)."""
        if name not in self.measures:
            raise KeyError(f"{name!r} was not computed; the measures are {self.measures}")
        return float(self.mean[self.measures.index(name)])

    def _columns(self) -> dict[str, np.ndarray]:
        columns: dict[str, np.ndarray] = {"query_id": self.query_ids}
        for j, name in enumerate(self.measures):
            columns[name] = self.per_query[:, j]
        return columns

    def to_arrow(self) -> Any:
        """Per-query values as a ``pyarrow.Table``: ``query_id``, then one column per measure."""
        import pyarrow as pa

        return pa.table(self._columns())

    def to_pandas(self) -> Any:
        """Per-query values as a ``pandas.DataFrame`` (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from exc
        return pd.DataFrame(self._columns())

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self.options.items())
        lines = [f"MeasuresResult(n_queries={self.n_queries}{', ' if shown else ''}{shown})"]
        if self.n_missing or self.n_unjudged:
            lines.append(
                f"  judged queries missing from the run: {self.n_missing}; "
                f"run queries without judgments (ignored): {self.n_unjudged}"
            )
        width = max(8, *(len(name) for name in self.measures))
        lines.append(f"  {'measure':<{width}}  {'value':>10}  {'skipped':>8}")
        for j, name in enumerate(self.measures):
            lines.append(f"  {name:<{width}}  {self.mean[j]:>10.6f}  {int(self.n_skipped[j]):>8}")
        return "\n".join(lines)


def _finite(value: Any) -> Any:
    """``value``, or None for a float that is not finite."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def format_rows(
    rows: list[dict[str, Any]], fmt: str, digits: int = 4, definition: Any = None
) -> str:
    """Summary rows as an aligned table, JSON or CSV.

    JSON is one object whatever the number of rows: ``{"definition": definition, "results":
    rows}``; NaN and infinities (every query skipped, no query) are null, which JSON has.
    """
    if fmt == "json":
        rows = [{key: _finite(value) for key, value in row.items()} for row in rows]
        return json.dumps({"definition": definition, "results": rows}, indent=2, allow_nan=False)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")

    def cell(value: Any) -> str:
        return f"{value:.{digits}f}" if isinstance(value, float) else str(value)

    cells = [[cell(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]

    def line(values: list[str]) -> str:
        pairs = enumerate(zip(values, widths, strict=True))
        return "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in pairs).rstrip()

    return "\n".join([line(columns), *(line(r) for r in cells)])
