"""One measure request: :class:`Measure`, what any name of it is read into."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from fastndcg._core.measures.kinds import GAINS, KINDS, TREC_NAME_OF
from fastndcg._errors import OptionError, OptionTypeError

_PARAM_RANGES = {"p": (0.0, 1.0, False), "recall": (0.0, 1.0, True)}  # low, high, inclusive


@dataclass(frozen=True)
class Measure:
    """A measure as asked for: its kind, cutoff, relevance level, parameter and name.

    Every syntax (ir_measures' ``P(rel=2)@10``, trec_eval's ``P.10`` and ``P_10``, ranx's
    ``precision@10-l2``) reads into this record (:func:`fastndcg._core.measures.parse_measures`);
    what the tools then compute for it is their definitions' business
    (:mod:`fastndcg._core.measures.definitions`).

    Attributes
    ----------
    kind : str
        The measure's canonical name (see :data:`~fastndcg._core.measures.kinds.KINDS`).
    cutoff : int or None
        The top ``cutoff`` documents are read; None: the whole ranking.
    rel : int or None
        The relevance level of this measure (a grade at or above it is relevant); None: the
        call's (1 unless it says otherwise).
    param : float or None
        RBP's persistence ``p`` or IPrec's recall level; None: the definition's default.
    gain : str or None
        nDCG's and DCG's gain when the name spells one (``"linear"`` or ``"exp2"``); None: the
        call's.
    name : str
        The name as the user typed it (or, made from the fields, :attr:`canonical`).
    """

    kind: str
    cutoff: int | None = None
    rel: int | None = None
    param: float | None = None
    gain: str | None = None
    name: str = ""

    def __post_init__(self) -> None:
        kind = KINDS.get(self.kind)
        shown = self.name or self.kind
        if kind is None:
            raise OptionError(
                f"unknown measure kind {self.kind!r}",
                option="measures",
                value=self.kind,
                fix=f"kinds are {', '.join(KINDS)}",
            )
        if self.cutoff is not None:
            if not kind.cutoff:
                raise _bad(shown, f"{self.kind} takes no cutoff")
            _check_int(shown, "cutoff", self.cutoff, 1)
            object.__setattr__(self, "cutoff", int(self.cutoff))
        if self.rel is not None:
            _check_int(shown, "relevance level", self.rel, 0)
            object.__setattr__(self, "rel", int(self.rel))
        if self.param is not None:
            if kind.param is None:
                raise _bad(shown, f"{self.kind} takes no parameter")
            low, high, inclusive = _PARAM_RANGES[kind.param]
            value = self.param
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise _bad(shown, f"{kind.param} must be a number", type_error=True)
            inside = low <= value <= high if inclusive else low < value < high
            if not (math.isfinite(value) and inside):
                interval = f"[{low:g}, {high:g}]" if inclusive else f"({low:g}, {high:g})"
                raise _bad(shown, f"{kind.param}={value!r} is outside {interval}")
            object.__setattr__(self, "param", float(value))
        elif kind.param == "recall":
            raise _bad(shown, "IPrec needs a recall level, e.g. IPrec@0.3")
        if self.gain is not None and (self.kind not in ("nDCG", "DCG") or self.gain not in GAINS):
            raise _bad(shown, f"gain={self.gain!r}: only nDCG and DCG take one ('linear', 'exp2')")
        if not self.name:
            object.__setattr__(self, "name", self.canonical)

    @property
    def canonical(self) -> str:
        """The measure in ir_measures' syntax with every setting: ``P(rel=2)@10``."""
        settings = []
        if self.rel is not None:
            settings.append(f"rel={self.rel}")
        if self.param is not None and self.kind != "IPrec":
            settings.append(f"p={self.param:g}")
        if self.gain is not None:
            settings.append(f"gain={self.gain!r}")
        text = self.kind + (f"({','.join(settings)})" if settings else "")
        if self.kind == "IPrec":
            return f"{text}@{self.param:g}"
        return text if self.cutoff is None else f"{text}@{self.cutoff}"

    def trec_name(self) -> str:
        """The name trec_eval prints for this measure: ``P_10``, ``map``, ``iprec_at_recall_0.30``.

        A measure trec_eval lacks is named in its style from the kind (``ERR_20``,
        ``Judged_10``). The relevance level and the gain are not part of trec_eval's names
        (its ``-l`` is one for all measures).
        """
        cut = self.cutoff is not None
        name = TREC_NAME_OF.get((self.kind, cut))
        if name is None:  # trec_eval lacks it: its naming, on our kind
            name = self.kind + (f"_{self.cutoff}" if cut else "")
        elif cut:
            name = f"{name}_{self.cutoff}"
        if self.param is None:
            return name
        if self.kind == "IPrec":
            return f"{name}_{self.param:3.2f}"
        return f"{name}_p={self.param:g}"

    def __str__(self) -> str:
        return self.name


def _bad(name: str, what: str, type_error: bool = False) -> OptionError:
    error = OptionTypeError if type_error else OptionError
    return error(
        f"measure {name!r}: {what}",
        option="measures",
        value=name,
        fix="see the measures page for each measure's settings",
    )


def _check_int(name: str, what: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _bad(name, f"the {what} must be an int, got {value!r}", type_error=True)
    if value < low:
        raise _bad(name, f"the {what} must be >= {low}, got {value!r}")
