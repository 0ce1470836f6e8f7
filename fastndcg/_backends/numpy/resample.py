"""NumPy twin of the resampling kernels (``numba/resample.py``): same functions, signatures, bits.

Used when numba cannot be imported or ``backend="numpy"`` is asked for. Blocks of resamples
are processed at once; each resample's sum over the queries is a ``np.cumsum`` (which adds left
to right, unlike ``np.sum``) carried from one block of queries to the next, so every sum is
the sequential sum the kernels compute, rounding for rounding. Bootstrap lanes that draw fewer
top-up indices than others in their block are padded with ``-0.0``, which leaves any IEEE sum
unchanged.
"""

from __future__ import annotations

import numpy as np

from fastndcg._contract.codes import (
    POISSON_DOMAIN,
    SPLITMIX_GOLDEN,
    SPLITMIX_MIX1,
    SPLITMIX_MIX2,
    TOPUP_DOMAIN,
)

_BLOCK = 256  # resamples per block
_QUERIES = 8192  # queries per block (a multiple of 64)

_GOLDEN = np.uint64(SPLITMIX_GOLDEN)
_MIX1 = np.uint64(SPLITMIX_MIX1)
_MIX2 = np.uint64(SPLITMIX_MIX2)
_MASK64 = (1 << 64) - 1


def _mix_int(z: int) -> int:
    """SplitMix64 finaliser of a Python int (taken modulo 2**64)."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * SPLITMIX_MIX1) & _MASK64
    z = ((z ^ (z >> 27)) * SPLITMIX_MIX2) & _MASK64
    return z ^ (z >> 31)


def poisson_key(boot_key: int, attempt: int) -> int:
    """Key of the Poisson counts of a bootstrap attempt (0 first, then 1, ... on rejection)."""
    return _mix_int(boot_key ^ (POISSON_DOMAIN + attempt))


def topup_key(boot_key: int) -> int:
    """Key of the top-up draws of the bootstrap."""
    return _mix_int(boot_key ^ TOPUP_DOMAIN)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of a uint64 array (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _stream(key: int, i: np.ndarray) -> np.ndarray:
    return _mix(np.uint64(key) + (i.astype(np.uint64) + np.uint64(1)) * _GOLDEN)


def _words(keys: np.ndarray, w0: int, count: int) -> np.ndarray:
    """word(keys[l], w0 + t) for every lane and t < count: shape (lanes, count)."""
    offsets = (np.arange(w0, w0 + count, dtype=np.uint64) + np.uint64(1)) * _GOLDEN
    return _mix(keys[:, None] + offsets[None, :])


def _below(words: np.ndarray, n: int) -> np.ndarray:
    """floor(words * n / 2**64) for n < 2**32."""
    un = np.uint64(n)
    hi = words >> np.uint64(32)
    lo = words & np.uint64(0xFFFFFFFF)
    return ((hi * un + ((lo * un) >> np.uint64(32))) >> np.uint64(32)).astype(np.intp)


def _carry_sum(acc: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """Return acc + terms[:, 0] + terms[:, 1] + ..., left to right, per row of ``terms``."""
    stacked = np.concatenate([acc[:, None], terms], axis=1)
    return np.cumsum(stacked, axis=1)[:, -1]


def signflip_sums(diffs, key, exact, start, stop, first, out):
    """Sign-flipped sums of every column for resamples ``start..stop-1``.

    The twin of ``numba/resample.py``'s ``signflip_sums``; same parameters.
    """
    n_cols, n = diffs.shape
    with np.errstate(over="ignore"):
        for b0 in range(start, stop, _BLOCK):
            lanes = np.arange(b0, min(stop, b0 + _BLOCK), dtype=np.uint64)
            keys = None if exact else _stream(int(key), lanes)
            acc = np.zeros((n_cols, lanes.size))
            for j0 in range(0, n, _QUERIES):
                m = min(_QUERIES, n - j0)
                n_words = (m + 63) // 64
                if exact:
                    words = lanes[:, None]
                else:
                    words = _words(keys, j0 // 64, n_words)
                bytes_ = np.ascontiguousarray(words).astype("<u8").view(np.uint8)
                bits = np.unpackbits(bytes_, axis=1, bitorder="little")[:, :m]
                signs = 1.0 - 2.0 * bits.astype(np.float64)
                for c in range(n_cols):
                    acc[c] = _carry_sum(acc[c], diffs[c, j0 : j0 + m][None, :] * signs)
            out[b0 - first : b0 - first + lanes.size] = acc.T


def _poisson_pass(cols, key, lanes, thresholds):
    """Sums of count * value over the queries, and count totals, for the given lanes."""
    n_cols, n = cols.shape
    keys = _stream(key, lanes)
    acc = np.zeros((n_cols, lanes.size))
    totals = np.zeros(lanes.size, dtype=np.int64)
    for j0 in range(0, n, _QUERIES):
        m = min(_QUERIES, n - j0)
        words = _words(keys, j0 // 2, (m + 1) // 2)
        uniforms = np.ascontiguousarray(words).astype("<u8").view("<u4")[:, :m]
        counts = np.searchsorted(thresholds, uniforms, side="left")  # bounds strictly below
        totals += counts.sum(axis=1)
        counts = counts.astype(np.float64)
        for c in range(n_cols):
            acc[c] = _carry_sum(acc[c], cols[c, j0 : j0 + m][None, :] * counts)
    return acc, totals


def bootstrap_sums(cols, rows, key, thresholds, start, stop, first, out):
    """Bootstrap sums of every column for resamples ``start..stop-1``.

    The twin of ``numba/resample.py``'s ``bootstrap_sums``; same parameters.
    """
    n_cols, n = cols.shape
    key = int(key)
    top_key = topup_key(key)
    with np.errstate(over="ignore"):
        for b0 in range(start, stop, _BLOCK):
            lanes = np.arange(b0, min(stop, b0 + _BLOCK), dtype=np.uint64)
            if thresholds.size:
                acc, totals = _poisson_pass(cols, poisson_key(key, 0), lanes, thresholds)
                attempt = 0
                while (redo := np.flatnonzero(totals > n)).size:
                    attempt += 1
                    again, again_totals = _poisson_pass(
                        cols, poisson_key(key, attempt), lanes[redo], thresholds
                    )
                    acc[:, redo] = again
                    totals[redo] = again_totals
            else:
                acc = np.zeros((n_cols, lanes.size))
                totals = np.zeros(lanes.size, dtype=np.int64)
            need = n - totals
            longest = int(need.max())
            if longest:
                draws = _below(_words(_stream(top_key, lanes), 0, longest), n)
                pad = np.arange(longest)[None, :] >= need[:, None]
                for c in range(n_cols):
                    # -0.0 is the identity of IEEE addition: a lane adds only its own draws
                    terms = np.where(pad, -0.0, cols[c][draws])
                    acc[c] = _carry_sum(acc[c], terms)
            out[b0 - first : b0 - first + lanes.size] = acc.T
