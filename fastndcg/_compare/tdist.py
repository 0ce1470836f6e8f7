r"""Student's t distribution without scipy: the tail probability and its inverse.

The two-sided tail of Student's t with :math:`\nu` degrees of freedom is a regularised
incomplete beta function,

.. math::

    P(|T| > t) = I_{\nu / (\nu + t^2)}\left(\tfrac{\nu}{2}, \tfrac{1}{2}\right),

evaluated by the continued fraction of :math:`I_x(a, b)` (modified Lentz), on whichever side of
the function converges (:math:`x < (a + 1) / (a + b + 2)`), with the prefactor
:math:`x^a (1 - x)^b / (a\,B(a, b))` formed in logarithms: :math:`\log x` and
:math:`\log(1 - x)` come from ``log1p`` of :math:`t^2/\nu` and :math:`\nu/t^2` (no cancellation
in :math:`1 - x`), and :math:`\log B(a, b)` for large :math:`a` from the difference of Stirling
series, :math:`\log\Gamma(a) - \log\Gamma(a + b) = -(a - \tfrac12)\,\mathrm{log1p}(b/a)
- b \log(a + b) + b + S(a) - S(a + b)`, which keeps its absolute error near machine precision
for millions of degrees of freedom.

With many degrees of freedom (:math:`a = \nu/2 \ge 100`) and :math:`x \ge 0.7` the continued
fraction is ill-conditioned in :math:`x` (its terms cancel like :math:`1 - x`), so there the tail
comes from the asymptotic expansion for large :math:`a` and small :math:`b` of DiDonato and
Morris (1992, ACM TOMS 18, algorithm 708, "BGRAT"): with :math:`T = a + (b - 1)/2` and
:math:`u = -T \log x`,

.. math::

    I_x(a, b) = \frac{\Gamma(a + b)}{\Gamma(a)\,T^b}
    \Bigl[Q(b, u) + H(b, u) \sum_{n \ge 1} p_n J_n\Bigr], \qquad
    H(b, u) = \frac{e^{-u} u^b}{\Gamma(b)},

where :math:`Q(\tfrac12, u) = \operatorname{erfc}\sqrt{u}`, :math:`p_0 = 1`,
:math:`p_n = \frac{b - 1}{(2n + 1)!} + \frac1n \sum_{m=1}^{n-1} \frac{(mb - n)\,p_{n-m}}{(2m+1)!}`,
:math:`H J_0 = Q` and :math:`J_n = \bigl[(b + 2n - 2)(b + 2n - 1) J_{n-1}
+ (u + b + 2n - 1) (\tfrac12\log x)^{2n - 2}\bigr] / (4T^2)`.

The result has a relative error of a few units in the last place (growing like
:math:`\log(1/p)` times the machine epsilon for tiny p-values). The quantile solves
:math:`P(T > t) = q` by safeguarded Newton steps on :math:`\log P`.
"""

from __future__ import annotations

import math
from functools import lru_cache

_EPS = 2.0**-52
_TINY = 1e-300
_STIRLING_FROM = 10.0
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# coefficients of the Stirling series S(z) = sum c_k / z**(2k - 1)
_STIRLING = (
    1.0 / 12.0,
    -1.0 / 360.0,
    1.0 / 1260.0,
    -1.0 / 1680.0,
    1.0 / 1188.0,
    -691.0 / 360360.0,
    1.0 / 156.0,
)
_MAX_TERMS = 100_000


def _stirling_tail(z: float) -> float:
    """S(z) = log Gamma(z) - ((z - 1/2) log z - z + log(2 pi)/2), for z >= 10."""
    inv = 1.0 / z
    inv2 = inv * inv
    total = 0.0
    for c in reversed(_STIRLING):
        total = total * inv2 + c
    return total * inv


