r"""Adjusting p-values for multiple comparisons, as ``statsmodels.stats.multitest.multipletests``.

For the :math:`m` p-values of a family, sorted :math:`p_{(1)} \le \dots \le p_{(m)}`, every
adjusted value capped at 1:

``"bonferroni"``
    :math:`\tilde p_i = m\,p_i` (controls the family-wise error rate under any dependence).
``"sidak"``
    :math:`\tilde p_i = 1 - (1 - p_i)^m` (family-wise, exact for independent tests, valid
    under positive dependence).
``"holm"``
    :math:`\tilde p_{(i)} = \max_{j \le i} (m - j + 1)\,p_{(j)}` (step-down Bonferroni; any
    dependence; uniformly more powerful than Bonferroni).
``"holm-sidak"``
    :math:`\tilde p_{(i)} = \max_{j \le i} 1 - (1 - p_{(j)})^{m - j + 1}` (step-down Šidák).
``"hommel"``
    Hommel's closed Simes procedure (family-wise under positive dependence; at least as
    powerful as Holm): for :math:`j = m, \dots, 2`, with
    :math:`c_j = \min_{1 \le k \le j} j\,p_{(m - j + k)} / k` over the largest :math:`j`
    p-values, those :math:`j` are raised to at least :math:`c_j` and each smaller one to at
    least :math:`\min(j\,p_{(i)}, c_j)`.
``"bh"``
    :math:`\tilde p_{(i)} = \min_{j \ge i} \tfrac{m}{j}\,p_{(j)}` (Benjamini-Hochberg step-up;
    controls the false discovery rate under independence or positive dependence).
``"by"``
    Benjamini-Yekutieli: BH times :math:`c_m = \sum_{k=1}^m 1/k` (false discovery rate under
    any dependence, such as the comparisons of several systems with one baseline, which
    share the baseline's values).
``None``
    :math:`\tilde p_i = p_i`.

NaN p-values (a comparison without enough queries) are left out of the family: they stay NaN
and do not count in :math:`m`. Ties keep their input order (a stable sort), which does not
change any adjusted value.
"""

from __future__ import annotations

import numpy as np

# the corrections' names, as tables and captions print them
CORRECTION_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "sidak": "Sidak",
    "holm-sidak": "Holm-Sidak",
    "hommel": "Hommel",
    "bh": "Benjamini-Hochberg",
    "by": "Benjamini-Yekutieli",
    None: "no",
}


def _sidak(p: np.ndarray, times: np.ndarray | int) -> np.ndarray:
    """:math:`1 - (1 - p)^{times}`, accurate for small p."""
    return -np.expm1(times * np.log1p(-p))


def _hommel(ranked: np.ndarray) -> np.ndarray:
    """Hommel's adjusted values of sorted p-values (see the module docstring)."""
    m = ranked.size
    adjusted = ranked.copy()
    for j in range(m, 1, -1):
        c = np.min(j * ranked[m - j :] / np.arange(1, j + 1))
        adjusted[m - j :] = np.maximum(adjusted[m - j :], c)
        adjusted[: m - j] = np.maximum(adjusted[: m - j], np.minimum(j * ranked[: m - j], c))
    return adjusted


def _step_up(ranked: np.ndarray, factor: float) -> np.ndarray:
    """Benjamini-Hochberg's step-up values of sorted p-values, times ``factor``."""
    m = ranked.size
    raw = factor * m / np.arange(1, m + 1) * ranked
    return np.minimum.accumulate(raw[::-1])[::-1]


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
    if method == "sidak":
        out[valid] = _sidak(values, m)
        return out
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    steps = np.arange(m, 0, -1)  # m - j + 1 for the j-th smallest
    if method == "holm":
        adjusted = np.maximum.accumulate(steps * ranked)
    elif method == "holm-sidak":
        adjusted = np.maximum.accumulate(_sidak(ranked, steps))
    elif method == "hommel":
        adjusted = _hommel(ranked)
    elif method == "bh":
        adjusted = _step_up(ranked, 1.0)
    elif method == "by":
        adjusted = _step_up(ranked, float(np.sum(1.0 / np.arange(1, m + 1))))
    else:
        raise ValueError(f"unknown correction={method!r}")
    result = np.empty(m)
    result[order] = np.minimum(1.0, adjusted)
    out[valid] = result
    return out
