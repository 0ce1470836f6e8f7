r"""Adjusting p-values for multiple comparisons.

For the :math:`m` p-values of a family, sorted :math:`p_{(1)} \le \dots \le p_{(m)}`:

``"bonferroni"``
    :math:`\tilde p_i = \min(1, m\,p_i)` (controls the family-wise error rate).
``"holm"``
    :math:`\tilde p_{(i)} = \max_{j \le i} \min\bigl(1, (m - j + 1)\,p_{(j)}\bigr)`
    (step-down; controls the family-wise error rate, uniformly more powerful than Bonferroni).
``"bh"``
    :math:`\tilde p_{(i)} = \min_{j \ge i} \min\bigl(1, \tfrac{m}{j}\,p_{(j)}\bigr)`
    (Benjamini-Hochberg step-up; controls the false discovery rate under independence or
    positive dependence).
``None``
    :math:`\tilde p_i = p_i`.

NaN p-values (a comparison without enough queries) are left out of the family: they stay NaN
and do not count in :math:`m`. Ties keep their input order (a stable sort), which does not
change any adjusted value.
"""

from __future__ import annotations

import numpy as np

CORRECTIONS = ("holm", "bonferroni", "bh")


def adjust(p_values: np.ndarray, method: str | None) -> np.ndarray:
    """Adjusted p-values of one family (see the module docstring for the formulas)."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    if m == 0:
        return out
    values = p[valid]
    if method is None:
        out[valid] = values
        return out
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, m * values)
        return out
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    rank = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * ranked))
    elif method == "bh":
        adjusted = np.minimum.accumulate(np.minimum(1.0, m / rank * ranked)[::-1])[::-1]
    else:
        raise ValueError(f"unknown correction={method!r}")
    result = np.empty(m)
    result[order] = adjusted
    out[valid] = result
    return out