def log_beta(a: float, b: float) -> float:
    """Return log B(a, b) for a, b > 0, accurate in absolute terms when one argument is large."""
    big, small = (a, b) if a >= b else (b, a)
    if big < _STIRLING_FROM:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    if small >= _STIRLING_FROM:
        total = big + small
        return (
            _LOG_SQRT_2PI
            + (big - 0.5) * math.log(big / total)
            + small * math.log(small / total)
            - 0.5 * math.log(small)
            + _stirling_tail(big)
            + _stirling_tail(small)
            - _stirling_tail(total)
        )
    # log Gamma(big) - log Gamma(big + small) by the difference of the Stirling forms
    total = big + small
    difference = (
        -(big - 0.5) * math.log1p(small / big)
        - small * math.log(total)
        + small
        + _stirling_tail(big)
        - _stirling_tail(total)
    )
    return math.lgamma(small) + difference


def _continued_fraction(a: float, b: float, x: float, y: float) -> float:
    """The continued fraction of I_x(a, b) (converges fast for x < (a + 1) / (a + b + 2)).

    ``y = 1 - x``: the first denominator, ``1 - (a + b) x / (a + 1)``, is formed from it as
    ``(1 - b + (a + b) y) / (a + 1)``, which keeps its precision when ``x`` is near 1.
    """
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = (1.0 - b + qab * y) / qap
    d = _TINY if abs(d) < _TINY else d
    d = 1.0 / d
    h = d
    for m in range(1, _MAX_TERMS):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1.0 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1.0 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) <= _EPS:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge: a={a}, b={b}")


def _beta_pair(
    a: float, b: float, x: float, y: float, log_x: float, log_y: float
) -> tuple[float, float]:
    """(I_x(a, b), 1 - I_x(a, b)), the one on the converging side computed directly.

    ``x`` is the argument and ``y = 1 - x``; ``y``, ``log_x`` and ``log_y`` are computed
    without cancellation by the caller. The other value is 1 minus the first.
    """
    if x < (a + 1.0) / (a + b + 2.0):
        log_front = a * log_x + b * log_y - math.log(a) - log_beta(a, b)
        lower = math.exp(log_front) * _continued_fraction(a, b, x, y)
        return lower, 1.0 - lower
    log_front = b * log_y + a * log_x - math.log(b) - log_beta(a, b)
    upper = math.exp(log_front) * _continued_fraction(b, a, y, x)
    return 1.0 - upper, upper


def _odd_factorials(count: int) -> tuple[float, ...]:
    out = [1.0]
    for m in range(1, count):
        out.append(out[-1] * (2 * m) * (2 * m + 1))
    return tuple(out)


_BGRAT_TERMS = 30
_ODD_FACTORIALS = _odd_factorials(_BGRAT_TERMS + 1)  # (2m + 1)!
_BGRAT_FROM = 100.0  # smallest a for the expansion
_BGRAT_MIN_X = 0.7
_BGRAT_MAX_U = 700.0  # exp(-u) stays a normal double


def _tail_large_a(a: float, log_x: float) -> float:
    """I_x(a, 1/2) for large ``a`` by the BGRAT expansion (see the module docstring)."""
    b = 0.5
    big_t = a + 0.5 * (b - 1.0)
    u = -big_t * log_x
    q = math.erfc(math.sqrt(u))
    h = math.exp(-u + b * math.log(u) - math.lgamma(b))
    total_ab = a + b
    gamma_ratio = (  # log Gamma(a) - log Gamma(a + b)
        -(a - 0.5) * math.log1p(b / a)
        - b * math.log(total_ab)
        + b
        + _stirling_tail(a)
        - _stirling_tail(total_ab)
    )
    front = math.exp(-gamma_ratio - b * math.log(big_t))
    half_log2 = (0.5 * log_x) ** 2
    p = [1.0]
    k = q  # H * J_n
    total = q
    power = 1.0  # (log(x) / 2) ** (2n - 2)
    four_t2 = 4.0 * big_t * big_t
    for n in range(1, _BGRAT_TERMS):
        s = 0.0
        for m in range(1, n):
            s += (m * b - n) * p[n - m] / _ODD_FACTORIALS[m]
        p_n = s / n + (b - 1.0) / _ODD_FACTORIALS[n]
        p.append(p_n)
        b2n = b + 2 * n - 2
        k = (b2n * (b2n + 1.0) * k + (u + b2n + 1.0) * power * h) / four_t2
        power *= half_log2
        term = p_n * k
        total += term
        if abs(term) <= 0.25 * _EPS * abs(total):
            break
    return front * total


