"""The main job on a generated dataset: 1,000,000 queries, NDCG@1,3,5,10, with timings."""

from __future__ import annotations

import argparse
import time

import numpy as np

import fastndcg
from fastndcg.synthetic import make_synthetic


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    start = time.perf_counter()
    data = make_synthetic(args.queries, seed=args.seed)
    lengths = np.diff(data.offsets)
    print(
        f"generated {data.n_queries:,} queries, {data.n_rows:,} rows "
        f"(list length 1..{lengths.max()}, mean {lengths.mean():.1f}, median "
        f"{np.median(lengths):.0f}; grades 0..4 int8, scores float32) "
        f"in {time.perf_counter() - start:.1f} s"
    )

    start = time.perf_counter()
    fastndcg.ndcg([1, 0], [0.5, 0.25], k=[1, 3])  # compile, or load the compile cache
    print(
        f"backend {fastndcg.available_backends()[0]}: ready in {time.perf_counter() - start:.2f} s"
    )

    start = time.perf_counter()
    result = fastndcg.ndcg(data.grades, data.scores, offsets=data.offsets, k=[1, 3, 5, 10])
    elapsed = time.perf_counter() - start
    print(result)
    print(
        f"scored in {elapsed:.2f} s: {data.n_rows / elapsed / 1e6:.0f} M rows/s, "
        f"{data.n_queries / elapsed / 1e6:.2f} M queries/s"
    )


if __name__ == "__main__":
    main()
