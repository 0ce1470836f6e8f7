r"""The paired tests and their intervals.

They work on the per-query differences
:math:`d_j = x^{\mathrm{system}}_j - x^{\mathrm{baseline}}_j`, :math:`j = 1..n`. The
resampling functions take several comparisons at once when they share their queries (a matrix
with one comparison per row), so that each sign vector or bootstrap sample is drawn once for
all of them; the draws run on a backend (:meth:`~fastndcg._backends.Backend.signflip_sums`,
:meth:`~fastndcg._backends.Backend.bootstrap_sums`) from the counter-based streams of
:mod:`fastndcg._compare.rng`.

Intervals of the mean difference :math:`\bar d`, at level ``ci``:

``"t"``
    :math:`\bar d \pm t_{(1+\mathrm{ci})/2,\,n-1}\, s/\sqrt n` (:func:`t_test`).
``"randomization"`` and ``"wilcoxon"``
    The sign-flip test inverted under the shift model (:func:`signflip_interval`), from the
    sign vectors the randomization p-value draws anyway: no second resampling pass.
``"bootstrap"``
    The percentile interval of the paired bootstrap means (:func:`percentile_interval`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from fastndcg._compare import rng
from fastndcg._contract import Backend
from fastndcg._errors import InputError

# scipy is imported where a test runs (scipy.special takes 0.25 s to import), not with fastndcg.

# scipy.stats.permutation_test's tolerance for floating ties: 100 machine epsilons, relative
TIE_TOLERANCE = 100.0 * np.finfo(np.float64).eps


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


def t_interval(mean: float, var: float, n: int, ci: float) -> tuple[float, float]:
    r"""Student t interval of a mean, as ``scipy.stats.ttest_1samp`` gives it.

    :math:`\bar d + t_{q,\,n-1}\, s/\sqrt n` for :math:`q = (1 \mp \mathrm{ci})/2`, the
    quantiles of Student's t from ``scipy.special.stdtrit``.
    """
    if n < 2 or math.isnan(var):
        return math.nan, math.nan
    from scipy import special

    tail = 0.5 * (1.0 - ci)
    low, high = special.stdtrit(n - 1, [tail, 1.0 - tail]) * math.sqrt(var / n) + mean
    return float(low), float(high)


def t_test(d: np.ndarray, ci: float) -> tuple[float, float, float, float]:
    r"""Paired t-test: statistic, two-sided p-value and the t interval of the mean difference.

    .. math::

        t = \frac{\bar d}{s / \sqrt n}, \qquad p = P(|T_{n-1}| \ge |t|), \qquad
        \bar d \pm t_{(1+\mathrm{ci})/2,\,n-1}\,\frac{s}{\sqrt n}

    with :math:`s` the sample standard deviation (``ddof=1``) and :math:`T_{n-1}` Student's t
    (``scipy.special.stdtr``); equal to ``scipy.stats.ttest_rel(system, baseline)`` and its
    ``confidence_interval``.
    """
    from scipy import special

    n = d.size
    mean, var = mean_and_var(d)
    if n < 2:
        return math.nan, math.nan, math.nan, math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        t = float(np.float64(mean) / np.float64(math.sqrt(var / n)))
    p = 2.0 * float(special.stdtr(n - 1, -abs(t)))
    low, high = t_interval(mean, var, n, ci)
    return t, p, low, high


def is_exact(n: int, n_resamples: int) -> bool:
    """Whether the randomization test enumerates all ``2**n`` sign vectors."""
    return n < 63 and (1 << n) <= n_resamples


def signflip_sums(
    d: np.ndarray, seed: int, n_resamples: int, backend: Backend, n_chunks: int | None = None
) -> tuple[np.ndarray, bool]:
    """Sign-flipped sums of each row of ``d`` (shape (n_columns, n)), and whether exact.

    Enumerates all ``2**n`` sign vectors when ``2**n <= n_resamples`` (the result then has
    ``2**n`` rows), else draws ``n_resamples`` of them. Returns shape (resamples, n_columns).
    """
    n = d.shape[1]
    exact = is_exact(n, n_resamples)
    count = (1 << n) if exact else n_resamples
    diffs = np.ascontiguousarray(d, dtype=np.float64)
    return backend.signflip_sums(diffs, rng.sign_key(seed), exact, count, n_chunks), exact


def randomization_pvalues(sums: np.ndarray, d: np.ndarray, exact: bool) -> np.ndarray:
    r"""Two-sided paired randomisation (sign-flip) p-values of each row of ``d``.

    Under the null hypothesis each difference is as likely to have either sign. With
    :math:`T = \sum_j d_j` (summed left to right) and :math:`T^*_i = \sum_j s_{ij} d_j`,
    :math:`s_{ij} = \pm 1` (``sums``, one column per row of ``d``):

    * when all :math:`2^n` sign vectors were enumerated (``exact``),
      :math:`p = \#\{i : |T^*_i| \ge |T| - \gamma\} / 2^n` exactly;
    * otherwise :math:`p = (1 + \#\{i : |T^*_i| \ge |T| - \gamma\}) / (1 + B)` over the
      :math:`B` random sign vectors (the Monte Carlo p-value, never 0).

    :math:`\gamma = 100\,\epsilon\,|T|` (:math:`\epsilon` the float64 machine epsilon) counts
    floating-point near-ties as ties, as ``scipy.stats.permutation_test`` does; here on
    absolute values.
    """
    observed = np.abs(sequential_sum(d))
    bound = observed - TIE_TOLERANCE * observed
    hits = np.count_nonzero(np.abs(sums) >= bound[None, :], axis=0)
    count = sums.shape[0]
    if exact:
        return hits / count
    return (1.0 + hits) / (1.0 + count)


def randomization(
    d: np.ndarray, seed: int, n_resamples: int, backend: Backend, n_chunks: int | None = None
) -> tuple[np.ndarray, bool, int]:
    """Randomisation p-values of each row of ``d``, whether exact, and the sign vectors used.

    See :func:`randomization_pvalues` for the formula.
    """
    sums, exact = signflip_sums(d, seed, n_resamples, backend, n_chunks)
    return randomization_pvalues(sums, d, exact), exact, sums.shape[0]


def signflip_interval(
    sums: np.ndarray, signs: np.ndarray, means: np.ndarray, n: int, ci: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Interval of the mean difference from the sign-flip test, inverted under the shift model.

    Under the shift model :math:`d_j = \delta + e_j` with errors symmetric about 0, the
    sign-flip test of :math:`H_0: \delta = \delta_0` flips the signs of
    :math:`d_j - \delta_0`. Its null distribution is approximated by the one at the estimate
    :math:`\delta_0 = \bar d`, which the p-value's sign vectors give without another pass:

    .. math::

        M^*_i = \frac{1}{n}\sum_j s_{ij}\,(d_j - \bar d)
              = \frac{T^*_i - \bar d\, S_i}{n}, \qquad S_i = \sum_j s_{ij},

    and the values :math:`\delta_0` the test does not reject form the interval

    .. math::

        \bigl[\bar d - q_{(1+\mathrm{ci})/2}(M^*),\; \bar d - q_{(1-\mathrm{ci})/2}(M^*)\bigr]

    (quantiles with linear interpolation, ``numpy.quantile``'s default). ``sums`` holds
    :math:`T^*` (one column per comparison), ``signs`` the sign sums :math:`S` of the same
    sign vectors, ``means`` :math:`\bar d`. Its width is that of a t interval as :math:`n`
    grows (:math:`M^*` has variance :math:`\sum_j (d_j - \bar d)^2 / n^2`); unlike the
    bootstrap it needs no resampling of its own, which at a million queries halves the time.
    """
    centred = (sums - signs[:, None] * means[None, :]) / n
    low = np.quantile(centred, 0.5 * (1.0 - ci), axis=0)
    high = np.quantile(centred, 0.5 * (1.0 + ci), axis=0)
    return means - high, means - low


