"""How the command words errors: the library's structured errors, spelled with its flags.

A :class:`~fastndcg.FastNDCGError` carries its message as a template in which option
references stand between backquotes (```k=None```, ```zero_idcg='skip'```, ```ties```, or a
value of the option named before, ```'zero'```). The command renders those references with its
flags, from the option table: ``-k all``, ``--zero-idcg skip``, ``--ties``, ``zero``; it drops
```or None``` (a flag left out is the command's None); and it takes the ``"command"`` form of
an error's fix where the Python one names calls a command-line user cannot make.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from fastndcg._core.options import option_named
from fastndcg._errors import COMMAND, FastNDCGError, spell

# "or None" of a Python signature: the command's way is to leave the flag out
_OR_NONE = re.compile(r" ?`or None`")
_UNPARSED = object()


def command_words(template: str) -> str:
    """A message template with its option references spelled as the command's flags."""
    return spell(_OR_NONE.sub("", template), _flag_words)


def render(error: BaseException) -> str:
    """The one line the command prints for ``error`` (after ``fastndcg: error:``)."""
    if isinstance(error, FastNDCGError):
        return error.render(command_words, COMMAND)
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    return str(error)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _UNPARSED


def _flag_words(reference: str) -> str:
    """One option reference as flags: ``name``, ``name=``, ``name=value``, ``name 'value'``."""
    name, equals, text = reference.partition("=")
    if not equals and " " in reference:  # a name and its value in words: preset 'trec_eval'
        name, equals, text = reference.partition(" ")
    option = option_named(name)
    if option is None or not name.isidentifier():  # a value alone, or not an option
        value = _literal(reference)
        return reference if value is _UNPARSED else _value_words(value, None)
    flag = option.flag
    if flag is None:  # an option the command does not have: as Python spells it
        return reference
    if not equals or not text:
        return flag.name
    value = _literal(text)
    if value is _UNPARSED or (isinstance(value, tuple) and not text.startswith("(")):
        return f"{flag.name} {text}"  # words, or digits grouped with commas (1,000,000)
    if value is True and flag.action == "store_true":
        return flag.name
    return f"{flag.name} {_value_words(value, flag.none)}"


def _value_words(value: Any, none: str | None) -> str:
    """A value as the command takes it: strings bare, lists comma-separated, None as ``none``."""
    if value is None:
        return none if none is not None else "None"
    if isinstance(value, str):
        return value if value else "''"
    if isinstance(value, (list, tuple)):
        return ",".join(_value_words(item, "all") for item in value)
    return str(value)
