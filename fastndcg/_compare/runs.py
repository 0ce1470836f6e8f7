r"""Paired comparison of systems: :func:`compare`.

:func:`compare` takes per-query NDCG results (from any entry point) and tests, per cutoff,
whether each system differs from a baseline (or every pair). Its conveniences for TREC runs and
tables, which score the systems first, are in :mod:`fastndcg._compare.conveniences`.

Queries skipped for having no relevant item (``zero_idcg="skip"``: NaN) are dropped from both
sides of each comparison they touch, and counted (``n_skipped`` of each row).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from fastndcg._backends import resolve_backend
from fastndcg._compare import align, significance
from fastndcg._compare.multitest import adjust
from fastndcg._compare.report import COLUMNS, SYSTEM_COLUMNS, PairedComparison
from fastndcg._contract import Backend
from fastndcg._core.options import COMPARE_OPTIONS, parse, parse_compare
from fastndcg._errors import (
    InputError,
    InputTypeError,
    OptionError,
)
from fastndcg._result import NDCGResult


def _check_results(results: Any) -> tuple[list[str], list[NDCGResult]]:
    if not isinstance(results, Mapping):
        raise InputTypeError(
            "results must be a mapping of system name to NDCGResult (e.g. a dict)",
            value=type(results).__name__,
            fix=f"got {type(results).__name__}",
        )
    if len(results) == 0:
        raise InputError("results is empty", fix="pass at least 2 systems to compare")
    names = list(results)
    for name in names:
        if not isinstance(name, str):
            raise InputTypeError("system names must be strings", value=name, fix=f"got {name!r}")
        if not isinstance(results[name], NDCGResult):
            raise InputTypeError(
                f"results[{name!r}] must be an NDCGResult (from fastndcg.ndcg and friends)",
                value=type(results[name]).__name__,
                where=f"results[{name!r}]",
                fix=f"got {type(results[name]).__name__}",
            )
    if len(names) < 2:
        raise InputError(
            "compare needs at least 2 systems", value=names, fix=f"got 1 ({names[0]!r})"
        )
    cutoffs = results[names[0]].k
    for name in names[1:]:
        if results[name].k != cutoffs:
            listed = "; ".join(f"{n!r}: k={results[n].k}" for n in names)
            raise InputError(
                "all systems must be scored at the same cutoffs (each cutoff is its own measure)",
                value={n: results[n].k for n in names},
                where=f"results[{name!r}]",
                fix=f"got {listed}",
            )
    return names, [results[n] for n in names]


def check_baseline(baseline: str | None, names: list[str]) -> None:
    """An OptionError unless ``baseline`` is None or one of the systems ``names``."""
    if baseline is not None and baseline not in names:
        listed = ", ".join(repr(n) for n in names)
        raise OptionError(
            f"unknown `baseline={baseline!r}`",
            option="baseline",
            value=baseline,
            fix=f"the systems are {listed}",
        )


def _pairs(names: list[str], baseline: str | None) -> list[tuple[int, int]]:
    if baseline is None:
        return [(a, b) for a in range(len(names)) for b in range(a + 1, len(names))]
    base = names.index(baseline)
    return [(base, s) for s in range(len(names)) if s != base]


def comparison_options(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison's options among a call's ``arguments`` (its ``locals()``), checked.

    Every name of :data:`~fastndcg._core.options.COMPARE_OPTIONS` is taken, and checked through
    its record before any data is read.
    """
    return {name: parse_compare(name, arguments[name]) for name in COMPARE_OPTIONS}


