r"""Paired comparison of systems: :func:`compare`.

:func:`compare` takes per-query results (NDCG from any entry point, or the measures of
:func:`fastndcg.evaluate`) and tests, per measure (each cutoff of NDCG is one), whether each
system differs from a baseline (or every pair). Its conveniences for TREC runs and
tables, which score the systems first, are in :mod:`fastndcg._compare.conveniences`.

Queries skipped for having no relevant item (``zero_idcg="skip"``: NaN) are dropped from both
sides of each comparison they touch, and counted (``n_skipped`` of each row).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fastndcg._backends import resolve_backend
from fastndcg._compare import align, significance
from fastndcg._compare.multitest import adjust
from fastndcg._compare.report import COLUMNS, SYSTEM_COLUMNS, PairedComparison
from fastndcg._contract import Backend
from fastndcg._core.measures import parse_measures
from fastndcg._core.options import COMPARE_OPTIONS, parse, parse_compare
from fastndcg._errors import InputError, InputTypeError, OptionError
from fastndcg._result import MeasuresResult, NDCGResult

Result = NDCGResult | MeasuresResult


@dataclass(frozen=True)
class Blocks:
    """The measures a comparison tests, one block of comparisons each.

    Every cutoff of NDCGResults is its own measure (``NDCG@10``, ``NDCG`` for the whole list);
    the measures of MeasuresResults are theirs, named as given.
    """

    labels: tuple[str, ...]
    cutoffs: tuple[int | None, ...]
    of_measures: bool  # the results are MeasuresResults


def _check_results(results: Any) -> tuple[list[str], list[Result], Blocks]:
    if not isinstance(results, Mapping):
        raise InputTypeError(
            "results must be a mapping of system name to NDCGResult or MeasuresResult "
            "(e.g. a dict)",
            value=type(results).__name__,
            fix=f"got {type(results).__name__}",
        )
    if len(results) == 0:
        raise InputError("results is empty", fix="pass at least 2 systems to compare")
    names = list(results)
    for name in names:
        if not isinstance(name, str):
            raise InputTypeError("system names must be strings", value=name, fix=f"got {name!r}")
        if not isinstance(results[name], (NDCGResult, MeasuresResult)):
            raise InputTypeError(
                f"results[{name!r}] must be an NDCGResult (from fastndcg.ndcg and friends) or a "
                "MeasuresResult (from fastndcg.evaluate, evaluate_run)",
                value=type(results[name]).__name__,
                where=f"results[{name!r}]",
                fix=f"got {type(results[name]).__name__}",
            )
    if len(names) < 2:
        raise InputError(
            "compare needs at least 2 systems", value=names, fix=f"got 1 ({names[0]!r})"
        )
    runs = [results[n] for n in names]
    kinds = {type(r).__name__ for r in runs}
    if len(kinds) > 1:
        raise InputError(
            "the systems mix NDCGResults and MeasuresResults",
            value={n: type(r).__name__ for n, r in zip(names, runs, strict=True)},
            fix="score every system with fastndcg.evaluate or evaluate_run (nDCG is one of "
            "the measures: measures=['nDCG@10', ...]), or every one with the NDCG functions",
        )
    if isinstance(runs[0], MeasuresResult):
        return names, runs, _measure_blocks(names, runs)
    cutoffs = runs[0].k
    for name in names[1:]:
        if results[name].k != cutoffs:
            listed = "; ".join(f"{n!r}: k={results[n].k}" for n in names)
            raise InputError(
                "all systems must be scored at the same cutoffs (each cutoff is its own measure)",
                value={n: results[n].k for n in names},
                where=f"results[{name!r}]",
                fix=f"got {listed}",
            )
    labels = tuple("NDCG" if k is None else f"NDCG@{k}" for k in cutoffs)
    return names, runs, Blocks(labels, tuple(cutoffs), of_measures=False)


def _measure_blocks(names: list[str], runs: list[Any]) -> Blocks:
    """The measures of MeasuresResults, which must be the same, in the same order."""
    first = runs[0].measures
    for name, run in zip(names[1:], runs[1:], strict=True):
        if run.measures == first:
            continue
        lacking, extra = set(first) - set(run.measures), set(run.measures) - set(first)
        differ = (
            f"{name!r} lacks {sorted(lacking)} and has {sorted(extra)} that {names[0]!r} lacks"
            if lacking or extra
            else "the same measures in another order"
        )
        raise InputError(
            f"all systems must have the same measures, in the same order: {differ}",
            value={n: list(r.measures) for n, r in zip(names, runs, strict=True)},
            where=f"results[{name!r}]",
            fix=f"score every system with measures={list(first)!r}",
        )
    cutoffs = tuple(measure.cutoff for measure in parse_measures(list(first)))
    return Blocks(tuple(first), cutoffs, of_measures=True)


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
    results: Mapping[str, NDCGResult] | Mapping[str, MeasuresResult],
    *,
    baseline: str | None = None,
    test: str = "randomization",
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    ci_method: str = "percentile",
    zero_method: str = "wilcox",
    continuity: bool = False,
    correction: str | None = "holm",
    family: str = "measure",
    alpha: float = 0.05,
    ci: float = 0.95,
    seed: int = 0,
    missing: str = "error",
    backend: str = "auto",
    n_threads: int | None = None,
) -> PairedComparison:
    r"""Paired comparison of systems on the same queries: which differences are significant.

    Every measure of the results is a block of comparisons: each measure of MeasuresResults
    (:func:`fastndcg.evaluate`, :func:`fastndcg.evaluate_run`), each cutoff ``k`` of
    NDCGResults. For each measure and each comparison (system versus baseline) the per-query
    differences :math:`d_j = x^{\mathrm{system}}_j - x^{\mathrm{baseline}}_j` over the queries
    both systems scored are tested for a shift of zero, and the p-values of each measure's
    comparisons (or of all, ``family="all"``) are adjusted together for multiple testing. The
    test and the means shown are on the per-query values, also for a measure whose summary is
    not their mean (the counts' sums, GMAP's geometric mean).

    Parameters
    ----------
    results : mapping of str to NDCGResult, or of str to MeasuresResult
        The systems, by name, e.g. ``{"bm25": fastndcg.ndcg(...), "dense": ...}``: all
        NDCGResults scored at the same cutoffs, or all MeasuresResults of the same measures in
        the same order (a mix is refused: nDCG is one of the measures of
        :func:`fastndcg.evaluate`). Queries are paired by query id.
    baseline : str or None, default None
        None compares every unordered pair once, in the order given: the pair (A, B) has
        :math:`d = B - A`. A system name compares that system with each other one:
        :math:`d = \mathrm{system} - \mathrm{baseline}`.
    test : {"randomization", "t", "bootstrap", "wilcoxon"}, default "randomization"
        ``"randomization"`` (alias ``"fisher"``): paired sign-flip test on
        :math:`T = \sum_j d_j`, exact (:math:`p = \#\{T^* \text{ as extreme}\} / 2^n`) when
        :math:`2^n \le` ``n_resamples``, else
        :math:`p = (1 + \#\{T^*_i \text{ as extreme}\}) / (1 + B)` over :math:`B` random sign
        vectors; floating-point near-ties (within :math:`100\epsilon|T|`) count as ties, as
        in ``scipy.stats.permutation_test``. ``"t"`` (alias ``"student"``): paired t-test,
        equal to ``scipy.stats.ttest_rel``. ``"bootstrap"``: paired bootstrap of the queries,
        :math:`p = (1 + \#\{|\bar d^*_i - \bar d| \ge |\bar d|\}) / (1 + B)` (the bootstrap
        distribution shifted to the null); a comparison of fewer than 20 queries
        (``MIN_BOOTSTRAP_QUERIES``), where the bootstrap rejects far more often than its
        level, is tested with the exact sign-flip test instead, with a warning, and its row
        says so (``row["test"]``). ``"wilcoxon"``: ``scipy.stats.wilcoxon(d)`` with
        ``zero_method``, ``continuity`` and scipy's ``method="auto"``.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        The alternative hypothesis about the shift of :math:`d`: ``"greater"``, the system
        better than the baseline; ``"less"``, worse. A one-sided test has a one-sided
        interval (unbounded on the other side), as in scipy.
    n_resamples : int, default 10000
        :math:`B`, the random sign vectors or bootstrap samples, at most :math:`10^9`. Memory
        does not grow with it; time does.
    ci_method : {"percentile", "basic", "bca"}, default "percentile"
        The bootstrap's interval, as ``scipy.stats.bootstrap``'s ``method`` (``"BCa"`` is
        accepted). Only ``test="bootstrap"`` reads it.
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        What the Wilcoxon test does with zero differences, as ``scipy.stats.wilcoxon``:
        ``"wilcox"`` drops them (``row["n_tested"]`` counts the queries left).
    continuity : bool, default False
        The Wilcoxon test's continuity correction of its normal approximation (scipy's
        ``correction``).
    correction : str or None, default "holm"
        Adjustment of the p-values across the comparisons of each family, as
        ``statsmodels.stats.multitest.multipletests``: ``"holm"``, ``"bonferroni"``,
        ``"sidak"``, ``"holm-sidak"``, ``"hommel"`` (family-wise error rate), ``"bh"``
        (alias ``"fdr_bh"``), ``"by"`` (``"fdr_by"``; false discovery rate), or None.
    family : {"measure", "all"}, default "measure"
        The comparisons each correction covers: those of each measure (each cutoff), or
        every comparison of every measure together.
    alpha : float, default 0.05
        A comparison is significant when its adjusted p-value is at most ``alpha``.
    ci : float, default 0.95
        Level of the confidence intervals of the mean difference: for ``"t"`` the t
        interval; for ``"randomization"`` and ``"wilcoxon"`` the sign-flip test inverted
        (the shifts :math:`\delta_0` the test of :math:`d - \delta_0` does not reject at level
        :math:`1 - \mathrm{ci}`, with the same sign vectors: it excludes 0 exactly when the
        randomization p-value is at most :math:`1 - \mathrm{ci}`, and is the whole line when
        no shift can be rejected, as with fewer than 6 queries at 95%); for ``"bootstrap"``
        the ``ci_method`` interval of the bootstrap means. Each system's mean carries a
        two-sided t interval.
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
        An unknown option value (the nearest valid names are suggested), an unknown baseline,
        or ``n_resamples`` above :math:`10^9` (:class:`OptionTypeError`, also a TypeError, for
        a value of the wrong type).
    InputError
        Fewer than 2 systems, different cutoffs or measures, NDCGResults mixed with
        MeasuresResults, a query id listed twice, or
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
    names, runs, blocks = _check_results(results)
    check_baseline(checked["baseline"], names)
    with engine.threads(threads):
        return _compare(results, names, runs, blocks, engine, checked)


