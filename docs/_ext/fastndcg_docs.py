"""Sphinx directives that render fastndcg's reference pages from the code and the benchmarks.

- ``.. fastndcg-cli::`` -- every command of ``fastndcg`` from
  :func:`fastndcg.cli.parser.build_parser`: its ``--help`` as printed, then its options group by
  group (flag, default, choices, help), so the page changes when the parser does;
- ``.. fastndcg-options::`` -- the option reference from the option table
  (:mod:`fastndcg._core.options`): every option with its default, accepted values,
  command-line flag, the entry points that take it and whether a preset may set it;
- ``.. fastndcg-benchmark:: NAME`` -- the table kept in ``docs/benchmarks/NAME.json`` (written
  by the benchmark scripts' ``--json`` flag) with its date, machine, command and data.
  ``:section: SECTION`` renders the table kept under that name in the file instead.

Each directive writes reStructuredText and parses it in place, so they belong in ``.rst`` pages.
The figures of the user guide are drawn by ``docs/figures.py`` when the build starts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

DOCS = Path(__file__).resolve().parents[1]
HELP_WIDTH = "80"  # columns argparse formats --help for (a terminal's, and the page's width)


# -- reStructuredText helpers -----------------------------------------------------------------


def escape(text: str) -> str:
    """Plain text, safe as reStructuredText inline content."""
    return re.sub(r"([\\*`|_<>\[\]@:])", r"\\\1", str(text))  # @: no e-mail or URL links


def literal(text: str) -> str:
    """Text as an inline literal (``text``)."""
    text = str(text)
    if not text.strip():
        return f":literal:`{escape(text) or '(empty)'}`"
    quoted = text.replace("\\", "\\\\").replace("`", "\\`")
    return f":literal:`{quoted}`"


def inline_markdown(text: str) -> str:
    """The inline Markdown the benchmark scripts write (`code`, **bold**) as reStructuredText."""
    out = []
    for part in re.split(r"(`[^`]+`|\*\*[^*]+\*\*)", str(text)):
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(literal(part[1:-1]))
        elif part.startswith("**") and part.endswith("**") and len(part) > 4:
            out.append(f"**{escape(part[2:-2])}**")
        else:
            out.append(escape(part))
    # inline markup must be followed and preceded by a space or punctuation
    return "\\ ".join(filter(None, out)) if len(out) > 1 else "".join(out)


def list_table(header: list[str], rows: Iterable[list[str]], widths: str = "auto") -> list[str]:
    """A list-table directive; cells are reStructuredText already."""
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [header, *rows]:
        for index, cell in enumerate(row):
            bullet = "   * - " if index == 0 else "     - "
            cell_lines = str(cell).splitlines() or [""]
            lines.append(bullet + cell_lines[0])
            lines += ["       " + line for line in cell_lines[1:]]
    return [*lines, ""]


def heading(text: str, underline: str) -> list[str]:
    """A section title."""
    return [text, underline * max(len(text), 3), ""]


class _Generated(SphinxDirective):
    """A directive whose output is reStructuredText made by :meth:`lines`."""

    def lines(self) -> list[str]:
        """The reStructuredText to parse in place of the directive."""
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.section()
        container.document = self.state.document
        source = self.get_source_info()[0]
        content = StringList(self.lines(), source=f"{source} ({self.name})")
        nested_parse_with_titles(self.state, content, container)
        return container.children


# -- the command line -------------------------------------------------------------------------


@contextlib.contextmanager
def _help_environment() -> Iterator[None]:
    """Format ``--help`` for a fixed width, without colour, whatever the terminal."""
    saved = {name: os.environ.get(name) for name in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    os.environ.update(COLUMNS=HELP_WIDTH, NO_COLOR="1")
    os.environ.pop("FORCE_COLOR", None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``parser``, in the order it lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _shown_default(action: argparse.Action) -> str:
    if action.nargs == 0 or action.default in (None, [], argparse.SUPPRESS):
        return ""
    default = action.default
    if isinstance(default, list):
        default = ",".join("all" if item is None else str(item) for item in default)
    return literal(default)


def _option_rows(parser: argparse.ArgumentParser) -> Iterator[tuple[str, list[list[str]]]]:
    """(group title, rows of flag, default, help) of every argument group with arguments."""
    formatter = parser._get_formatter()
    for group in parser._action_groups:
        rows = []
        for action in group._group_actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            if action.option_strings:
                flag = ", ".join(action.option_strings)
                if action.nargs != 0:
                    flag += " " + formatter._format_args(action, action.dest.upper())
            else:
                flag = formatter._format_args(action, action.dest)
            text = escape(formatter._expand_help(action) if action.help else "")
            if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
                text += " (one of " + ", ".join(literal(c) for c in action.choices) + ")"
            rows.append([literal(flag), _shown_default(action), text])
        if rows:
            yield group.title or "", rows


class CommandLine(_Generated):
    """``.. fastndcg-cli::``: every command of ``fastndcg``, from its parser."""

    def lines(self) -> list[str]:
        """A section per command: its help as printed, then a table per group of options."""
        from fastndcg.cli.parser import build_parser

        parser = build_parser()
        out: list[str] = []
        with _help_environment():
            pages = {"fastndcg": parser}
            pages.update({f"fastndcg {name}": sub for name, sub in _commands(parser).items()})
            for title, command in pages.items():
                out += [f".. _cli-{title.replace(' ', '-')}:", ""]
                out += heading(title, "-")
                if command.description:
                    out += [escape(" ".join(command.description.split())), ""]
                out += [".. code-block:: text", ""]
                out += ["   " + line for line in command.format_help().rstrip().splitlines()]
                out.append("")
                groups = list(_option_rows(command))
                if title == "fastndcg" or not groups:
                    continue
                for group, rows in groups:
                    out += heading(f"{title}: {group}", "~")
                    out += list_table(["flag", "default", "meaning"], rows, "30 15 55")
        return out


# -- the option table -------------------------------------------------------------------------


def _entry_names() -> dict[str, str]:
    """Each entry point of the option table, worded, in the order the page lists them.

    An entry point missing here fails the build (see :class:`OptionReference`).
    """
    from fastndcg._core.options import model as table

    return {
        table.NDCG: ":func:`fastndcg.ndcg`",
        table.TABLE: ":func:`fastndcg.ndcg_table`",
        table.PARQUET: ":func:`fastndcg.ndcg_parquet`",
        table.RUN: ":func:`fastndcg.ndcg_run`",
        table.EVALUATE: ":func:`fastndcg.evaluate`",
        table.EVALUATE_TABLE: ":func:`fastndcg.evaluate_table`",
        table.EVALUATE_PARQUET: ":func:`fastndcg.evaluate_parquet`",
        table.EVALUATE_RUN: ":func:`fastndcg.evaluate_run`",
        table.SCORER: ":class:`fastndcg.Scorer`",
        table.STREAM: ":class:`fastndcg.stream.StreamScorer`",
        table.SCALEOUT: ":mod:`fastndcg.dask`, :mod:`fastndcg.spark`",
        table.COMMAND: ":ref:`fastndcg score <cli-fastndcg-score>`",
    }


def _values(option: Any) -> str:
    if option.values:
        return escape(option.values)
    if option.choices:
        return ", ".join(literal(repr(choice)) for choice in option.choices)
    return "a string"


def _flag(option: Any) -> str:
    flag = option.flag
    if flag is None:
        return "none (Python only)"
    shown = ", ".join(literal(name) for name in flag.names)
    if flag.negative:
        shown += ", " + literal(flag.negative)
    if flag.metavar:
        shown += " " + literal(flag.metavar)
    if flag.none:
        shown += f" ({literal(flag.none)} for None)"
    return shown


class OptionReference(_Generated):
    """``.. fastndcg-options::``: the option table, group by group."""

    def lines(self) -> list[str]:
        """A summary table, then a section per group with every option's fields."""
        from fastndcg._core import options as table

        entries = _entry_names()
        groups = list(table.GROUPS)
        every = [*table.OPTIONS.values(), *table.COMMAND_ONLY]
        every.sort(key=lambda option: groups.index(option.group))  # stable: table order within
        out: list[str] = []
        summary = [
            [
                f":ref:`{option.name} <option-{option.name}>`",
                literal(repr(option.default)),
                escape(option.doc),
            ]
            for option in every
        ]
        out += list_table(["option", "default", "meaning"], summary, "20 15 65")
        for key, title in table.GROUPS.items():
            members = [option for option in every if option.group == key]
            if not members:
                continue
            out += heading(title, "-")
            for option in members:
                unnamed = set(option.entries) - set(entries)
                if unnamed:
                    raise ValueError(f"name the entry points {sorted(unnamed)} in _entry_names")
                taken = [name for entry, name in entries.items() if entry in option.entries]
                out += [f".. _option-{option.name}:", ""]
                out += heading(option.name, "~")
                out += [escape(option.doc[:1].upper() + option.doc[1:]) + ".", ""]
                fields = [
                    ("Default", literal(repr(option.default))),
                    ("Values", _values(option)),
                    ("Command line", _flag(option)),
                    ("Taken by", ", ".join(taken)),
                    ("Set by presets", "yes" if option.preset else "no"),
                ]
                out += [f":{name}: {value}" for name, value in fields]
                out.append("")
        return out


