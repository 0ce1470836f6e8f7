r"""What an explanation of a query holds, and how it prints (:func:`fastndcg.explain`).

:class:`QueryExplanation` holds one :class:`ListExplanation` per system, each the ranked list
as the library scores it (see :mod:`fastndcg._compare.explain` for how the rows are found);
:func:`render` lays them out as text: one list, two side by side, or more one after another.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fastndcg._compare.tables import Table, latex_escape, latex_float, side_by_side
from fastndcg._result import cutoff_label

_TIE_RULES = {
    "average": "tied items share their ranks: each counts the group's mean gain",
    "stable": "tied items in input order",
    "pessimistic": "tied items with the lower gain first",
    "optimistic": "tied items with the higher gain first",
    "random": "tied items in a random order (SplitMix64 of the seed and the row)",
    "docid_desc": "tied items by document id, descending (as trec_eval)",
    "ranked input": "rows in the order given (no scores: no ties)",
}


def cut_at(k: int | None, n: int) -> int:
    """How many of ``n`` ranked rows a cutoff ``k`` keeps (None: all)."""
    return n if k is None else min(k, n)


def tie_groups(ranked_scores: np.ndarray) -> np.ndarray:
    """Group number of every rank: ranks with equal scores next to each other share one."""
    starts = np.ones(ranked_scores.size, dtype=bool)
    starts[1:] = ranked_scores[1:] != ranked_scores[:-1]
    return np.cumsum(starts) - 1


# -- what an explanation holds ------------------------------------------------------------------


@dataclass(frozen=True, repr=False, eq=False)
class ListExplanation:
    """One system's ranked list for one query at one cutoff.

    Attributes
    ----------
    system : str or None
        The system's name (None for :func:`fastndcg.explain`).
    ties : str
        The tie rule applied (``"ranked input"`` when the rows came ranked).
    rows : list of dict
        One per rank, best first: ``rank``, ``doc`` (document id, ``"row N"`` for a table's
        input row), ``score``, ``grade``, ``gain``, ``tie`` (the tie group's label, ``""``
        when alone), ``gain_used`` (the gain the rank counts: the group's mean with
        ``ties="average"``), ``discount``, ``contribution`` (``gain_used * discount``; 0
        beyond the cutoff) and ``cumulative`` (the DCG up to this rank).
    ideal : list of dict
        The ideal ranking up to the cutoff: ``rank``, ``doc`` (where known), ``grade``,
        ``gain``, ``discount``, ``contribution``, ``cumulative`` (IDCG up to this rank).
    dcg, idcg, ndcg : float
        The library's values for the query at the cutoff (NDCG after the ``zero_idcg`` rule:
        NaN when skipped).
    groups : list of dict
        The tie groups of two or more items: ``label``, ``score``, ``ranks`` (first, last),
        ``size``, ``mean_gain``.
    found : bool
        False when the system has no list for the query (a run without it).
    notes : list of str
        What else matters (rows left out by ``judged_only`` or ``max_docs``, ...).
    """

    system: str | None
    ties: str
    rows: list[dict[str, Any]]
    ideal: list[dict[str, Any]]
    dcg: float
    idcg: float
    ndcg: float
    groups: list[dict[str, Any]] = field(default_factory=list)
    found: bool = True
    notes: list[str] = field(default_factory=list)
    ideal_kind: str = "recall"

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (NaN as None)."""
        return {
            "system": self.system,
            "found": self.found,
            "ties": self.ties,
            "ideal": self.ideal_kind,
            "dcg": json_value(self.dcg),
            "idcg": json_value(self.idcg),
            "ndcg": json_value(self.ndcg),
            "rows": [{k: json_value(v) for k, v in row.items()} for row in self.rows],
            "ideal_rows": [{k: json_value(v) for k, v in row.items()} for row in self.ideal],
            "tie_groups": [{k: json_value(v) for k, v in g.items()} for g in self.groups],
            "notes": list(self.notes),
        }


