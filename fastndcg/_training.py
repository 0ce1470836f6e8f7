"""What the training-loop integrations share: their options checked once, and their names.

:func:`require` imports the library of an optional integration (Dask and Spark's too).

:mod:`fastndcg.torch`, :mod:`fastndcg.lightgbm`, :mod:`fastndcg.xgboost` and
:mod:`fastndcg.sklearn` each hand a training library a metric that calls :func:`fastndcg.ndcg`
on every evaluation. :class:`TrainingDefinition` checks the options when that metric is made,
so that a bad option fails before the first boosting round or validation step instead of in it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from fastndcg._api import ndcg
from fastndcg._core.definition import Definition
from fastndcg._core.options import DEFINITION, split_options
from fastndcg._errors import NOT_GIVEN, BackendUnavailableError, OptionError
from fastndcg._presets import resolve
from fastndcg._result import NDCGResult, cutoff_label

# what the integrations take besides the definition's options
PRESET_OPTIONS = ("preset", "decimals")


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
        if merged.get("ideal") == "global":
            raise OptionError(
                f"{caller} has no judgment lists for `ideal='global'`",
                option="ideal",
                value="global",
                fix="rank the judged rows of a query together and use `ideal='recall'`",
            )
        definition = Definition.create(
            **{name: value for name, value in merged.items() if name in DEFINITION}
        )
        if definition.ties == "random" and merged.get("seed") is None:
            options["seed"] = definition.seed
        self.options = options
        self.cutoffs = definition.cutoffs
        self.backend = definition.requested_backend

    @property
    def names(self) -> tuple[str, ...]:
        """The metric's name at each cutoff: ``fastndcg_ndcg@10``, ``fastndcg_ndcg`` (no cutoff)."""
        return tuple(f"fastndcg_ndcg{cutoff_label(k)}" for k in self.cutoffs)

    def score(self, grades: Any, scores: Any, **data: Any) -> NDCGResult:
        """:func:`fastndcg.ndcg` of these rows (``data``: ``qid``, ``offsets``, ``weights``...)."""
        return ndcg(grades, scores, **data, **self.options)

    def __repr__(self) -> str:
        return ", ".join(f"{name}={value!r}" for name, value in self.options.items())