def compare(
    results: Mapping[str, NDCGResult],
    *,
    baseline: str | None = None,
    test: str = "randomization",
    n_resamples: int = 10_000,
    correction: str | None = "holm",
    alpha: float = 0.05,
    ci: float = 0.95,
    seed: int = 0,
    missing: str = "error",
    backend: str = "auto",
    n_threads: int | None = None,
) -> PairedComparison:
    r"""Paired comparison of systems on the same queries: which differences are significant.

    Every cutoff ``k`` of the results is its own measure. For each measure and each
    comparison (system versus baseline) the per-query differences
    :math:`d_j = x^{\mathrm{system}}_j - x^{\mathrm{baseline}}_j` over the queries both
    systems scored are tested for a mean of zero (two-sided), and the p-values of each
    measure's comparisons are adjusted together for multiple testing.

    Parameters
    ----------
    results : mapping of str to NDCGResult
        The systems, by name, e.g. ``{"bm25": fastndcg.ndcg(...), "dense": ...}``. All must be
        scored at the same cutoffs. Queries are paired by query id.
    baseline : str or None, default None
        None compares every unordered pair once, in the order given: the pair (A, B) has
        :math:`d = B - A`. A system name compares that system with each other one:
        :math:`d = \mathrm{system} - \mathrm{baseline}`.
    test : {"randomization", "t", "bootstrap", "wilcoxon"}, default "randomization"
        ``"randomization"``: paired sign-flip test on :math:`T = \sum_j d_j`:
        :math:`p = \#\{|T^*| \ge |T| - \gamma\} / 2^n` exactly when
        :math:`2^n \le` ``n_resamples`` (all sign vectors), else
        :math:`p = (1 + \#\{|T^*_i| \ge |T| - \gamma\}) / (1 + B)` over :math:`B` random sign
        vectors; :math:`\gamma = 100\epsilon|T|` treats floating-point near-ties as ties, as
        ``scipy.stats.permutation_test`` does. ``"t"``: paired t-test,
        :math:`t = \bar d / (s/\sqrt n)`, :math:`p = P(|T_{n-1}| \ge |t|)` (equal to
        ``scipy.stats.ttest_rel``). ``"bootstrap"``: paired bootstrap of
        the queries (indices drawn with replacement),
        :math:`p = (1 + \#\{|\bar d^*_i - \bar d| \ge |\bar d|\}) / (1 + B)` (the bootstrap
        distribution shifted to the null). ``"wilcoxon"``: ``scipy.stats.wilcoxon(d)``.
    n_resamples : int, default 10000
        :math:`B`, the random sign vectors or bootstrap samples.
    correction : {"holm", "bonferroni", "bh", None}, default "holm"
        Adjustment of the p-values across the comparisons of each cutoff (the family):
        Holm :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m - j + 1) p_{(j)})`, Bonferroni
        :math:`\min(1, m p_i)`, Benjamini-Hochberg
        :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, m p_{(j)} / j)`, or none.
    alpha : float, default 0.05
        A comparison is significant when its adjusted p-value is at most ``alpha``.
    ci : float, default 0.95
        Level of the confidence intervals. The interval of the mean difference is the t
        interval :math:`\bar d \pm t_{(1 + ci)/2, n-1}\, s/\sqrt n` for ``test="t"``; the
        percentile interval of the :math:`B` paired bootstrap means for ``"bootstrap"``; for
        ``"randomization"`` and ``"wilcoxon"`` the sign-flip test inverted under the shift
        model, :math:`[\bar d - q_{(1+ci)/2}(M^*), \bar d - q_{(1-ci)/2}(M^*)]` with
        :math:`M^*_i = \sum_j s_{ij}(d_j - \bar d)/n` over the same sign vectors as the
        p-value. Each system's mean carries a t interval.
    seed : int, default 0
        Seed of the resampling, :math:`0 \le` seed :math:`< 2^{64}`. Resample :math:`i` is a
        function of (seed, :math:`i`) only: results are identical for any thread count and on
        every backend.
    missing : {"error", "zero", "intersection"}, default "error"
        A query some systems lack: ``"error"`` raises (naming how many each lacks),
        ``"zero"`` scores it 0 for them (like ``trec_eval -c``), ``"intersection"`` keeps
        only the queries every system has (the count dropped is reported). Queries skipped
        for having no relevant item (NaN) are left out of each comparison they touch, and
        counted.
    backend : str, default "auto"
        Where the resampling runs: a name from :func:`fastndcg.available_backends`, as the
        ``backend`` option of :func:`fastndcg.ndcg` takes it; every backend gives the same bits.
    n_threads : int, optional
        Threads for the resampling (restored after); the results do not depend on it.

    Returns
    -------
    PairedComparison
        Printable; ``to_pandas()``, ``to_markdown()``, ``to_latex()``, ``to_json()``,
        ``per_query()``, ``systems`` and the plots. ``explain(query)`` needs the rows: see
        :func:`compare_runs` and :func:`compare_table`.

    Raises
    ------
    OptionError
        An unknown option value or an unknown baseline (:class:`OptionTypeError`, also a
        TypeError, for a value of the wrong type).
    InputError
        Fewer than 2 systems, different cutoffs, a query id listed twice, or
        (``missing="error"``) queries some systems lack (:class:`InputTypeError` for results
        of the wrong type).
    ImportError
        A ``backend`` that cannot run here (:class:`BackendUnavailableError`).

    Examples
    --------
    >>> import numpy as np
    >>> import fastndcg
    >>> rng = np.random.default_rng(0)
    >>> grades = rng.integers(0, 4, size=(300, 20))
    >>> bm25 = fastndcg.ndcg(grades, rng.random((300, 20)), k=10)
    >>> dense = fastndcg.ndcg(grades, grades + 3 * rng.random((300, 20)), k=10)
    >>> result = fastndcg.compare({"bm25": bm25, "dense": dense}, n_resamples=2000)
    >>> row = result.rows[0]
    >>> row["baseline"], row["system"], row["n_queries"], row["significant"]
    ('bm25', 'dense', 300, True)
    >>> row["p_value"] == 1 / 2001  # no random sign vector reaches the observed sum
    True
    >>> row["ci_low"] < row["delta"] < row["ci_high"]
    True
    """
    checked = comparison_options(locals())
    engine = resolve_backend(parse("backend", backend))
    threads = parse("n_threads", n_threads)
    names, runs = _check_results(results)
    check_baseline(checked["baseline"], names)
    with engine.threads(threads):
        return _compare(results, names, runs, engine, checked)


