"""Applying presets: merging a preset's settings with the options given, and the tool rules.

:func:`accepts_preset` decorates an entry point so that it takes ``preset=``, ``decimals=`` and
the tools' aggregates; :func:`resolve` merges the settings and returns the rules
(:class:`_Rules`) applied to the entry point's result.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from fastndcg._core.aggregate import keras_list_weights, query_weights, round_half_even, tool_mean
from fastndcg._core.coerce import cell_words, dense_mask, from_torch, numeric_vector, reject_masked
from fastndcg._core.definition import Definition
from fastndcg._core.layout import build_layout
from fastndcg._core.options import OPTIONS, RUN_ONLY, parse
from fastndcg._core.vocabulary import AGGREGATES, KEYED_TIES, TOOL_AGGREGATES, choose
from fastndcg._errors import COMMAND, PYTHON, InputError, OptionError
from fastndcg._presets.registry import get_preset
from fastndcg._result import NDCGResult

IDEAL_DATA = ("ideal_grades", "ideal_qid", "ideal_offsets")
ALL_AGGREGATES = (*AGGREGATES, *TOOL_AGGREGATES)


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
            raise OptionError(
                f"`preset {chosen.name!r}` orders tied scores by document id "
                f"(`ties={settings['ties']!r}`), which needs document ids",
                option="preset",
                value=chosen.name,
                fix={
                    PYTHON: "score a TREC run with fastndcg.ndcg_run, or pass `ties=` explicitly "
                    "(e.g. `ties='stable'` when rows are in descending document id order)",
                    COMMAND: "score a TREC run with --qrels and --run, or pass --ties explicitly "
                    "(e.g. --ties stable when rows are in descending document id order)",
                },
                joiner=": ",
            )
    options = {**settings, **explicit}
    if isinstance(options.get("k"), tuple):
        options["k"] = list(options["k"])
    if isinstance(options.get("gain"), tuple):
        options["gain"] = list(options["gain"])
    decimals = parse("decimals", options.pop("decimals", None))
    aggregate = choose("aggregate", options.get("aggregate", "mean"), ALL_AGGREGATES)
    if aggregate in TOOL_AGGREGATES:
        options["aggregate"] = "mean"
    list_weights = None
    if aggregate == "keras_rs" and entry == "ndcg":
        args, options, list_weights = _keras_items(args, options)
    shown = {}
    if entry == "ndcg_run":  # the run's query-set rules, so results show what was applied
        shown["missing"] = options.get("missing", OPTIONS["missing"].default)
        shown.update({name: options[name] for name in RUN_ONLY[1:] if options.get(name)})
    rules = _Rules(
        preset=None if chosen is None else chosen.name,
        aggregate=aggregate,
        decimals=decimals,
        weights=options.get("weights"),
        list_weights=list_weights,
        shown=shown,
    )
    return args, options, rules


def accepts_preset(entry: str) -> Callable[[Callable[..., NDCGResult]], Callable[..., NDCGResult]]:
    """Decorate an entry point so that it takes ``preset=``, ``decimals=`` and tool aggregates.

    Only the options the caller actually passes override the preset's settings. The entry
    point declares ``preset`` (and ``decimals``, unless ``**options`` carries it) in its own
    signature, for its documentation; the decorator takes them before the call.
    """

    def decorate(func: Callable[..., NDCGResult]) -> Callable[..., NDCGResult]:
        @functools.wraps(func)
        def call(*args: Any, preset: Any = None, **options: Any) -> NDCGResult:
            args, options, rules = resolve(entry, preset, options, args)
            return rules.finish(func(*args, **options))

        return call

    return decorate


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
        where = f"query row {nan[0][0]}, item {nan[0][1]}"
        raise InputError(
            f"grades has a NaN value at {where}",
            where=where,
            fix="grades must be finite: drop or fill those items first",
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
            raise InputError(
                f"item weights must have the shape of grades {labels.shape}",
                value=w.shape,
                fix=f"got {w.shape}",
            )
        bad = np.argwhere(~np.isfinite(w))
        if bad.size:
            q, item = bad[0]
            raise InputError(
                "item weights must be finite",
                value=w[q, item],
                where=f"weights[{q}, {item}]",
                fix=f"weights[{q}, {item}] = {w[q, item]}",
            )
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
    """Gain of every label under a gain option, through a definition (its checks included).

    Each label is scored as a list of one item with a discount of 1: its DCG is its gain.
    """
    flat = labels.ravel()
    definition = Definition.create(gain=gain, discount=[1.0])
    with definition.threads():
        layout = build_layout(flat, offsets=np.arange(flat.size + 1), backend=definition.backend)
        dcg, _ = definition.score(layout)
    return dcg[:, 0].reshape(labels.shape)
