"""Figures of a paired comparison (matplotlib, the ``plot`` extra: ``pip install fastndcg[plot]``).

Four figures, each a function taking a :class:`~fastndcg.PairedComparison` and returning a
``matplotlib.figure.Figure`` (drawn on ``ax=`` when given):

- :func:`waterfall`: one comparison's per-query deltas, sorted (wins above zero, losses below),
  with the mean delta and its interval;
- :func:`forest`: every comparison's delta with its interval, per measure (each cutoff of
  NDCG is one), significant ones filled: the one figure of a comparison of measures;
- :func:`ndcg_at_k`: each system's mean NDCG over the cutoffs, with t intervals;
- :func:`distribution`: each system's per-query values at one cutoff (histograms and means).

Figures are made without pyplot (no window, no global state): ``fig.savefig(path)`` renders them
with matplotlib's Agg backend for PNG.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from fastndcg._compare.multitest import CORRECTION_NAMES
from fastndcg._core.options.comparing import PLOT_KINDS, compared_cutoff, parse_compare, parse_view
from fastndcg._errors import OptionError

KINDS = PLOT_KINDS
_WIN, _LOSS, _TIE = "#2e7d32", "#c62828", "#9e9e9e"
_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _figure(ax: Any, size: tuple[float, float]) -> tuple[Any, Any]:
    """The figure and axes to draw on: ``ax``'s, or a new figure (without pyplot)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(
            "plots need matplotlib: pip install 'fastndcg[plot]' (or pip install matplotlib)"
        ) from exc
    if ax is not None:
        return ax.figure, ax
    figure = Figure(figsize=size, layout="constrained")
    return figure, figure.add_subplot()


def _cutoff(k: int | None) -> str:
    return "NDCG (whole list)" if k is None else f"NDCG@{k}"


def _interval(comparison: Any) -> str:
    """The interval of the deltas, in a few words."""
    level = f"{comparison.ci:.0%}" if round(comparison.ci * 100, 9).is_integer() else comparison.ci
    kind = {"t": "t", "bootstrap": f"bootstrap {comparison.ci_method}"}.get(
        comparison.test, "sign-flip"
    )
    sided = "" if comparison.alternative == "two-sided" else " one-sided"
    return f"{level}{sided} {kind} interval"


def _row(comparison: Any, k: int | None, system: str | None, baseline: str | None) -> dict:
    system, baseline = parse_view("system", system), parse_compare("baseline", baseline)
    rows = [r for r in comparison.rows if r["cutoff"] == k]
    if system is not None:
        rows = [r for r in rows if r["system"] == system]
    if baseline is not None:
        rows = [r for r in rows if r["baseline"] == baseline]
    if not rows:
        raise OptionError(
            f"no comparison of `system={system!r}` with `baseline={baseline!r}`",
            option="system",
            value=system,
            fix="the comparisons are "
            + ", ".join(f"{r['system']} vs {r['baseline']}" for r in comparison.rows),
        )
    return rows[0]


