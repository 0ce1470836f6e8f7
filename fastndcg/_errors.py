"""The errors fastndcg raises for bad options and bad data: data first, words second.

Every such error is a :class:`FastNDCGError`, a ValueError, and carries what went wrong as
attributes:

- ``option``: the keyword the error is about (None for a data error);
- ``value``: the offending value (:data:`NOT_GIVEN` when there is none to show);
- ``where``: the row, line, column or file where the problem is, when known;
- ``fix``: how to put it right (a mapping ``{"python": ..., "command": ...}`` where the two
  front ends need different advice).

Two families, each with TypeError variants so that ``except TypeError`` clauses written before
keep working:

- :class:`OptionError` for an option value (:class:`OptionTypeError` for a value of the wrong
  type, :class:`BackendUnavailableError` for a backend that cannot run here, an ImportError
  too);
- :class:`InputError` for the data (:class:`InputTypeError` for data of the wrong type,
  :class:`ColumnNotFoundError` for a missing column, a KeyError too).

Messages are templates in which option references stand between backquotes: ```k=None```,
```zero_idcg='skip'```, ```ties```, a value of the option named before (```'zero'```), or
```or None``` where None is a Python value the command line spells by leaving a flag out. Each
front end spells them its own way: :meth:`FastNDCGError.render` with the default spelling (the
one ``str()`` uses) writes Python keywords; the command line renders the same error with its
flags (``-k all``, ``--zero-idcg skip``), from the option table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any


class _NotGiven:
    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __reduce__(self) -> str:
        return "NOT_GIVEN"  # one object, also after pickling (errors cross processes)


NOT_GIVEN: Any = _NotGiven()  # the ``value`` of an error that has no value to show

# the name of each front end in a ``fix`` mapping
PYTHON = "python"
COMMAND = "command"


# an option reference: a keyword, with "=" and a value or a space and a quoted value, a value
# alone, or "or None"; backquotes around anything else (a user's text) are left as they are
_REFERENCE = re.compile(
    r"`((?:[a-z_][a-z0-9_]*(?:=[^`]*| '[^`']*')?)|'[^`']*'|or None|None|True|False|-?[0-9][^`]*)`"
)


def spell(template: str, words: Callable[[str], str]) -> str:
    """``template`` with each option reference replaced by ``words(reference)``."""
    return _REFERENCE.sub(lambda match: words(match.group(1)), template)


def python_words(template: str) -> str:
    """A message template as Python callers read it: the option references as written."""
    return spell(template, lambda reference: reference)


class FastNDCGError(ValueError):
    """Base class of the errors fastndcg raises for bad options or bad data.

    Parameters
    ----------
    message : str
        What is wrong, as a template (option references between backquotes).
    option : str, optional
        The keyword the error is about.
    value : object, optional
        The offending value.
    where : str, optional
        Where the problem is: a row, line, column or file.
    fix : str or mapping, optional
        How to put it right (a template), or ``{"python": ..., "command": ...}``.
    joiner : str, default="; "
        What joins the message and the fix.
    """

    def __init__(
        self,
        message: str,
        *,
        option: str | None = None,
        value: Any = NOT_GIVEN,
        where: str | None = None,
        fix: str | Mapping[str, str] | None = None,
        joiner: str = "; ",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.option = option
        self.value = value
        self.where = where
        self.fix = fix
        self.joiner = joiner

    def fix_for(self, front: str = PYTHON) -> str | None:
        """The fix as front end ``front`` ("python" or "command") gives it."""
        if isinstance(self.fix, Mapping):
            return self.fix.get(front)
        return self.fix

    def render(self, spell: Callable[[str], str] = python_words, front: str = PYTHON) -> str:
        """The message and its fix, with option references spelled by ``spell``."""
        fix = self.fix_for(front)
        text = spell(self.message)
        return text + self.joiner + spell(fix) if fix else text

    def __str__(self) -> str:
        return self.render()

    def extended(
        self, more: str = "", *, before: str = "", where: str | None = None
    ) -> FastNDCGError:
        """A copy of this error whose message starts with ``before`` and ends with ``more``.

        The copy has the same class and data (``where`` replaced when given); the original
        becomes its ``__cause__`` when it is raised ``from`` it.
        """
        copy = type(self)(
            before + self.message + more,
            option=self.option,
            value=self.value,
            where=self.where if where is None else where,
            fix=self.fix,
            joiner=self.joiner,
        )
        return copy


class OptionError(FastNDCGError):
    """An option has a value fastndcg cannot use (``option`` names it)."""


class OptionTypeError(OptionError, TypeError):
    """An option has a value of the wrong type."""


class BackendUnavailableError(OptionError, ImportError):
    """The backend asked for cannot run here (a package is missing, or no GPU)."""


class InputError(FastNDCGError):
    """The data cannot be scored as given (``where`` says where the problem is)."""


class InputTypeError(InputError, TypeError):
    """The data has the wrong type or dtype."""


class ColumnNotFoundError(InputError, KeyError):
    """A column the call names is not in the table.

    It reads as a KeyError does: ``str()`` quotes the text, and ``args[0]`` is the whole text
    (message and fix), which code reporting a KeyError reads.
    """

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message, **data)
        self.args = (self.render(),)

    def __str__(self) -> str:
        return KeyError.__str__(self)


# -- errors about one value of a column, raised alike wherever the column lives ------------------


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it holds; others unchanged."""
    return value.item() if hasattr(value, "item") and hasattr(value, "dtype") else value


def nonfinite_error(name: str, value: Any, where: str) -> InputError:
    """The InputError (to raise) for the NaN or infinite ``value`` of ``name`` at ``where``."""
    nan = math.isnan(value)
    return InputError(
        f"{name} has {'a NaN' if nan else 'an infinite'} value at {where}",
        value=_plain(value),
        where=where,
        fix=f"{name} must be finite: drop or fill those rows first"
        f"{' (a null or missing value reads as NaN)' if nan else ''}",
    )


def inexact_error(
    name: str, value: Any, where: str, beyond: str, use: str, ties: bool
) -> InputError:
    """The InputError (to raise) for a ``value`` of ``name`` that float64 rounds."""
    return InputError(
        f"{name} has {value!s} at {where}, {beyond}: float64 (the precision {use}) "
        f"rounds it{' and neighbours can tie' if ties else ''}",
        value=_plain(value),
        where=where,
        fix=f"rescale them, or convert {name} to float64 to accept the rounding",
    )


def not_numeric_error(name: str, dtype: Any) -> InputTypeError:
    """The InputTypeError (to raise) for a column ``name`` of non-numeric ``dtype``."""
    return InputTypeError(
        f"{name} must be numeric (bool, int or float); got dtype {dtype}",
        value=dtype,
        fix=f"Convert it first, e.g. {name}.astype(float)",
        joiner=". ",
    )


__all__ = [
    "NOT_GIVEN",
    "BackendUnavailableError",
    "ColumnNotFoundError",
    "FastNDCGError",
    "InputError",
    "InputTypeError",
    "OptionError",
    "OptionTypeError",
    "python_words",
]
