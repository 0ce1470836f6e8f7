"""The value returned by :func:`fastndcg.compare`: its tables, exports, explanations and plots."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fastndcg._compare.explanation import json_value
from fastndcg._compare.multitest import CORRECTION_NAMES
from fastndcg._compare.significance import MIN_BOOTSTRAP_QUERIES
from fastndcg._compare.tables import Table, latex_escape, latex_float
from fastndcg._core.measures import KINDS, Measure, parse_measures
from fastndcg._errors import InputError, OptionError

# the columns of a comparison's rows (and of to_pandas()), and of its systems' rows
COLUMNS = tuple(
    "measure cutoff baseline system mean_baseline mean_system delta ci_low ci_high effect_size "
    "p_value p_adjusted significant wins ties losses n_queries".split()
)
SYSTEM_COLUMNS = (
    "measure",
    "cutoff",
    "system",
    "mean",
    "ci_low",
    "ci_high",
    "n_queries",
    "n_skipped",
)
_TEST_NAMES = {
    "t": "paired t-test",
    "randomization": "paired randomization test (sign flips of the per-query differences)",
    "bootstrap": "paired bootstrap test (queries resampled with replacement)",
    "wilcoxon": "Wilcoxon signed-rank test (scipy.stats.wilcoxon)",
}
_ALTERNATIVES = {
    "two-sided": "two-sided",
    "greater": "one-sided, H1: system > baseline",
    "less": "one-sided, H1: system < baseline",
}
# how a definition's named gains and discounts read, for a reader of the table
_GAINS = {"exp2": "2^g - 1", "linear": "g"}
_DISCOUNTS = {"log2": "1/log2(r + 1)", "reciprocal": "1/r", "jarvelin": "Jarvelin's"}
_DEFINING = ("preset", "gain", "discount", "ties", "ideal", "max_grade", "zero_idcg", "aggregate")


def _short_test_name(test: str) -> str:
    """The test's name as a title: "Paired t-test", "Wilcoxon signed-rank test"."""
    name = _TEST_NAMES[test].split(" (")[0]
    return name[0].upper() + name[1:]


def definition_text(options: dict[str, Any]) -> str:
    """A result's definition (its ``options``) in words: gain, discount, ties, ideal, ..."""
    parts = []
    for name in _DEFINING:
        if name not in options or options[name] is None:
            continue
        value = options[name]
        gloss = {"gain": _GAINS, "discount": _DISCOUNTS}.get(name, {})
        text = value if isinstance(value, str) else repr(value)
        if isinstance(value, str) and value in gloss:
            text += f" ({gloss[value]})"
        parts.append(f"{name} {text}")
    rest = sorted(set(options) - set(_DEFINING) - {"backend"})
    parts += [f"{name} {options[name]!r}" for name in rest]
    return ", ".join(parts) if parts else "as computed"


def _measure_text(measure: Measure) -> str:
    """A measure's name and what it is; where its summary is not the mean, what is compared."""
    kind = KINDS[measure.kind]
    summary = {"sum": "the sum", "geometric": "the geometric mean"}.get(kind.aggregate)
    compared = f"; compared on the mean of per-query values, its summary {summary}"
    return f"{measure.name} ({kind.title}{compared if summary else ''})"


