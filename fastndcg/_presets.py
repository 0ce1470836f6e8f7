r"""Presets: other tools' NDCG definitions by name, so that their per-query numbers come out.

Every tool fixes the choices of :func:`fastndcg.ndcg` its own way (gain, tie order, where the
ideal ranking comes from, what a query without relevant items scores, score precision, how
queries are averaged). A preset is that set of choices under the tool's name::

    fastndcg.ndcg_run(qrels, run, preset="trec_eval", k=10)   # trec_eval -m ndcg_cut.10

``preset=`` is accepted by :func:`fastndcg.ndcg`, :func:`fastndcg.ndcg_table`,
:func:`fastndcg.ndcg_parquet` and :func:`fastndcg.ndcg_run`; options given alongside override
the preset's. :func:`presets` lists them; ``README.md`` has the side-by-side table.

Two settings exist for the tools' sake and are accepted by those four functions, with or
without a preset:

- ``aggregate`` also takes a tool's own averaging rule. With per-query weights :math:`w_q`,
  NDCG :math:`v_q` and :math:`Z` the queries whose IDCG is 0:

  - ``"lightgbm"``: :math:`\big(\sum_{q \notin Z} w_q v_q + \sum_{q \in Z} v_q\big) /
    \sum_q w_q` (a query without relevant items adds its value unweighted);
  - ``"xgboost"``: the same with weights rounded to float32 as XGBoost holds them, capped at
    1; above :math:`1 + 10^{-6}` XGBoost stops with an error, and so does this rule;
  - ``"keras_rs"``: :math:`\sum_q \omega_q v_q / \sum_q \omega_q` with keras-rs's list
    weights :math:`\omega_q = \sum_i w_i G_i / \sum_i G_i` (item weights :math:`w_i`, gains
    :math:`G_i`); a list without gain gets the mean weight of the lists with gain (1 if
    there is none), a list whose weights sum to 0 gets 0; 0 when every weight is 0.

- ``decimals``: per-query values are rounded to that many decimals (correctly rounded, as
  ``printf`` does) before averaging, for tools whose numbers pass through text (gdeval).
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from fastndcg._engine import KEYED_TIES, query_weights, relative_weights
from fastndcg._layout import cell_words, dense_mask, from_torch, numeric_vector, reject_masked
from fastndcg._options import AGGREGATES
from fastndcg._result import NDCGResult

TOOL_AGGREGATES = ("lightgbm", "xgboost", "keras_rs")
SETTINGS = (  # what a preset may set, in the order listings show them
    "k",
    "gain",
    "discount",
    "ideal",
    "ties",
    "zero_idcg",
    "aggregate",
    "score_dtype",
    "missing",
    "judged_only",
    "max_docs",
    "decimals",
)
RUN_ONLY = ("missing", "judged_only", "max_docs")  # options only fastndcg.ndcg_run takes
IDEAL_DATA = ("ideal_grades", "ideal_qid", "ideal_offsets")
_XGBOOST_EPS = 1e-6  # XGBoost's kRtEps: a mean above 1 + this is an error, up to it capped at 1
EXP2_TABLE = tuple(float(2**g - 1) for g in range(31))  # LightGBM's default label_gain


@dataclass(frozen=True)
class Preset:
    """A tool's NDCG definition: the options that reproduce its per-query values.

    ``preset=`` takes a registered name or a Preset of one's own, e.g. a team's definition:
    ``Preset("ours", "our dashboards", {"k": 10, "gain": "exp2", "ties": "stable"})``.

    Attributes
    ----------
    name : str
        What ``preset=`` takes.
    tool : str
        The tool, version and measure(s) reproduced.
    options : dict
        The settings (options of :func:`fastndcg.ndcg` and :func:`fastndcg.ndcg_run`, plus
        ``decimals`` and tool aggregates); options passed alongside the preset override them.
    flags : str
        How the tool's own switches translate into options.
    parity : str
        Where parity is claimed, and its limits.
    """

    name: str
    tool: str
    options: Mapping[str, Any] = field(default_factory=dict)
    flags: str = ""
    parity: str = ""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.options) - set(SETTINGS))
        if unknown:
            raise ValueError(
                f"preset {self.name!r} sets unknown option(s) {', '.join(unknown)}; a preset sets "
                f"{', '.join(SETTINGS)}"
            )
        ordered = sorted(self.options.items(), key=lambda item: SETTINGS.index(item[0]))
        object.__setattr__(self, "options", MappingProxyType(dict(ordered)))

    def __repr__(self) -> str:
        settings = ", ".join(f"{key}={_short(value)}" for key, value in self.options.items())
        return f"Preset({self.name!r}: {self.tool}; {settings})"


def _short(value: Any) -> str:
    """A setting as shown in listings (LightGBM's 31-entry gain table in short)."""
    if isinstance(value, tuple) and value == EXP2_TABLE:
        return "[0, 1, 3, ..., 2**30 - 1]"
    return repr(list(value) if isinstance(value, tuple) else value)


_TREC = dict(
    k=None,
    gain="linear",
    discount="log2",
    ideal="global",
    ties="docid_desc",
    zero_idcg="zero",
    aggregate="mean",
)
_TREC_FLAGS = (
    "-c: missing='zero'; -J: judged_only=True; -M n: max_docs=n; -m ndcg_cut.k: k=k; "
    "printed (%6.4f) values: decimals=4"
)
_LIST = dict(discount="log2", ideal="recall")

_REGISTRY = (
    Preset(
        "trec_eval",
        "trec_eval 10.0: ndcg (k=None) and ndcg_cut.k (k=k)",
        dict(_TREC, score_dtype="float64", missing="error"),
        _TREC_FLAGS,
        "per query against trec_eval 10's own expected outputs (4 decimals) and, where float32 "
        "scores order the same, against pytrec_eval at 1e-12",
    ),
    Preset(
        "trec_eval9",
        "trec_eval 9.0.8: ndcg, ndcg_cut.k (scores held as float32; missing queries skipped)",
        dict(_TREC, score_dtype="float32", missing="skip"),
        _TREC_FLAGS,
        "per query against pytrec_eval (which vendors 9.0.8) at 1e-12",
    ),
    Preset(
        "pytrec_eval",
        "pytrec_eval / pytrec-eval-terrier: 'ndcg', 'ndcg_cut_k' (trec_eval 9.0.8 inside)",
        dict(_TREC, score_dtype="float32", missing="skip"),
        "ndcg_cut_k: k=k; judged_docs_only_flag: judged_only=True; pytrec_eval returns no mean",
        "per query at 1e-12",
    ),
    Preset(
        "ir_measures",
        "ir_measures nDCG, nDCG@k (pytrec_eval provider; mean over every judged query)",
        dict(_TREC, score_dtype="float32", missing="zero"),
        "nDCG@k: k=k; judged_only=True: judged_only=True; gains={label: gain}: gain={...}",
        "per query and mean at 1e-12",
    ),
    Preset(
        "gdeval",
        "gdeval.pl (TREC Web track) as ir_measures runs it for nDCG(dcg='exp-log2')@k",
        dict(
            _TREC,
            k=20,
            gain="exp2",
            score_dtype="float64",
            missing="zero",
            decimals=5,
        ),
        "k: the script's k argument (20 in the Web track)",
        "per query exactly (values rounded to 5 decimals), where gdeval runs: numeric query "
        "ids and labels <= 4 (it cuts ids at the last '-', and ir_measures then scores the "
        "real ids 0)",
    ),
    Preset(
        "sklearn",
        "scikit-learn ndcg_score",
        dict(
            _LIST,
            k=None,
            gain="linear",
            ties="average",
            zero_idcg="zero",
            aggregate="mean",
            score_dtype="float64",
        ),
        "k: k; sample_weight: weights; fastndcg.ndcg_score is a drop-in with ignore_ties",
        "per query and mean at 1e-12",
    ),
    Preset(
        "torchmetrics",
        "torchmetrics RetrievalNormalizedDCG (float32 scores and arithmetic)",
        dict(
            _LIST,
            k=None,
            gain="linear",
            ties="average",
            zero_idcg="zero",
            aggregate="mean",
            score_dtype="float32",
        ),
        "top_k: k; empty_target_action 'neg'/'pos'/'skip'/'error': zero_idcg='zero'/'one'/"
        "'skip'/'error'",
        "per query within float32 accumulation error (fastndcg adds in float64)",
    ),
    Preset(
        "keras_rs",
        "keras_rs.metrics.NDCG (float32; random tie order)",
        dict(
            _LIST,
            k=None,
            gain="exp2",
            ties="random",
            zero_idcg="zero",
            aggregate="keras_rs",
            score_dtype="float32",
        ),
        "k: k; gain_fn, rank_discount_fn: gain, discount; sample_weight: weights (per list, or "
        "per item for 2-D input); items with label < 0 or weight <= 0 are dropped (2-D input)",
        "per list within float32 accumulation error, on lists without tied scores (keras-rs "
        "shuffles ties at random even with shuffle_ties=False)",
    ),
    Preset(
        "lightgbm",
        "LightGBM ndcg@k (lambdarank metric)",
        dict(
            _LIST,
            k=(1, 2, 3, 4, 5),
            gain=EXP2_TABLE,
            ties="stable",
            zero_idcg="one",
            aggregate="lightgbm",
            score_dtype="float64",
        ),
        "eval_at: k; label_gain: gain=[...]",
        "per query and mean at 1e-12",
    ),
    Preset(
        "xgboost",
        "XGBoost ndcg, ndcg@n, ndcg@n- (float32 predictions; plain ndcg is ndcg@32)",
        dict(
            _LIST,
            k=32,
            gain="exp2",
            ties="stable",
            zero_idcg="one",
            aggregate="xgboost",
            score_dtype="float32",
        ),
        "ndcg@n: k=n; ndcg@n-: zero_idcg='zero'; ndcg_exp_gain=false: gain='linear'",
        "per query and mean at 1e-12 (fractional labels: float32-representable ones)",
    ),
    Preset(
        "ranx",
        "ranx ndcg, ndcg@k (Run/Qrels objects)",
        dict(
            _TREC,
            ties="stable",
            score_dtype="float64",
            missing="error",
        ),
        "ndcg@k: k=k; ndcg_burges: gain='exp2'; -lN (rel_lvl): gain=ranx_gain(N) or "
        "ranx_gain(N, burges=True); make_comparable=True: missing='zero'",
        "per query at 1e-12 on lists without tied scores, and on tied lists of up to 15 "
        "documents (ranx's quicksort scrambles ties in longer lists)",
    ),
)
PRESETS: Mapping[str, Preset] = MappingProxyType({preset.name: preset for preset in _REGISTRY})


def presets() -> dict[str, Preset]:
    """The presets by name, each with its tool, settings, switches and parity claim.

    Returns
    -------
    dict of str to Preset
        In the order of the README table.

    Examples
    --------
    >>> import fastndcg
    >>> fastndcg.presets()["lightgbm"].options["zero_idcg"]
    'one'
    """
    return dict(PRESETS)


def get_preset(name: Any) -> Preset:
    """The preset called ``name``; a ValueError listing the valid names otherwise."""
    if isinstance(name, Preset):
        return name
    if isinstance(name, str) and name in PRESETS:
        return PRESETS[name]
    raise ValueError(f"unknown preset={name!r}; valid presets are {', '.join(map(repr, PRESETS))}")


class ranx_gain:  # named after the ranx parameter it reproduces
    r"""Gain of ranx's ``-lN`` metrics: grades below ``rel_lvl`` count 0, others keep theirs.

    ``G(g) = g`` (or :math:`2^g - 1` with ``burges=True``) for :math:`g \ge` ``rel_lvl``,
    else 0. ranx removes judgments below ``rel_lvl`` from both the ranking and the ideal,
    which is what a gain of 0 does.

    Examples
    --------
    >>> import fastndcg
    >>> r = fastndcg.ndcg([2, 1, 3], [0.9, 0.8, 0.7], gain=fastndcg.ranx_gain(2))
    >>> round(float(r), 4)  # gains 2, 0, 3: DCG 2 + 3/2, IDCG 3 + 2/log2(3)
    0.8212
    """

    def __init__(self, rel_lvl: int = 1, burges: bool = False) -> None:
        if isinstance(rel_lvl, bool) or not isinstance(rel_lvl, numbers.Integral):
            raise TypeError(f"rel_lvl must be an int; got {rel_lvl!r}")
        self.rel_lvl = int(rel_lvl)
        self.burges = bool(burges)

    def __call__(self, grades: np.ndarray) -> np.ndarray:
        grades = np.asarray(grades, dtype=np.float64)
        gains = np.exp2(grades) - 1.0 if self.burges else grades
        return np.where(grades >= self.rel_lvl, gains, 0.0)

    def __repr__(self) -> str:
        return f"ranx_gain({self.rel_lvl}{', burges=True' if self.burges else ''})"


# -- applying presets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rules:
    """What a call needs beyond the engine: the tool aggregate and rounding applied afterwards."""

    preset: str | None
    aggregate: str
    decimals: int | None
    weights: Any
    list_weights: np.ndarray | None = None
    shown: dict[str, Any] = field(default_factory=dict)

    def finish(self, result: NDCGResult) -> NDCGResult:
        """Round, re-aggregate and label ``result`` as the rules say."""
        shown = {**result.options, **self.shown}
        if self.preset is not None:
            shown = {"preset": self.preset, **shown}
        if self.aggregate in AGGREGATES and self.decimals is None:
            return replace(result, options=shown)
        per_query = result.per_query
        if self.decimals is not None:
            per_query = round_half_even(per_query, self.decimals)
            shown["decimals"] = self.decimals
        shown["aggregate"] = self.aggregate
        if self.aggregate == "ratio":
            mean = result.mean
        else:
            weights = query_weights(self.weights, result.n_queries)
            mean = tool_mean(self.aggregate, per_query, result.idcg, weights, self.list_weights)
        return replace(result, per_query=per_query, mean=mean, options=shown)


def resolve(
    entry: str, preset: Any, explicit: dict[str, Any], args: tuple[Any, ...] = ()
) -> tuple[tuple[Any, ...], dict[str, Any], _Rules]:
    """Merge a preset with the options given explicitly, for entry point ``entry``.

    Returns the positional arguments and options to call the entry point with, and the rules
    to apply to its result. Settings a preset makes for TREC runs only (``missing``,
    ``judged_only``) are dropped elsewhere; a preset's ``ideal="global"`` means "all
    judgments", which outside :func:`fastndcg.ndcg_run` are the rows given unless judgment lists
    are passed, so it becomes ``"recall"`` there.
    """
    chosen = None if preset is None else get_preset(preset)
    settings = dict(chosen.options) if chosen is not None else {}
    if chosen is not None and entry != "ndcg_run":
        for name in RUN_ONLY:
            settings.pop(name, None)
        if settings.get("ideal") == "global" and not any(
            explicit.get(name) is not None for name in IDEAL_DATA
        ):
            settings["ideal"] = "recall"
        if settings.get("ties") in KEYED_TIES and "ties" not in explicit:
            raise ValueError(
                f"preset {chosen.name!r} orders tied scores by document id "
                f"(ties={settings['ties']!r}), which needs document ids: score a TREC run with "
                "fastndcg.ndcg_run, or pass ties= explicitly (e.g. ties='stable' when rows are "
                "in descending document id order)"
            )
    options = {**settings, **explicit}
    if isinstance(options.get("k"), tuple):
        options["k"] = list(options["k"])
    if isinstance(options.get("gain"), tuple):
        options["gain"] = list(options["gain"])
    decimals = options.pop("decimals", None)
    if decimals is not None and (
        isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral) or decimals < 0
    ):
        raise ValueError(f"decimals must be an int >= 0 or None; got {decimals!r}")
    aggregate = options.get("aggregate", "mean")
    if aggregate in TOOL_AGGREGATES:
        options["aggregate"] = "mean"
    elif aggregate not in AGGREGATES:
        valid = ", ".join(repr(a) for a in (*AGGREGATES, *TOOL_AGGREGATES))
        raise ValueError(f"unknown aggregate={aggregate!r}; valid values are {valid}")
    list_weights = None
    if aggregate == "keras_rs" and entry == "ndcg":
        args, options, list_weights = _keras_items(args, options)
    shown = {}
    if entry == "ndcg_run":  # the run's query-set rules, so results show what was applied
        shown["missing"] = options.get("missing", "zero")
        shown.update({name: options[name] for name in RUN_ONLY[1:] if options.get(name)})
    rules = _Rules(
        preset=None if chosen is None else chosen.name,
        aggregate=aggregate,
        decimals=None if decimals is None else int(decimals),
        weights=options.get("weights"),
        list_weights=list_weights,
        shown=shown,
    )
    return args, options, rules


