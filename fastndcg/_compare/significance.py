r"""The paired tests and their intervals.

They work on the per-query differences
:math:`d_j = x^{\mathrm{system}}_j - x^{\mathrm{baseline}}_j`, :math:`j = 1..n`, and test the
shift :math:`\delta` of their distribution: two-sided (:math:`\delta \ne 0`), ``"greater"``
(:math:`\delta > 0`: the system better) or ``"less"``. The resampling functions take several
comparisons at once when they share their queries (a matrix with one comparison per row), so
that each sign vector or bootstrap sample is drawn once for all of them; the draws run on a
backend (:meth:`~fastndcg._backends.Backend.signflip_sums`,
:meth:`~fastndcg._backends.Backend.bootstrap_sums`) from the counter-based streams of
:mod:`fastndcg._compare.rng`, block by block (:mod:`fastndcg._compare.draws`): memory does not
grow with the number of resamples.

Intervals, at level ``ci``, one-sided for a one-sided alternative:

``"t"``
    The t interval (:func:`t_test`), the t-test inverted.
``"randomization"`` and ``"wilcoxon"``
    The sign-flip test inverted (:func:`signflip_test`): the shifts :math:`\delta_0` the test
    of :math:`d - \delta_0` does not reject at level :math:`1 - \mathrm{ci}`, with the same
    sign vectors. It excludes 0 exactly when the test rejects at that level.
``"bootstrap"``
    ``scipy.stats.bootstrap``'s percentile, basic or BCa interval of the paired bootstrap
    means (:func:`bootstrap_test`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from fastndcg._compare import rng
from fastndcg._compare.draws import OrderStatistics, blocks, interpolated, quantile_ranks
from fastndcg._contract import Backend
from fastndcg._errors import InputError

# scipy is imported where a test runs (scipy.special takes 0.25 s to import), not with fastndcg.

# scipy.stats.permutation_test's tolerance for floating ties: 100 machine epsilons, relative
TIE_TOLERANCE = 100.0 * np.finfo(np.float64).eps
# Below this many queries the bootstrap's tests reject far more often than their level (at
# 0.05: 0.08 at 10 queries, 0.07 at 20 with normal differences; 0.15 and 0.11 with skewed
# ones), and fewer than 2**20 sign vectors enumerate the exact sign-flip test: compare uses
# that instead.
MIN_BOOTSTRAP_QUERIES = 20


@dataclass(frozen=True)
class Resampled:
    """What a resampling test gives for each comparison of a group (arrays, one per row)."""

    p_values: np.ndarray
    low: np.ndarray
    high: np.ndarray
    statistic: np.ndarray
    exact: bool
    count: int  # sign vectors or bootstrap samples drawn


def sequential_sum(values: np.ndarray) -> np.ndarray:
    """Sum along the last axis, left to right (the order of the resampling kernels)."""
    if values.shape[-1] == 0:
        return np.zeros(values.shape[:-1])
    return np.cumsum(values, axis=-1)[..., -1]


def mean_and_var(d: np.ndarray) -> tuple[float, float]:
    """Mean and sample variance (ddof=1) as ``scipy.stats.ttest_1samp`` forms them."""
    n = d.size
    if n == 0:
        return math.nan, math.nan
    mean = float(np.mean(d))
    if n < 2:
        return mean, math.nan
    return mean, float(np.mean((d - mean) ** 2)) * (n / (n - 1))


def t_interval(
    mean: float, var: float, n: int, ci: float, alternative: str = "two-sided"
) -> tuple[float, float]:
    r"""Student t interval of a mean, as ``scipy.stats.ttest_1samp`` gives it.

    Two-sided: :math:`\bar d + t_{q,\,n-1}\, s/\sqrt n` for :math:`q = (1 \mp \mathrm{ci})/2`;
    ``"greater"``: :math:`[\bar d + t_{1-\mathrm{ci},\,n-1}\, s/\sqrt n, \infty)`; ``"less"``:
    :math:`(-\infty, \bar d + t_{\mathrm{ci},\,n-1}\, s/\sqrt n]`; the quantiles of Student's t
    from ``scipy.special.stdtrit``.
    """
    if n < 2 or math.isnan(var):
        return math.nan, math.nan
    from scipy import special

    scale = math.sqrt(var / n)
    if alternative == "greater":
        return float(special.stdtrit(n - 1, 1.0 - ci) * scale + mean), math.inf
    if alternative == "less":
        return -math.inf, float(special.stdtrit(n - 1, ci) * scale + mean)
    tail = 0.5 * (1.0 - ci)
    low, high = special.stdtrit(n - 1, [tail, 1.0 - tail]) * scale + mean
    return float(low), float(high)


def t_test(
    d: np.ndarray, ci: float, alternative: str = "two-sided"
) -> tuple[float, float, float, float]:
    r"""Paired t-test: statistic, p-value and the t interval of the mean difference.

    .. math::

        t = \frac{\bar d}{s / \sqrt n}, \qquad
        p = P(|T_{n-1}| \ge |t|),\ P(T_{n-1} \ge t)\ \text{(greater)},\
        P(T_{n-1} \le t)\ \text{(less)}

    with :math:`s` the sample standard deviation (``ddof=1``) and :math:`T_{n-1}` Student's t
    (``scipy.special.stdtr``); equal to ``scipy.stats.ttest_rel(system, baseline,
    alternative=...)`` and its ``confidence_interval`` (:func:`t_interval`).
    """
    from scipy import special

    n = d.size
    mean, var = mean_and_var(d)
    if n < 2:
        return math.nan, math.nan, math.nan, math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        t = float(np.float64(mean) / np.float64(math.sqrt(var / n)))
    if alternative == "greater":
        p = float(special.stdtr(n - 1, -t))
    elif alternative == "less":
        p = float(special.stdtr(n - 1, t))
    else:
        p = 2.0 * float(special.stdtr(n - 1, -abs(t)))
    low, high = t_interval(mean, var, n, ci, alternative)
    return t, p, low, high


def is_exact(n: int, n_resamples: int) -> bool:
    """Whether the randomization test enumerates all ``2**n`` sign vectors."""
    return n < 63 and (1 << n) <= n_resamples


def _reaches(resampled: np.ndarray, observed: np.ndarray, alternative: str) -> np.ndarray:
    r"""Which resampled statistics are at least as extreme as ``observed`` (per column).

    Two-sided :math:`|T^*| \ge |T| - \gamma`, ``"greater"`` :math:`T^* \ge T - \gamma`,
    ``"less"`` :math:`T^* \le T + \gamma`, with :math:`\gamma = 100\epsilon|T|`: floating-point
    near-ties count as ties, as in ``scipy.stats.permutation_test``.
    """
    tolerance = TIE_TOLERANCE * np.abs(observed)
    if alternative == "greater":
        return resampled >= observed - tolerance
    if alternative == "less":
        return resampled <= observed + tolerance
    return np.abs(resampled) >= np.abs(observed) - tolerance


def _p_value(hits: np.ndarray, count: int, exact: bool) -> np.ndarray:
    """:math:`h / 2^n` when every sign vector was enumerated, else :math:`(1 + h)/(1 + B)`."""
    return hits / count if exact else (1.0 + hits) / (1.0 + count)


def _needed_hits(count: int, exact: bool, level: float) -> int:
    """The fewest hits whose p-value (:func:`_p_value`) is above ``level``: not rejected."""
    guess = math.floor(level * count) if exact else math.floor(level * (1 + count)) - 1
    hits = min(max(guess, 0), count)
    while hits > 0 and _p_value(np.float64(hits - 1), count, exact) > level:
        hits -= 1
    while _p_value(np.float64(hits), count, exact) <= level:
        hits += 1
    return hits


def _shift_bounds(
    sums: np.ndarray, signs: np.ndarray, observed: np.ndarray, n: int, hit: np.ndarray, side: str
) -> np.ndarray:
    r"""Per sign vector, the shifts :math:`\delta` at which it reaches the observed statistic.

    With :math:`k` of the :math:`n` differences negated (:math:`k = (n - S)/2`, :math:`S` the
    sign sum), :math:`F = (T - T^*)/2` their sum and :math:`K = (T + T^*)/2` the others',
    the sign vector reaches :math:`T(\delta) = \sum_j (d_j - \delta)` two-sided exactly for
    :math:`\delta` between :math:`F/k` and :math:`K/(n - k)` (an interval holding
    :math:`\bar d`; the whole line when :math:`k` is 0 or :math:`n`), for ``"greater"`` from
    :math:`F/k` up, for ``"less"`` up to :math:`F/k`. Where the p-value counted a hit at 0
    (``hit``, with its tolerance) the bound is moved to take in 0, so that the interval and
    the test agree exactly. Returns (lower bounds, upper bounds) side by side for a two-sided
    test, else the one bound.
    """
    flipped = 0.5 * (n - signs)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_flipped = 0.5 * (observed - sums) / flipped
        mean_kept = 0.5 * (observed + sums) / (n - flipped)
    none = flipped == 0  # the identity: reaches T at every shift
    if side == "greater":
        low = np.where(none, -np.inf, mean_flipped)
        return np.where(hit, np.minimum(low, 0.0), low) + 0.0
    if side == "less":
        high = np.where(none, np.inf, mean_flipped)
        return np.where(hit, np.maximum(high, 0.0), high) + 0.0
    whole = none | (flipped == n)
    estimate = observed / n
    low = np.minimum(np.minimum(mean_flipped, mean_kept), estimate)
    high = np.maximum(np.maximum(mean_flipped, mean_kept), estimate)
    low = np.where(whole, -np.inf, np.where(hit, np.minimum(low, 0.0), low))
    high = np.where(whole, np.inf, np.where(hit, np.maximum(high, 0.0), high))
    return np.hstack([low, high]) + 0.0


def signflip_test(
    d: np.ndarray,
    seed: int,
    n_resamples: int,
    backend: Backend,
    alternative: str = "two-sided",
    ci: float | None = 0.95,
    enumerate_all: bool = False,
) -> Resampled:
    r"""Paired randomization (sign-flip) test of each row of ``d``, and its interval.

    Under the null hypothesis each difference is as likely to have either sign. With
    :math:`T = \sum_j d_j` (summed left to right) and :math:`T^*_i = \sum_j s_{ij} d_j`,
    :math:`s_{ij} = \pm 1`, and :math:`h` the sign vectors reaching :math:`T` (:func:`_reaches`):

    * when all :math:`2^n` sign vectors are enumerated (:math:`2^n \le` ``n_resamples``, or
      ``enumerate_all``), :math:`p = h / 2^n` exactly;
    * otherwise :math:`p = (1 + h) / (1 + B)` over the :math:`B` random sign vectors (the Monte
      Carlo p-value, never 0).

    The interval at level ``ci`` is the set of shifts :math:`\delta_0` whose test on
    :math:`d - \delta_0`, with the same sign vectors, has :math:`p > 1 - \mathrm{ci}`: a sign
    vector reaches the shifted statistic on an interval of shifts (:func:`_shift_bounds`), so
    the set runs from the :math:`h_{\min}`-th smallest lower bound to the
    :math:`h_{\min}`-th largest upper bound, :math:`h_{\min}` the fewest hits not rejected
    (the whole line when even 0 hits are not rejected: too few queries for this level).
    ``ci=None`` computes the p-values only.
    """
    c, n = d.shape
    exact = enumerate_all or is_exact(n, n_resamples)
    count = (1 << n) if exact else n_resamples
    observed = sequential_sum(d)
    rows = np.ascontiguousarray(np.vstack([d, np.ones((1, n))]), dtype=np.float64)
    key = rng.sign_key(seed)
    width = 2 * c if alternative == "two-sided" else c

    def draw(first: int, size: int) -> tuple[np.ndarray, np.ndarray]:
        sums = backend.signflip_sums(rows, key, exact, size, first=first)
        hit = _reaches(sums[:, :c], observed, alternative)
        if ci is None:
            return hit, sums
        return hit, _shift_bounds(sums[:, :c], sums[:, c], observed, n, hit, alternative)

    hits = np.zeros(c, dtype=np.int64)
    bounds = OrderStatistics(count, width) if ci is not None else None
    for first, size in blocks(count, n, c + 1):
        hit, values = draw(first, size)
        hits += np.count_nonzero(hit, axis=0)
        if bounds is not None:
            bounds.add(values)
    p_values = _p_value(hits, count, exact)
    low, high = np.full(c, -np.inf), np.full(c, np.inf)
    if bounds is None:
        low[:] = high[:] = math.nan
    elif (needed := _needed_hits(count, exact, 1.0 - ci)) > 0:
        wanted = []
        if alternative != "less":  # the lower bounds' column come first
            wanted += [(j, needed - 1) for j in range(c)]
        if alternative != "greater":
            upper = c if alternative == "two-sided" else 0
            wanted += [(upper + j, count - needed) for j in range(c)]

        def replay(consume):
            for first, size in blocks(count, n, c + 1):
                consume(draw(first, size)[1])

        values = iter(bounds.select(wanted, replay))
        if alternative != "less":
            low = np.array([next(values) for _ in range(c)])
        if alternative != "greater":
            high = np.array([next(values) for _ in range(c)])
    return Resampled(p_values, low, high, observed, exact, count)


def randomization(
    d: np.ndarray, seed: int, n_resamples: int, backend: Backend
) -> tuple[np.ndarray, bool, int]:
    """Two-sided randomization p-values of each row of ``d``, whether exact, the sign vectors.

    The p-values of :func:`signflip_test` alone (no interval).
    """
    result = signflip_test(d, seed, n_resamples, backend, ci=None)
    return result.p_values, result.exact, result.count


def _acceleration(d: np.ndarray) -> np.ndarray:
    r"""BCa's acceleration of the mean of each row, from the jackknife (as scipy forms it).

    Leaving query :math:`j` out moves the mean by :math:`(d_j - \bar d)/(n - 1)`, so
    :math:`\hat a = \sum_j c_j^3 / (6 (\sum_j c_j^2)^{3/2})` with :math:`c_j = d_j - \bar d`.
    """
    centred = d - d.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sum(centred**3, axis=1) / (6.0 * np.sum(centred**2, axis=1) ** 1.5)


def _interval_levels(
    ci: float, alternative: str, method: str, z0: np.ndarray, acceleration: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The quantile levels of the bootstrap means an interval reads, per comparison."""
    from scipy import special

    alpha = (1.0 - ci) / 2 if alternative == "two-sided" else 1.0 - ci
    c = z0.size
    if method != "bca":
        return np.full(c, alpha), np.full(c, 1.0 - alpha)
    levels = []
    for z in (special.ndtri(alpha), -special.ndtri(alpha)):
        with np.errstate(divide="ignore", invalid="ignore"):
            levels.append(special.ndtr(z0 + (z0 + z) / (1.0 - acceleration * (z0 + z))))
    return levels[0], levels[1]


