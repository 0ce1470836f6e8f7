r"""The counter-based random numbers of the resampling tests, shared by every backend.

Everything random in :func:`fastndcg.compare` is a pure function of ``(seed, resample index,
position)``: the backends' resampling operations (``signflip_sums``, ``bootstrap_sums``; the
Numba kernels and their NumPy twins) evaluate the same formulas, so every resample is the same
whatever the thread count, the chunking or the backend. This module derives the keys and the
Poisson tables they take; the constants live in :mod:`fastndcg._contract.codes`.

Generator
---------
``mix`` is the SplitMix64 finaliser (a bijection of 64-bit words), all arithmetic modulo
:math:`2^{64}`, with :math:`\gamma` = ``0x9E3779B97F4A7C15``:

.. math::

    \operatorname{stream}(k, i) = \operatorname{mix}(k + (i + 1)\gamma), \qquad
    \operatorname{word}(k_i, w) = \operatorname{mix}(k_i + (w + 1)\gamma),

i.e. the ``i``-th output of a SplitMix64 generator seeded with ``k`` keys resample ``i``, whose
own SplitMix64 stream gives its words.

Sign flips (randomisation test)
    ``k = mix(seed ^ SIGN_DOMAIN)``; in resample ``i`` query ``j`` is negated when bit
    ``j mod 64`` of ``word(stream(k, i), j // 64)`` is set. The exact test (``2**n`` sign
    vectors) uses sign vector ``m`` itself as the only word: query ``j`` is negated when bit
    ``j`` of ``m`` is set.
Bootstrap counts
    Resample ``i`` draws ``n`` query indices uniformly with replacement; what it needs is how
    often each query was drawn, :math:`c \sim \mathrm{Multinomial}(n; 1/n, \dots, 1/n)`.
    The counts are drawn in two steps that give exactly that law (Poisson splitting):

    1. independent :math:`c_j \sim \mathrm{Poisson}(\lambda)`, :math:`\lambda = 1 - 3/\sqrt{n}`
       (0 below :data:`POISSON_MIN_QUERIES` queries): query ``j`` reads 32 bits (the low half
       of ``word(stream(kp, i), j // 2)`` for even ``j``, the high half for odd ``j``) and
       :math:`c_j = \#\{k : u \ge T_k\}` with :math:`T_k = \lfloor 2^{32} F_\lambda(k)\rfloor`
       (:func:`poisson_thresholds`; the Poisson probabilities are exact to :math:`2^{-32}`).
       Given their total :math:`N`, Poisson counts are multinomial: :math:`N` uniform draws.
       When :math:`N > n` (probability about :math:`10^{-3}`) the counts are drawn again from
       the next key, ``kp = mix(kb ^ (POISSON_DOMAIN + attempt))``.
    2. :math:`n - N` further uniform draws ``e_r = floor(word(stream(kt, i), r) * n / 2**64)``
       (``kt = mix(kb ^ TOPUP_DOMAIN)``), which make ``n`` uniform draws in all.

    ``kb = mix(seed ^ BOOTSTRAP_DOMAIN)``. The resample's sum of a column ``v`` is
    :math:`\sum_j c_j v_j` (queries in order, each product rounded once) followed by
    :math:`v_{e_0}, v_{e_1}, \dots` in draw order, added left to right.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from functools import cache

import numpy as np

from fastndcg._contract.codes import (
    BOOTSTRAP_DOMAIN,
    POISSON_DOMAIN,
    POISSON_WIDTH,
    SIGN_DOMAIN,
    SPLITMIX_GOLDEN,
    SPLITMIX_MIX1,
    SPLITMIX_MIX2,
    TOPUP_DOMAIN,
)

MASK64 = (1 << 64) - 1
GOLDEN = SPLITMIX_GOLDEN
MIX1 = SPLITMIX_MIX1
MIX2 = SPLITMIX_MIX2

# below this many queries the bootstrap draws every index directly (lambda = 0)
POISSON_MIN_QUERIES = 1024
# lambda = 1 - POISSON_MARGIN / sqrt(n): P(N > n) is about P(Z > 3) = 0.00135
POISSON_MARGIN = 3.0
# the bootstrap draws indices by a 64 x 32-bit multiply-shift: n must fit in 32 bits
MAX_BOOTSTRAP_QUERIES = (1 << 32) - 1


def mix(z: int) -> int:
    """SplitMix64 finaliser of a Python int (taken modulo 2**64)."""
    z &= MASK64
    z = ((z ^ (z >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    return z ^ (z >> 31)


def sign_key(seed: int) -> int:
    """Key of the sign-flip streams."""
    return mix(seed ^ SIGN_DOMAIN)


def bootstrap_key(seed: int) -> int:
    """Key of the bootstrap streams (Poisson and top-up keys derive from it)."""
    return mix(seed ^ BOOTSTRAP_DOMAIN)


def poisson_key(boot_key: int, attempt: int) -> int:
    """Key of the Poisson counts of a bootstrap attempt (0 first, then 1, ... on rejection)."""
    return mix(boot_key ^ (POISSON_DOMAIN + attempt))


def topup_key(boot_key: int) -> int:
    """Key of the top-up draws of the bootstrap."""
    return mix(boot_key ^ TOPUP_DOMAIN)


def poisson_rate(n: int) -> float:
    """The Poisson rate of the first bootstrap step for ``n`` queries (0: direct draws only)."""
    if n < POISSON_MIN_QUERIES:
        return 0.0
    return 1.0 - POISSON_MARGIN / math.sqrt(n)


@cache
def _thresholds(rate: float) -> tuple[int, ...]:
    if rate <= 0.0:
        return ()
    scale = 1 << 32
    out: list[int] = []
    with localcontext() as ctx:
        ctx.prec = 60
        lam = Decimal(rate)
        term = (-lam).exp()
        cdf = Decimal(0)
        k = 0
        while True:
            cdf += term
            t = int(cdf * scale)  # floor: cdf > 0
            if t >= scale - 1:  # the rest of the tail is below 2**-32: the last count absorbs it
                break
            out.append(t)
            k += 1
            term = term * lam / k
    return tuple(out)


def poisson_thresholds(n: int) -> np.ndarray:
    """Inverse-CDF table of Poisson(:func:`poisson_rate`) on 32-bit uniforms (uint32).

    A uniform 32-bit ``u`` maps to ``#{k : u >= T[k]}``; ``T[k] = floor(2**32 F(k))`` where
    ``F`` is the Poisson CDF, computed with 60 significant digits. Empty when the rate is 0.
    """
    return np.array(_thresholds(poisson_rate(n)), dtype=np.uint32)


def poisson_bounds(n: int) -> np.ndarray:
    """Return :func:`poisson_thresholds` as the kernels take it.

    That is ``T - 1``, padded to :data:`POISSON_WIDTH` with ``2**32 - 1`` (a count is the
    number of bounds strictly below ``u``); empty when the rate is 0.
    """
    table = poisson_thresholds(n)
    if table.size == 0:
        return table
    if table.size > POISSON_WIDTH:  # cannot happen for a rate below 1
        raise AssertionError(f"Poisson table of {table.size} entries")
    bounds = np.full(POISSON_WIDTH, 0xFFFFFFFF, dtype=np.uint32)
    bounds[: table.size] = table - np.uint32(1)
    return bounds
