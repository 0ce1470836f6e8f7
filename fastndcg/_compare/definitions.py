"""One input scored under several NDCG definitions, and where their per-query values part.

:func:`compare_definitions` answers "why do my two dashboards disagree?": it scores the same
rankings under presets and/or option sets and reports, per definition and cutoff, the mean, how
many queries differ from the first definition, by how much at most, which query differs most,
and which settings differ.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from fastndcg._api import ndcg
from fastndcg._core.grouping import positions
from fastndcg._core.options.comparing import ENTRY_POINT_NAMES, parse_view
from fastndcg._core.vocabulary import plain
from fastndcg._errors import InputError
from fastndcg._io.trec_text import read_once
from fastndcg._parquet import ndcg_parquet
from fastndcg._presets import get_preset
from fastndcg._result import NDCGResult, format_rows
from fastndcg._tables import ndcg_table
from fastndcg.trec import ndcg_run

ENTRY_POINTS: dict[str, Callable[..., NDCGResult]] = dict(
    zip(ENTRY_POINT_NAMES, (ndcg, ndcg_table, ndcg_parquet, ndcg_run), strict=True)
)
_ERROR_ROW = dict.fromkeys(
    ("definition", "k", "mean", "queries", "skipped", "differ", "max_diff", "worst_query")
)
# not shown as differing settings (the label names a preset; a drawn seed is noise)
_HIDDEN = ("backend", "preset", "seed")
_UNSHOWN = {"score_dtype": "float64", "decimals": None, "weights": None}  # left out of options


@dataclass(frozen=True, repr=False, eq=False)
class Comparison:
    """Results of one input under several definitions, compared with the first.

    Attributes
    ----------
    results : dict of str to NDCGResult
        Every definition's full result, by label, in the order given. The first one is the
        baseline the others are compared with.
    rows : list of dict
        One row per definition and cutoff: ``definition``, ``k``, ``mean``, ``queries``,
        ``skipped``, ``differ`` (queries whose value differs from the first definition's at the
        same cutoff by more than ``tolerance``, counting a value against no value as a
        difference), ``max_diff`` (largest absolute difference where both have a value),
        ``worst_query`` (where it occurs; when no difference exceeds ``tolerance``, the first
        query with a value in one of the two results only) and ``settings`` (the settings that
        differ from the first definition's, its cutoffs ``k`` included; the first definition is
        marked ``"(baseline)"``). ``differ``, ``max_diff`` and ``worst_query`` are None where the
        first definition lacks that cutoff.
    tolerance : float
        Values closer than this count as equal.
    errors : dict of str to str
        Definitions that could not score the input (a ValueError, e.g. ``missing="error"`` with
        queries missing from a run), with the message; their row shows it under ``settings``.
    """

    results: dict[str, NDCGResult]
    rows: list[dict[str, Any]]
    tolerance: float
    errors: dict[str, str] = field(default_factory=dict)

    def to_arrow(self) -> Any:
        """The summary rows as a ``pyarrow.Table``."""
        return pa.Table.from_pylist(
            [{**row, "worst_query": _text(row["worst_query"])} for row in self.rows]
        )

    def to_pandas(self) -> Any:
        """The summary rows as a ``pandas.DataFrame`` (needs pandas)."""
        return self.to_arrow().to_pandas()

    def per_query(self, k: int | None = None) -> Any:
        """Per-query values at cutoff ``k``, one column per definition, as a ``pyarrow.Table``.

        Rows are the queries of the first definition, then those only the others have;
        a definition without that query or cutoff shows null.
        """
        ids = _union_ids([result.query_ids for result in self.results.values()])
        columns: dict[str, Any] = {"query_id": ids}
        for label, result in self.results.items():
            values = np.full(len(ids), np.nan)
            if k in result.k:
                pos = positions(result.query_ids, ids)
                found = pos >= 0
                values[found] = result.per_query[pos[found], result.k.index(k)]
            columns[label] = pa.array(values, from_pandas=True)
        return pa.table(columns)

    def shown_rows(self) -> list[dict[str, Any]]:
        """The summary rows as displayed: blanks for missing entries, ``k`` "all" for None."""
        return [shown_row(row) for row in self.rows]

    def __repr__(self) -> str:
        head = f"Comparison with {next(iter(self.results))!r} (tolerance {self.tolerance:g})"
        return head + "\n" + format_rows(self.shown_rows(), "table", 6)


def shown_row(row: dict[str, Any]) -> dict[str, Any]:
    """A summary row for display: blanks for missing entries, ``k`` "all" for None."""
    shown = {key: "" if value is None else value for key, value in row.items()}
    if row["mean"] is not None and row["k"] is None:
        shown["k"] = "all"
    if row["max_diff"] is not None:
        shown["max_diff"] = f"{row['max_diff']:.3g}"
    return shown


def compare_definitions(
    *inputs: Any,
    definitions: Sequence[Any] | Mapping[str, Any],
    using: str | Callable[..., NDCGResult] = "ndcg",
    tolerance: float = 1e-12,
    **options: Any,
) -> Comparison:
    """Score the same input under several definitions and compare them with the first.

    The first definition that can score the input is the baseline; a definition that cannot
    (a ValueError) is reported in :attr:`Comparison.errors` and in its row.

    Parameters
    ----------
    *inputs
        The positional inputs of the entry point: ``grades, scores`` for :func:`fastndcg.ndcg`,
        a table, a Parquet source, or ``qrels, run`` (files are read once for all definitions).
    definitions : sequence or mapping
        Each definition is a preset name, or a dict of options (which may hold ``"preset"``). A
        mapping gives each a label; otherwise labels are made from the definitions.
    using : {"ndcg", "ndcg_table", "ndcg_parquet", "ndcg_run"} or callable, default="ndcg"
        The entry point that scores ``inputs``.
    tolerance : float, default=1e-12
        Per-query values closer than this count as equal.
    **options
        Options shared by every definition (data options such as ``qid=``, or ``k=10`` to
        compare every definition at one cutoff). They override a preset's settings; a
        definition's own options override them.

    Returns
    -------
    Comparison
        Per definition and cutoff: mean, queries that differ from the first definition, the
        largest difference, the query where it occurs, and the settings that differ.

    Examples
    --------
    >>> import fastndcg
    >>> c = fastndcg.compare_definitions(
    ...     [[2, 1, 0, 0]], [[0.5, 0.5, 0.9, 0.1]],
    ...     definitions=["sklearn", "lightgbm", {"preset": "sklearn", "ties": "stable"}], k=2)
    >>> [(row["definition"], round(row["mean"], 4), row["differ"]) for row in c.rows]
    [('sklearn', 0.3597, 0), ('lightgbm', 0.5213, 1), ('sklearn, ties=stable', 0.4796, 1)]
    """
    definitions = parse_view("definitions", definitions)
    tolerance = parse_view("tolerance", tolerance)
    using = parse_view("using", using)
    entry = using if callable(using) else ENTRY_POINTS[using]
    if using == "ndcg_run" and len(inputs) == 2:
        inputs = (read_once(inputs[0], "qrels"), read_once(inputs[1], "run"))
    outcomes = {
        label: _score(entry, inputs, {**options, **spec})
        for label, spec in _labelled(definitions).items()
    }
    results = {label: out for label, out in outcomes.items() if isinstance(out, NDCGResult)}
    errors = {label: out for label, out in outcomes.items() if isinstance(out, str)}
    if not results:
        raise InputError(
            "no definition could score this input: "
            + "; ".join(f"{label}: {message}" for label, message in errors.items()),
            value=errors,
        )
    return Comparison(results, _summary(outcomes, tolerance), float(tolerance), errors)


def _score(
    entry: Callable[..., NDCGResult], inputs: tuple[Any, ...], options: dict[str, Any]
) -> NDCGResult | str:
    """The result of one definition, or the message of the ValueError it raised.

    An error that is also a TypeError (an option of the wrong type, such as
    :class:`~fastndcg._errors.OptionTypeError`) is raised: it is a mistake in the call, not a
    definition that cannot score this input.
    """
    try:
        return entry(*inputs, **options)
    except ValueError as exc:  # this definition cannot score this input (e.g. missing="error")
        if isinstance(exc, TypeError):
            raise
        return str(exc)


def _labelled(definitions: Sequence[Any] | Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Definitions as label -> options (a preset name becomes ``{"preset": name}``)."""
    items = (
        list(definitions.items())
        if isinstance(definitions, Mapping)
        else [(None, spec) for spec in definitions]
    )
    out: dict[str, dict[str, Any]] = {}
    for label, spec in items:
        if isinstance(spec, str):
            spec = {"preset": get_preset(spec).name}
        else:  # a mapping (checked through the option table)
            spec = dict(spec)
            if spec.get("preset") is not None:
                get_preset(spec["preset"])
        name = label if label is not None else _label(spec)
        unique, n = name, 2
        while unique in out:
            unique, n = f"{name} #{n}", n + 1
        out[unique] = spec
    return out


