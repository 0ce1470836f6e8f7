r"""The conveniences of :func:`~fastndcg._compare.runs.compare`: systems scored, then compared.

:func:`compare_runs` scores TREC runs against one reading of the qrels and compares them;
:func:`compare_table` scores the score columns of one table (several models' predictions on the
same rows) and compares them.

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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from fastndcg._compare.explain import RunSource, TableSource
from fastndcg._compare.report import PairedComparison
from fastndcg._compare.runs import check_baseline, compare, comparison_options
from fastndcg._core.options import (
    COMPARE_OPTIONS,
    RUN,
    TABLE,
    data_options,
    parse,
    split_options,
)
from fastndcg._core.options.model import EVALUATE_RUN
from fastndcg._errors import (
    COMMAND,
    PYTHON,
    InputError,
    InputTypeError,
    OptionError,
    OptionTypeError,
)
from fastndcg._evaluate import evaluate_run
from fastndcg._io.arrow import as_arrow
from fastndcg._io.trec_text import read_once
from fastndcg._presets import get_preset
from fastndcg._result import MeasuresResult, NDCGResult
from fastndcg._tables import ndcg_table
from fastndcg.trec import ndcg_run


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


def _scoring(options: dict[str, Any], seed: int, preset: Any) -> dict[str, Any]:
    """The scoring's options: ``options``, the preset, and the seed when ties are random."""
    ties = options.get("ties")
    if ties is None and preset is not None:
        ties = get_preset(preset).options.get("ties")
    given = {"preset": preset} if preset is not None else {}
    return {**options, **given, **({"seed": seed} if ties == "random" else {})}


def _check_scoring_options(
    options: dict[str, Any], caller: str, entry: str | tuple[str, ...]
) -> None:
    """Refuse an option the scoring does not take (``entry``'s, or the data options given)."""
    for name in ("seed", "missing"):  # the comparison's own: see the module docstring
        options.pop(name, None)
    split_options(options, caller, data_options(entry) if isinstance(entry, str) else entry)


def compare_runs(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
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
    preset: Any = None,
    measures: Any = None,
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
    baseline, test, alternative, n_resamples, ci_method, zero_method, continuity
        As :func:`compare`.
    correction, family, alpha, ci
        As :func:`compare`.
    seed : int, default 0
        The resampling's seed; with ``ties="random"`` also the scoring's (see the module
        docstring).
    missing : {"error", "zero", "intersection"}, default "error"
        The comparison's policy for queries some runs lack: ``"zero"`` scores every run with
        ``missing="zero"`` (``trec_eval -c``); the others with ``missing="skip"`` and pair the
        queries the runs have.
    preset : str, optional
        A tool's definition (as :func:`fastndcg.ndcg_run` takes it; its ``missing`` setting
        gives way to the comparison's).
    measures : str or list of str, optional
        Measures by name (``["nDCG@10", "P@10", "map"]``, as :func:`fastndcg.evaluate_run`
        takes them): each run is scored with :func:`fastndcg.evaluate_run` and every measure
        is compared. None: NDCG at the cutoffs ``k``, with :func:`fastndcg.ndcg_run`.
    **options
        Options of :func:`fastndcg.ndcg_run` (``k``, ``gain``, ``judged_only``, ``max_docs``,
        ``backend``, ``n_threads``, ...), or with ``measures`` of
        :func:`fastndcg.evaluate_run` (``relevance_level``, ...; no ``k``: name ``nDCG@k``);
        ``backend`` and ``n_threads`` also run the resampling.

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
    checked = comparison_options(locals())
    if measures is None:
        _check_scoring_options(dict(options), "compare_runs()", RUN)
    else:
        _check_measures_options(measures, options)
    named = _named(runs, "runs")
    check_baseline(checked["baseline"], list(named))
    results, sources = score_runs(
        qrels,
        named,
        seed=checked["seed"],
        missing=checked["missing"],
        preset=preset,
        measures=measures,
        **options,
    )
    return compare_scored(results, sources, checked, options)


def _check_measures_options(measures: Any, options: dict[str, Any]) -> None:
    """The measures and the options of ``compare_runs(measures=...)``, before reading data."""
    parse("measures", measures)
    if "k" in options:
        raise OptionTypeError(
            "`k` is NDCG's cutoff: with `measures`, name nDCG at its cutoff instead",
            option="k",
            value=options["k"],
            fix="add 'nDCG@10' (one per cutoff) to `measures` and leave `k` out",
        )
    _check_scoring_options(
        dict(options), "compare_runs()", (*data_options(RUN), *data_options(EVALUATE_RUN))
    )


def score_runs(
    qrels: Any,
    runs: Mapping[str, Any],
    *,
    seed: int = 0,
    missing: str = "error",
    preset: Any = None,
    measures: Any = None,
    **options: Any,
) -> tuple[dict[str, NDCGResult | MeasuresResult], dict[str, RunSource]]:
    """Each run scored as :func:`compare_runs` scores it, and where to read it again.

    The qrels are read once; ``seed`` and ``missing`` are the comparison's (see the module
    docstring). With ``measures``, each run's measures (:func:`fastndcg.evaluate_run`), else
    its NDCG (:func:`fastndcg.ndcg_run`).
    """
    judged = read_once(qrels, "qrels")  # parsed once for every run
    scoring = {
        **_scoring(options, seed, preset),
        "missing": "zero" if missing == "zero" else "skip",
    }
    if measures is None:
        results = {name: ndcg_run(judged, run, **scoring) for name, run in runs.items()}
    else:
        results = {
            name: evaluate_run(judged, run, measures=measures, **scoring)
            for name, run in runs.items()
        }
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
    baseline, test, alternative, n_resamples, ci_method, zero_method, continuity
        As :func:`compare`.
    correction, family, alpha, ci, missing
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
    checked = comparison_options(locals())
    if "measures" in options:
        raise OptionTypeError(
            "compare_table() compares NDCG; it takes no `measures`",
            option="measures",
            value=options["measures"],
            fix="score each score column with fastndcg.evaluate(grades, scores, qid=..., "
            "measures=[...]) and compare the results with fastndcg.compare({name: result})",
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
    check_baseline(checked["baseline"], list(columns))
    named = {name: (table, column) for name, column in columns.items()}
    results, sources = score_tables(
        named, qid=qid, grade=grade, seed=checked["seed"], preset=preset, **options
    )
    return compare_scored(results, sources, checked, options)


def compare_scored(
    results: dict[str, NDCGResult] | dict[str, MeasuresResult],
    sources: Mapping[str, Any],
    checked: dict[str, Any],
    runtime: Mapping[str, Any],
) -> PairedComparison:
    """:func:`compare` of systems scored here, with where to read each again for ``explain``.

    ``checked`` are the comparison's options; ``backend`` and ``n_threads`` in ``runtime`` (the
    scoring's options) also run the resampling.
    """
    comparison = compare(
        results,
        backend=runtime.get("backend", "auto"),
        n_threads=runtime.get("n_threads"),
        **checked,
    )
    return replace(comparison, sources=dict(sources))


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
    scoring = _scoring(options, seed, preset)
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
    "compare_scored",
    "compare_table",
    "score_runs",
    "score_tables",
    "system_names",
]