def _compare(
    results: Mapping[str, NDCGResult],
    names: list[str],
    runs: list[NDCGResult],
    engine: Backend,
    options: dict[str, Any],
) -> PairedComparison:
    """The comparison of ``runs`` under the checked ``options`` (of ``COMPARE_OPTIONS``)."""
    test, ci = options["test"], options["ci"]
    aligned = align.align(names, runs, options["missing"])
    cutoffs = runs[0].k
    pairs = _pairs(names, options["baseline"])
    values = aligned.values

    rows: list[dict[str, Any]] = []
    groups: dict[bytes, list[int]] = {}  # comparisons sharing their queries, by query mask
    deltas: list[np.ndarray] = []
    for j, k in enumerate(cutoffs):
        for a, b in pairs:
            va, vb = values[a, :, j], values[b, :, j]
            used = ~(np.isnan(va) | np.isnan(vb))
            xa, xb = va[used], vb[used]
            d = xb - xa
            mean, var = significance.mean_and_var(d)
            row = dict.fromkeys(COLUMNS)
            row.update(
                cutoff=k,
                baseline=names[a],
                system=names[b],
                mean_baseline=float(np.mean(xa)) if xa.size else math.nan,
                mean_system=float(np.mean(xb)) if xb.size else math.nan,
                delta=mean,
                effect_size=mean / math.sqrt(var) if var and not math.isnan(var) else math.nan,
                wins=int(np.count_nonzero(xb > xa)),
                ties=int(np.count_nonzero(xb == xa)),
                losses=int(np.count_nonzero(xb < xa)),
                n_queries=int(d.size),
                n_skipped=int(used.size - d.size),
                statistic=math.nan,
                exact=False,
                resamples=0,
            )
            if test == "t":
                t, p, low, high = significance.t_test(d, ci)
                row.update(statistic=t, p_value=p, ci_low=low, ci_high=high)
            elif test == "wilcoxon":
                row.update(p_value=significance.wilcoxon(d))
            if test != "t":
                groups.setdefault(used.tobytes(), []).append(len(rows))
            rows.append(row)
            deltas.append(d)

    for members in groups.values():
        _resample_group(rows, deltas, members, engine, options)

    m = len(pairs)
    for j in range(len(cutoffs)):  # one family per cutoff: rows j*m .. j*m + m - 1
        family = rows[j * m : (j + 1) * m]
        p_values = np.array([r["p_value"] for r in family], dtype=float)
        for row, p in zip(family, adjust(p_values, options["correction"]), strict=True):
            row.update(p_adjusted=float(p), significant=bool(p <= options["alpha"]))

    systems = []
    for j, k in enumerate(cutoffs):
        for s, name in enumerate(names):
            v = values[s, :, j]
            x = v[~np.isnan(v)]
            mean, var = significance.mean_and_var(x)
            low, high = significance.t_interval(mean, var, x.size, ci)
            cells = (k, name, mean, low, high, int(x.size), int(v.size - x.size))
            systems.append(dict(zip(SYSTEM_COLUMNS, cells, strict=True)))
    return PairedComparison(
        **options,
        backend=engine.name,
        names=tuple(names),
        cutoffs=tuple(cutoffs),
        pairs=tuple(pairs),
        rows=rows,
        systems=systems,
        query_ids=aligned.query_ids,
        values=values,
        n_missing=dict(zip(names, aligned.n_missing, strict=True)),
        n_dropped=aligned.n_dropped,
        results=dict(results),
    )


