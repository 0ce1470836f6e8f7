r"""Paired comparison of systems: :func:`compare` and its conveniences for runs and tables.

:func:`compare` takes per-query NDCG results (from any entry point) and tests, per cutoff,
whether each system differs from a baseline (or every pair). :func:`compare_runs` scores TREC
runs against one reading of the qrels and compares them; :func:`compare_table` scores the
score columns of one table (several models' predictions on the same rows) and compares them.

The conveniences take the scoring's keywords and the comparison's in one call. Two names are
both (see :data:`fastndcg._core.options.COMPARE_OPTIONS`); there they mean the comparison's:

``seed``
    The seed of the resampling. With ``ties="random"`` (given, or set by a preset) every system
    is also scored with it, so one number reproduces the whole call; otherwise the scoring has
    no seed to take (a seed only matters to ``ties="random"``).
``missing``
    The comparison's policy for queries some systems lack. :func:`compare_runs` scores each
    run with ``ndcg_run(missing="zero")`` when it is ``"zero"`` (a judged query absent from a
    run scores 0, as ``trec_eval -c``, and every run then has every judged query), and with
    ``ndcg_run(missing="skip")`` otherwise, so that the comparison pairs the queries the runs
    have: ``"error"`` names the queries some runs lack, ``"intersection"`` keeps the common
    ones. A preset's ``missing`` setting is overridden. In :func:`compare_table` every system
    has every query (the rows are shared), so ``missing`` never applies.

Queries skipped for having no relevant item (``zero_idcg="skip"``: NaN) are dropped from both
sides of each comparison they touch, and counted (``n_skipped`` of each row).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from fastndcg._backends import Backend, resolve_backend
from fastndcg._compare import align, significance
from fastndcg._compare.explain import RunSource, TableSource
from fastndcg._compare.multitest import adjust
from fastndcg._compare.report import COLUMNS, PairedComparison
from fastndcg._core.options import (
    COMPARE_OPTIONS,
    RUN,
    TABLE,
    data_options,
    parse,
    parse_compare,
    split_options,
)
from fastndcg._errors import (
    COMMAND,
    PYTHON,
    InputError,
    InputTypeError,
    OptionError,
    OptionTypeError,
)
from fastndcg._io.arrow import as_arrow
from fastndcg._io.trec_text import read_once
from fastndcg._presets import get_preset
from fastndcg._result import NDCGResult
from fastndcg._tables import ndcg_table
from fastndcg.trec import ndcg_run


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


def _check_baseline(baseline: str | None, names: list[str]) -> None:
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


def _comparison_options(**given: Any) -> dict[str, Any]:
    """The comparison's options checked through its table (before any data is read)."""
    return {name: parse_compare(name, value) for name, value in given.items()}


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
        ``scipy.stats.ttest_rel``; scipy is not needed). ``"bootstrap"``: paired bootstrap of
        the queries (indices drawn with replacement),
        :math:`p = (1 + \#\{|\bar d^*_i - \bar d| \ge |\bar d|\}) / (1 + B)` (the bootstrap
        distribution shifted to the null). ``"wilcoxon"``: ``scipy.stats.wilcoxon(d)`` (needs
        scipy).
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
        p-value (see :func:`fastndcg._compare.significance.signflip_interval`). Each
        system's mean carries a t interval.
    seed : int, default 0
        Seed of the resampling, :math:`0 \le` seed :math:`< 2^{64}`. Resample :math:`i` is a
        function of (seed, :math:`i`) only: results are identical for any thread count and on
        both backends.
    missing : {"error", "zero", "intersection"}, default "error"
        A query some systems lack: ``"error"`` raises (naming how many each lacks),
        ``"zero"`` scores it 0 for them (like ``trec_eval -c``), ``"intersection"`` keeps
        only the queries every system has (the count dropped is reported). Queries skipped
        for having no relevant item (NaN) are left out of each comparison they touch, and
        counted.
    backend : {"auto", "numba", "numpy"}, default "auto"
        Where the resampling runs: numba kernels on fastndcg's thread pool or their NumPy
        twin; the results are bit-identical.
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
        ``test="wilcoxon"`` without scipy, or ``backend="numba"`` without numba.

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
    checked = _comparison_options(
        baseline=baseline,
        test=test,
        n_resamples=n_resamples,
        correction=correction,
        alpha=alpha,
        ci=ci,
        seed=seed,
        missing=missing,
    )
    engine = resolve_backend(parse("backend", backend))
    threads = parse("n_threads", n_threads)
    names, runs = _check_results(results)
    _check_baseline(checked["baseline"], names)
    with engine.threads(threads):
        return _compare(results, names, runs, engine, **checked)


