"""The words of the options: every accepted name of every choice, and how a bad one is refused.

Data-independent and dependency-free: the option table (:mod:`fastndcg._core.options`), the
specification parsers (:mod:`fastndcg._core.specs`) and the command line all read these.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fastndcg._contract import codes as C
from fastndcg._errors import OptionError

TIES = {
    "average": C.TIE_AVERAGE,
    "stable": C.TIE_STABLE,
    "pessimistic": C.TIE_PESSIMISTIC,
    "optimistic": C.TIE_OPTIMISTIC,
    "random": C.TIE_RANDOM,
}
# Tie rules that need a per-row key from the caller (e.g. document ids for TREC runs).
KEYED_TIES = ("docid_desc",)
IDEALS = {
    "recall": C.IDEAL_RECALL,
    "local": C.IDEAL_LOCAL,
    "global": C.IDEAL_GLOBAL,
    "max": C.IDEAL_MAX,
}
GAIN_NAMES = ("exp2", "linear")
DISCOUNT_NAMES = ("log2", "jarvelin", "reciprocal")
ZERO_IDCG = ("skip", "zero", "one", "error")
AGGREGATES = ("mean", "ratio")
TOOL_AGGREGATES = ("lightgbm", "xgboost", "keras_rs")
# Precision scores are held in before ranking; "float32" reproduces tools that store them so.
SCORE_DTYPES = ("float64", "float32")
MISSING = ("zero", "skip", "error")  # judged queries absent from a TREC run
GROUPINGS = ("stream", "memory")  # how ndcg_parquet groups rows into queries
ENGINES = ("dask", "spark")  # where fastndcg.dask / fastndcg.spark run
VALIDATIONS = ("ranges", "exact")  # how colocated=True is checked there
FORMATS = ("table", "json", "csv")  # the command's output formats
# paired comparisons (fastndcg.compare); other tools' names for the same choices beside them
TESTS = ("randomization", "t", "bootstrap", "wilcoxon")
TEST_ALIASES = {"student": "t", "fisher": "randomization"}  # ranx's names
ALTERNATIVES = ("two-sided", "greater", "less")
CI_METHODS = ("percentile", "basic", "bca")  # scipy.stats.bootstrap's methods
ZERO_METHODS = ("wilcox", "pratt", "zsplit")  # scipy.stats.wilcoxon's
CORRECTIONS = ("holm", "bonferroni", "bh", "by", "sidak", "holm-sidak", "hommel")  # or None
CORRECTION_ALIASES = {"fdr_bh": "bh", "fdr_by": "by"}  # statsmodels' multipletests names
PAIRING = ("error", "zero", "intersection")  # queries some systems lack
COMPARE_FORMATS = ("table", "json", "csv", "markdown", "latex")  # fastndcg compare's formats


def plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it holds (for readable messages); others unchanged."""
    return value.item() if isinstance(value, np.generic) else value


def listed(values: Sequence[Any]) -> str:
    """Values as a message lists them: ```'a'`, `'b'```, each spelled by the front end."""
    return ", ".join(f"`{value!r}`" for value in values)


def choose_named(
    name: str, value: Any, valid: Sequence[str], aliases: Mapping[str, str], also: str = ""
) -> str:
    """The name ``value`` stands for: one of ``valid``, or what an alias in ``aliases`` means.

    An unknown name is an OptionError listing the valid names and the aliases, and the nearest
    ones to what was given (:func:`difflib.get_close_matches`, case ignored).
    """
    if isinstance(value, str) and value in aliases:
        return aliases[value]
    if not isinstance(value, str) or value in valid:
        return choose(name, value, valid, also)
    known = [*valid, *aliases]
    lowered = {v.lower(): v for v in reversed(known)}  # a valid name before its alias
    nearest = [lowered[v] for v in difflib.get_close_matches(value.lower(), lowered, n=3)]
    fix = f"valid values are {listed(valid)}"
    fix += f" (aliases: {listed(list(aliases))})" if aliases else ""
    fix += f", or {also}" if also else ""
    fix += f"; nearest: {listed(nearest)}" if nearest else ""
    raise OptionError(f"unknown `{name}={value!r}`", option=name, value=value, fix=fix)


def choose(name: str, value: Any, valid: Sequence[str], also: str = "") -> str:
    """Return ``value`` if it is one of ``valid``; otherwise an OptionError listing them.

    ``also`` names further accepted forms that are not strings (e.g. "a callable").
    """
    if isinstance(value, str) and value in valid:
        return value
    raise OptionError(
        f"unknown `{name}={value!r}`",
        option=name,
        value=value,
        fix=f"valid values are {listed(valid)}" + (f", or {also}" if also else ""),
    )
