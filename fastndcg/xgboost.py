"""NDCG under any definition, or any other measure, as an XGBoost metric at every boosting round.

Needs XGBoost: ``pip install 'fastndcg[xgboost]'``.

XGBoost computes only its own ``ndcg@n`` while it trains. :func:`eval_metric` gives it
fastndcg's instead (any definition, any preset): the same callable is a ``custom_metric`` for
:func:`xgboost.train`, which reads the queries from the ``DMatrix`` (``qid`` or ``group``) and
scores them all in one call, and an ``eval_metric`` for :class:`xgboost.XGBRanker`, which calls
it once per query and averages. The metrics are named ``fastndcg_ndcg@k``. With
``preset="xgboost"`` the values are XGBoost's ``ndcg@k``. With ``measures=`` it reports the
measures of :func:`fastndcg.evaluate` instead (MAP, P@10, RR@10...), named ``fastndcg_`` and the
name given (``fastndcg_map@10``).

XGBoost writes a custom metric's values into its evaluation log with six decimals (``%f``), so
``evals_result`` and the printed log hold them rounded; the values the callable returns are not.

Examples
--------
>>> import numpy as np, xgboost as xgb
>>> import fastndcg.xgboost
>>> rng = np.random.default_rng(0)
>>> X, y = rng.random((60, 3)), rng.integers(0, 3, 60)
>>> train = xgb.DMatrix(X, y, qid=np.repeat(np.arange(6), 10))
>>> record = {}
>>> booster = xgb.train(
...     {"objective": "rank:ndcg", "eval_metric": "ndcg@5"}, train, num_boost_round=3,
...     evals=[(train, "train")], evals_result=record,
...     custom_metric=fastndcg.xgboost.eval_metric(k=5, preset="xgboost"), verbose_eval=False)
>>> ours, theirs = record["train"]["fastndcg_ndcg@5"], record["train"]["ndcg@5"]
>>> bool(np.allclose(ours, theirs, atol=5e-7))  # ours as XGBoost logs them: 6 decimals
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fastndcg._errors import NOT_GIVEN, InputError, OptionError
from fastndcg._training import TrainingDefinition, TrainingMeasures, require

xgb = require("xgboost", "xgboost")

__all__ = ["eval_metric"]


def eval_metric(k: Any = NOT_GIVEN, *, measures: Any = None, **definition: Any) -> _EvalMetric:
    """NDCG as an XGBoost metric: a ``custom_metric`` for ``train``, an ``eval_metric`` for rankers.

    Parameters
    ----------
    k : int, list of (int or None), or None, optional
        Cutoff(s). Left out: the preset's (``preset="xgboost"``: 32, XGBoost's plain ``ndcg``),
        else the whole list. :class:`xgboost.XGBRanker` takes one value per query, so one
        cutoff there; :func:`xgboost.train` takes one metric per cutoff.
    measures : str, Measure or list of them, optional
        Other measures instead of NDCG, as :func:`fastndcg.evaluate` takes them (``"map@10"``,
        ``"P@10"``, ``"RR@10"``...; each names its cutoff, so no ``k``), named ``fastndcg_`` and
        the name as given; one for :class:`xgboost.XGBRanker`.
    **definition
        Options of :func:`fastndcg.ndcg` that define NDCG (``gain``, ``discount``, ``ties``,
        ``zero_idcg``, ``aggregate``, ``score_dtype``, ``backend``, ``n_threads``, ...),
        ``preset`` and ``decimals``; with ``measures``, those of :func:`fastndcg.evaluate`
        (``relevance_level``, ``preset``, ``ties``, ``zero_idcg``...). Checked now, so that a
        bad one fails before training.

    Returns
    -------
    callable
        Called as ``metric(predt, dmatrix)`` by :func:`xgboost.train` (``custom_metric=``), it
        returns ``(name, value)`` (a list of them for several cutoffs), names
        ``fastndcg_ndcg@k`` (``fastndcg_ndcg`` for the whole list), with the DMatrix's group
        weights as query weights (with ``measures``, in the means; counts stay sums). Called
        as ``metric(y_true, y_score)`` with one query's rows by :class:`xgboost.XGBRanker`
        (``eval_metric=``), it returns that query's NDCG (or measure); XGBRanker names the
        metric after the callable's ``__name__``, ``fastndcg_ndcg@k`` (``fastndcg_`` and the
        measure's name).

    Raises
    ------
    OptionError
        For an option :func:`fastndcg.ndcg` refuses, or ``ideal="global"`` (no judgment lists).

    Examples
    --------
    >>> import fastndcg.xgboost
    >>> metric = fastndcg.xgboost.eval_metric(k=3, preset="xgboost")
    >>> metric.__name__
    'fastndcg_ndcg@3'
    >>> round(metric([0, 1, 2, 0], [0.3, 0.2, 0.9, 0.1]), 4)  # one query, as XGBRanker asks
    0.9639
    >>> metric = fastndcg.xgboost.eval_metric(measures="RR@10")
    >>> metric.__name__, metric([0, 1, 2, 0], [0.3, 0.2, 0.9, 0.1])
    ('fastndcg_RR@10', 1.0)
    """
    caller = "fastndcg.xgboost.eval_metric"
    if measures is not None:
        return _EvalMetric(TrainingMeasures(caller, measures, definition, k))
    return _EvalMetric(TrainingDefinition(caller, k, definition))


class _EvalMetric:
    """The callable :func:`eval_metric` returns (picklable, so that estimators can be cloned)."""

    def __init__(self, definition: TrainingDefinition | TrainingMeasures) -> None:
        self.definition = definition
        names = definition.names  # XGBRanker names the metric after __name__
        several = "fastndcg" if isinstance(definition, TrainingMeasures) else "fastndcg_ndcg"
        self.__name__ = names[0] if len(names) == 1 else several

    def __repr__(self) -> str:
        return f"fastndcg.xgboost.eval_metric({self.definition!r})"

    def __call__(self, predt: Any, data: Any) -> Any:
        """Score ``(predt, dmatrix)`` (``train``) or one query's ``(y_true, y_score)`` (rankers)."""
        if not isinstance(data, xgb.DMatrix):
            return self._one_query(grades=predt, scores=data)
        offsets = np.asarray(data.get_uint_info("group_ptr"), dtype=np.int64)
        if offsets.size < 2:
            raise InputError(
                "fastndcg.xgboost.eval_metric needs the queries of the evaluated DMatrix",
                fix="pass qid= (or group=) to xgboost.DMatrix",
            )
        weights = data.get_weight()
        result = self.definition.score(
            data.get_label(), predt, offsets=offsets, weights=weights if weights.size else None
        )
        names = self.definition.names
        values = [(name, float(value)) for name, value in zip(names, result.mean, strict=True)]
        return values[0] if len(values) == 1 else values

    def _one_query(self, grades: Any, scores: Any) -> float:
        """NDCG (or the measure) of one query (XGBRanker averages these itself)."""
        names = self.definition.names
        if len(names) != 1:
            several = isinstance(self.definition, TrainingMeasures)
            what = "measures" if several else "cutoffs"
            value = list(names) if several else self.definition.cutoffs
            raise OptionError(
                f"XGBRanker takes one value per query from a metric, and this one has {what} "
                f"{value}",
                option="measures" if several else "k",
                value=value,
                fix=f"make one metric per {what[:-1]} for XGBRanker, or pass them all to "
                "xgboost.train",
            )
        return float(self.definition.score(grades, scores).per_query[0, 0])
