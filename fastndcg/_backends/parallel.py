"""The process-wide thread pool the Numba backend runs its kernels on, and how work is split.

Kernels release the GIL, so Python threads run them in parallel: a pool of plain threads over
chunks of work spares the compile of a ``prange`` kernel (seconds). Each chunk is computed by
the same serial code whatever thread takes it, so results do not depend on the thread count.

A process forked after the pool started inherits the pool objects but not their threads: the
pools are forgotten in the child (``os.register_at_fork``), which starts its own on first use.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

import numpy as np

from fastndcg._backends.tuning import QUERY_COST_IN_ROWS

T = TypeVar("T")

_POOLS: dict[int, ThreadPoolExecutor] = {}


def _forget_pools_in_child() -> None:
    """In a forked child: drop the parent's pools, whose threads do not exist here."""
    _POOLS.clear()


os.register_at_fork(after_in_child=_forget_pools_in_child)


def run_chunks(work: Callable[[int], T], n_chunks: int, threads: int) -> list[T]:
    """``[work(0), ..., work(n_chunks - 1)]``, worked off by this thread and pool threads.

    ``threads`` threads in all (this one included) take the next chunk until none is left, so a
    slow chunk does not hold the others; ``work`` must release the GIL to run in parallel.
    When this thread is interrupted (Ctrl-C raises KeyboardInterrupt between two of its
    chunks) or a chunk raises, no further chunk is started: the pool threads finish the chunk
    they are in, and the exception goes on once they have, so that none is left computing.
    """
    results: list = [None] * n_chunks
    tickets = itertools.count()
    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set() and (c := next(tickets)) < n_chunks:
            results[c] = work(c)

    helpers = min(threads, n_chunks) - 1
    if helpers > 0 and threads not in _POOLS:
        _POOLS[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="fastndcg")
    running = [_POOLS[threads].submit(drain) for _ in range(helpers)]
    try:
        drain()
        for helper in running:
            helper.result()
    except BaseException:
        stop.set()
        wait(running)
        raise
    return results


def chunk_bounds(offsets: np.ndarray, n_chunks: int) -> np.ndarray:
    """Split queries into at most ``n_chunks`` runs of about equal work (rows plus a fixed cost)."""
    n_queries = offsets.size - 1
    if n_queries == 0:
        return np.zeros(1, dtype=np.int64)
    cost = offsets + QUERY_COST_IN_ROWS * np.arange(n_queries + 1)
    targets = np.linspace(0, cost[-1], n_chunks + 1)
    bounds = np.searchsorted(cost, targets, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, n_queries
    return np.unique(bounds)


def by_query_chunks(offsets: np.ndarray, work: Callable[[int, int], T], threads: int) -> list[T]:
    """``work(q0, q1)`` over chunks of queries of about equal rows, on ``threads`` threads."""
    bounds = chunk_bounds(offsets, 4 * threads)
    return run_chunks(lambda c: work(bounds[c], bounds[c + 1]), bounds.size - 1, threads)


def resample_bounds(n_resamples: int, n_chunks: int, lanes: int) -> np.ndarray:
    """Split ``range(n_resamples)`` into at most ``n_chunks`` runs starting at lane blocks.

    Every chunk starts at a multiple of ``lanes``: the resampling kernels advance ``lanes``
    resamples together. A chunk starting elsewhere would compute the same values (resample
    ``i`` depends on ``i`` only), in more passes.
    """
    blocks = -(-n_resamples // lanes)
    n_chunks = max(1, min(n_chunks, blocks))
    bounds = np.linspace(0, blocks, n_chunks + 1).astype(np.int64) * lanes
    bounds[-1] = n_resamples
    return np.unique(bounds)
