"""The option table is the one place options are declared: the documentation's table of options
and formulas (docs/user-guide/definitions.md) agrees with it, and the entry points, presets and
command line take what it says."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import fastndcg
from fastndcg._core import options as table
from fastndcg.cli.parser import build_parser

DEFINITIONS = Path(__file__).resolve().parents[2] / "docs" / "user-guide" / "definitions.md"


def documented_rows() -> dict[str, list[str]]:
    """Option name -> the 'values' cells of its rows in the documentation's options table."""
    text = DEFINITIONS.read_text()
    start = text.index("| option | values (default first) |")
    rows: dict[str, list[str]] = {}
    name = None
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0]:
            name = cells[0].strip("`")
            rows[name] = []
        rows[name].append(cells[1])
    return rows


def literal(cell: str) -> object:
    """The first value a table cell gives: `None` or a quoted string."""
    token = re.match(r"`([^`]*)`", cell).group(1)
    return None if token == "None" else token.strip('"')


def test_every_definition_option_is_in_the_documented_table_with_its_default():
    rows = documented_rows()
    assert set(table.DEFINITION) <= set(rows), set(table.DEFINITION) - set(rows)
    for name in rows:
        option = table.OPTIONS[name]  # a row for an option that does not exist fails here
        assert literal(rows[name][0]) == option.default, name


def test_the_documented_table_lists_exactly_the_named_choices():
    for name, cells in documented_rows().items():
        choices = table.OPTIONS[name].choices
        named = {value for cell in cells for value in re.findall(r'`"([^"`]+)"`', cell)}
        if choices:
            assert named == set(choices), (name, named ^ set(choices))
        else:
            assert not named, name


def test_the_python_signatures_take_the_table_defaults():
    """Explicit keywords of the entry points default to what the table says."""
    for entry, func in (
        (table.NDCG, fastndcg.ndcg),
        (table.TABLE, fastndcg.ndcg_table),
        (table.PARQUET, fastndcg.ndcg_parquet),
        (table.RUN, fastndcg.ndcg_run),
        (table.SCORER, fastndcg.Scorer),
    ):
        for parameter in inspect.signature(func).parameters.values():
            option = table.OPTIONS.get(parameter.name)
            if option is None or parameter.kind is not parameter.KEYWORD_ONLY:
                continue
            if entry == table.NDCG and parameter.name == "qid":
                continue  # the query id of every row (an array), not a column name
            assert entry in option.entries, (entry, parameter.name)
            if parameter.name != "ideal" or entry != table.RUN:
                assert parameter.default == option.default, (entry, parameter.name)


def test_presets_set_what_the_table_allows():
    allowed = set(table.PRESET_SETTINGS)
    for preset in fastndcg.presets().values():
        assert set(preset.options) <= allowed, preset.name
    with pytest.raises(fastndcg.OptionError) as info:
        fastndcg.Preset("bad", "a tool", {"not_an_option": 1})
    assert info.value.option == "preset"


def test_the_command_has_a_flag_for_every_option_with_one():
    parser = build_parser()
    score = parser._subparsers._group_actions[0].choices["score"]
    flags = {string for action in score._actions for string in action.option_strings}
    dests = {action.dest for action in score._actions}
    for name, option in table.COMMAND_OPTIONS.items():
        if option.flag is None:
            continue
        assert set(option.flag.names) <= flags, name
        assert name in dests, name  # the value lands under the Python keyword


def test_unknown_options_list_what_the_entry_point_takes():
    with pytest.raises(TypeError) as info:
        fastndcg.ndcg_table({"qid": [1], "grade": [1], "score": [0.5]}, cutoff=3)
    error = info.value
    assert isinstance(error, fastndcg.OptionError) and error.option == "cutoff"
    valid = set(error.fix.removeprefix("valid options: ").split(", "))
    assert valid == set(table.DEFINITION) | set(table.data_options(table.TABLE))


def test_the_comparison_options_have_their_own_table_and_the_signatures_take_its_defaults():
    """compare, compare_runs and compare_table default to COMPARE_OPTIONS; seed and missing
    there are the comparison's, not the scoring's (which the main table keeps)."""
    assert set(table.COMPARE_OPTIONS) == {
        "baseline",
        "test",
        "alternative",
        "n_resamples",
        "ci_method",
        "zero_method",
        "continuity",
        "correction",
        "family",
        "alpha",
        "ci",
        "seed",
        "missing",
    }
    assert table.COMPARE_OPTIONS["seed"].default == 0 and table.OPTIONS["seed"].default is None
    assert table.COMPARE_OPTIONS["missing"].default == "error"
    assert table.OPTIONS["missing"].choices != table.COMPARE_OPTIONS["missing"].choices
    for function in (fastndcg.compare, fastndcg.compare_runs, fastndcg.compare_table):
        parameters = inspect.signature(function).parameters
        for name, option in table.COMPARE_OPTIONS.items():
            assert parameters[name].default == option.default, (function.__name__, name)


def test_the_compare_command_has_a_flag_for_every_comparison_option():
    parser = build_parser()
    compare = parser._subparsers._group_actions[0].choices["compare"]
    by_dest = {action.dest: action for action in compare._actions}
    for name, option in table.COMPARE_OPTIONS.items():
        action = by_dest[name]  # the value lands under the Python keyword
        assert option.flag.name in action.option_strings, name
        if option.name not in ("correction",):
            assert action.default == option.default, name
    # the command's seed and missing are the comparison's
    assert by_dest["seed"].default == 0 and by_dest["missing"].choices == (
        "error",
        "zero",
        "intersection",
    )
    explain = parser._subparsers._group_actions[0].choices["explain"]
    dests = {action.dest for action in explain._actions}
    assert "query" in dests and "test" not in dests and "missing" not in dests


def test_options_once_checked_by_hand_are_checked_by_their_records():
    """max_docs, batch_rows, progress, engine and the column names: the records check them,
    with the data the entry points' own checks gave (and ndcg_run, ndcg_parquet, Dask and Spark
    call them)."""

    def error(name, value):
        with pytest.raises(fastndcg.OptionError) as info:
            table.option(name).check(value)
        exc = info.value
        return type(exc), exc.option, exc.value, exc.fix

    assert error("max_docs", 0) == (
        fastndcg.OptionError,
        "max_docs",
        0,
        "give the positive number of documents to keep",
    )
    assert error("max_docs", 2.0) == (fastndcg.OptionTypeError, "max_docs", 2.0, "got 2.0")
    checked = table.parse("max_docs", np.int32(3))
    assert checked == 3 and type(checked) is int
    assert table.parse("max_docs", None) is None
    assert error("batch_rows", None) == (fastndcg.OptionTypeError, "batch_rows", None, "got None")
    assert error("progress", "yes") == (fastndcg.OptionTypeError, "progress", "yes", "got 'yes'")
    assert [table.parse("progress", value) for value in (None, np.True_)] == [None, True]
    kind, name, value, fix = error("engine", "ray")
    assert (kind, name, value) == (fastndcg.OptionError, "engine", "ray")
    assert fix.endswith("'local'`, `'dask'`, `'spark'`")
    assert error("grade", 1) == (fastndcg.OptionTypeError, "grade", 1, "got 1")
