"""What an option is: :class:`Option` and :class:`Flag`, the entry points and the checks.

The tables themselves are in :mod:`~fastndcg._core.options.scoring` and
:mod:`~fastndcg._core.options.comparing`; :mod:`fastndcg._core.options` looks them up.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._core.vocabulary import (
    choose,
)
from fastndcg._errors import NOT_GIVEN, OptionError, OptionTypeError

# The entry points, as the table names them.
NDCG = "ndcg"
TABLE = "ndcg_table"
PARQUET = "ndcg_parquet"
RUN = "ndcg_run"
STREAM = "StreamScorer"
SCORER = "Scorer"
SCALEOUT = "scaleout"  # fastndcg.dask and fastndcg.spark
COMMAND = "command"  # fastndcg score
EVALUATE = "evaluate"  # the measures beside NDCG: fastndcg.evaluate
EVALUATE_RUN = "evaluate_run"  # ... and fastndcg.evaluate_run
EVALUATE_TABLE = "evaluate_table"  # ... fastndcg.evaluate_table
EVALUATE_PARQUET = "evaluate_parquet"  # ... and fastndcg.evaluate_parquet

# The groups options are listed in (the command's --help, the documentation).
GROUPS = {
    "input": "Input",
    "definition": "NDCG definition",
    "measures": "Measures beside NDCG",
    "presets": "Presets",
    "trec": "TREC runs (--qrels/--run)",
    "scaleout": "Dask and Spark (--engine)",
    "parquet": "Prediction files (Parquet, CSV/TSV)",
    "runtime": "Computation",
    "output": "Output",
    "comparison": "Paired comparison",
    "explain": "Explain one query",
}


@dataclass(frozen=True)
class Flag:
    """How the ``fastndcg`` command takes an option.

    ``names`` are the flags (the first is the one messages use); ``type`` parses the text;
    ``action`` is argparse's (``"store_true"``, ``"append"``); ``default`` is the command's
    default where it differs from the keyword's; ``none`` is how the command spells the
    keyword's None (``-k all``); ``help`` replaces the option's doc where the command needs
    other words; ``choices`` replaces the option's where the command takes more.
    """

    names: tuple[str, ...]
    type: Callable[[str], Any] | None = None
    action: str | None = None
    metavar: str | None = None
    default: Any = NOT_GIVEN
    none: str | None = None
    help: str | None = None
    choices: tuple[str, ...] | None = None
    negative: str | None = None  # a second flag that sets the option to False
    negative_help: str | None = None

    @property
    def name(self) -> str:
        """The flag messages use."""
        return self.names[0]

    @property
    def shown(self) -> str:
        """The flag as listings show it (with its negative form, if any)."""
        return f"{self.name}/{self.negative}" if self.negative else self.name


@dataclass(frozen=True)
class Option:
    """One option of fastndcg: its keyword, meaning, default, check and where it is taken."""

    name: str
    doc: str
    default: Any
    group: str
    entries: frozenset[str]
    parse: Callable[[Any], Any] | None = None  # checks a value; returns it parsed
    choices: tuple[str, ...] = ()
    preset: bool = False  # a preset may set it
    flag: Flag | None = None
    values: str = ""  # the accepted values in words, for the documentation

    def check(self, value: Any) -> Any:
        """``value`` checked (an OptionError names the option) and parsed."""
        if self.parse is not None:
            return self.parse(value)
        if self.choices:
            return choose(self.name, value, self.choices)
        return value


def check_int(
    name: str, low: int, what: str, optional: bool = False
) -> Callable[[Any], int | None]:
    """A check of an int >= ``low`` (or None when ``optional``); ``what`` words the values.

    Other types are an OptionTypeError, ints below ``low`` an OptionError.
    """

    def check(value: Any) -> int | None:
        if value is None and optional:
            return None
        if value is None or isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise OptionTypeError(
                f"`{name}` must be {what}", option=name, value=value, fix=f"got {value!r}"
            )
        if value < low:
            raise OptionError(
                f"`{name}` must be {what}", option=name, value=value, fix=f"got {value!r}"
            )
        return int(value)

    return check


def check_optional_int(name: str, low: int, what: str) -> Callable[[Any], int | None]:
    """A check of an int >= ``low`` or None; other types are an OptionTypeError."""
    return check_int(name, low, what, optional=True)


def check_bool(name: str, optional: bool = False) -> Callable[[Any], bool | None]:
    """A check of True or False (or None, when ``optional``)."""
    what = "True or False `or None`" if optional else "True or False"

    def check(value: Any) -> bool | None:
        if value is None and optional:
            return None
        if not isinstance(value, (bool, np.bool_)):
            raise OptionTypeError(
                f"`{name}` must be {what}", option=name, value=value, fix=f"got {value!r}"
            )
        return bool(value)

    return check


def check_column_name(role: str, optional: bool = False) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise OptionTypeError(
                f"`{role}=` must be a column name (str)",
                option=role,
                value=value,
                fix=f"got {value!r}",
            )
        return value

    return check


def check_max_grade(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise OptionTypeError(
            "`max_grade` must be a number (the grade that fills every slot)",
            option="max_grade",
            value=value,
            fix=f"got {value!r}",
        )
    if not np.isfinite(float(value)):
        raise OptionError(
            "`max_grade` must be finite", option="max_grade", value=value, fix=f"got {value!r}"
        )
    return float(value)


def check_max_docs(value: Any) -> int | None:
    """``max_docs``: None, or a positive int (a Python int, whatever integer type it came as).

    That it needs a fixed order of tied scores is checked with the definition
    (:func:`fastndcg._io.trec_join.check_max_docs`).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise OptionTypeError(
            "`max_docs` must be an int (documents kept per ranking) or None",
            option="max_docs",
            value=value,
            fix=f"got {value!r}",
        )
    if value < 1:
        raise OptionError(
            f"`max_docs={int(value)}` keeps no document of a ranking",
            option="max_docs",
            value=value,
            fix="give the positive number of documents to keep",
        )
    return int(value)  # a NumPy integer would make the kernel compile another signature
