"""One table model for the comparison's printed, Markdown and LaTeX tables.

A :class:`Table` is rows of cells (text) under column heads, each column flush left (``"l"``)
or right (``"r"``; LaTeX also takes ``"c"``). :class:`~fastndcg.PairedComparison` and the
explanations of :func:`fastndcg.explain` build their cells and let the table lay them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters spelled out."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


@dataclass(frozen=True)
class Table:
    """Rows of cells under ``heads``; ``aligns`` holds one of ``l``, ``r``, ``c`` per column."""

    heads: Sequence[str]
    aligns: str
    rows: Sequence[Sequence[str]]

    def text(self, height: int = 0) -> list[str]:
        """Heads and rows in aligned columns two spaces apart, at least ``height`` rows.

        Lines keep their full width (blank rows too), so that tables set side by side line up.
        """
        rows = [*self.rows, *([""] * len(self.heads) for _ in range(height - len(self.rows)))]
        widths = [max(len(line[i]) for line in [self.heads, *rows]) for i in range(len(self.heads))]
        return [
            "  ".join(
                cell.ljust(width) if align == "l" else cell.rjust(width)
                for cell, width, align in zip(line, widths, self.aligns, strict=True)
            )
            for line in [self.heads, *rows]
        ]

    def markdown(self) -> list[str]:
        """A Markdown table (``|`` in a cell escaped)."""
        lines = [self.heads, *self.rows]
        cells = [[cell.replace("|", "\\|") for cell in line] for line in lines]
        out = ["| " + " | ".join(line) + " |" for line in cells]
        return [out[0], "|" + "---|" * len(self.heads), *out[1:]]

    def escaped(self) -> Table:
        """The table with its heads and cells escaped for LaTeX (from plain text)."""
        return Table(
            [latex_escape(head) for head in self.heads],
            self.aligns,
            [[latex_escape(cell) for cell in row] for row in self.rows],
        )

    def latex(self) -> list[str]:
        r"""A booktabs ``tabular``; the cells are LaTeX already (see :func:`latex_escape`)."""
        return [
            rf"\begin{{tabular}}{{{self.aligns}}}",
            r"\toprule",
            " & ".join(self.heads) + r" \\",
            r"\midrule",
            *(" & ".join(row) + r" \\" for row in self.rows),
            r"\bottomrule",
            r"\end{tabular}",
        ]


def side_by_side(tables: Sequence[Table]) -> list[str]:
    """The tables' text beside each other, separated by ``|``, as tall as the tallest."""
    height = max(len(table.rows) for table in tables)
    columns = [table.text(height) for table in tables]
    return [" | ".join(parts).rstrip() for parts in zip(*columns, strict=True)]


def latex_float(caption: str, tables: Sequence[Table]) -> list[str]:
    """A LaTeX ``table`` float holding ``tables`` side by side under ``caption`` (LaTeX)."""
    body: list[str] = []
    for i, table in enumerate(tables):
        body += [r"\quad"] * (i > 0) + table.latex()
    return [r"\begin{table}", r"\centering", r"\caption{" + caption + "}", *body, r"\end{table}"]
