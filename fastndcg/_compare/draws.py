r"""The resampling tests' draws in blocks: counts, and exact order statistics in bounded memory.

A resampling test draws its :math:`B` sign vectors or bootstrap samples in blocks of
resamples (:func:`blocks`), so that memory does not grow with :math:`B` and an interrupt
(Ctrl-C) is honoured between blocks, and between the short chunks a backend splits each block
into. The p-values need only counts, accumulated block by block. The intervals need order
statistics of the resampled values (the :math:`r`-th smallest of :math:`B` values), which
:class:`OrderStatistics` finds exactly:

- up to :data:`KEEP_VALUES` values in all, it keeps them and partitions them (one pass over
  the draws, as fast as keeping them ever was);
- beyond, it selects each wanted rank by its bits, 16 at a time (a radix selection): the
  first pass counts the values under each of the :math:`2^{16}` leading 16-bit prefixes of
  their order-preserving 64-bit keys, which says in which prefix the wanted rank lies; each
  further pass replays the same draws (resample :math:`i` is a function of the seed and
  :math:`i` only) and counts the next 16 bits within that prefix, until the values sharing the
  prefix are few enough to keep, or all 64 bits are known. Memory is a few counting tables
  per wanted rank; time is one pass over the draws per 16 bits, usually three in all.

Both ways give the same value, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

# values kept whole (64 MiB of float64); beyond, order statistics are selected in passes
KEEP_VALUES = 1 << 23
# query-column products of one block (seconds of work; a backend splits it into short chunks)
BLOCK_WORK = 1 << 36
MAX_BLOCK = 1 << 16  # resamples of one block
LANES = 64  # blocks start at multiples of the kernels' lanes (RESAMPLE_LANES)

_DIGIT_BITS = 16
_DIGITS = 1 << _DIGIT_BITS
_SIGN = np.uint64(1 << 63)


def blocks(count: int, n: int, n_columns: int) -> Iterator[tuple[int, int]]:
    """``(first, size)`` of the blocks of resamples ``0 .. count - 1``, in order.

    A block holds about :data:`BLOCK_WORK` query-column products (at most :data:`MAX_BLOCK`
    resamples, a multiple of :data:`LANES`).
    """
    size = BLOCK_WORK // max(1, n * n_columns)
    size = min(MAX_BLOCK, max(LANES, size // LANES * LANES))
    for first in range(0, count, size):
        yield first, min(size, count - first)


def _keys(values: np.ndarray) -> np.ndarray:
    """Order-preserving unsigned keys of float64 values (no NaN; -0.0 taken as 0.0)."""
    bits = (np.asarray(values, dtype=np.float64) + 0.0).view(np.uint64)
    return np.where(bits & _SIGN, ~bits, bits | _SIGN)


def _value(key: int) -> float:
    """The float64 whose key (:func:`_keys`) is ``key``."""
    key = np.uint64(key)
    bits = key & ~_SIGN if key & _SIGN else ~key
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


@dataclass
class _Search:
    """The search for rank ``rank`` of column ``column``: its known leading bits so far."""

    column: int
    rank: int
    prefix: int = 0
    bits: int = 0
    size: int = 0  # values sharing the prefix
    counts: np.ndarray | None = None
    kept: list[np.ndarray] = field(default_factory=list)
    value: float | None = None

    def narrow(self, counts: np.ndarray) -> None:
        """Take the next 16 bits: the digit under which rank ``rank`` lies."""
        below = np.cumsum(counts)
        digit = int(np.searchsorted(below, self.rank, side="right"))
        self.rank -= int(below[digit - 1]) if digit else 0
        self.prefix = (self.prefix << _DIGIT_BITS) | digit
        self.bits += _DIGIT_BITS
        self.size = int(counts[digit])
        if self.bits == 64:
            self.value = _value(self.prefix)


class OrderStatistics:
    """Exact order statistics of the columns of values streamed in blocks (see the module).

    ``add`` takes each block of the first pass (rows: resamples; columns: the quantities whose
    order statistics are wanted); :meth:`select` returns the values of the wanted ranks,
    replaying the draws with ``replay`` when the values were not all kept.
    """

    def __init__(self, count: int, n_columns: int, keep: int | None = None) -> None:
        limit = KEEP_VALUES if keep is None else keep
        self.count = count
        self.limit = limit
        self.keeping = count * n_columns <= limit
        self._blocks: list[np.ndarray] = []
        self._counts = None if self.keeping else np.zeros((n_columns, _DIGITS), dtype=np.int64)

    def add(self, block: np.ndarray) -> None:
        """One block of the first pass, shape (resamples, n_columns)."""
        if self.keeping:
            self._blocks.append(block)
            return
        assert self._counts is not None
        for column in range(block.shape[1]):
            digits = _keys(block[:, column]) >> np.uint64(64 - _DIGIT_BITS)
            self._counts[column] += np.bincount(digits.astype(np.intp), minlength=_DIGITS)

    def select(
        self, wanted: list[tuple[int, int]], replay: Callable[[Callable[[np.ndarray], None]], None]
    ) -> list[float]:
        """The values of rank ``rank`` (0: the smallest) of ``column``, for each pair wanted.

        ``replay(consume)`` draws the same blocks again, in the same order, passing each to
        ``consume``.
        """
        if self.keeping:
            values = np.concatenate(self._blocks) if self._blocks else np.empty((0, 0))
            out = []
            for column, rank in wanted:
                out.append(float(np.partition(values[:, column], rank)[rank]))
            return out
        assert self._counts is not None
        searches = [_Search(column, rank) for column, rank in wanted]
        for search in searches:
            search.narrow(self._counts[search.column])
        share = max(1, self.limit // max(1, len(searches)))
        while open_ := [s for s in searches if s.value is None]:
            for search in open_:
                search.counts = None if search.size <= share else np.zeros(_DIGITS, np.int64)
                search.kept = []
            replay(lambda block: _visit(block, open_))
            for search in open_:
                if search.counts is not None:
                    search.narrow(search.counts)
                else:
                    kept = np.concatenate(search.kept)
                    search.value = float(np.partition(kept, search.rank)[search.rank])
        return [float(s.value) for s in searches]  # type: ignore[arg-type]


def _visit(block: np.ndarray, searches: list[_Search]) -> None:
    """One replayed block: each search keeps or counts the values under its prefix."""
    keys: dict[int, np.ndarray] = {}
    for search in searches:
        if search.column not in keys:
            keys[search.column] = _keys(block[:, search.column])
        key = keys[search.column]
        inside = (key >> np.uint64(64 - search.bits)) == np.uint64(search.prefix)
        if search.counts is None:
            search.kept.append(block[inside, search.column])
        else:
            shift = np.uint64(64 - search.bits - _DIGIT_BITS)
            digits = (key[inside] >> shift) & np.uint64(_DIGITS - 1)
            search.counts += np.bincount(digits.astype(np.intp), minlength=_DIGITS)


def interpolated(low: float, high: float, gamma: float) -> float:
    """``numpy.quantile``'s linear interpolation between two neighbouring order statistics."""
    diff = high - low
    if gamma >= 0.5:
        return high - diff * (1.0 - gamma)
    return low + diff * gamma


def quantile_ranks(count: int, level: float) -> tuple[int, int, float]:
    """The order statistics (ranks) ``numpy.quantile(x, level)`` of ``count`` values reads.

    Returns the ranks of the two neighbours and the weight of the upper one.
    """
    position = (count - 1) * level
    if position >= count - 1:
        return count - 1, count - 1, 0.0
    if position < 0:
        return 0, 0, 0.0
    low = int(np.floor(position))
    return low, low + 1, position - low