def waterfall(
    comparison: Any,
    *,
    k: Any = ...,
    system: str | None = None,
    baseline: str | None = None,
    ax: Any = None,
) -> Any:
    """One comparison's per-query deltas (system - baseline), sorted: the "waterfall".

    Queries that the system wins stand above zero (green), those it loses below (red); ties
    lie on the axis. The dashed line is the mean delta, the band its interval.

    Parameters
    ----------
    comparison : PairedComparison
    k : int or None, optional
        The cutoff; default the first.
    system, baseline : str, optional
        The comparison (default: the first at that cutoff).
    ax : matplotlib Axes, optional
        Draw there instead of on a new figure.
    """
    k = compared_cutoff(k, comparison.cutoffs)
    row = _row(comparison, k, system, baseline)
    a, b = comparison.names.index(row["baseline"]), comparison.names.index(row["system"])
    j = comparison.cutoffs.index(k)
    va, vb = comparison.values[a, :, j], comparison.values[b, :, j]
    used = ~(np.isnan(va) | np.isnan(vb))
    d = np.sort(vb[used] - va[used])[::-1]
    figure, ax = _figure(ax, (8.0, 4.5))
    x = np.arange(d.size)
    ax.fill_between(x, d, 0.0, where=d > 0, color=_WIN, step="mid", linewidth=0, label="wins")
    ax.fill_between(x, d, 0.0, where=d < 0, color=_LOSS, step="mid", linewidth=0, label="losses")
    ax.axhline(0.0, color="black", linewidth=0.8)
    if not math.isnan(row["ci_low"]):
        ax.axhspan(row["ci_low"], row["ci_high"], color="#1f77b4", alpha=0.25, linewidth=0)
    ax.axhline(row["delta"], color="#1f77b4", linestyle="--", linewidth=1.2, label="mean delta")
    ties = row["ties"]
    if ties:
        first = int(np.count_nonzero(d > 0))
        ax.plot([first, first + ties - 1], [0, 0], color=_TIE, linewidth=3, label="ties")
    ax.set_xlim(-0.5, max(d.size - 0.5, 0.5))
    ax.set_xlabel(f"queries, sorted by delta ({d.size:,})")
    ax.set_ylabel(f"delta {_cutoff(k)} ({row['system']} - {row['baseline']})")
    ax.set_title(
        f"{row['system']} vs {row['baseline']}, {_cutoff(k)}: "
        f"{row['wins']:,} wins, {row['ties']:,} ties, {row['losses']:,} losses; "
        f"mean delta {row['delta']:+.4f}"
    )
    ax.legend(loc="upper right", frameon=False)
    return figure


def forest(comparison: Any, *, ax: Any = None) -> Any:
    """Every comparison's delta with its interval, grouped by measure (a forest plot).

    Filled markers are significant after the correction, hollow ones are not; the vertical
    line is no difference. The adjusted p-value stands at the right of each row.
    """
    rows = comparison.rows
    figure, ax = _figure(ax, (9.0, 1.2 + 0.42 * max(len(rows), 1)))
    labels, y = [], []
    position = 0.0
    for measure in comparison.measures:
        for row in (r for r in rows if r["measure"] == measure):
            labels.append(f"{row['system']} vs {row['baseline']}  {measure}")
            y.append(position)
            position += 1.0
        position += 0.6  # a gap between measures
    y = np.array(y)
    delta = np.array([r["delta"] for r in rows], dtype=float)
    low = np.array([r["ci_low"] for r in rows], dtype=float)
    high = np.array([r["ci_high"] for r in rows], dtype=float)
    significant = np.array([bool(r["significant"]) for r in rows])
    colors = [_WIN if d > 0 else _LOSS if d < 0 else _TIE for d in delta]
    finite = np.concatenate([low[np.isfinite(low)], high[np.isfinite(high)], delta, [0.0]])
    finite = finite[np.isfinite(finite)]
    span = float(finite.max() - finite.min()) or 1.0
    left, right = float(finite.min()) - 0.05 * span, float(finite.max()) + 0.05 * span
    ax.set_xlim(left, float(finite.max()) + 0.3 * span)
    ax.axvline(0.0, color="black", linewidth=0.8)
    # an unbounded side (one-sided, or too few queries to reject any shift) runs to an arrow
    ax.hlines(y, np.maximum(low, left), np.minimum(high, right), colors=colors, linewidth=2)
    for yi, lo, hi, c in zip(y, low, high, colors, strict=True):
        for end, arrow in ((left, "<"), (right, ">")):
            if np.isinf(lo if arrow == "<" else hi):
                ax.plot([end], [yi], arrow, color=c, markersize=6)
    for yi, d, c, s in zip(y, delta, colors, significant, strict=True):
        ax.plot([d], [yi], "o", color=c, markerfacecolor=c if s else "white", markersize=7)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    right += 0.02 * span
    for yi, row in zip(y, rows, strict=True):
        p = row["p_adjusted"]
        text = "p adj. n/a" if p is None or math.isnan(p) else f"p adj. {p:.2g}"
        ax.text(right, yi, text + (" *" if row["significant"] else ""), va="center", fontsize=8)
    ax.set_xlabel(f"delta (system - baseline) with its {_interval(comparison)}")
    correction = CORRECTION_NAMES[comparison.correction]
    ax.set_title(
        f"{comparison.test} test, {correction} correction, alpha {comparison.alpha:g}; "
        "filled: significant",
        fontsize=10,
    )
    return figure


