"""Sizes and device functions shared by the CUDA kernels (gains, tie keys, sort keys).

The sizes split queries into classes by list length (see :mod:`fastndcg._backends.cuda`):

- ``SMALL``: lists up to this length are scored by one thread each (the serial algorithm of
  the Numba kernel, in registers and local memory);
- ``WIDTHS``: lists of ``SMALL + 1`` to ``CAP`` rows are sorted whole in shared memory, padded
  to the next of these powers of two; a block sorts ``CAP // width`` lists of one width at once
  (:mod:`fastndcg._backends.cuda.groups`);
- ``CAP``: longer lists are sorted in chunks of this many rows, one thread block per chunk
  (a bitonic network in shared memory), and merged by
  :func:`fastndcg._backends.cuda.sort.merge_level` passes spread over the whole grid;
- ``THREADS``: threads per block of the sorting, merging and finishing kernels.

Under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``, each CUDA thread a Python thread) the
sizes are tiny, so that lists of a dozen rows already take every path.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import cuda

from fastndcg._contract.codes import (
    GAIN_EXP2,
    GAIN_LINEAR,
    SPLITMIX_GOLDEN,
    SPLITMIX_MIX1,
    SPLITMIX_MIX2,
    TIE_KEY,
    TIE_OPTIMISTIC,
    TIE_PESSIMISTIC,
    TIE_RANDOM,
)

SIMULATED = bool(cuda.config.ENABLE_CUDASIM)

SMALL = 3 if SIMULATED else 64
CAP = 8 if SIMULATED else 1024  # a power of two
THREADS = 4 if SIMULATED else 256  # a power of two, at most CAP
SMALL_THREADS = 4 if SIMULATED else 128  # threads per block of the one-thread-per-list kernels
FIRST_WIDTH = 1 << SMALL.bit_length()  # the smallest power of two above SMALL
WIDTHS = tuple(FIRST_WIDTH << i for i in range((CAP // FIRST_WIDTH).bit_length()))
LONG = len(WIDTHS)  # the class of lists longer than CAP (classes 0 .. LONG - 1: WIDTHS)
MAX_GROUPS = CAP // FIRST_WIDTH  # lists sorted together by one block, at most


def resident(blocks: int) -> dict:
    """``cuda.jit`` options asking for ``blocks`` blocks of ``THREADS`` threads per multiprocessor.

    The compiler then caps the kernel's registers to fit (64 per thread for 4 blocks of 256),
    spilling the rest, instead of letting one block fill the register file. The simulator takes
    no launch bounds.
    """
    return {} if SIMULATED else {"launch_bounds": (THREADS, blocks)}


# what a sort orders: query rows by score and tie rule, ideal rows by gain, or plain values
MODE_RANK = 0
MODE_GAIN = 1
MODE_VALUE = 2


# The bundles the kernels take (numba-cuda passes a tuple argument field by field, so a bundle
# costs no more than its fields), and their device functions read by name.


class Lists(NamedTuple):
    """The query lists: CSR ``offsets``, ``grades``, ``scores`` (a dummy when ``ranked``)."""

    offsets: Any
    grades: Any
    scores: Any
    ranked: bool


class Rules(NamedTuple):
    """How rows are ordered and gained: the tie rule (its key, its seed) and the gain."""

    tie_mode: int
    tie_key: Any
    seed: np.uint64
    gain_mode: int
    gain_table: Any


class Cuts(NamedTuple):
    """Discounts, their prefix sums, and where they are summed to.

    ``cutoffs[j] < 0`` means the whole list (``whole``: one does); ``k_max`` is the largest
    finite cutoff.
    """

    discount: Any
    discount_prefix: Any
    cutoffs: Any
    k_max: int
    whole: bool


class Levels(NamedTuple):
    """The integer grade levels an ideal counts (``count`` of them, 0: none).

    ``order``: the levels in descending gain order; ``gain``: each level's gain.
    """

    count: int
    order: Any
    gain: Any


class Out(NamedTuple):
    """The results: ``dcg`` and ``idcg`` (``(n_cutoffs, n_queries)``), non-finite scores met."""

    dcg: Any
    idcg: Any
    nonfinite: Any


class Keys(NamedTuple):
    """What a sort orders (``mode``, see :func:`sort_key`) and the columns its keys come from."""

    mode: int
    scores: Any
    grades: Any
    values: Any


class Segments(NamedTuple):
    """Lists a sort ranks: each one's query, first item, length, and how many items are kept."""

    query: Any
    start: Any
    n: Any
    count: Any


