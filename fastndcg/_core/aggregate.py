r"""How per-query values become one number per cutoff: weights, means and tools' own rules.

- ``"mean"``: :math:`\sum_q w_q \mathrm{NDCG}_q / \sum_q w_q`; ``"ratio"``:
  :math:`\sum_q w_q \mathrm{DCG}_q / \sum_q w_q \mathrm{IDCG}_q`, over the queries not
  skipped (see :meth:`fastndcg._core.definition.Definition.finish`);
- the tools' rules (``"lightgbm"``, ``"xgboost"``, ``"keras_rs"``, see :func:`tool_mean`) and
  the rounding of per-query values as a tool that prints them does (:func:`round_half_even`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fastndcg._core.coerce import from_torch
from fastndcg._errors import InputError, InputTypeError, OptionError

_XGBOOST_EPS = 1e-6  # XGBoost's kRtEps: a mean above 1 + this is an error, up to it capped at 1


def query_weights(weights: Any, n_queries: int) -> np.ndarray | None:
    """Check per-query weights: finite, >= 0, one per query."""
    if weights is None:
        return None
    if isinstance(weights, str):
        raise InputTypeError(
            "weights must hold one number per query (in result order)",
            value=weights,
            fix=f"got the string {weights!r}: a column of per-row weights is not taken",
        )
    w = np.asarray(from_torch(weights, "weights"))
    if w.dtype.kind not in "biuf":
        raise InputTypeError("weights must be numeric", value=w.dtype, fix=f"got dtype {w.dtype}")
    w = w.astype(np.float64)
    if w.shape != (n_queries,):
        raise InputError(
            "weights must hold one weight per query",
            value=w.shape,
            fix=f"{n_queries} queries, weights of shape {w.shape}",
            joiner=": ",
        )
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        raise InputError(
            "weights must be finite and >= 0",
            value=float(w[bad[0]]),
            where=f"weights[{bad[0]}]",
            fix=f"weights[{bad[0]}] = {w[bad[0]]}",
        )
    return w


def relative_weights(weights: np.ndarray) -> np.ndarray:
    """``weights`` scaled exactly (by a power of two) so that the largest is in [0.5, 1).

    For aggregates that depend only on the weights' ratios: no sum or product of the scaled
    weights overflows, and subnormal weights become normal numbers.
    """
    top = float(weights.max()) if weights.size else 0.0
    return np.ldexp(weights, -math.frexp(top)[1]) if top > 0 else weights


def round_half_even(values: np.ndarray, decimals: int) -> np.ndarray:
    """``values`` rounded to ``decimals`` places as ``printf("%.{decimals}f")`` rounds them.

    ``numpy.round`` scales by a power of ten first, which can push a value across a rounding
    boundary; the few values whose scaled fraction lies near one half are rounded through
    Python's correctly rounded formatting instead (as are all values when the scaling is not
    exact). NaN stays NaN.
    """
    if decimals >= _FINER_THAN_FLOAT64:
        return values.copy()
    # np.round is right when 10**decimals is exact (up to 10**22) and the scaled value keeps
    # a fraction (below 2**52); otherwise its scaling can move the value by an ulp, or
    # overflow: those values are formatted too
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.round(values, decimals)
        scaled = np.abs(values) * np.float64(10.0) ** decimals
        near = np.isfinite(values) & (
            (decimals > 22) | ~(scaled < 2.0**52) | (np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6)
        )
    for index in zip(*np.nonzero(near), strict=True):
        out[index] = float(f"{values[index]:.{decimals}f}")
    return out


# Rounding to this many decimals or more changes no float64: every float64 is a multiple of
# 2**-1074 (about 4.9e-324), so it lies within half a unit of the 324th decimal of itself.
_FINER_THAN_FLOAT64 = 324


def tool_mean(
    rule: str,
    per_query: np.ndarray,
    idcg: np.ndarray,
    weights: np.ndarray | None,
    list_weights: np.ndarray | None = None,
) -> np.ndarray:
    """The aggregate per cutoff under ``rule`` (``"mean"`` or a tool aggregate, see module doc).

    Queries whose value is NaN (skipped) are left out of numerator and denominator.
    """
    n_queries, n_cutoffs = per_query.shape
    w = np.ones(n_queries) if weights is None else weights
    if rule in ("mean", "keras_rs"):  # only the weights' ratios matter
        w = relative_weights(w)
    else:
        with np.errstate(over="ignore"):  # reported below
            held = w.astype(np.float32) if rule == "xgboost" else w  # XGBoost holds them so
            total = held.sum(dtype=np.float64)
        if not np.isfinite(total):
            raise InputError(
                f"weights beyond the {held.dtype} range (largest {w.max():g}, sum {total:g}); "
                f"`aggregate={rule!r}` adds queries without relevant items unweighted, so the "
                "weights' scale matters",
                value=float(w.max()),
                fix="scale them down",
                joiner=": ",
            )
    counted = ~np.isnan(per_query)
    values = np.where(counted, per_query, 0.0)
    if rule == "keras_rs":
        lw = list_weights if list_weights is not None else keras_list_weights(w, idcg[:, 0] > 0)
        lw = np.where(counted, lw[:, None], 0.0)
        total = lw.sum(axis=0)
        out = np.zeros(n_cutoffs)
        np.divide((lw * values).sum(axis=0), total, out=out, where=total > 0)
        return out
    if rule == "xgboost":  # XGBoost holds group weights as float32
        w = w.astype(np.float32).astype(np.float64)
    wc = np.where(counted, w[:, None], 0.0)
    denominator = wc.sum(axis=0)
    if rule == "mean":
        numerator = (wc * values).sum(axis=0)
    else:  # lightgbm, xgboost: queries without relevant items add their value unweighted
        empty = idcg <= 0
        numerator = np.where(empty, values, wc * values).sum(axis=0)
    mean = np.full(n_cutoffs, np.nan)
    np.divide(numerator, denominator, out=mean, where=denominator > 0)
    if rule != "xgboost":
        return mean
    over = np.flatnonzero(mean > 1.0 + _XGBOOST_EPS)
    if over.size:
        raise OptionError(
            f"`aggregate='xgboost'`: the weighted mean is {mean[over[0]]:.6g} > 1 (queries "
            "without relevant items add their value unweighted), and XGBoost stops with 'Invalid "
            "output score, might be caused by invalid query group weight'",
            option="aggregate",
            value="xgboost",
            fix="use `aggregate='mean'`",
        )
    return np.minimum(mean, 1.0)


def keras_list_weights(
    weights: np.ndarray, relevant: np.ndarray, weighted_relevance: np.ndarray | None = None
) -> np.ndarray:
    r"""keras-rs's per-list weights (``get_list_weights``).

    ``weights`` are per list (:math:`\sum_i w_i` where the caller has item weights),
    ``relevant`` says which lists have gain, and ``weighted_relevance`` is
    :math:`\sum_i w_i G_i / \sum_i G_i` per list (by default the list weight itself).
    """
    base = weights if weighted_relevance is None else weighted_relevance
    has_weight = weights > 0
    useful = has_weight & relevant
    count = int(useful.sum())
    average = float(np.where(relevant, base, 0.0).sum()) / count if count else 1.0
    return np.where(has_weight, np.where(relevant, base, average), 0.0)