def bootstrap_test(
    d: np.ndarray,
    seed: int,
    n_resamples: int,
    backend: Backend,
    alternative: str = "two-sided",
    ci: float = 0.95,
    method: str = "percentile",
) -> Resampled:
    r"""Paired bootstrap test of each row of ``d``, and the bootstrap interval of its mean.

    Resample :math:`i` draws :math:`n` queries with replacement (the same draws for every
    row: paired) and averages each row over them: :math:`\bar d^*_i`. The p-value tests the
    bootstrap distribution shifted to the null, :math:`\bar d^* - \bar d`:

    .. math::

        p = \frac{1 + \#\{i : |\bar d^*_i - \bar d| \ge |\bar d|\}}{1 + B}

    (``"greater"``: :math:`\bar d^*_i - \bar d \ge \bar d`; ``"less"``: :math:`\le`). The
    interval is ``scipy.stats.bootstrap``'s ``method``: ``"percentile"``, the quantiles
    :math:`\alpha` and :math:`1 - \alpha` of the :math:`\bar d^*` (:math:`\alpha = (1 -
    \mathrm{ci})/2`, or :math:`1 - \mathrm{ci}` one-sided; linear interpolation, as
    ``numpy.quantile``); ``"basic"``, those reflected about :math:`\bar d`
    (:math:`2\bar d - q_{1-\alpha}, 2\bar d - q_\alpha`); ``"bca"``, the quantiles at levels
    corrected for bias (:math:`z_0 = \Phi^{-1}` of the share of :math:`\bar d^*` below
    :math:`\bar d`, ties counted half) and skew (the jackknife acceleration,
    :func:`_acceleration`). A one-sided interval is unbounded on the other side.
    """
    c, n = d.shape
    if n > rng.MAX_BOOTSTRAP_QUERIES:
        raise InputError(
            f"the bootstrap draws query indices of at most 32 bits; {n} queries are too many",
            value=n,
            fix="use `test='randomization'` or `test='t'`",
        )
    values = np.ascontiguousarray(d, dtype=np.float64)
    key, thresholds = rng.bootstrap_key(seed), rng.poisson_bounds(n)
    observed = sequential_sum(values) / n

    def draw(first: int, size: int) -> np.ndarray:
        return backend.bootstrap_sums(values, key, thresholds, size, first=first) / n

    hits = np.zeros(c, dtype=np.int64)
    below = np.zeros(c, dtype=np.int64)  # twice the share below, ties counted half
    means = OrderStatistics(n_resamples, c)
    for first, size in blocks(n_resamples, n, c):
        boot = draw(first, size)
        hits += np.count_nonzero(_reaches(boot - observed, observed, alternative), axis=0)
        below += np.count_nonzero(boot < observed, axis=0)
        below += np.count_nonzero(boot <= observed, axis=0)
        means.add(boot)
    p_values = (1.0 + hits) / (1.0 + n_resamples)

    from scipy import special

    z0 = special.ndtri(below / (2.0 * n_resamples))
    lower_level, upper_level = _interval_levels(ci, alternative, method, z0, _acceleration(d))
    wanted, plan = [], []
    for j in range(c):
        for level in (lower_level[j], upper_level[j]):
            if math.isnan(level):
                plan.append(None)
                continue
            low, high, gamma = quantile_ranks(n_resamples, float(level))
            plan.append((len(wanted), gamma))
            wanted += [(j, low), (j, high)]

    def replay(consume):
        for first, size in blocks(n_resamples, n, c):
            consume(draw(first, size))

    selected = means.select(wanted, replay)
    quantiles = np.array(
        [
            math.nan if step is None else interpolated(*selected[step[0] : step[0] + 2], step[1])
            for step in plan
        ]
    ).reshape(c, 2)
    low, high = quantiles[:, 0], quantiles[:, 1]
    if method == "basic":
        low, high = 2.0 * observed - high, 2.0 * observed - low
    if alternative == "greater":
        high = np.full(c, np.inf)
    elif alternative == "less":
        low = np.full(c, -np.inf)
    return Resampled(p_values, low, high, observed, False, n_resamples)


