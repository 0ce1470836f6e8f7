"""What an explanation of a measure holds, and how it prints (``explain(..., measure=...)``).

:class:`MeasureExplanation` holds one :class:`MeasureList` per system: the query's ranked list
with, per rank, what the measure reads there and the rank's share of the value (see
:mod:`fastndcg._compare.explain_measures` for how they are found); :func:`render_measure` lays
them out as text, Markdown or LaTeX, as :func:`fastndcg._compare.explanation.render` does for
NDCG's.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from fastndcg._compare.explanation import _TIE_RULES, _doc, _grade, _num, _titles, json_value
from fastndcg._compare.tables import Table, latex_escape, latex_float, side_by_side

# the tie rules in words; under "average" a rank holds the mean of what the measure reads
_TIES = {
    **_TIE_RULES,
    "average": "tied items share their ranks: each holds the group's mean (over every order)",
}
# how each column of a measure's own is headed (the rows' keys are the names)
_HEADS = {"precision": "prec", "nonrelevant_above": "nonrel above"}


@dataclass(frozen=True, repr=False, eq=False)
class MeasureList:
    """One system's ranked list for one query and one measure.

    Attributes
    ----------
    system : str or None
        The system's name (None for :func:`fastndcg.explain`).
    ties : str
        The tie rule the measure's ranking applied (``"ranked input"`` when the rows came
        ranked).
    rows : list of dict
        One per rank, best first: ``rank``, ``doc``, ``score``, ``grade`` (None: no judgment),
        ``relevant`` (the grade at or above the relevance level), ``tie`` (the tie group's
        label, ``""`` when alone), the measure's own :attr:`columns`, ``share`` (the rank's part
        of the value: the values add up to it; NaN where the value is not a sum of shares) and
        ``cumulative`` (the shares up to this rank).
    columns : tuple of str
        The measure's own columns, in the order shown (``precision`` for AP, ``stop`` and
        ``reach`` for ERR, ``gain`` and ``weight`` for RBP, ...).
    value : float
        The library's value of the measure for the query (that of :func:`fastndcg.evaluate`;
        NaN when skipped).
    denominator : float or None
        What the shares were divided by (None: nothing).
    divides_by : str
        The denominator in words (``"k"``, ``"min(k, n)"``, ``"R"``, ``"IDCG@10"``...).
    facts : dict
        What else the value reads, as the measure reads it: ``k`` (None: the whole ranking),
        ``relevance_level``, ``R`` (relevant judgments, retrieved or not), bpref's ``N``,
        RBP's ``p``, nDCG's ``DCG`` and ``IDCG``...
    found : bool
        False when the system has no list for the query.
    notes : list of str
        What else matters (a tie rule averaged over orders, rows left out by ``judged_only``...).
    """

    system: str | None
    ties: str
    rows: list[dict[str, Any]]
    columns: tuple[str, ...]
    value: float
    denominator: float | None
    divides_by: str
    facts: dict[str, Any] = field(default_factory=dict)
    found: bool = True
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (NaN as None)."""
        return {
            "system": self.system,
            "found": self.found,
            "ties": self.ties,
            "value": json_value(self.value),
            "denominator": json_value(self.denominator),
            "divides_by": self.divides_by,
            "facts": {k: json_value(v) for k, v in self.facts.items()},
            "columns": list(self.columns),
            "rows": [{k: json_value(v) for k, v in row.items()} for row in self.rows],
            "notes": list(self.notes),
        }


@dataclass(frozen=True, repr=False, eq=False)
class MeasureExplanation:
    """Why one query has its value of a measure, for one or more systems.

    Print it for the ranked lists (two systems side by side); :meth:`to_markdown` and
    :meth:`to_latex` give them as tables, :meth:`to_dict` and :meth:`to_json` as data.

    Attributes
    ----------
    query_id : object
        The query.
    measure : str
        The measure, as named.
    title : str
        What the measure is, in words.
    lists : tuple of MeasureList
        One per system shown.
    """

    query_id: Any
    measure: str
    title: str
    lists: tuple[MeasureList, ...]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The ranked rows of the first (or only) list."""
        return self.lists[0].rows

    @property
    def value(self) -> float:
        """The value of the first (or only) list."""
        return self.lists[0].value

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (NaN as None)."""
        return {
            "query_id": json_value(self.query_id),
            "measure": self.measure,
            "title": self.title,
            "systems": [item.to_dict() for item in self.lists],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, default=str)

    def to_markdown(self) -> str:
        """Each list as a Markdown table, under its value and what it divides by."""
        return render_measure(self, "markdown")

    def to_latex(self) -> str:
        r"""Each list as a LaTeX ``table`` (booktabs); the value stands in its caption."""
        return render_measure(self, "latex")

    def __repr__(self) -> str:
        return render_measure(self)