def ndcg_at_k(comparison: Any, *, ax: Any = None) -> Any:
    """Each system's mean NDCG over the cutoffs, with its t interval (the whole list last)."""
    cutoffs = list(comparison.cutoffs)
    order = sorted(
        range(len(cutoffs)), key=lambda i: math.inf if cutoffs[i] is None else cutoffs[i]
    )
    figure, ax = _figure(ax, (7.0, 4.5))
    x = np.arange(len(order))
    width = 0.08 * min(len(comparison.names), 5) / max(len(comparison.names), 1)
    for s, name in enumerate(comparison.names):
        found = {row["cutoff"]: row for row in comparison.systems if row["system"] == name}
        rows = [found[cutoffs[i]] for i in order]
        mean = np.array([r["mean"] for r in rows], dtype=float)
        low = np.array([r["ci_low"] for r in rows], dtype=float)
        high = np.array([r["ci_high"] for r in rows], dtype=float)
        offset = (s - (len(comparison.names) - 1) / 2) * width
        color = _COLORS[s % len(_COLORS)]
        ax.errorbar(
            x + offset,
            mean,
            yerr=np.vstack([mean - low, high - mean]),
            marker="o",
            capsize=3,
            color=color,
            label=name,
        )
    ax.set_xticks(x, ["all" if cutoffs[i] is None else str(cutoffs[i]) for i in order])
    ax.set_xlabel("cutoff k")
    ax.set_ylabel("mean NDCG@k")
    level = f"{comparison.ci:.0%}" if round(comparison.ci * 100, 9).is_integer() else comparison.ci
    ax.set_title(f"mean NDCG@k per system ({level} t intervals)")
    ax.legend(frameon=False)
    ax.grid(axis="y", alpha=0.3)
    return figure


def distribution(comparison: Any, *, k: Any = ..., bins: int = 10, ax: Any = None) -> Any:
    """Each system's per-query values at cutoff ``k``: histograms side by side, means dashed.

    ``bins`` equal bins over [0, 1] (the last one closed); each bin holds one bar per system.
    """
    k = compared_cutoff(k, comparison.cutoffs)
    j = comparison.cutoffs.index(k)
    figure, ax = _figure(ax, (7.5, 4.5))
    edges = np.linspace(0.0, 1.0, bins + 1)
    m = len(comparison.names)
    width = (edges[1] - edges[0]) * 0.85 / m
    for s, name in enumerate(comparison.names):
        values = comparison.values[s, :, j]
        values = values[~np.isnan(values)]
        color = _COLORS[s % len(_COLORS)]
        counts, _ = np.histogram(np.clip(values, 0.0, 1.0), bins=edges)
        left = edges[:-1] + (edges[1] - edges[0]) * 0.075 + s * width
        label = f"{name} (n={values.size:,}, mean {values.mean():.4f})" if values.size else name
        ax.bar(left, counts, width=width, align="edge", color=color, label=label)
        if values.size:
            ax.axvline(float(values.mean()), color=color, linestyle="--", linewidth=1.2)
    ax.set_xlim(0.0, 1.0)
    ax.set_xticks(edges)
    ax.set_xlabel(f"per-query {_cutoff(k)} (bins of {1 / bins:g})")
    ax.set_ylabel("queries")
    ax.set_title(f"per-query {_cutoff(k)} per system (dashed: means)")
    ax.legend(frameon=False, loc="upper left")
    return figure


def draw(comparison: Any, kind: str, path: Any = None, **options: Any) -> Any:
    """Draw figure ``kind`` (one of :data:`KINDS`); write it to ``path`` when given."""
    kind = parse_view("kind", kind)
    if comparison.of_measures and kind != "forest":
        raise OptionError(
            f"the {kind!r} plot shows NDCG's cutoffs; this comparison is of measures",
            option="kind",
            value=kind,
            fix="draw kind='forest' (every measure's comparisons), or compare NDCG results",
        )
    function = {
        "forest": forest,
        "waterfall": waterfall,
        "ndcg_at_k": ndcg_at_k,
        "distribution": distribution,
    }[kind]
    dpi = options.pop("dpi", 120)
    figure = function(comparison, **options)
    if path is not None:
        figure.savefig(Path(path), dpi=dpi)
    return figure


__all__ = ["KINDS", "distribution", "draw", "forest", "ndcg_at_k", "waterfall"]