def _label(spec: dict[str, Any]) -> str:
    parts = [spec["preset"]] if spec.get("preset") is not None else []
    parts += [f"{key}={value!r}" for key, value in spec.items() if key != "preset"]
    return ", ".join(parts).replace("'", "") or "defaults"


def _summary(outcomes: dict[str, NDCGResult | str], tolerance: float) -> list[dict[str, Any]]:
    first = next(out for out in outcomes.values() if isinstance(out, NDCGResult))
    rows = []
    for label, result in outcomes.items():
        if isinstance(result, str):
            rows.append({**_ERROR_ROW, "definition": label, "settings": f"error: {result}"})
            continue
        pos = positions(result.query_ids, first.query_ids)
        only_first = np.ones(first.n_queries, dtype=bool)
        only_first[pos[pos >= 0]] = False
        settings = (
            "(baseline)" if result is first else _differing(_settings(first), _settings(result))
        )
        for j, k in enumerate(result.k):
            row: dict[str, Any] = {
                "definition": label,
                "k": k,
                "mean": float(result.mean[j]),
                "queries": result.n_queries,
                "skipped": int(result.n_skipped[j]),
                "differ": None,
                "max_diff": None,
                "worst_query": None,
                "settings": settings,
            }
            if k in first.k:
                column = first.per_query[:, first.k.index(k)]
                row.update(_differences(result, j, first, column, pos, only_first, tolerance))
            rows.append(row)
    return rows