def _relevant(row: dict[str, Any]) -> str:
    return "yes" if row["relevant"] else ""


def _block(item: MeasureList, compact: bool) -> Table:
    """One list's columns, a row per rank (``compact``: doc, grade, rel, share, cumulative)."""
    own = [] if compact else list(item.columns)
    heads = [] if compact else ["rank"]
    heads += ["doc"] + ([] if compact else ["score"]) + ["grade", "rel"]
    heads += [] if compact else ["tie"]
    heads += [_HEADS.get(name, name) for name in own] + ["share", "cum."]
    cells = []
    for row in item.rows[: _shown(item)]:
        line = [] if compact else [str(row["rank"])]
        line += [_doc(row["doc"])] + ([] if compact else [_num(row["score"])])
        line += [_grade(row["grade"]) if row["grade"] is not None else "unj", _relevant(row)]
        line += [] if compact else [row["tie"]]
        line += [_num(row[name]) for name in own]
        line += [_num(row["share"]), _num(row["cumulative"])]
        cells.append(line)
    return Table(heads, "".join("l" if head == "doc" else "r" for head in heads), cells)


def _shown(item: MeasureList) -> int:
    """How many ranks the table shows: those up to the measure's cutoff (all without one)."""
    k = item.facts.get("k")
    return len(item.rows) if k is None else min(k, len(item.rows))


def _summary(explanation: MeasureExplanation, item: MeasureList) -> list[str]:
    name = f"{item.system}: " if item.system is not None else ""
    if not item.found:
        return [f"{name}no list for this query", *(f"  {note}" for note in item.notes)]
    value = _num(item.value, 6) if not math.isnan(item.value) else "NaN (skipped)"
    line = f"{name}{explanation.measure} = {value}"
    if item.denominator is not None:
        line += f"; the shares are divided by {item.divides_by} = {item.denominator:g}"
    facts = ", ".join(f"{key} = {_fact(v)}" for key, v in item.facts.items())
    lines = [line, *([f"  {facts}"] if facts else [])]
    rest = item.rows[_shown(item) :]
    if rest:
        relevant = [str(row["rank"]) for row in rest if row["relevant"]]
        listed = ", ".join(relevant[:8]) + (", ..." if len(relevant) > 8 else "")
        lines.append(
            f"  {len(rest)} more rank{'s' if len(rest) != 1 else ''} below the cutoff"
            + (f"; relevant: rank{'s' if len(relevant) != 1 else ''} {listed}" if relevant else "")
        )
    return lines + [f"  {note}" for note in item.notes]


def _fact(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return "all" if value is None else str(value)


def _head(explanation: MeasureExplanation) -> list[str]:
    rules = dict.fromkeys(item.ties for item in explanation.lists)
    return [
        f"query {explanation.query_id!r}, {explanation.measure} ({explanation.title})",
        *(f"ties={rule!r}: {_TIES.get(rule, rule)}" for rule in rules),
    ]


def render_measure(explanation: MeasureExplanation, fmt: str = "table") -> str:
    """The explanation as text (``"table"``), ``"markdown"`` or ``"latex"``.

    As text, one list, two side by side, or more one after another; in Markdown and LaTeX,
    each list one after another.
    """
    lists, head = explanation.lists, _head(explanation)
    if fmt == "markdown":
        out = [f"**{head[0]}**", *(line for rule in head[1:] for line in ("", rule))]
        for item in lists:
            first, *rest = _summary(explanation, item)
            out += ["", first] + (["", *(f"- {line.strip()}" for line in rest)] if rest else [])
            if item.found:
                out += ["", *_block(item, compact=False).markdown()]
        return "\n".join(out)
    if fmt == "latex":
        out = []
        for item in lists:
            words = [*head, *(line.strip() for line in _summary(explanation, item))]
            caption = latex_escape("; ".join(words))
            if item.found:
                out += [*latex_float(caption, [_block(item, compact=False).escaped()]), ""]
            else:
                out += [caption, ""]
        return "\n".join(out).rstrip("\n")
    out = list(head)
    if len(lists) == 2 and all(item.found for item in lists):
        blocks = [_block(item, compact=True) for item in lists]
        height = max(len(block.rows) for block in blocks)
        ranks = Table(["rank"], "r", [[str(r + 1)] for r in range(height)])
        table = side_by_side([ranks, *blocks])
        out += ["", _titles(table[0], [str(item.system) for item in lists]), *table, ""]
        for item in lists:
            out.extend(_summary(explanation, item))
        return "\n".join(out)
    for item in lists:
        out.append("")
        if item.system is not None:
            out.append(f"[{item.system}]")
        if item.found:
            out.extend(_block(item, compact=False).text())
        out.extend(_summary(explanation, item))
    return "\n".join(out)