@dataclass(frozen=True, repr=False, eq=False)
class QueryExplanation:
    """Why one query scored as it did, for one or more systems (the value of ``explain``).

    Print it for the ranked lists (two systems side by side); :meth:`to_markdown` and
    :meth:`to_latex` give them as tables for documents, :meth:`to_dict` and :meth:`to_json` as
    data.

    Attributes
    ----------
    query_id : object
        The query.
    k : int or None
        The cutoff (None: the whole list).
    lists : tuple of ListExplanation
        One per system shown.
    """

    query_id: Any
    k: int | None
    lists: tuple[ListExplanation, ...]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The ranked rows of the first (or only) list."""
        return self.lists[0].rows

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (NaN as None)."""
        return {
            "query_id": json_value(self.query_id),
            "k": self.k,
            "systems": [item.to_dict() for item in self.lists],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, default=str)

    def to_markdown(self) -> str:
        """Each list and its ideal ranking as Markdown tables, under the values and tie groups."""
        return render(self, "markdown")

    def to_latex(self) -> str:
        r"""Each list and its ideal ranking as a LaTeX ``table`` (booktabs).

        The values and tie groups stand in its caption. Needs ``\usepackage{booktabs}``.
        """
        return render(self, "latex")

    def __repr__(self) -> str:
        return render(self)