def _compare(
    results: Mapping[str, Result],
    names: list[str],
    runs: list[Result],
    blocks: Blocks,
    engine: Backend,
    options: dict[str, Any],
) -> PairedComparison:
    """The comparison of ``runs`` under the checked ``options`` (of ``COMPARE_OPTIONS``)."""
    test, ci, alternative = options["test"], options["ci"], options["alternative"]
    aligned = align.align(names, runs, options["missing"])
    pairs = _pairs(names, options["baseline"])
    values = aligned.values

    rows: list[dict[str, Any]] = []
    groups: dict[bytes, list[int]] = {}  # comparisons sharing their queries, by query mask
    deltas: list[np.ndarray] = []
    for j, (label, k) in enumerate(zip(blocks.labels, blocks.cutoffs, strict=True)):
        for a, b in pairs:
            va, vb = values[a, :, j], values[b, :, j]
            used = ~(np.isnan(va) | np.isnan(vb))
            xa, xb = va[used], vb[used]
            d = xb - xa
            mean, var = significance.mean_and_var(d)
            ties = int(np.count_nonzero(xb == xa))
            row = dict.fromkeys(COLUMNS)
            row.update(
                measure=label,
                cutoff=k,
                baseline=names[a],
                system=names[b],
                mean_baseline=float(np.mean(xa)) if xa.size else math.nan,
                mean_system=float(np.mean(xb)) if xb.size else math.nan,
                delta=mean,
                effect_size=mean / math.sqrt(var) if var and not math.isnan(var) else math.nan,
                wins=int(np.count_nonzero(xb > xa)),
                ties=ties,
                losses=int(np.count_nonzero(xb < xa)),
                n_queries=int(d.size),
                n_skipped=int(used.size - d.size),
                n_tested=int(d.size),
                test=test,
                statistic=math.nan,
                exact=False,
                resamples=0,
            )
            if test == "t":
                t, p, low, high = significance.t_test(d, ci, alternative)
                row.update(statistic=t, p_value=p, ci_low=low, ci_high=high)
            elif test == "wilcoxon":
                statistic, p = significance.wilcoxon(
                    d, alternative, options["zero_method"], options["continuity"]
                )
                dropped = ties if options["zero_method"] == "wilcox" else 0
                row.update(statistic=statistic, p_value=p, n_tested=int(d.size) - dropped)
            if test != "t":
                groups.setdefault(used.tobytes(), []).append(len(rows))
            rows.append(row)
            deltas.append(d)

    for members in groups.values():
        _resample_group(rows, deltas, members, engine, options)
    few = sum(row["test"] != test for row in rows)
    if few:
        warnings.warn(
            f"{few} comparison(s) have fewer than {significance.MIN_BOOTSTRAP_QUERIES} queries, "
            "where the bootstrap rejects far more often than its level: they were tested with "
            "the exact sign-flip test (test='randomization') instead",
            UserWarning,
            stacklevel=3,
        )

    # the families: each measure's rows (j*m .. j*m + m - 1), or every row (family="all")
    m = max(1, len(pairs) if options["family"] == "measure" else len(rows))
    for start in range(0, len(rows), m):
        family = rows[start : start + m]
        p_values = np.array([r["p_value"] for r in family], dtype=float)
        for row, p in zip(family, adjust(p_values, options["correction"]), strict=True):
            row.update(p_adjusted=float(p), significant=bool(p <= options["alpha"]))

    systems = []
    for j, (label, k) in enumerate(zip(blocks.labels, blocks.cutoffs, strict=True)):
        for s, name in enumerate(names):
            v = values[s, :, j]
            x = v[~np.isnan(v)]
            mean, var = significance.mean_and_var(x)
            low, high = significance.t_interval(mean, var, x.size, ci)
            cells = (label, k, name, mean, low, high, int(x.size), int(v.size - x.size))
            systems.append(dict(zip(SYSTEM_COLUMNS, cells, strict=True)))
    return PairedComparison(
        **options,
        backend=engine.name,
        names=tuple(names),
        measures=blocks.labels,
        cutoffs=blocks.cutoffs,
        of_measures=blocks.of_measures,
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
    """The resampling part of the comparisons ``members`` (they share their queries).

    A bootstrap of fewer than ``MIN_BOOTSTRAP_QUERIES`` queries is replaced by the exact
    sign-flip test (its rows' ``test`` says so).
    """
    test, n = options["test"], deltas[members[0]].size
    if n == 0:
        for i in members:
            rows[i].update(p_value=math.nan, ci_low=math.nan, ci_high=math.nan)
        return
    d = np.stack([deltas[i] for i in members])
    common = (options["seed"], options["n_resamples"], engine, options["alternative"])
    if test == "bootstrap" and n >= significance.MIN_BOOTSTRAP_QUERIES:
        result = significance.bootstrap_test(d, *common, options["ci"], options["ci_method"])
    else:
        replaced = test == "bootstrap"
        result = significance.signflip_test(d, *common, options["ci"], enumerate_all=replaced)
        test = "randomization" if replaced else test
    for c, i in enumerate(members):
        rows[i].update(
            ci_low=float(result.low[c]), ci_high=float(result.high[c]), resamples=result.count
        )
        if test != "wilcoxon":
            rows[i].update(
                test=test,
                p_value=float(result.p_values[c]),
                statistic=float(result.statistic[c]),
                exact=result.exact,
            )