def accepts_preset(entry: str) -> Callable[[Callable[..., NDCGResult]], Callable[..., NDCGResult]]:
    """Decorate an entry point so that it takes ``preset=``, ``decimals=`` and tool aggregates.

    Only the options the caller actually passes override the preset's settings.
    """

    def decorate(func: Callable[..., NDCGResult]) -> Callable[..., NDCGResult]:
        @functools.wraps(func)
        def call(*args: Any, preset: Any = None, **options: Any) -> NDCGResult:
            args, options, rules = resolve(entry, preset, options, args)
            return rules.finish(func(*args, **options))

        signature = inspect.signature(func)
        params = list(signature.parameters.values())
        tail = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
        head = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
            for name in ("preset", "decimals")
            if name not in signature.parameters
        ]
        if tail:  # decimals travels in **options
            added = added[:1]
        call.__signature__ = signature.replace(parameters=[*head, *added, *tail])  # type: ignore[attr-defined]
        return call

    return decorate


# -- tool rules ---------------------------------------------------------------------------------


def round_half_even(values: np.ndarray, decimals: int) -> np.ndarray:
    """``values`` rounded to ``decimals`` places as ``printf("%.{decimals}f")`` rounds them.

    ``numpy.round`` scales by a power of ten first, which can push a value across a rounding
    boundary; the few values whose scaled fraction lies near one half are rounded through
    Python's correctly rounded formatting instead (as are all values when the scaling is not
    exact). NaN stays NaN.
    """
    if decimals >= _FINER_THAN_FLOAT64:
        return values.copy()
    # np.round is right when 10**decimals is exact (up to 10**22) and the scaled value keeps
    # a fraction (below 2**52); otherwise its scaling can move the value by an ulp, or
    # overflow: those values are formatted too
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.round(values, decimals)
        scaled = np.abs(values) * np.float64(10.0) ** decimals
        near = np.isfinite(values) & (
            (decimals > 22) | ~(scaled < 2.0**52) | (np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6)
        )
    for index in zip(*np.nonzero(near), strict=True):
        out[index] = float(f"{values[index]:.{decimals}f}")
    return out