# -- benchmark tables -------------------------------------------------------------------------


def load_benchmark(name: str) -> dict[str, Any]:
    """The JSON file ``docs/benchmarks/NAME.json``."""
    return json.loads((DOCS / "benchmarks" / f"{name}.json").read_text())


class BenchmarkTable(_Generated):
    """``.. fastndcg-benchmark:: NAME``: one benchmark run as a table with its provenance."""

    required_arguments = 1
    option_spec = {  # noqa: RUF012 (docutils' interface)
        "title": directives.unchanged,
        "section": directives.unchanged,
    }

    def lines(self) -> list[str]:
        """The run's provenance as fields, its table, then its notes."""
        name = self.arguments[0]
        path = DOCS / "benchmarks" / f"{name}.json"
        if not path.is_file():
            raise self.error(
                f"no benchmark file {path.relative_to(DOCS.parent)}: write it with the "
                "benchmark's --json flag (see the performance page)"
            )
        self.env.note_dependency(str(path))
        run = load_benchmark(name)
        section = self.options.get("section")
        if section is not None:
            if section not in run:
                raise self.error(
                    f"{path.relative_to(DOCS.parent)} has no section {section!r}: write it with "
                    "the benchmark's --json flag (see the performance page)"
                )
            run = run[section]
        machine = run["machine"]
        fields = [
            ("Date", escape(run["date"])),
            ("Command", literal(run["command"])),
            ("Machine", escape(machine["description"])),
            ("Software", escape(machine["software"])),
        ]
        if machine.get("load"):
            fields.append(("Load average", escape(machine["load"])))
        if run.get("data"):
            fields.append(("Data", inline_markdown(run["data"])))
        out = [f":{field}: {value}" for field, value in fields] + [""]
        columns = [inline_markdown(column) for column in run["columns"]]
        rows = [[inline_markdown(cell) for cell in row] for row in run["rows"]]
        out += list_table(columns, rows)
        for note in run.get("notes", []):
            out += [inline_markdown(note), ""]
        return out


# -- set-up -----------------------------------------------------------------------------------


def draw_figures(app: Sphinx) -> None:
    """Draw the user guide's figures into docs/_generated (matplotlib, at build time)."""
    import figures

    figures.draw_all(DOCS / "_generated")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directives and the figure step."""
    app.add_directive("fastndcg-cli", CommandLine)
    app.add_directive("fastndcg-options", OptionReference)
    app.add_directive("fastndcg-benchmark", BenchmarkTable)
    app.connect("builder-inited", draw_figures)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
