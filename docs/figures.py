"""The user guide's figures, drawn with matplotlib from fastndcg's own numbers.

The documentation build calls :func:`draw_all` (``docs/_ext/fastndcg_docs.py``); run
``python docs/figures.py OUT_DIR`` to draw them alone. Every figure is computed when it is
drawn: the discount and gain curves from their formulas, the tie rules and the definitions of
other tools by fastndcg itself (the NumPy backend, which needs no compilation).
"""

from __future__ import annotations

import functools
import itertools
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RAG_QRELS = ROOT / "tests" / "data" / "real" / "trec_eval_test" / "qrels.comment.test"
RAG_RUN = ROOT / "tests" / "data" / "real" / "trec_eval_test" / "results.comment.test"
COLOURS = ["#1f5fa6", "#d9742b", "#3a9a5b", "#b23a48", "#7a5aa6", "#6b6b6b"]

# the list of the ties figure: ranks 2-4 tie, and the tie group straddles k = 3
TIES_GRADES = np.array([1, 3, 0, 2, 0])
TIES_SCORES = np.array([0.9, 0.7, 0.7, 0.7, 0.3])
TIES_K = 3


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "savefig.dpi": 150,
        }
    )
    return plt


def discounts_and_gains(path: Path) -> None:
    """The three named discounts over ranks 1-20, and the two named gains over grades 0-4."""
    plt = _pyplot()
    ranks = np.arange(1, 21)
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
    curves = {
        '"log2": 1 / log2(r + 1)': 1 / np.log2(ranks + 1),
        '"jarvelin": 1, then 1 / log2(r)': np.r_[1.0, 1 / np.log2(ranks[1:])],
        '"reciprocal": 1 / r': 1 / ranks,
    }
    for colour, (label, values) in zip(COLOURS, curves.items(), strict=False):
        left.plot(ranks, values, marker="o", markersize=3, color=colour, label=label)
    left.set(xlabel="rank r", ylabel="discount D(r)", title="Discounts", xticks=[1, 5, 10, 15, 20])
    left.legend(frameon=False)
    grades = np.arange(5)
    width = 0.38
    right.bar(grades - width / 2, 2.0**grades - 1, width, color=COLOURS[0], label='"exp2": 2^g - 1')
    right.bar(grades + width / 2, grades, width, color=COLOURS[1], label='"linear": g')
    right.set(xlabel="grade g", ylabel="gain G(g)", title="Gains", xticks=grades)
    right.legend(frameon=False)
    figure.savefig(path)
    plt.close(figure)


def tie_rules(path: Path) -> None:
    """NDCG@3 of one list under each tie rule, beside every order of its tied items."""
    import fastndcg

    plt = _pyplot()
    options = dict(k=TIES_K, backend="numpy")
    rules = ["average", "stable", "pessimistic", "optimistic"]
    values = [
        float(fastndcg.ndcg(TIES_GRADES, TIES_SCORES, ties=rule, **options)) for rule in rules
    ]
    # every order of the tied items (ranks 2-4), each scored as a ranked list
    tied = [1, 2, 3]
    orders = []
    for order in itertools.permutations(tied):
        ranked = TIES_GRADES[[0, *order, 4]]
        orders.append(float(fastndcg.ndcg(ranked, None, **options)))
    figure, axes = plt.subplots(figsize=(8, 3.4), layout="constrained")
    positions = np.arange(len(rules))
    bars = axes.bar(positions, values, 0.6, color=COLOURS[: len(rules)])
    axes.bar_label(bars, fmt="%.4f", padding=2)
    spread = len(rules) + 0.4 + np.linspace(-0.25, 0.25, len(orders))
    axes.scatter(spread, orders, color=COLOURS[5], zorder=3, s=18)
    axes.hlines(np.mean(orders), spread[0], spread[-1], color=COLOURS[0], linestyle="--")
    axes.annotate(
        "their mean",
        (spread[-1], np.mean(orders)),
        xytext=(6, 0),
        textcoords="offset points",
        va="center",
        color=COLOURS[0],
    )
    axes.set_xticks(
        [*positions, len(rules) + 0.4],
        [f'ties=\n"{rule}"' for rule in rules] + ["the 6 orders of\nthe tied items"],
    )
    axes.set_xlim(-0.6, len(rules) + 1.2)
    axes.set(ylabel=f"NDCG@{TIES_K}", ylim=(0, 1.05))
    axes.set_title(
        f"grades {TIES_GRADES.tolist()}, scores {TIES_SCORES.tolist()}: ranks 2-4 tie",
        fontsize=10,
    )
    figure.savefig(path)
    plt.close(figure)


