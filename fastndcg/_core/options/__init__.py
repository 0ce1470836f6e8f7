"""The option table: every option of fastndcg, declared once.

Each :class:`Option` says its name (the Python keyword), a one-line doc, its default, how a
value is checked and parsed, its choices, the command-line flag that sets it (:class:`Flag`),
which entry points take it, and whether a preset may set it. From the table come:

- validation (:func:`parse`, used by :meth:`fastndcg._core.definition.Definition.create`
  and the entry points);
- the settings a preset may make (:data:`PRESET_SETTINGS`) and those only TREC runs take;
- how keyword options are split between the definition and an entry point's data options
  (:func:`split_options`), with the list of valid names an unknown option gets;
- the command line's parser and ``--help`` (:mod:`fastndcg.cli.parser`), and the spelling of
  option references in messages (``k=None`` in Python, ``-k all`` on the command line);
- the options table of the documentation, which a test compares with it.

The tables live in :mod:`.scoring` (:data:`OPTIONS`, and the command's own
:data:`COMMAND_OPTIONS`) and :mod:`.comparing` (the paired comparisons' :data:`COMPARE_OPTIONS`,
a table of their own: see there why); what an option is, in :mod:`.model`. This module looks
them up, and is what the rest of the package imports.
"""

from __future__ import annotations

from typing import Any

from fastndcg._core.options.comparing import (
    COMPARE,
    COMPARE_COMMAND,
    COMPARE_COMMAND_OPTIONS,
    COMPARE_OPTIONS,
    EXPLAIN_COMMAND,
    MAX_SEED,
    parse_compare,
)
from fastndcg._core.options.model import (
    COMMAND,
    GROUPS,
    NDCG,
    PARQUET,
    RUN,
    SCALEOUT,
    SCORER,
    STREAM,
    TABLE,
    Flag,
    Option,
)
from fastndcg._core.options.scoring import COMMAND_ONLY, COMMAND_OPTIONS, OPTIONS
from fastndcg._errors import OptionTypeError

# the options a Definition takes (the rest belong to entry points)
DEFINITION = tuple(
    name for name, option in OPTIONS.items() if option.group in ("definition", "runtime")
)
# what a preset may set, in the order listings show them
PRESET_SETTINGS = tuple(name for name, option in OPTIONS.items() if option.preset)
# options only fastndcg.ndcg_run takes
RUN_ONLY = tuple(name for name, option in OPTIONS.items() if option.group == "trec")


def option(name: str) -> Option:
    """The option called ``name`` (of the Python API, of the command, or of a comparison)."""
    for table in (OPTIONS, COMMAND_OPTIONS, COMPARE_OPTIONS, COMPARE_COMMAND_OPTIONS):
        if name in table:
            return table[name]
    raise KeyError(name)


def option_named(name: str) -> Option | None:
    """The option called ``name`` in any table (the scoring's first), or None."""
    for table in (OPTIONS, COMMAND_OPTIONS, COMPARE_OPTIONS, COMPARE_COMMAND_OPTIONS):
        if name in table:
            return table[name]
    return None


def parse(name: str, value: Any) -> Any:
    """``value`` of option ``name`` checked and parsed (an OptionError names the option)."""
    return OPTIONS[name].check(value)


def flag_of(name: str) -> Flag | None:
    """The command-line flag of option ``name``, or None when the command has none."""
    found = OPTIONS.get(name) or COMMAND_OPTIONS.get(name)
    return None if found is None else found.flag


def data_options(entry: str) -> tuple[str, ...]:
    """The options entry point ``entry`` takes besides the definition's (its data options)."""
    return tuple(
        name
        for name, option in OPTIONS.items()
        if entry in option.entries and name not in DEFINITION
    )


def split_options(
    options: dict[str, Any], caller: str, data: tuple[str, ...] = ()
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split keyword options into the definition's and the data options in ``data``.

    ``caller`` is how an error names the function called. An unknown name is an
    OptionTypeError (as Python's own for an unexpected keyword) listing the valid ones.
    """
    definition = set(DEFINITION)
    unknown = sorted(set(options) - definition - set(data))
    if unknown:
        valid = ", ".join(sorted(definition | set(data)))
        raise OptionTypeError(
            f"{caller} got unknown option(s) {', '.join(unknown)}",
            option=unknown[0],
            value=options[unknown[0]],
            fix=f"valid options: {valid}",
        )
    ours = {name: value for name, value in options.items() if name in definition}
    theirs = {name: value for name, value in options.items() if name not in definition}
    return ours, theirs


def defaults(names: tuple[str, ...] = DEFINITION) -> dict[str, Any]:
    """The defaults of the options ``names`` (by default, the definition's)."""
    return {name: OPTIONS[name].default for name in names}


__all__ = [
    "COMMAND",
    "COMMAND_ONLY",
    "COMMAND_OPTIONS",
    "COMPARE",
    "COMPARE_COMMAND",
    "COMPARE_COMMAND_OPTIONS",
    "COMPARE_OPTIONS",
    "DEFINITION",
    "EXPLAIN_COMMAND",
    "GROUPS",
    "MAX_SEED",
    "NDCG",
    "OPTIONS",
    "PARQUET",
    "PRESET_SETTINGS",
    "RUN",
    "RUN_ONLY",
    "SCALEOUT",
    "SCORER",
    "STREAM",
    "TABLE",
    "Flag",
    "Option",
    "data_options",
    "defaults",
    "flag_of",
    "option",
    "option_named",
    "parse",
    "parse_compare",
    "split_options",
]