def _logs(t: float, df: float) -> tuple[float, float, float, float]:
    """Return x = df / (df + t^2), y = 1 - x, log x and log y, without cancellation."""
    t2 = t * t
    if math.isinf(t2):  # t^2 overflows: x = df / t^2 to double precision
        log_x = math.log(df) - 2.0 * math.log(abs(t))
        return math.exp(log_x), 1.0, log_x, -math.exp(log_x)
    log_x = -math.log1p(t2 / df)
    log_y = -math.log1p(df / t2)
    return df / (df + t2), t2 / (df + t2), log_x, log_y


def two_sided_p(t: float, df: float) -> float:
    r"""Two-sided p-value of Student's t: :math:`P(|T_\nu| \ge |t|)`.

    NaN for a NaN ``t`` or ``df`` (or ``df <= 0``); 0 for an infinite ``t``; 1 for ``t = 0``.
    """
    if math.isnan(t) or math.isnan(df) or df <= 0.0:
        return math.nan
    if math.isinf(t):
        return 0.0
    if t == 0.0:
        return 1.0
    a = 0.5 * df
    x, y, log_x, log_y = _logs(t, df)
    if a >= _BGRAT_FROM and x >= _BGRAT_MIN_X and -(a - 0.25) * log_x <= _BGRAT_MAX_U:
        return min(1.0, _tail_large_a(a, log_x))
    p, _ = _beta_pair(a, 0.5, x, y, log_x, log_y)
    return min(1.0, p)


def sf(t: float, df: float) -> float:
    r"""Upper tail :math:`P(T_\nu > t)`."""
    if math.isnan(t) or math.isnan(df) or df <= 0.0:
        return math.nan
    half = 0.5 * two_sided_p(t, df)
    return half if t >= 0.0 else 1.0 - half


def _log_pdf(t: float, df: float) -> float:
    return -0.5 * (df + 1.0) * math.log1p(t * t / df) - 0.5 * math.log(df) - log_beta(0.5 * df, 0.5)


def _normal_guess(q: float) -> float:
    """Rough upper-tail normal quantile (Abramowitz and Stegun 26.2.23; error < 5e-4)."""
    s = math.sqrt(-2.0 * math.log(q))
    return s - (2.515517 + 0.802853 * s + 0.010328 * s * s) / (
        1.0 + 1.432788 * s + 0.189269 * s * s + 0.001308 * s * s * s
    )


@lru_cache(maxsize=256)
def isf(q: float, df: float) -> float:
    r"""Upper quantile: the :math:`t` with :math:`P(T_\nu > t) = q`, for :math:`0 < q < 1`."""
    if not 0.0 < q < 1.0 or math.isnan(df) or df <= 0.0:
        return math.nan
    if q > 0.5:
        return -isf(1.0 - q, df)
    if q == 0.5:
        return 0.0
    target = math.log(2.0 * q)  # solve log P(|T| > t) = log(2q) for t > 0
    z = _normal_guess(q)
    t = z + (z**3 + z) / (4.0 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96.0 * df * df)
    if not math.isfinite(t) or t <= 0.0:
        t = 1.0
    low, high = 0.0, math.inf
    for _ in range(400):
        p = two_sided_p(t, df)
        log_p = math.log(p) if p > 0.0 else -math.inf
        if log_p > target:
            low = t
        else:
            high = t
        if math.isinf(log_p):
            step = math.nan
        else:
            step = (log_p - target) * p / (2.0 * math.exp(_log_pdf(t, df)))
        candidate = t + step
        if not (low < candidate < high) or not math.isfinite(candidate):
            candidate = 2.0 * t if math.isinf(high) else 0.5 * (low + high)
            if math.isinf(high) and candidate <= low:
                candidate = 2.0 * low + 1.0
        if abs(candidate - t) <= 2.0 * _EPS * abs(t):
            return candidate
        t = candidate
    return t