def _differences(
    result: NDCGResult,
    j: int,
    first: NDCGResult,
    column: np.ndarray,
    pos: np.ndarray,
    only_first: np.ndarray,
    tolerance: float,
) -> dict[str, Any]:
    """How the values of ``result`` at cutoff ``j`` differ from the first result's ``column``.

    The two are aligned by query through ``pos``; ``only_first`` marks the first result's
    queries that ``result`` lacks.
    """
    mine = result.per_query[:, j]
    theirs = np.full(mine.size, np.nan)
    theirs[pos >= 0] = column[pos[pos >= 0]]
    both = ~np.isnan(mine) & ~np.isnan(theirs)
    gap = np.abs(np.where(both, mine - theirs, 0.0))
    one_sided = np.isnan(mine) != np.isnan(theirs)
    first_only = only_first & ~np.isnan(column)
    differ = int(one_sided.sum() + (gap > tolerance).sum() + first_only.sum())
    max_diff = float(gap.max()) if both.any() else float("nan")
    if both.any() and max_diff > tolerance:
        worst = plain(result.query_ids[int(np.argmax(gap))])
    elif one_sided.any():
        worst = plain(result.query_ids[int(np.argmax(one_sided))])
    elif first_only.any():
        worst = plain(first.query_ids[int(np.argmax(first_only))])
    else:
        worst = None
    return {"differ": differ, "max_diff": max_diff, "worst_query": worst}


def _settings(result: NDCGResult) -> dict[str, Any]:
    """The settings of a result that are compared: its cutoffs, then its options."""
    return {"k": result.k[0] if len(result.k) == 1 else list(result.k), **result.options}


def _differing(base: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    keys = [key for key in dict.fromkeys([*base, *other]) if key not in _HIDDEN]
    before = {**_UNSHOWN, **base}
    after = {**_UNSHOWN, **other}
    return ", ".join(f"{key}={after[key]}" for key in keys if before[key] != after[key])


def _union_ids(all_ids: list[np.ndarray]) -> np.ndarray:
    ids = all_ids[0]
    for more in all_ids[1:]:
        extra = more[positions(more, ids) < 0]
        if len(extra):
            ids = np.concatenate([ids, extra])
    return ids


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
