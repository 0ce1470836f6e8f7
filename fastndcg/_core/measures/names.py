"""Measure names as users type them, in trec_eval's, ir_measures' and ranx's syntax.

A name is read in the syntax whose vocabulary (:mod:`.kinds`) has its base word, trec_eval's
first: ``recall``, a word both trec_eval and ranx know, is trec_eval's recall at its nine
default cutoffs (ranx's whole-list recall is ``R`` or ``set_recall``). Every other shared word
(``map``, ``ndcg``, ``bpref``, ``Rprec``) means the same in each syntax.

- trec_eval: ``name`` or ``name.params`` (``P.5,10``, ``iprec_at_recall.0.3``, ``rbp.p=0.8``),
  and the printed ``name_param`` (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``). A name
  without parameters has trec_eval's defaults (``P`` is ``P_5`` ... ``P_1000``);
- ir_measures: ``Name(key=value,...)@cutoff`` (``nDCG@10``, ``P(rel=2)@10``, ``RBP(rel=1,p=0.8)``,
  ``IPrec@0.3``);
- ranx: ``name@k`` with a relevance level ``-lN`` (``precision@10-l2``), and ``rbp.DIGITS``
  (``rbp.95`` is p = 0.95).

A name that stands for several measures (``P.5,10``) gives one record per cutoff, each named as
trec_eval prints it (``P_5``, ``P_10``); otherwise a record keeps the name as typed.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable
from typing import Any

from fastndcg._core.measures.kinds import (
    IR_MEASURES_NAMES,
    IR_MEASURES_SETS,
    KINDS,
    RANX_NAMES,
    TREC_DEFAULTS,
    TREC_NAMES,
    all_names,
)
from fastndcg._core.measures.model import Measure
from fastndcg._core.vocabulary import listed
from fastndcg._errors import OptionError, OptionTypeError

_TREC = re.compile(r"(?P<base>[A-Za-z_]+)(?:\.(?P<params>.+))?")
_TREC_PRINTED = re.compile(r"(?P<base>[A-Za-z_]+?)_(?P<param>p=[0-9.]+|[0-9][0-9.]*)")
_RANX = re.compile(
    r"(?P<base>[a-z][a-z0-9_\-]*?)(?:(?P<sep>[@.])(?P<arg>[0-9.]+))?(?:-l(?P<level>[0-9]+))?"
)
_IR = re.compile(r"(?P<base>[A-Za-z][A-Za-z0-9_]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<at>[0-9.]+))?")
_RANX_RBP = re.compile(r"[0-9.]+(?:-l[0-9]+)?")  # after "rbp.": ranx's p, and its level
_INT = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[0-9]*\.?[0-9]+")
_IR_KEYS = ("rel", "cutoff", "p", "recall", "gain", "dcg", "judged_only")


def parse_measures(measures: Any) -> tuple[Measure, ...]:
    """Every measure of ``measures``: a name, a :class:`Measure`, or a sequence of them.

    A name standing for several measures (trec_eval's ``P.5,10``) adds them all. Names must be
    unique: they name the result's columns.
    """
    items = [measures] if isinstance(measures, (str, Measure)) else measures
    if not isinstance(items, Iterable):
        raise OptionTypeError(
            "`measures` must be a measure name, a Measure, or a list of them",
            option="measures",
            value=measures,
            fix=f"got {type(measures).__name__}",
        )
    out: list[Measure] = []
    for item in items:
        if isinstance(item, Measure):
            out.append(item)
        elif isinstance(item, str):
            out.extend(read_name(item))
        else:
            raise OptionTypeError(
                "`measures` must hold measure names (str) or Measure records",
                option="measures",
                value=item,
                fix=f"got {type(item).__name__}",
            )
    if not out:
        raise OptionError(
            "`measures` is empty", option="measures", value=measures, fix="name a measure"
        )
    seen: set[str] = set()
    for measure in out:
        if measure.name in seen:
            raise OptionError(
                f"measure {measure.name!r} is asked for twice",
                option="measures",
                value=measure.name,
                fix="give each measure once (the names label the results)",
            )
        seen.add(measure.name)
    return tuple(out)


def parse_measure(name: Any) -> Measure:
    """The one measure ``name`` stands for (an OptionError when it stands for several)."""
    if isinstance(name, Measure):
        return name
    found = parse_measures(name)
    if len(found) != 1:
        raise OptionError(
            f"{name!r} stands for {len(found)} measures ({', '.join(m.name for m in found)})",
            option="measures",
            value=name,
            fix="name one cutoff, e.g. " + repr(found[0].name),
        )
    return found[0]


def read_name(text: str) -> tuple[Measure, ...]:
    """The measures one name stands for, in whichever syntax it is written."""
    name = text.strip()
    found = _known(name)
    if found is not None:
        return found
    raise OptionError(
        f"unknown measure {text!r}",
        option="measures",
        value=text,
        fix=_suggestions(name),
    )


def _known(name: str) -> tuple[Measure, ...] | None:
    """The measures of ``name`` in the first syntax that knows its word; None if none does."""
    for reader in (_trec, _trec_printed, _ranx, _ir_measures):
        found = reader(name)
        if found is not None:
            return found
    return None


# -- trec_eval ------------------------------------------------------------------------------


def _trec(text: str) -> tuple[Measure, ...] | None:
    match = _TREC.fullmatch(text)
    if match is None or match["base"] not in TREC_NAMES:
        return None
    base, params = match["base"], match["params"]
    kind, cuts = TREC_NAMES[base]
    if params is None:
        values = TREC_DEFAULTS.get(base, (None,))
    elif cuts:
        values = _trec_list(text, params, "cutoffs", _INT, int)
    elif kind == "IPrec":
        values = _trec_list(text, params, "recall levels", _NUMBER, float)
    elif kind in ("RBP", "RBPResid"):
        if kind == "RBP" and _RANX_RBP.fullmatch(params):
            return None  # ranx's rbp.95 (and its trap, rbp.0.95)
        values = (_trec_p(text, params),)
    else:
        fix = (
            "pass gains as the call's `gain` option" if kind == "nDCG" else f"write {base!r} alone"
        )
        raise _refused(text, f"trec_eval's {base} takes no parameters here", fix)
    if cuts:
        found = [Measure(kind, cutoff=value) for value in values]
    else:
        found = [Measure(kind, param=value) for value in values]
    if len(found) == 1:
        return (_named(found[0], text),)
    return tuple(_named(measure, measure.trec_name()) for measure in found)


def _trec_printed(text: str) -> tuple[Measure, ...] | None:
    """trec_eval's printed names: ``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``."""
    match = _TREC_PRINTED.fullmatch(text)
    if match is None or match["base"] not in TREC_NAMES:
        return None
    base, param = match["base"], match["param"]
    kind, cuts = TREC_NAMES[base]
    if cuts and _INT.fullmatch(param):
        measure = Measure(kind, cutoff=int(param), name=text)
    elif kind == "IPrec" and _NUMBER.fullmatch(param):
        measure = Measure(kind, param=float(param), name=text)
    elif kind in ("RBP", "RBPResid") and param.startswith("p="):
        measure = Measure(kind, param=_trec_p(text, param), name=text)
    else:
        return None
    return (measure,)


def _trec_list(text: str, params: str, what: str, pattern: re.Pattern, convert) -> tuple:
    items = params.split(",")
    if not all(pattern.fullmatch(item) for item in items):
        raise _refused(text, f"its {what} must be numbers separated by commas", "e.g. P.5,10")
    values = sorted(convert(item) for item in items)
    if len(set(values)) != len(values):
        raise _refused(text, f"it lists one of its {what} twice", "give each once")
    return tuple(values)


def _trec_p(text: str, params: str) -> float:
    name, _, value = params.partition("=")
    if name != "p" or not _NUMBER.fullmatch(value):
        raise _refused(text, "its parameter must be p=<persistence>", "e.g. rbp.p=0.8")
    return float(value)


# -- ranx -----------------------------------------------------------------------------------


def _ranx(text: str) -> tuple[Measure, ...] | None:
    match = _RANX.fullmatch(text)
    if match is None or match["base"] not in RANX_NAMES:
        return None
    kind, gain = RANX_NAMES[match["base"]]
    rel = None if match["level"] is None else int(match["level"])
    sep, arg = match["sep"], match["arg"]
    if kind == "RBP":
        if arg is None or not arg.isdigit():
            raise _refused(
                text,
                "ranx reads RBP's p from the digits after the dot (rbp.95 is p = 0.95; "
                "ranx itself reads rbp.0.95 as p = 0)",
                "write rbp.95 (ranx), rbp.p=0.95 (trec_eval) or RBP(p=0.95)",
            )
        return (Measure(kind, rel=rel, param=float(f"0.{arg}"), name=text),)
    if sep is None:
        return (Measure(kind, rel=rel, gain=gain, name=text),)
    if sep != "@" or not arg.isdigit() or int(arg) < 1:
        raise _refused(
            text, "ranx's cutoff is @k with k >= 1", f"e.g. {match['base']}@10 (or no @k)"
        )
    return (Measure(kind, cutoff=int(arg), rel=rel, gain=gain, name=text),)


# -- ir_measures ----------------------------------------------------------------------------


def _ir_measures(text: str) -> tuple[Measure, ...] | None:
    match = _IR.fullmatch(text)
    base = None if match is None else match["base"]
    if base not in IR_MEASURES_NAMES and base not in IR_MEASURES_SETS:
        return None
    assert match is not None
    settings = _ir_settings(text, match["params"] or "")
    kind = IR_MEASURES_SETS.get(base) or IR_MEASURES_NAMES[base]
    at = match["at"]
    if at is not None:
        if kind == "IPrec":
            if not _NUMBER.fullmatch(at):
                raise _refused(text, "IPrec@ takes a recall level", "e.g. IPrec@0.3")
            settings["recall"] = float(at)
        elif base in IR_MEASURES_SETS or not _INT.fullmatch(at):
            raise _refused(
                text, "the cutoff after @ must be an int (set measures take none)", "e.g. P@10"
            )
        else:
            settings["cutoff"] = int(at)
    if kind == "NumRet" and "rel" in settings:  # ir_measures: NumRelRet is NumRet(rel=1)
        kind = "NumRelRet"
    param_name = KINDS[kind].param
    for key in ("p", "recall"):
        if key in settings and key != param_name:
            raise _refused(text, f"{kind} takes no {key}", f"{kind}'s settings: see the docs")
    return (
        Measure(
            kind,
            cutoff=settings.get("cutoff"),
            rel=settings.get("rel"),
            param=settings.get(param_name) if param_name else None,
            gain=settings.get("gain"),
            name=text,
        ),
    )


def _ir_settings(text: str, params: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    if re.search(r"\bgains\s*=", params):  # a dict, whose commas the split below would cut
        raise _refused(text, "gains are the call's", "pass `gain={...}` to the call")
    for item in filter(None, (part.strip() for part in params.split(","))):
        key, equals, value_text = (part.strip() for part in item.partition("="))
        if not equals or key not in _IR_KEYS:
            raise _refused(text, f"unknown setting {item!r}", f"settings are {', '.join(_IR_KEYS)}")
        try:
            value = ast.literal_eval(value_text)
        except (ValueError, SyntaxError):
            raise _refused(text, f"{key}={value_text} is not a value", "e.g. rel=2") from None
        if key == "judged_only":
            if value is not False:
                raise _refused(
                    text,
                    "judged_only is one setting for the whole call",
                    "pass `judged_only=True` to the call (trec_eval -J)",
                )
            continue
        if key == "dcg":
            gains = {"log2": "linear", "exp-log2": "exp2"}
            if value not in gains:
                raise _refused(text, f"dcg={value!r}", "dcg='log2' or dcg='exp-log2'")
            key, value = "gain", gains[value]
        settings[key] = value
    return settings


# -- errors -----------------------------------------------------------------------------------


def _named(measure: Measure, name: str) -> Measure:
    return Measure(
        measure.kind, measure.cutoff, measure.rel, measure.param, measure.gain, name=name
    )


def _refused(text: str, what: str, fix: str) -> OptionError:
    return OptionError(f"measure {text!r}: {what}", option="measures", value=text, fix=fix)


_TAIL = re.compile(r"[@.(]|-l[0-9]|_[0-9]|_p=")


def _suggestions(text: str) -> str:
    """The fix of an unknown name: the nearest valid names, with what followed the word."""
    split = _TAIL.search(text)
    base, tail = (text, "") if split is None else (text[: split.start()], text[split.start() :])
    spellings: dict[str, list[str]] = {}  # a word, lowercased -> the names spelled so
    for name in all_names():
        spellings.setdefault(name.lower(), []).append(name)
    near = difflib.get_close_matches(base.lower(), spellings, n=6, cutoff=0.5)
    valid = []
    for word in near:
        for candidate in [name + tail for name in spellings[word]] + spellings[word]:
            try:
                if _known(candidate) is None:
                    continue
            except OptionError:
                continue
            valid.append(candidate)
            break
    hint = "see the measures page for every name in each tool's syntax"
    return f"nearest: {listed(valid[:3])}; {hint}" if valid else hint