def wilcoxon(
    d: np.ndarray,
    alternative: str = "two-sided",
    zero_method: str = "wilcox",
    continuity: bool = False,
) -> tuple[float, float]:
    """Statistic and p-value of the Wilcoxon signed-rank test: ``scipy.stats.wilcoxon(d, ...)``.

    With scipy's ``method="auto"``, ``zero_method`` and ``correction=continuity``: the exact
    null distribution for up to 50 differences without ties or zeros; with ties or zeros, the
    exact sign-flip test over all :math:`2^n` sign vectors for up to
    :data:`WILCOXON_FLIPS_UP_TO` differences (:func:`_signed_rank_flips`), else the normal
    approximation with its tie correction. NaN when no difference is left to rank.
    """
    from scipy import stats

    if not np.any(d):  # no difference, or none but zeros: nothing to rank
        return math.nan, math.nan
    n = d.size
    if n <= WILCOXON_FLIPS_UP_TO and np.all(np.isfinite(d)):
        if np.any(d == 0) or np.unique(np.abs(d)).size < n:  # scipy's own choice of method
            return _signed_rank_flips(d, alternative, zero_method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        result = stats.wilcoxon(
            d, zero_method=zero_method, correction=continuity, alternative=alternative
        )
    return float(result.statistic), float(result.pvalue)


# scipy.stats.wilcoxon enumerates the 2**n sign vectors of differences with ties or zeros up to
# this many differences (method="auto")
WILCOXON_FLIPS_UP_TO = 13


def _signed_rank_flips(d: np.ndarray, alternative: str, zero_method: str) -> tuple[float, float]:
    r"""The exact sign-flip Wilcoxon test of scipy, on differences with ties or zeros, at once.

    The ranks :math:`r_j` of :math:`|d_j|` (tied ones averaged; zeros dropped under
    ``"wilcox"``, ranked under ``"pratt"`` and ``"zsplit"``) do not change when signs flip, so
    the null distribution of :math:`R^+ = \sum_{d_j > 0} r_j` (plus half the zeros' ranks
    under ``"zsplit"``) is :math:`\sum_j b_j r_j` over every :math:`b \in \{0, 1\}^m` of the
    :math:`m` non-zero differences: one product of matrices where scipy evaluates its
    statistic once per sign vector in Python (seconds a test). The p-value is scipy's: the
    share of sign vectors at least as extreme on each side (with :data:`TIE_TOLERANCE`), the
    smaller doubled and capped at 1 when two-sided; ranks are multiples of 1/2 and their sums
    exact, so the bits are scipy's. The statistic is :math:`\min(R^+, R^-)` two-sided, else
    :math:`R^+`.
    """
    from scipy import stats

    nonzero = d != 0
    if zero_method == "wilcox":
        ranks = stats.rankdata(np.abs(d[nonzero]))
        zeros_half = 0.0
    else:
        every = stats.rankdata(np.abs(d))
        ranks = every[nonzero]
        zeros_half = float(every[~nonzero].sum()) / 2 if zero_method == "zsplit" else 0.0
    positive = d[nonzero] > 0
    r_plus = float(ranks[positive].sum()) + zeros_half
    r_minus = float(ranks[~positive].sum()) + zeros_half
    m = ranks.size
    signs = (np.arange(1 << m)[:, None] >> np.arange(m)) & 1
    null = signs @ ranks + zeros_half
    tolerance = TIE_TOLERANCE * abs(r_plus)
    less = np.count_nonzero(null <= r_plus + tolerance) / (1 << m)
    greater = np.count_nonzero(null >= r_plus - tolerance) / (1 << m)
    if alternative == "less":
        return r_plus, less
    if alternative == "greater":
        return r_plus, greater
    return min(r_plus, r_minus), min(2.0 * min(less, greater), 1.0)
