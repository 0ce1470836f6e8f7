"""Draw the figures of the README's comparison example into docs/compare/ (needs matplotlib).

Usage::

    python scripts/compare_figures.py [--out docs/compare]

The data are the README's: three rankers' scores on the same 500 judged queries of 20 rows.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa

import fastndcg


def example_table() -> pa.Table:
    rng = np.random.default_rng(7)
    qid = np.repeat(np.arange(500), 20)
    label = rng.choice(4, size=qid.size, p=[0.6, 0.2, 0.12, 0.08])
    return pa.table(
        {
            "qid": qid,
            "label": label,
            "bm25": label + rng.normal(0, 2.0, qid.size),
            "dense": label + rng.normal(0, 1.6, qid.size),
            "hybrid": label + rng.normal(0, 1.95, qid.size),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/compare"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    comparison = fastndcg.compare_table(
        example_table(),
        grade="label",
        scores=["bm25", "dense", "hybrid"],
        baseline="bm25",
        k=[1, 3, 5, 10, None],
    )
    comparison.plot("forest", args.out / "forest.png")
    comparison.plot("waterfall", args.out / "waterfall.png", system="dense", k=10)
    comparison.plot("ndcg_at_k", args.out / "ndcg_at_k.png")
    comparison.plot("distribution", args.out / "distribution.png", k=10)
    print(f"wrote {', '.join(sorted(p.name for p in args.out.glob('*.png')))} to {args.out}")


if __name__ == "__main__":
    main()