def json_value(value: Any) -> Any:
    """A value as JSON holds it: NumPy scalars as Python ones, NaN and inf None, bytes text."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _num(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _grade(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return _num(value, 3)


_DOC_WIDTH = 48  # longer document ids show their end (where ids usually differ)


def _doc(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= _DOC_WIDTH else "~" + text[-(_DOC_WIDTH - 1) :]


def _block(item: ListExplanation, k: int | None, compact: bool) -> Table:
    """One list's columns, a row per rank up to the cutoff.

    ``compact`` leaves out the ranks and discounts; its gain column holds the gain used.
    """
    cut = cut_at(k, len(item.rows))
    # the gain a rank counts differs from the item's own only in a tie group of ties="average"
    average = item.ties == "average" and any(row["tie"] for row in item.rows[:cut])
    if compact:
        heads = ["doc", "score", "grade", "gain", "tie", "contrib", "DCG"]
    else:
        heads = ["rank", "doc", "score", "grade", "gain", "tie"]
        heads += ["gain used"] if average else []
        heads += ["discount", "contrib", "DCG"]
    cells = []
    for row in item.rows[:cut]:
        line = [] if compact else [str(row["rank"])]
        line += [
            _doc(row["doc"]),
            _num(row["score"]),
            _grade(row["grade"]),
            _num(row["gain_used"] if compact and average else row["gain"], 3),
            row["tie"],
        ]
        if not compact:
            line += [_num(row["gain_used"], 3)] if average else []
            line += [_num(row["discount"])]
        line += [_num(row["contribution"]), _num(row["cumulative"])]
        cells.append(line)
    return Table(heads, "".join("l" if head == "doc" else "r" for head in heads), cells)


def _ideal_block(item: ListExplanation) -> Table:
    cells = [
        [_doc(row["doc"]), _grade(row["grade"]), _num(row["gain"], 3), _num(row["cumulative"])]
        for row in item.ideal
    ]
    return Table(["ideal doc", "grade", "gain", "IDCG"], "lrrr", cells)


def _summary(item: ListExplanation, k: int | None) -> list[str]:
    label = cutoff_label(k)
    name = f"{item.system}: " if item.system is not None else ""
    if not item.found:
        return [f"{name}no list for this query"]
    lines = [
        f"{name}DCG{label} = {_num(item.dcg, 6)}, IDCG{label} = {_num(item.idcg, 6)} "
        f"(ideal={item.ideal_kind!r}), NDCG{label} = "
        + (_num(item.ndcg, 6) if not math.isnan(item.ndcg) else "NaN (skipped: no relevant item)")
    ]
    cut = cut_at(k, len(item.rows))
    for group in item.groups:
        first, last = group["ranks"]
        if first > cut:
            continue  # below the cutoff: counts nowhere
        shown = f"ranks {first}-{last}"
        lines.append(
            f"  {group['label']}: {group['size']} items tied at score {group['score']:g} "
            f"({shown})"
            + (
                f", each counts the mean gain {group['mean_gain']:.4g}"
                if item.ties == "average"
                else ""
            )
        )
    rest = item.rows[cut_at(k, len(item.rows)) :]
    if rest:
        gained = [row["rank"] for row in rest if row["gain"] != 0]
        listed = ", ".join(map(str, gained[:8])) + (", ..." if len(gained) > 8 else "")
        lines.append(
            f"  {len(rest)} more rank{'s' if len(rest) != 1 else ''} below the cutoff"
            + (f"; with a gain: rank{'s' if len(gained) != 1 else ''} {listed}" if gained else "")
        )
    lines.extend(f"  {note}" for note in item.notes)
    return lines


def _head(explanation: QueryExplanation) -> list[str]:
    """The query and cutoff, then each tie rule applied, in words."""
    k = explanation.k
    label = "whole list" if k is None else f"k={k}"
    rules = dict.fromkeys(item.ties for item in explanation.lists)
    return [
        f"query {explanation.query_id!r}, NDCG{cutoff_label(k)} ({label})",
        *(f"ties={rule!r}: {_TIE_RULES.get(rule, rule)}" for rule in rules),
    ]


def render(explanation: QueryExplanation, fmt: str = "table") -> str:
    """The explanation as text (``"table"``), ``"markdown"`` or ``"latex"``.

    As text, one list, two side by side, or more one after another; in Markdown and LaTeX,
    each list with its ideal ranking, one after another.
    """
    k, lists, head = explanation.k, explanation.lists, _head(explanation)
    if fmt == "markdown":
        out = [f"**{head[0]}**"]
        for line in head[1:]:
            out += ["", line]
        for item in lists:
            first, *rest = _summary(item, k)
            out += ["", first]
            if rest:  # the tie groups, the ranks below the cutoff, the notes
                out += ["", *(f"- {line.strip()}" for line in rest)]
            if item.found:
                out += ["", *_block(item, k, compact=False).markdown()]
                out += ["", *_ideal_block(item).markdown()]
        return "\n".join(out)
    if fmt == "latex":
        out = []
        for item in lists:
            words = [head[0], *head[1:], *(line.strip() for line in _summary(item, k))]
            caption = latex_escape("; ".join(words))
            if not item.found:
                out += [caption, ""]
                continue
            tables = [_block(item, k, compact=False), _ideal_block(item)]
            out += [*latex_float(caption, [table.escaped() for table in tables]), ""]
        return "\n".join(out).rstrip("\n")
    found = [item for item in lists if item.found]
    same_ideal = len(found) > 1 and all(
        [(r["grade"], r["gain"]) for r in item.ideal]
        == [(r["grade"], r["gain"]) for r in found[0].ideal]
        for item in found
    )
    out = list(head)
    if len(lists) == 2 and all(item.found for item in lists):
        blocks = [_block(item, k, compact=True) for item in lists]
        titles = [f"{item.system}" for item in lists]
        if same_ideal:
            blocks.append(_ideal_block(lists[0]))
            titles.append("ideal")
        else:
            blocks += [_ideal_block(item) for item in lists]
            titles += [f"ideal ({item.system})" for item in lists]
        height = max(len(block.rows) for block in blocks)
        ranks = Table(["rank"], "r", [[str(r + 1)] for r in range(height)])
        table = side_by_side([ranks, *blocks])
        out += ["", _titles(table[0], titles), *table, ""]
        for item in lists:
            out.extend(_summary(item, k))
        return "\n".join(out)
    for item in lists:
        out.append("")
        if item.system is not None:
            out.append(f"[{item.system}]")
        if item.found:
            out.extend(side_by_side([_block(item, k, compact=False), _ideal_block(item)]))
        out.extend(_summary(item, k))
    return "\n".join(out)


def _titles(header: str, titles: list[str]) -> str:
    """A line naming each ``|``-separated block of ``header`` above it."""
    parts = header.split(" | ")
    line = " " * len(parts[0])
    for part, title in zip(parts[1:], titles, strict=False):
        line += " | " + title[: len(part)].ljust(len(part))
    return line.rstrip()