# Rounding to this many decimals or more changes no float64: every float64 is a multiple of
# 2**-1074 (about 4.9e-324), so it lies within half a unit of the 324th decimal of itself.
_FINER_THAN_FLOAT64 = 324


def tool_mean(
    rule: str,
    per_query: np.ndarray,
    idcg: np.ndarray,
    weights: np.ndarray | None,
    list_weights: np.ndarray | None = None,
) -> np.ndarray:
    """The aggregate per cutoff under ``rule`` (``"mean"`` or a tool aggregate, see module doc).

    Queries whose value is NaN (skipped) are left out of numerator and denominator.
    """
    n_queries, n_cutoffs = per_query.shape
    w = np.ones(n_queries) if weights is None else weights
    if rule in ("mean", "keras_rs"):  # only the weights' ratios matter
        w = relative_weights(w)
    else:
        with np.errstate(over="ignore"):  # reported below
            held = w.astype(np.float32) if rule == "xgboost" else w  # XGBoost holds them so
            total = held.sum(dtype=np.float64)
        if not np.isfinite(total):
            raise ValueError(
                f"weights beyond the {held.dtype} range (largest {w.max():g}, sum {total:g}); "
                f"aggregate={rule!r} adds queries without relevant items unweighted, so the "
                "weights' scale matters: scale them down"
            )
    counted = ~np.isnan(per_query)
    values = np.where(counted, per_query, 0.0)
    if rule == "keras_rs":
        lw = list_weights if list_weights is not None else keras_list_weights(w, idcg[:, 0] > 0)
        lw = np.where(counted, lw[:, None], 0.0)
        total = lw.sum(axis=0)
        out = np.zeros(n_cutoffs)
        np.divide((lw * values).sum(axis=0), total, out=out, where=total > 0)
        return out
    if rule == "xgboost":  # XGBoost holds group weights as float32
        w = w.astype(np.float32).astype(np.float64)
    wc = np.where(counted, w[:, None], 0.0)
    denominator = wc.sum(axis=0)
    if rule == "mean":
        numerator = (wc * values).sum(axis=0)
    else:  # lightgbm, xgboost: queries without relevant items add their value unweighted
        empty = idcg <= 0
        numerator = np.where(empty, values, wc * values).sum(axis=0)
    mean = np.full(n_cutoffs, np.nan)
    np.divide(numerator, denominator, out=mean, where=denominator > 0)
    if rule != "xgboost":
        return mean
    over = np.flatnonzero(mean > 1.0 + _XGBOOST_EPS)
    if over.size:
        raise ValueError(
            f"aggregate='xgboost': the weighted mean is {mean[over[0]]:.6g} > 1 (queries without "
            "relevant items add their value unweighted), and XGBoost stops with 'Invalid output "
            "score, might be caused by invalid query group weight'; use aggregate='mean'"
        )
    return np.minimum(mean, 1.0)