def bootstrap_means(
    d: np.ndarray, seed: int, n_resamples: int, backend: Backend, n_chunks: int | None = None
) -> np.ndarray:
    """Bootstrap means of each row of ``d``: shape (n_resamples, n_rows).

    Resample :math:`i` draws :math:`n` queries with replacement (the same draws for every row:
    paired) and averages each row over them (see :mod:`fastndcg._compare.rng`).
    """
    n = d.shape[1]
    if n > rng.MAX_BOOTSTRAP_QUERIES:
        raise InputError(
            f"the bootstrap draws query indices of at most 32 bits; {n} queries are too many",
            value=n,
            fix="use `test='randomization'` or `test='t'`",
        )
    values = np.ascontiguousarray(d, dtype=np.float64)
    key = rng.bootstrap_key(seed)
    sums = backend.bootstrap_sums(values, key, rng.poisson_bounds(n), n_resamples, n_chunks)
    return sums / n


def percentile_interval(means: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Percentile interval of bootstrap means, for each column.

    The :math:`(1 - \mathrm{ci})/2` and :math:`(1 + \mathrm{ci})/2` quantiles of the bootstrap
    means, with linear interpolation between order statistics (``numpy.quantile``'s default).
    """
    low = np.quantile(means, 0.5 * (1.0 - ci), axis=0)
    high = np.quantile(means, 0.5 * (1.0 + ci), axis=0)
    return low, high


def bootstrap_pvalues(means: np.ndarray, observed: np.ndarray) -> np.ndarray:
    r"""Two-sided bootstrap p-values, from the bootstrap distribution shifted to the null.

    .. math::

        p = \frac{1 + \#\{i : |\bar d^*_i - \bar d| \ge |\bar d|\}}{1 + B}.
    """
    hits = np.count_nonzero(np.abs(means - observed[None, :]) >= np.abs(observed)[None, :], 0)
    return (1.0 + hits) / (1.0 + means.shape[0])


def wilcoxon(d: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test (``scipy.stats.wilcoxon(d)``)."""
    from scipy import stats

    if d.size == 0:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.wilcoxon(d).pvalue)