def _num(value: float, digits: int = 4, sign: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _bound(value: float, digits: int) -> str:
    r"""An interval bound as LaTeX math: infinite bounds as ``\infty``."""
    if value is not None and math.isinf(value):
        return r"+\infty" if value > 0 else r"-\infty"
    return _num(value, digits, sign=True)


def _p(value: float) -> str:
    if value is None or math.isnan(value):
        return "nan"
    if value == 0.0:
        return "0"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def _row_cells(r: dict[str, Any], mark: tuple[str, str]) -> tuple[str, ...]:
    """One comparison's cells as the printed and Markdown tables show them.

    ``mark`` follows the adjusted p-value: its first item when significant, else its second.
    """
    return (
        r["measure"],
        r["baseline"],
        r["system"],
        _num(r["mean_baseline"]),
        _num(r["mean_system"]),
        _num(r["delta"], sign=True),
        f"[{_num(r['ci_low'], sign=True)}, {_num(r['ci_high'], sign=True)}]",
        _num(r["effect_size"], 3, sign=True),
        _p(r["p_value"]),
        _p(r["p_adjusted"]) + mark[0 if r["significant"] else 1],
        f"{r['wins']}/{r['ties']}/{r['losses']}",
        str(r["n_queries"]),
    )


@dataclass(frozen=True, repr=False, eq=False)
class PairedComparison:
    """Paired comparison of systems, per measure: the value returned by :func:`fastndcg.compare`.

    Print it for a table; :meth:`to_pandas`, :meth:`to_markdown`, :meth:`to_latex` and
    :meth:`to_json` export it, :meth:`per_query` gives the aligned per-query values,
    :meth:`explain` shows why one query scored as it did, and :meth:`plot` draws it.

    Attributes
    ----------
    test, alternative, n_resamples, ci_method, zero_method, continuity
        The test's options.
    correction, family, alpha, ci, seed, missing, baseline, backend
        The other options the comparison ran with (``backend`` resolved to the name of the
        backend that ran: one of :func:`fastndcg.available_backends`).
    names : tuple of str
        The systems, in the order given.
    measures : tuple of str
        The measures, one block of comparisons each: ``NDCG@k`` (``NDCG``: the whole list) per
        cutoff of NDCGResults, the measures of MeasuresResults as named there.
    cutoffs : tuple of (int or None)
        Each measure's cutoff; None is the whole list (or a measure without a cutoff).
    of_measures : bool
        The results compared are MeasuresResults (:func:`fastndcg.evaluate`).
    pairs : tuple of (int, int)
        The comparisons, as (baseline, system) indices into ``names``.
    rows : list of dict
        One row per measure and comparison, in that order: the columns of :meth:`to_pandas`
        plus ``n_skipped`` (queries left out because one of the two systems skipped them: no
        relevant item), ``statistic`` (t for ``"t"``, the sum of the differences for
        ``"randomization"``, the mean difference as the bootstrap sums it for
        ``"bootstrap"``, scipy's statistic for ``"wilcoxon"``), ``exact`` (the randomization
        test enumerated every sign vector), ``resamples`` (sign vectors or bootstrap samples
        used; 0 for ``"t"``), ``test`` (the test used: ``"randomization"`` where a bootstrap
        comparison had too few queries) and ``n_tested`` (the queries the test used: for
        Wilcoxon with ``zero_method="wilcox"``, those with a nonzero difference).
    systems : list of dict
        Per measure and system: ``mean`` over the queries it scored, its Student t interval
        (``ci_low``, ``ci_high``), ``n_queries`` and ``n_skipped``.
    query_ids : ndarray
        The aligned queries.
    values : ndarray of float64, shape (n_systems, n_queries, n_measures)
        Per-query values on those queries (NaN: skipped; 0: missing under ``missing="zero"``).
    n_missing : dict of str to int
        Per system, aligned queries it lacked (scored 0 under ``missing="zero"``).
    n_dropped : int
        Queries dropped by ``missing="intersection"``.
    results : dict of str to NDCGResult or MeasuresResult
        The results compared (references to them, not copies), by system.
    sources : dict or None
        Where each system's rows can be read again for :meth:`explain` (set by
        :func:`fastndcg.compare_runs` and :func:`fastndcg.compare_table`; None for a
        comparison built from results alone).
    """

    test: str
    alternative: str
    n_resamples: int
    ci_method: str
    zero_method: str
    continuity: bool
    seed: int
    correction: str | None
    family: str
    alpha: float
    ci: float
    missing: str
    baseline: str | None
    backend: str
    names: tuple[str, ...]
    measures: tuple[str, ...]
    cutoffs: tuple[int | None, ...]
    pairs: tuple[tuple[int, int], ...]
    of_measures: bool = False
    rows: list[dict[str, Any]] = field(default_factory=list)
    systems: list[dict[str, Any]] = field(default_factory=list)
    query_ids: np.ndarray = field(default_factory=lambda: np.empty(0))
    values: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)))
    n_missing: dict[str, int] = field(default_factory=dict)
    n_dropped: int = 0
    results: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, Any] | None = None

    # ---- descriptions -------------------------------------------------------------------
    @property
    def family_description(self) -> str:
        """The comparisons each correction covers, in words."""
        m = len(self.pairs)
        if self.baseline is None:
            what = "all pairs of systems (delta = second - first)"
        else:
            what = f"each system against baseline {self.baseline!r} (delta = system - baseline)"
        what += f"; {m} comparison{'s' if m != 1 else ''} per measure"
        if self.family == "all":
            total = m * len(self.measures)
            return f"{what}, one family of {total} across the {len(self.measures)} measure(s)"
        return f"{what}, one family per measure"

    @property
    def measure(self) -> str:
        """The measures compared and their definition, in words."""
        if self.of_measures:
            named = ", ".join(_measure_text(m) for m in parse_measures(list(self.measures)))
        else:
            named = ", ".join(
                "NDCG (whole list)" if k is None else f"NDCG@{k}" for k in self.cutoffs
            )
            named += ", per query DCG / IDCG"
        texts = {name: definition_text(result.options) for name, result in self.results.items()}
        if len(set(texts.values())) <= 1:
            definition = next(iter(texts.values()), "as computed")
        else:
            definition = "DEFINITIONS DIFFER: " + "; ".join(f"{n}: {t}" for n, t in texts.items())
        return f"{named}; {definition}"

    @property
    def test_description(self) -> str:
        """The test and its alternative, in words."""
        name = _TEST_NAMES[self.test]
        if self.test == "wilcoxon":
            continuity = "with" if self.continuity else "no"
            name = (
                f"Wilcoxon signed-rank test (scipy.stats.wilcoxon, zero_method="
                f"{self.zero_method!r}, {continuity} continuity correction, method='auto')"
            )
        return f"{name}; {_ALTERNATIVES[self.alternative]}"

    @property
    def interval(self) -> str:
        """How the interval of the mean difference was computed, in words."""
        level = f"{self.ci:.0%}" if round(self.ci * 100, 9).is_integer() else f"{self.ci:g}"
        if self.alternative != "two-sided":
            level += " one-sided"
        if self.test == "t":
            return f"{level} t interval"
        if self.test == "bootstrap":
            text = f"{level} {self.ci_method} interval of the paired bootstrap means"
            if self._replaced():
                text += " (sign-flip interval where the sign-flip test replaced the bootstrap)"
            return text
        text = (
            f"{level} sign-flip interval: the shifts the randomization test does not reject "
            f"at level {1 - self.ci:.3g}, from the same sign vectors"
        )
        if self.test == "wilcoxon":
            text += " (of the mean difference; the Wilcoxon test concerns the pseudo-median)"
        return text

    def _within(self) -> str:
        """The correction's family, in a few words."""
        return "within each measure" if self.family == "measure" else "across every measure"

    def _replaced(self) -> int:
        """Bootstrap comparisons tested with the exact sign-flip test (too few queries)."""
        return sum(r["test"] != self.test for r in self.rows)

    def _exact(self) -> str:
        counts = sorted({r["resamples"] for r in self.rows if r["exact"]})
        if not counts:
            return ""
        return f" (exact: all {', '.join(str(c) for c in counts)} sign vectors where 2**n fit)"

    def _resampling(self) -> str:
        if self.test == "randomization":
            return f"{self.n_resamples} random sign vectors, seed {self.seed}{self._exact()}"
        if self.test == "bootstrap":
            text = f"{self.n_resamples} bootstrap samples, seed {self.seed}"
            if replaced := self._replaced():
                text += (
                    f"; {replaced} comparison(s) with fewer than {MIN_BOOTSTRAP_QUERIES} "
                    f"queries: the exact sign-flip test instead{self._exact()}"
                )
            return text
        if self.test == "wilcoxon":
            dropped = (
                "; zero differences (the ties of W/T/L) dropped: n_tested = n - ties"
                if self.zero_method == "wilcox"
                else ""
            )
            return (
                "exact or normal approximation, as scipy chooses; CI from "
                f"{self.n_resamples} random sign vectors, seed {self.seed}{self._exact()}{dropped}"
            )
        return "no resampling"

    def _header(self) -> list[str]:
        lines = [
            f"measure: {self.measure}",
            f"test: {self.test_description}; {self._resampling()}",
            f"family: {self.family_description}",
            f"correction: {CORRECTION_NAMES[self.correction]}"
            + ("" if self.correction is None else f" ({self._within()})")
            + f"; alpha = {self.alpha:g} on adjusted p-values; CI: {self.interval}",
        ]
        queries = f"queries: {self.query_ids.size} aligned (missing={self.missing!r}"
        lacked = {n: c for n, c in self.n_missing.items() if c}
        if lacked:
            queries += "; scored 0 where missing: " + ", ".join(
                f"{n!r} {c}" for n, c in lacked.items()
            )
        if self.missing == "intersection":
            queries += f"; {self.n_dropped} dropped"
        skipped = sum(r["n_skipped"] for r in self.rows)
        lines.append(
            queries
            + f"); backend {self.backend}"
            + (f"; {skipped} query-comparisons skipped (no relevant item)" if skipped else "")
        )
        return lines

    # ---- text ---------------------------------------------------------------------------
    def __repr__(self) -> str:
        heads = ("measure", "baseline", "system", "mean_base", "mean_sys", "delta", "ci")
        heads += ("effect", "p", "p_adj", "W/T/L", "n")
        rows = [_row_cells(r, mark=(" *", "  ")) for r in self.rows]
        systems = Table(
            ("measure", "system", "mean", "ci", "n"),
            "llrrr",
            [
                (
                    s["measure"],
                    s["system"],
                    _num(s["mean"]),
                    f"[{_num(s['ci_low'])}, {_num(s['ci_high'])}]",
                    str(s["n_queries"]),
                )
                for s in self.systems
            ],
        )
        return "\n".join(
            [
                "PairedComparison",
                *("  " + h for h in self._header()),
                *("  " + line.rstrip() for line in Table(heads, "lll" + "r" * 9, rows).text()),
                f"  * significant: adjusted p <= {self.alpha:g}",
                "  per-system means (t interval):",
                *("    " + line.rstrip() for line in systems.text()),
            ]
        )

    # ---- exports ------------------------------------------------------------------------
    def to_pandas(self, table: str = "comparisons") -> Any:
        """The comparisons as a long ``pandas.DataFrame`` (needs pandas).

        Parameters
        ----------
        table : {"comparisons", "systems"}, default "comparisons"
            ``"comparisons"``: one row per measure and comparison with exactly the columns
            measure, cutoff, baseline, system, mean_baseline, mean_system, delta, ci_low, ci_high,
            effect_size, p_value, p_adjusted, significant, wins, ties, losses, n_queries.
            ``"systems"``: one row per measure and system (measure, cutoff, system, mean, ci_low,
            ci_high, n_queries, n_skipped).

        Returns
        -------
        pandas.DataFrame
            Its ``attrs`` hold :meth:`settings`: the measure's definition and the test's.
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from exc
        if table == "comparisons":
            frame = pd.DataFrame([{c: r[c] for c in COLUMNS} for r in self.rows], columns=COLUMNS)
        elif table == "systems":
            frame = pd.DataFrame(self.systems, columns=SYSTEM_COLUMNS)
        else:
            raise OptionError(
                f"unknown table={table!r}",
                option="table",
                value=table,
                fix="valid values are 'comparisons', 'systems'",
            )
        frame.attrs.update(self.settings())
        return frame

    def settings(self) -> dict[str, Any]:
        """What was compared and how, as plain values: the head of :meth:`to_dict`.

        The measures (``measure``: each measure and each system's definition in words,
        ``measures``, ``cutoffs``, ``definitions``), the test and its options, the interval
        (``interval``, in words), the correction, the family (``family``, ``family_description``)
        and alpha.
        """
        return {
            "measure": self.measure,
            "measures": list(self.measures),
            "cutoffs": list(self.cutoffs),
            "definitions": {n: definition_text(r.options) for n, r in self.results.items()},
            "test": self.test,
            "test_description": self.test_description,
            "alternative": self.alternative,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "ci": self.ci,
            "ci_method": self.ci_method,
            "interval": self.interval,
            "zero_method": self.zero_method,
            "continuity": self.continuity,
            "correction": self.correction,
            "alpha": self.alpha,
            "family": self.family,
            "family_description": self.family_description,
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain Python values (NaN and infinite bounds as None).

        The object :meth:`to_json` writes: :meth:`settings`, then the alignment, the
        comparisons' rows and the systems' means.
        """
        return {
            **self.settings(),
            "baseline": self.baseline,
            "missing": self.missing,
            "backend": self.backend,
            "systems_compared": list(self.names),
            "n_queries_aligned": int(self.query_ids.size),
            "n_missing": dict(self.n_missing),
            "n_dropped": self.n_dropped,
            "comparisons": [{k: json_value(v) for k, v in r.items()} for r in self.rows],
            "systems": [{k: json_value(v) for k, v in s.items()} for s in self.systems],
        }

    def to_json(self, indent: int | None = None) -> str:
        """One JSON object (:meth:`to_dict`); NaN and infinite interval bounds are null."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_markdown(self) -> str:
        """A Markdown table of the comparisons, its settings in a line above.

        Significant comparisons carry ``*`` after their adjusted p-value.
        """
        head = (
            f"**{_short_test_name(self.test)}** ({_ALTERNATIVES[self.alternative]}; "
            f"{self._resampling()}) of {self.measure}; family: {self.family_description}; "
            f"{CORRECTION_NAMES[self.correction]} correction; alpha = {self.alpha:g}; "
            f"CI: {self.interval}. `*`: adjusted p <= {self.alpha:g}."
        )
        heads = ("measure", "baseline", "system", "mean baseline", "mean system", "delta", "CI")
        heads += ("effect size", "p", "adjusted p", "W/T/L", "n")
        rows = [_row_cells(r, mark=("*", "")) for r in self.rows]
        return "\n".join([head, "", *Table(heads, "lll" + "r" * 9, rows).markdown()])

    def to_latex(self, digits: int = 4) -> str:
        r"""A LaTeX ``table`` (booktabs) of the comparisons.

        Per measure the best mean (baseline or system column) is bold; significant comparisons
        carry :math:`^\dagger` on their difference (in the same math group,
        ``$+0.0123^{\dagger}$``); the caption names the test, the resamples, the correction,
        the family and alpha. Needs ``\usepackage{booktabs}``.

        Parameters
        ----------
        digits : int, default 4
            Decimals of the means, differences and interval bounds.

        Returns
        -------
        str
        """
        best = {}
        for r in self.rows:
            for key in ("mean_baseline", "mean_system"):
                value = r[key]
                if not math.isnan(value):
                    best[r["measure"]] = max(best.get(r["measure"], -math.inf), value)

        def mean(value: float, measure: str) -> str:
            text = _num(value, digits)
            return rf"\textbf{{{text}}}" if value == best.get(measure) else text

        dagger = r"^{\dagger}"
        caption = (
            f"{latex_escape(self.measure)}. {_short_test_name(self.test)}, "
            f"{latex_escape(_ALTERNATIVES[self.alternative])} "
            f"({latex_escape(self._resampling())}); "
            f"{CORRECTION_NAMES[self.correction]} correction {self._within()} "
            f"({latex_escape(self.family_description)}); $\\alpha = {self.alpha:g}$. "
            f"CI: {latex_escape(self.interval)}. Bold: best mean per measure; "
            f"$^\\dagger$: significant (adjusted $p \\le {self.alpha:g}$)."
        )
        heads = ("Measure", "Baseline", "System", "Mean (baseline)", "Mean (system)", r"$\Delta$")
        heads += ("CI", "Effect", "$p$", "adj. $p$", "W/T/L")
        rows = [
            (
                latex_escape(r["measure"]),
                latex_escape(r["baseline"]),
                latex_escape(r["system"]),
                mean(r["mean_baseline"], r["measure"]),
                mean(r["mean_system"], r["measure"]),
                f"${_num(r['delta'], digits, sign=True)}{dagger if r['significant'] else ''}$",
                f"[${_bound(r['ci_low'], digits)}$, ${_bound(r['ci_high'], digits)}$]",
                f"${_num(r['effect_size'], 3, sign=True)}$",
                latex_escape(_p(r["p_value"])),
                latex_escape(_p(r["p_adjusted"])),
                f"{r['wins']}/{r['ties']}/{r['losses']}",
            )
            for r in self.rows
        ]
        return "\n".join(latex_float(caption, [Table(heads, "lllrrrcrrrr", rows)]))

    def per_query(self) -> Any:
        """The aligned per-query values and differences as a long ``pyarrow.Table``.

        One row per measure, comparison and aligned query, with columns ``measure``,
        ``cutoff`` (int64, null for the whole list or a measure without one), ``baseline``,
        ``system``, ``query_id``, ``value_baseline``, ``value_system``, ``delta``
        (``value_system - value_baseline``) and ``used`` (False where a value is NaN: the
        query was skipped for having no relevant item, so the comparison left it out).
        ``.to_pandas()`` turns it into a DataFrame.
        """
        import pyarrow as pa

        n = self.query_ids.size
        parts = []
        for j, (measure, k) in enumerate(zip(self.measures, self.cutoffs, strict=True)):
            for a, b in self.pairs:
                va, vb = self.values[a, :, j], self.values[b, :, j]
                parts.append(
                    pa.table(
                        {
                            "measure": pa.array([measure] * n, type=pa.string()),
                            "cutoff": pa.array([k] * n, type=pa.int64()),
                            "baseline": pa.array([self.names[a]] * n, type=pa.string()),
                            "system": pa.array([self.names[b]] * n, type=pa.string()),
                            "query_id": pa.array(self.query_ids),
                            "value_baseline": pa.array(va),
                            "value_system": pa.array(vb),
                            "delta": pa.array(vb - va),
                            "used": pa.array(~(np.isnan(va) | np.isnan(vb))),
                        }
                    )
                )
        return pa.concat_tables(parts)

    # ---- regressions --------------------------------------------------------------------
    def worse(self) -> list[dict[str, Any]]:
        """The comparisons in which the system is significantly worse than the baseline.

        Rows with ``significant`` True and ``delta < 0`` (with ``baseline=None``, the second
        system of a pair worse than the first). ``fastndcg compare --fail-if-worse`` exits 1
        when there is any.
        """
        return [r for r in self.rows if r["significant"] and r["delta"] < 0]

    # ---- one query ----------------------------------------------------------------------
    def explain(
        self, query_id: Any, *, k: Any = ..., systems: Any = None, measure: Any = None
    ) -> Any:
        """Why query ``query_id`` scored as it did: each system's ranked list, side by side.

        Shows, for each system, the ranked list (rank, document id where known, score,
        grade, gain, discount, contribution, cumulative DCG; tie groups marked with how the
        tie rule split them), the ideal ranking beside it with the IDCG, and DCG, IDCG and
        NDCG as the library computed them. In a comparison of measures, one measure instead:
        each rank's grade, whether it is relevant and its share of the value (see
        :func:`fastndcg.explain`), and the value compared. Needs the query's rows: a
        comparison made by :func:`fastndcg.compare_runs` or :func:`fastndcg.compare_table`
        reads them again on demand; one made by :func:`fastndcg.compare` from results alone
        has none.

        Parameters
        ----------
        query_id : object
            The query, as in :attr:`query_ids`.
        k : int or None, optional
            The cutoff (one of :attr:`cutoffs`); default the first. Not with measures.
        systems : str or sequence of str, optional
            The systems to show (default: all; two are shown side by side).
        measure : str, optional
            In a comparison of measures, the one to explain (one of :attr:`measures`);
            default the first.

        Returns
        -------
        QueryExplanation or MeasureExplanation
            Printable; ``to_dict()``, ``to_json()``, ``rows``.
        """
        from fastndcg._compare.explain import explain_systems

        if measure is not None and not self.of_measures:
            raise InputError(
                f"this comparison is of NDCG; it holds no values of {measure!r}",
                value=measure,
                fix="compare the measures (compare_runs(..., measures=[...])) to explain one, "
                "or pass `k` for NDCG's cutoff",
            )
        if self.of_measures and k is not ...:
            raise InputError(
                "this comparison is of measures: their cutoffs are in their names",
                value=k,
                fix=f"pass `measure=` (one of {', '.join(map(repr, self.measures))}) instead "
                "of `k`",
            )
        if self.sources is None:
            raise InputError(
                "this comparison was made from result objects, which hold per-query "
                "values but not the rows (documents, scores, grades) that explain reads",
                value=query_id,
                fix="compare with fastndcg.compare_runs(qrels, runs, ...) or "
                "fastndcg.compare_table(table, scores=..., ...), which keep references to "
                "their inputs, or explain one query's arrays with fastndcg.explain(grades, "
                "scores, ...)",
            )
        if self.of_measures:
            measure = self.measures[0] if measure is None else measure
            return explain_systems(
                self.results, self.sources, query_id, systems=systems, measure=measure
            )
        return explain_systems(self.results, self.sources, query_id, k=k, systems=systems)

    # ---- plots --------------------------------------------------------------------------
    def plot(self, kind: str = "forest", path: Any = None, **options: Any) -> Any:
        """Draw the comparison with matplotlib (the ``plot`` extra): see :mod:`.plots`.

        Parameters
        ----------
        kind : {"forest", "waterfall", "ndcg_at_k", "distribution"}, default "forest"
            ``"forest"``: each comparison's delta with its interval, per cutoff;
            ``"waterfall"``: one comparison's per-query deltas, sorted; ``"ndcg_at_k"``: each
            system's mean NDCG over the cutoffs, with intervals; ``"distribution"``: each
            system's per-query values (histograms).
        path : str or path, optional
            Write the figure there (format from the suffix); the figure is returned either
            way.
        **options
            Passed to the plot function (``k=``, ``system=``, ``ax=``, ...).

        Returns
        -------
        matplotlib.figure.Figure
        """
        from fastndcg._compare import plots
        from fastndcg._io.paths import check_plot_path

        check_plot_path(path, "path", self.sources)  # before drawing: format, directory, inputs
        return plots.draw(self, kind, path, **options)