def _compare(
    results: Mapping[str, NDCGResult],
    names: list[str],
    runs: list[NDCGResult],
    engine: Backend,
    *,
    baseline: str | None,
    test: str,
    n_resamples: int,
    correction: str | None,
    alpha: float,
    ci: float,
    seed: int,
    missing: str,
) -> PairedComparison:
    aligned = align.align(names, runs, missing)
    cutoffs = runs[0].k
    pairs = _pairs(names, baseline)
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
            mean, sd = significance.mean_and_sd(d)
            row = dict.fromkeys(COLUMNS)
            row.update(
                cutoff=k,
                baseline=names[a],
                system=names[b],
                mean_baseline=float(np.mean(xa)) if xa.size else math.nan,
                mean_system=float(np.mean(xb)) if xb.size else math.nan,
                delta=mean,
                effect_size=mean / sd if sd and not math.isnan(sd) else math.nan,
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
        _resample_group(rows, deltas, members, test, seed, n_resamples, ci, engine)

    m = len(pairs)
    for j in range(len(cutoffs)):  # one family per cutoff: rows j*m .. j*m + m - 1
        family = rows[j * m : (j + 1) * m]
        adjusted = adjust(np.array([r["p_value"] for r in family], dtype=float), correction)
        for row, p in zip(family, adjusted, strict=True):
            row["p_adjusted"] = float(p)
            row["significant"] = bool(p <= alpha)

    systems = []
    for j, k in enumerate(cutoffs):
        for s, name in enumerate(names):
            v = values[s, :, j]
            x = v[~np.isnan(v)]
            mean, sd = significance.mean_and_sd(x)
            low, high = significance.t_interval(mean, sd, x.size, ci)
            systems.append(
                {
                    "cutoff": k,
                    "system": name,
                    "mean": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "n_queries": int(x.size),
                    "n_skipped": int(v.size - x.size),
                }
            )
    return PairedComparison(
        test=test,
        n_resamples=n_resamples,
        seed=seed,
        correction=correction,
        alpha=alpha,
        ci=ci,
        missing=missing,
        baseline=baseline,
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
    test: str,
    seed: int,
    n_resamples: int,
    ci: float,
    engine: Backend,
) -> None:
    """The resampling part of the comparisons ``members`` (they share their queries)."""
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


# -- conveniences ---------------------------------------------------------------------------------


def system_names(sources: Sequence[Any]) -> list[str]:
    """Names of systems given as files: each file's stem, unless stems clash.

    ``a/bm25.run`` and ``b/dense.run`` are ``bm25`` and ``dense``. Where stems clash, those
    files take their whole names (``results.test``, ``results.trunc``); where names clash too,
    as many of their directories as tell them apart (``x/run.txt``, ``y/run.txt``). Sources that
    are not paths (tables) are named ``run1``, ``run2``, ... by position.
    """
    paths = [Path(s) if isinstance(s, (str, Path)) else None for s in sources]
    names = [p.stem if p is not None else f"run{i + 1}" for i, p in enumerate(paths)]
    for i, path in enumerate(paths):
        if path is None or names.count(names[i]) == 1:
            continue
        clashing = [j for j, name in enumerate(names) if name == names[i]]
        clashing_paths = {j: paths[j] for j in clashing if paths[j] is not None}
        deepest = max(len(path.parts) for path in clashing_paths.values())
        for depth in range(deepest + 1):
            tried = {j: _tail(path, depth) for j, path in clashing_paths.items()}
            if len(set(tried.values())) == len(tried):
                break
        for j, name in tried.items():
            names[j] = name
    if len(set(names)) != len(names):  # the same file given twice
        repeated = next(n for i, n in enumerate(names) if n in names[:i])
        raise InputError(
            f"two systems would both be named {repeated!r}",
            value=repeated,
            fix={
                PYTHON: "give each run once, or name the systems with a mapping {name: run}",
                COMMAND: "give each run once",
            },
        )
    return names


def _tail(path: Path, depth: int) -> str:
    """The file's name with its last ``depth`` directories (no root), joined by ``/``."""
    parts = [part for part in path.parts[:-1] if part not in (path.anchor, "")]
    kept = parts[len(parts) - depth :] if depth else []
    return "/".join([*kept, path.name])


def _named(systems: Any, what: str) -> dict[str, Any]:
    if isinstance(systems, Mapping):
        for name in systems:
            if not isinstance(name, str):
                raise InputTypeError(
                    "system names must be strings", value=name, fix=f"got {name!r}"
                )
        return dict(systems)
    if isinstance(systems, (str, Path)) or not isinstance(systems, Sequence):
        raise InputTypeError(
            f"{what} must be a mapping of system name to {what[:-1]}, or a sequence of files",
            value=type(systems).__name__,
            fix=f"got {type(systems).__name__}",
        )
    return dict(zip(system_names(systems), systems, strict=True))


def _scoring_seed(seed: int, preset: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``{"seed": seed}`` when the scoring breaks ties at random, else nothing."""
    ties = options.get("ties")
    if ties is None and preset is not None:
        ties = get_preset(preset).options.get("ties")
    return {"seed": seed} if ties == "random" else {}


def _check_scoring_options(options: dict[str, Any], caller: str, entry: str) -> None:
    for name in ("seed", "missing"):  # the comparison's own: see the module docstring
        options.pop(name, None)
    split_options(options, caller, data_options(entry))


def compare_runs(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    *,
    baseline: str | None = None,
    test: str = "randomization",
    n_resamples: int = 10_000,
    correction: str | None = "holm",
    alpha: float = 0.05,
    ci: float = 0.95,
    seed: int = 0,
    missing: str = "error",
    preset: Any = None,
    **options: Any,
) -> PairedComparison:
    """Score TREC runs against one reading of the qrels, and compare them (:func:`compare`).

    Parameters
    ----------
    qrels : path or table
        The judgments, read once for every run (as :func:`fastndcg.ndcg_run` takes them).
    runs : mapping of str to (path or table), or sequence of paths
        The systems. A sequence of files is named by the files' stems (made unique by their
        directories when stems clash, see :func:`system_names`).
    baseline, test, n_resamples, correction, alpha, ci
        As :func:`compare`.
    seed : int, default 0
        The resampling's seed; with ``ties="random"`` also the scoring's (see the module
        docstring).
    missing : {"error", "zero", "intersection"}, default "error"
        The comparison's policy for queries some runs lack: ``"zero"`` scores every run with
        ``ndcg_run(missing="zero")`` (``trec_eval -c``); the others with
        ``ndcg_run(missing="skip")`` and pair the queries the runs have.
    preset : str, optional
        A tool's definition (as :func:`fastndcg.ndcg_run` takes it; its ``missing`` setting
        gives way to the comparison's).
    **options
        Options of :func:`fastndcg.ndcg_run` (``k``, ``gain``, ``judged_only``, ``max_docs``,
        ``backend``, ``n_threads``, ...); ``backend`` and ``n_threads`` also run the
        resampling.

    Returns
    -------
    PairedComparison
        As :func:`compare`; it keeps references to ``qrels`` (as read) and to each run (a path
        is read again), so that ``explain(query)`` re-reads one query on demand.

    Examples
    --------
    >>> import pyarrow as pa, fastndcg
    >>> qrels = pa.table({"qid": [1, 1, 2, 2, 3], "docid": ["a", "b", "c", "d", "e"],
    ...                   "grade": [2, 1, 1, 0, 1]})
    >>> x = pa.table({"qid": [1, 1, 2, 3], "docid": ["b", "a", "c", "e"], "score": [2, 1, 1, 1]})
    >>> y = pa.table({"qid": [1, 1, 2, 3], "docid": ["a", "b", "d", "e"], "score": [2, 1, 1, 1]})
    >>> c = fastndcg.compare_runs(qrels, {"x": x, "y": y}, k=2, test="t")
    >>> [(r["baseline"], r["system"], r["wins"], r["ties"], r["losses"]) for r in c.rows]
    [('x', 'y', 1, 1, 1)]
    """
    checked = _comparison_options(
        baseline=baseline,
        test=test,
        n_resamples=n_resamples,
        correction=correction,
        alpha=alpha,
        ci=ci,
        seed=seed,
        missing=missing,
    )
    _check_scoring_options(dict(options), "compare_runs()", RUN)
    named = _named(runs, "runs")
    _check_baseline(checked["baseline"], list(named))
    results, sources = score_runs(
        qrels, named, seed=checked["seed"], missing=checked["missing"], preset=preset, **options
    )
    comparison = compare(
        results,
        backend=options.get("backend", "auto"),
        n_threads=options.get("n_threads"),
        **checked,
    )
    return replace(comparison, sources=sources)


def score_runs(
    qrels: Any,
    runs: Mapping[str, Any],
    *,
    seed: int = 0,
    missing: str = "error",
    preset: Any = None,
    **options: Any,
) -> tuple[dict[str, NDCGResult], dict[str, RunSource]]:
    """Each run scored as :func:`compare_runs` scores it, and where to read it again.

    The qrels are read once; ``seed`` and ``missing`` are the comparison's (see the module
    docstring).
    """
    judged = read_once(qrels, "qrels")  # parsed once for every run
    scoring = {
        **options,
        **_scoring_seed(seed, preset, options),
        "missing": "zero" if missing == "zero" else "skip",
    }
    if preset is not None:
        scoring["preset"] = preset
    results = {name: ndcg_run(judged, run, **scoring) for name, run in runs.items()}
    sources = {name: RunSource(judged, run, scoring) for name, run in runs.items()}
    return results, sources


def compare_table(
    table: Any,
    *,
    scores: Mapping[str, str] | Sequence[str],
    qid: str | None = "qid",
    grade: str = "grade",
    baseline: str | None = None,
    test: str = "randomization",
    n_resamples: int = 10_000,
    correction: str | None = "holm",
    alpha: float = 0.05,
    ci: float = 0.95,
    seed: int = 0,
    missing: str = "error",
    preset: Any = None,
    **options: Any,
) -> PairedComparison:
    """Score several score columns of one table (the systems), and compare them.

    The common learning-to-rank case: several models' predictions on the same rows.

    Parameters
    ----------
    table : pyarrow.Table, DataFrame, or anything :func:`fastndcg.ndcg_table` takes
        One row per (query, item), with a score column per system.
    scores : mapping of str to str, or sequence of str
        The systems' score columns: ``{"A": "score_a", "B": "score_b"}``, or column names
        (each system named after its column).
    qid, grade : str
        The query id and grade columns (as :func:`fastndcg.ndcg_table`).
    baseline, test, n_resamples, correction, alpha, ci, missing
        As :func:`compare` (every system has every query here: ``missing`` never applies).
    seed : int, default 0
        The resampling's seed; with ``ties="random"`` also the scoring's, the same for every
        system (tied rows of the same query are then ordered alike in every system).
    preset : str, optional
        A tool's definition (as :func:`fastndcg.ndcg_table` takes it).
    **options
        Options of :func:`fastndcg.ndcg_table` (``k``, ``gain``, ``ties``, ``weights``,
        ``backend``, ...); ``backend`` and ``n_threads`` also run the resampling.

    Returns
    -------
    PairedComparison
        As :func:`compare`; it keeps a reference to ``table`` (no copy), from which
        ``explain(query)`` reads one query on demand.

    Examples
    --------
    >>> import pyarrow as pa, fastndcg
    >>> t = pa.table({"qid": [1, 1, 2, 2, 3, 3], "grade": [1, 0, 0, 1, 2, 0],
    ...               "a": [.9, .1, .8, .2, .5, .4], "b": [.2, .7, .3, .6, .9, .1]})
    >>> c = fastndcg.compare_table(t, scores=["a", "b"], k=1, test="t")
    >>> row = c.rows[0]
    >>> row["mean_baseline"], row["mean_system"], (row["wins"], row["ties"], row["losses"])
    (0.6666666666666666, 0.6666666666666666, (1, 1, 1))
    """
    checked = _comparison_options(
        baseline=baseline,
        test=test,
        n_resamples=n_resamples,
        correction=correction,
        alpha=alpha,
        ci=ci,
        seed=seed,
        missing=missing,
    )
    if "score" in options:
        raise OptionTypeError(
            "compare_table() takes the systems' score columns as `scores=`, not `score=`",
            option="score",
            value=options["score"],
            fix="pass scores={'A': 'score_a', 'B': 'score_b'}",
        )
    _check_scoring_options(dict(options), "compare_table()", TABLE)
    columns = _score_columns(scores)
    _check_baseline(checked["baseline"], list(columns))
    named = {name: (table, column) for name, column in columns.items()}
    results, sources = score_tables(
        named, qid=qid, grade=grade, seed=checked["seed"], preset=preset, **options
    )
    comparison = compare(
        results,
        backend=options.get("backend", "auto"),
        n_threads=options.get("n_threads"),
        **checked,
    )
    return replace(comparison, sources=sources)


def score_tables(
    systems: Mapping[str, tuple[Any, str]],
    *,
    qid: str | None = "qid",
    grade: str = "grade",
    seed: int = 0,
    preset: Any = None,
    **options: Any,
) -> tuple[dict[str, NDCGResult], dict[str, TableSource]]:
    """Each system, a (table, score column), scored as :func:`compare_table` scores it.

    A table several systems share is converted to Arrow once. Returns the results and where
    to read each system again (a reference to its table).
    """
    scoring = {**options, **_scoring_seed(seed, preset, options)}
    if preset is not None:
        scoring["preset"] = preset
    converted: dict[int, Any] = {}
    results = {}
    for name, (table, column) in systems.items():
        if id(table) not in converted:  # a pandas frame is copied here, once
            converted[id(table)] = as_arrow(table)
        arrow = converted[id(table)]
        results[name] = ndcg_table(arrow, qid=qid, grade=grade, score=column, **scoring)
    sources = {
        name: TableSource(table, qid, grade, column, scoring)
        for name, (table, column) in systems.items()
    }
    return results, sources


def _score_columns(scores: Any) -> dict[str, str]:
    if isinstance(scores, Mapping):
        columns = dict(scores)
    elif isinstance(scores, Sequence) and not isinstance(scores, str):
        columns = {column: column for column in scores}
        if len(columns) != len(scores):
            raise OptionError(
                "`scores` names a column more than once",
                option="scores",
                value=list(scores),
                fix="give each system's column once",
            )
    else:
        raise OptionTypeError(
            "`scores` must map system names to score columns, or list the score columns",
            option="scores",
            value=scores,
            fix=f"got {type(scores).__name__}",
        )
    for name, column in columns.items():
        if not isinstance(name, str) or not isinstance(column, str):
            raise OptionTypeError(
                "`scores` must map system names (str) to score column names (str)",
                option="scores",
                value=(name, column),
                fix=f"got {name!r}: {column!r}",
            )
    return columns


__all__ = [
    "COMPARE_OPTIONS",
    "compare",
    "compare_runs",
    "compare_table",
    "score_runs",
    "score_tables",
    "system_names",
]