def keras_list_weights(
    weights: np.ndarray, relevant: np.ndarray, weighted_relevance: np.ndarray | None = None
) -> np.ndarray:
    r"""keras-rs's per-list weights (``get_list_weights``).

    ``weights`` are per list (:math:`\sum_i w_i` where the caller has item weights),
    ``relevant`` says which lists have gain, and ``weighted_relevance`` is
    :math:`\sum_i w_i G_i / \sum_i G_i` per list (by default the list weight itself).
    """
    base = weights if weighted_relevance is None else weighted_relevance
    has_weight = weights > 0
    useful = has_weight & relevant
    count = int(useful.sum())
    average = float(np.where(relevant, base, 0.0).sum()) / count if count else 1.0
    return np.where(has_weight, np.where(relevant, base, average), 0.0)


def _keras_items(
    args: tuple[Any, ...], options: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any], np.ndarray | None]:
    """keras-rs's item handling for dense 2-D input to :func:`fastndcg.ndcg`.

    Items with a negative label, a False ``mask`` or a weight <= 0 are dropped, as keras-rs
    masks them. Weights per list apply to each of its items; item weights (``weights`` shaped
    like ``grades``) also multiply each item's gain, in the ranking and in the ideal. Returns
    the arguments for the engine and keras-rs's list weights.
    """
    options = dict(options)
    positional = bool(args)
    grades = args[0] if positional else options.get("grades")
    if grades is None or np.ndim(grades) != 2:
        return args, options, None
    labels = _dense_numeric(grades, "grades")
    nan = np.argwhere(np.isnan(labels))
    if nan.size:  # not a negative label: keras-rs would not mask it
        raise ValueError(
            f"grades has a NaN value at query row {nan[0][0]}, item {nan[0][1]}; grades must be "
            "finite: drop or fill those items first"
        )
    keep = labels >= 0
    if options.get("mask") is not None:
        keep &= dense_mask(options["mask"], labels.shape)
    weights = options.get("weights")
    per_item = weights is not None and np.ndim(weights) == 2
    if weights is None:
        w = np.ones_like(labels)
    elif per_item:
        w = _dense_numeric(weights, "weights")
        if w.shape != labels.shape:
            raise ValueError(
                f"item weights must have the shape of grades {labels.shape}; got {w.shape}"
            )
        bad = np.argwhere(~np.isfinite(w))
        if bad.size:
            q, item = bad[0]
            raise ValueError(f"item weights must be finite; weights[{q}, {item}] = {w[q, item]}")
    else:
        w = np.broadcast_to(query_weights(weights, labels.shape[0])[:, None], labels.shape)
    keep &= w > 0
    w = np.where(keep, w, 0.0)
    labels = np.where(keep, labels, 0.0)
    gains = _gains(labels, options.get("gain", "exp2"))
    relevance = gains.sum(axis=1)
    weighted = np.zeros_like(relevance)
    np.divide((w * gains).sum(axis=1), relevance, out=weighted, where=relevance > 0)
    list_weights = keras_list_weights(w.sum(axis=1), relevance > 0, weighted)
    options["mask"] = keep
    if per_item:
        options.update(weights=None, gain="linear")
        labels = w * gains
    if positional:
        return (labels, *args[1:]), options, list_weights
    options["grades"] = labels
    return args, options, list_weights


def _dense_numeric(values: Any, name: str) -> np.ndarray:
    reject_masked(values, name)
    array = np.asarray(from_torch(values, name))
    numeric_vector(array.reshape(-1), name, cell_words(array.shape[1]))
    return array.astype(np.float64)


def _gains(labels: np.ndarray, gain: Any) -> np.ndarray:
    """Gain of every label under a gain option, through the engine (its checks included)."""
    from fastndcg._api import ndcg

    flat = labels.ravel()
    single = ndcg(flat, offsets=np.arange(flat.size + 1), gain=gain, discount=[1.0])
    return single.dcg[:, 0].reshape(labels.shape)