class Sorted(NamedTuple):
    """Segments as :mod:`fastndcg._backends.cuda.sort` leaves them.

    Segment ``g``'s kept items are at ``base[g]`` in ``buf0``, or in ``buf1`` where
    ``parity[g]``; ``bad[g]`` marks a NaN score met.
    """

    buf0: Any
    buf1: Any
    base: Any
    parity: Any
    bad: Any


_GOLDEN = np.uint64(SPLITMIX_GOLDEN)
_MIX1 = np.uint64(SPLITMIX_MIX1)
_MIX2 = np.uint64(SPLITMIX_MIX2)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_NO_KEY = np.uint64(0)


@cuda.jit(device=True)
def random_key(seed, row):
    """SplitMix64 hash of (seed, row): the Numba kernel's random tie key of a global row."""
    z = seed + np.uint64(row) * _GOLDEN
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@cuda.jit(device=True)
def gain(grade, rules):
    """Gain of ``grade``: ``2**g - 1``, ``g``, or ``table[int(g)]``, as in the Numba kernel."""
    g = np.float64(grade)
    if rules.gain_mode == GAIN_EXP2:
        return math.pow(2.0, g) - 1.0
    if rules.gain_mode == GAIN_LINEAR:
        return g
    return rules.gain_table[np.int64(g)]


@cuda.jit(device=True)
def depth(cutoff, n):
    """The ranks a cutoff reads in a list of ``n`` rows (``cutoff < 0``: the whole list)."""
    return n if cutoff < 0 else min(cutoff, n)


@cuda.jit(device=True)
def sort_key(keys, row, rules):
    """``(k1, k2f, k2u)``: item ``row`` goes first by k1 descending, then k2f and k2u ascending.

    Rows that compare equal on all three go in row order. ``MODE_RANK`` reproduces the Numba
    kernel's ranking: score descending, then the tie rule (lower gain first for
    "pessimistic", higher for "optimistic", the SplitMix64 key for "random", the caller's key
    for a keyed rule), then input order. ``MODE_GAIN`` orders ideal rows by gain,
    ``MODE_VALUE`` entries of ``values``.
    """
    if keys.mode == MODE_RANK:
        k1 = np.float64(keys.scores[row])
        k2f = 0.0
        k2u = _NO_KEY
        tie_mode = rules.tie_mode
        if tie_mode == TIE_PESSIMISTIC:
            k2f = gain(keys.grades[row], rules)
        elif tie_mode == TIE_OPTIMISTIC:
            k2f = -gain(keys.grades[row], rules)
        elif tie_mode == TIE_RANDOM:
            k2u = random_key(rules.seed, row)
        elif tie_mode == TIE_KEY:
            k2f = np.float64(rules.tie_key[row])  # ranks of document ids: below 2**53
        return k1, k2f, k2u
    if keys.mode == MODE_GAIN:
        return gain(keys.grades[row], rules), 0.0, _NO_KEY
    return np.float64(keys.values[row]), 0.0, _NO_KEY


@cuda.jit(device=True)
def key_before(a1, a2f, a2u, arow, b1, b2f, b2u, brow):
    """Whether the item with keys ``(a1, a2f, a2u)`` and row ``arow`` goes before the other."""
    if a1 != b1:
        return a1 > b1
    if a2f != b2f:
        return a2f < b2f
    if a2u != b2u:
        return a2u < b2u
    return arow < brow


@cuda.jit(device=True)
def row_before(keys, a, b, rules):
    """Whether row ``a`` goes before row ``b`` (keys computed from the columns)."""
    a1, a2f, a2u = sort_key(keys, a, rules)
    b1, b2f, b2u = sort_key(keys, b, rules)
    return key_before(a1, a2f, a2u, a, b1, b2f, b2u, b)


@cuda.jit(device=True)
def block_sum(red, tid, value):
    """Sum of ``value`` over the block's threads, in a fixed tree order (deterministic).

    Every thread of the block must call it; all get the total. ``red`` is shared scratch of
    :data:`THREADS` entries.
    """
    red[tid] = value
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            red[tid] += red[tid + stride]
        cuda.syncthreads()
        stride //= 2
    total = red[0]
    cuda.syncthreads()
    return total