def _resample_group(
    rows: list[dict[str, Any]],
    deltas: list[np.ndarray],
    members: list[int],
    engine: Backend,
    options: dict[str, Any],
) -> None:
    """The resampling part of the comparisons ``members`` (they share their queries)."""
    test, seed, n_resamples, ci = (options[name] for name in ("test", "seed", "n_resamples", "ci"))
    n = deltas[members[0]].size
    if n == 0:
        for i in members:
            rows[i].update(p_value=math.nan, ci_low=math.nan, ci_high=math.nan)
        return
    d = np.stack([deltas[i] for i in members])
    means = np.array([rows[i]["delta"] for i in members])
    if test == "bootstrap":
        boot = significance.bootstrap_means(d, seed, n_resamples, engine)
        low, high = significance.percentile_interval(boot, ci)
        observed = significance.sequential_sum(d) / n
        p_values = significance.bootstrap_pvalues(boot, observed)
        for i, lo, hi, p, stat in zip(members, low, high, p_values, observed, strict=True):
            rows[i].update(
                ci_low=float(lo),
                ci_high=float(hi),
                p_value=float(p),
                statistic=float(stat),
                resamples=n_resamples,
            )
        return
    # randomization and wilcoxon: one pass of sign vectors gives the randomization p-values
    # and the interval; a row of ones gives each sign vector's sign sum S_i
    with_signs = np.vstack([d, np.ones((1, n))])
    sums, exact = significance.signflip_sums(with_signs, seed, n_resamples, engine)
    low, high = significance.signflip_interval(sums[:, :-1], sums[:, -1], means, n, ci)
    for i, lo, hi in zip(members, low, high, strict=True):
        rows[i].update(ci_low=float(lo), ci_high=float(hi), resamples=sums.shape[0])
    if test == "randomization":
        p_values = significance.randomization_pvalues(sums[:, :-1], d, exact)
        observed = significance.sequential_sum(d)
        for i, p, t in zip(members, p_values, observed, strict=True):
            rows[i].update(p_value=float(p), exact=exact, statistic=float(t))