# the definitions of the tool-definitions figure, in the order it draws them
TOOL_DEFINITIONS = {
    "fastndcg's defaults\n(gain exp2, zero_idcg skip)": {},
    'gain="linear"': {"gain": "linear"},
    'gain="linear", zero_idcg="zero"': {"gain": "linear", "zero_idcg": "zero"},
    'preset="trec_eval"': {"preset": "trec_eval"},
    'preset="gdeval"': {"preset": "gdeval"},
    'defaults, ideal="recall"\n(retrieved documents only)': {"ideal": "recall"},
}


def tool_definition_means() -> dict[str, float]:
    """Mean NDCG@10 of the TREC 2024 RAG run under each of :data:`TOOL_DEFINITIONS`."""
    import fastndcg

    return {
        label: float(fastndcg.ndcg_run(RAG_QRELS, RAG_RUN, k=10, backend="numpy", **options))
        for label, options in TOOL_DEFINITIONS.items()
    }


def tool_definitions(path: Path) -> None:
    """Mean NDCG@10 of one TREC RAG 2024 run under fastndcg's defaults and the tools' presets."""
    plt = _pyplot()
    means = tool_definition_means()
    figure, axes = plt.subplots(figsize=(8, 3.6), layout="constrained")
    positions = np.arange(len(means))[::-1]
    bars = axes.barh(positions, list(means.values()), color=COLOURS[0], height=0.6)
    bars[3].set_color(COLOURS[1])
    axes.bar_label(bars, fmt="%.4f", padding=3)
    axes.set_yticks(positions, list(means))
    axes.set(xlabel="mean NDCG@10 over 31 queries", xlim=(0, 1))
    axes.set_title("One TREC 2024 RAG run, the same judgments, six definitions", fontsize=10)
    figure.savefig(path)
    plt.close(figure)


@functools.cache
def example_comparison():
    """The comparing-runs page's example: three rankers' scores on the same judged rows."""
    import pyarrow as pa

    import fastndcg

    rng = np.random.default_rng(7)
    qid = np.repeat(np.arange(500), 20)
    label = rng.choice(4, size=qid.size, p=[0.6, 0.2, 0.12, 0.08])
    table = pa.table(
        {
            "qid": qid,
            "label": label,
            "bm25": label + rng.normal(0, 2.0, qid.size),
            "dense": label + rng.normal(0, 1.6, qid.size),
            "hybrid": label + rng.normal(0, 1.95, qid.size),
        }
    )
    return fastndcg.compare_table(
        table,
        grade="label",
        scores=["bm25", "dense", "hybrid"],
        baseline="bm25",
        k=[1, 3, 5, 10, None],
        backend="numpy",
    )


def comparison_plot(kind: str, **options):
    """A drawing of :func:`example_comparison` by ``PairedComparison.plot(kind)``."""

    def draw(path: Path) -> None:
        plt = _pyplot()
        example_comparison().plot(kind, path, **options)
        plt.close("all")

    return draw


FIGURES = {
    "discounts-and-gains.png": discounts_and_gains,
    "tie-rules.png": tie_rules,
    "tool-definitions.png": tool_definitions,
    "compare-forest.png": comparison_plot("forest"),
    "compare-waterfall.png": comparison_plot("waterfall", system="dense", k=10),
    "compare-ndcg-at-k.png": comparison_plot("ndcg_at_k"),
    "compare-distribution.png": comparison_plot("distribution", k=10),
}


def draw_all(out: Path) -> list[Path]:
    """Draw every figure into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, draw in FIGURES.items():
        draw(out / name)
        paths.append(out / name)
    return paths


if __name__ == "__main__":
    for drawn in draw_all(Path(sys.argv[1] if len(sys.argv) > 1 else "figures")):
        print(drawn)
