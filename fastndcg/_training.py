"""What the training-loop integrations share: their options checked once, and their names.

:func:`require` imports the library of an optional integration (Dask and Spark's too).

:mod:`fastndcg.torch`, :mod:`fastndcg.lightgbm`, :mod:`fastndcg.xgboost` and
:mod:`fastndcg.sklearn` each hand a training library a metric that calls :func:`fastndcg.ndcg`
(or, for other measures, :func:`fastndcg.evaluate`) on every evaluation.
:class:`TrainingDefinition` and :class:`TrainingMeasures` check the options when that metric is
made, so that a bad option fails before the first boosting round or validation step instead of
in it.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

from fastndcg._api import ndcg
from fastndcg._core.definition import Definition
from fastndcg._core.measures.kinds import KINDS
from fastndcg._core.options import DEFINITION, split_options
from fastndcg._errors import NOT_GIVEN, BackendUnavailableError, OptionError, OptionTypeError
from fastndcg._evaluate import checked_options, evaluate
from fastndcg._presets import resolve
from fastndcg._result import MeasuresResult, NDCGResult, cutoff_label

# what the integrations take besides the definition's options
PRESET_OPTIONS = ("preset", "decimals")
# what the measures' integrations take besides the definition's options
MEASURES_OPTIONS = ("preset", "relevance_level")
# the measures that are better lower (the share of unjudged documents, RBP's uncertainty)
_LOWER_IS_BETTER = frozenset({"Unjudged", "RBPResid"})


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` for ``fastndcg.<extra>``, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise BackendUnavailableError(
            f"fastndcg.{extra} needs {module}, which cannot be imported ({exc})",
            value=module,
            fix=f"install it with pip install 'fastndcg[{extra}]'",
        ) from exc


class TrainingDefinition:
    """The options of a training metric, checked once; :meth:`score` applies them.

    ``k`` is :data:`~fastndcg._errors.NOT_GIVEN` when the caller left it out (then the
    preset's cutoffs apply, or the whole list). Every other option is one of
    :func:`fastndcg.ndcg`'s definition options, ``preset`` or ``decimals``; an unknown name is
    an OptionTypeError naming ``caller``. ``ideal="global"`` needs judgment lists that a
    training set does not have, and ``ties="random"`` without a seed draws one seed here, so
    that every evaluation orders ties alike.
    """

    def __init__(self, caller: str, k: Any, options: dict[str, Any]) -> None:
        options = dict(options) if k is NOT_GIVEN else {"k": k, **options}
        split_options(options, caller, PRESET_OPTIONS)
        explicit = {name: value for name, value in options.items() if name != "preset"}
        _, merged, _ = resolve("ndcg", options.get("preset"), explicit)
        definition = Definition.create(
            **{name: value for name, value in merged.items() if name in DEFINITION}
        )
        self.options = _fixed(caller, options, merged, definition)
        self.cutoffs = definition.cutoffs
        self.backend = definition.requested_backend

    @property
    def names(self) -> tuple[str, ...]:
        """The metric's name at each cutoff: ``fastndcg_ndcg@10``, ``fastndcg_ndcg`` (no cutoff)."""
        return tuple(f"fastndcg_ndcg{cutoff_label(k)}" for k in self.cutoffs)

    @property
    def higher_is_better(self) -> tuple[bool, ...]:
        """Whether each value improves upward: always, for NDCG."""
        return (True,) * len(self.cutoffs)

    def score(self, grades: Any, scores: Any, **data: Any) -> NDCGResult:
        """:func:`fastndcg.ndcg` of these rows (``data``: ``qid``, ``offsets``, ``weights``...)."""
        return ndcg(grades, scores, **data, **self.options)

    def __repr__(self) -> str:
        return ", ".join(f"{name}={value!r}" for name, value in self.options.items())


class TrainingMeasures:
    """The measures of a training metric and their options, checked once; :meth:`score` scores.

    :meth:`score` calls :func:`fastndcg.evaluate`, which takes ``measures`` as given here;
    ``options`` are its ``relevance_level``, ``preset`` and definition options, checked as
    :class:`TrainingDefinition` checks them. No ``k`` (given as an option, or as ``k`` by a
    caller whose ``k`` is NDCG's cutoff): each measure names its cutoff (``"P@10"``).
    """

    def __init__(
        self, caller: str, measures: Any, options: dict[str, Any], k: Any = NOT_GIVEN
    ) -> None:
        options = dict(options) if k is NOT_GIVEN else {"k": k, **options}
        if "k" in options:
            raise OptionTypeError(
                f"{caller} takes no `k`: each measure names its cutoff",
                option="k",
                value=options["k"],
                fix="put the cutoff in the measure's name: 'nDCG@10', 'P@5', 'AP@100'",
            )
        given = {"measures": measures, **options}
        level, preset = options.pop("relevance_level", 1), options.pop("preset", None)
        chosen, merged, definition = checked_options(caller, measures, level, preset, options)
        options = _fixed(caller, options, merged, definition)
        self.measures = chosen
        self.options = {"relevance_level": level, "preset": preset, **options}
        self.backend = definition.requested_backend
        self._given = given

    @property
    def names(self) -> tuple[str, ...]:
        """The metric's names: ``fastndcg_`` and each measure's name as given.

        ``fastndcg_P@10``, ``fastndcg_map@100``; ``"P.5,10"`` gives ``fastndcg_P_5`` and
        ``fastndcg_P_10``.
        """
        return tuple(f"fastndcg_{measure.name}" for measure in self.measures)

    @property
    def higher_is_better(self) -> tuple[bool, ...]:
        """Whether each measure improves upward (all but Unjudged and RBP's residual)."""
        return tuple(measure.kind not in _LOWER_IS_BETTER for measure in self.measures)

    def score(self, grades: Any, scores: Any, weights: Any = None, **data: Any) -> MeasuresResult:
        """:func:`fastndcg.evaluate` of these rows (``data``: ``qid`` or ``offsets``).

        ``weights`` (one per query, as the boosting libraries weigh them) make each measure
        averaged over queries a weighted mean over the queries it counts; the counts stay sums.
        """
        result = evaluate(grades, scores, **data, measures=self.measures, **self.options)
        if weights is None:
            return result
        weights = np.asarray(weights, dtype=np.float64)[:, None]
        counted = ~np.isnan(result.per_query)
        with np.errstate(invalid="ignore", divide="ignore"):
            weighted = (np.where(counted, result.per_query, 0.0) * weights).sum(axis=0) / (
                counted * weights
            ).sum(axis=0)
        averaged = [KINDS[measure.kind].aggregate == "mean" for measure in self.measures]
        return replace(result, mean=np.where(averaged, weighted, result.mean))

    def __repr__(self) -> str:
        return ", ".join(f"{name}={value!r}" for name, value in self._given.items())


def _fixed(
    caller: str, options: dict[str, Any], merged: dict[str, Any], definition: Definition
) -> dict[str, Any]:
    """``options``, refused for ``ideal="global"``, with a seed drawn for random ties.

    ``ideal="global"`` needs judgment lists that a training set does not have; ``ties="random"``
    without a seed gets one seed here, so that every evaluation orders ties alike.
    """
    if merged.get("ideal") == "global":
        raise OptionError(
            f"{caller} has no judgment lists for `ideal='global'`",
            option="ideal",
            value="global",
            fix="rank the judged rows of a query together and use `ideal='recall'`",
        )
    if definition.ties == "random" and merged.get("seed") is None:
        return {**options, "seed": definition.seed}
    return options
