"""NDCG under any definition, or any other measure, as a LightGBM metric at every boosting round.

Needs LightGBM: ``pip install 'fastndcg[lightgbm]'``.

LightGBM computes only its own ``ndcg@k`` while it trains. :func:`eval_metric` gives it
fastndcg's instead (any definition, any preset): the same callable is a ``feval`` for
:func:`lightgbm.train` and an ``eval_metric`` for :meth:`lightgbm.LGBMRanker.fit`. The query
groups come from the evaluated ``Dataset`` (or ``eval_group``), and the metrics are named
``fastndcg_ndcg@k`` so that they sit next to LightGBM's own in logs, ``record_evaluation`` and
early stopping. With ``preset="lightgbm"`` the values are LightGBM's ``ndcg@k``. With
``measures=`` it reports the measures of :func:`fastndcg.evaluate` instead (MAP, P@10, RR@10,
...), named ``fastndcg_`` and the name given (``fastndcg_map@10``).

Examples
--------
>>> import numpy as np, lightgbm as lgb
>>> import fastndcg.lightgbm
>>> rng = np.random.default_rng(0)
>>> X, y = rng.random((60, 3)), rng.integers(0, 3, 60)
>>> train = lgb.Dataset(X, y, group=[10] * 6)
>>> record = {}
>>> booster = lgb.train(
...     {"objective": "lambdarank", "metric": "ndcg", "eval_at": [5], "verbose": -1},
...     train, num_boost_round=3, valid_sets=[train], valid_names=["train"],
...     feval=fastndcg.lightgbm.eval_metric(k=5, preset="lightgbm"),
...     callbacks=[lgb.record_evaluation(record)])
>>> bool(np.allclose(record["train"]["fastndcg_ndcg@5"], record["train"]["ndcg@5"], atol=1e-9))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fastndcg._errors import NOT_GIVEN, InputError
from fastndcg._training import TrainingDefinition, TrainingMeasures, require

lgb = require("lightgbm", "lightgbm")

__all__ = ["eval_metric"]


def eval_metric(k: Any = NOT_GIVEN, *, measures: Any = None, **definition: Any) -> _EvalMetric:
    """NDCG as a LightGBM metric: a ``feval`` for ``train``, an ``eval_metric`` for ``fit``.

    Parameters
    ----------
    k : int, list of (int or None), or None, optional
        Cutoff(s); one metric per cutoff, in this order (early stopping with
        ``first_metric_only`` watches the first). Left out: the preset's (``preset="lightgbm"``:
        1 to 5, as LightGBM's ``eval_at``), else the whole list.
    measures : str, Measure or list of them, optional
        Other measures instead of NDCG, as :func:`fastndcg.evaluate` takes them (``"map@10"``,
        ``"P@10"``, ``"RR@10"``, ``"nDCG@10"``...; each names its cutoff, so no ``k``): one
        metric per measure, in this order, named ``fastndcg_`` and the name as given.
    **definition
        Options of :func:`fastndcg.ndcg` that define NDCG (``gain``, ``discount``, ``ties``,
        ``zero_idcg``, ``aggregate``, ``score_dtype``, ``backend``, ``n_threads``, ...),
        ``preset`` and ``decimals``; with ``measures``, those of :func:`fastndcg.evaluate`
        (``relevance_level``, ``preset``, ``ties``, ``zero_idcg``...). Checked now, so that a
        bad one fails before training.

    Returns
    -------
    callable
        Called as ``metric(preds, dataset)`` by :func:`lightgbm.train` (``feval=``) and as
        ``metric(y_true, y_pred, weight, group)`` by :class:`lightgbm.LGBMRanker`
        (``eval_metric=``); returns a list of ``(name, value, True)``, names
        ``fastndcg_ndcg@k`` (``fastndcg_ndcg`` for the whole list). Row weights become query
        weights as LightGBM makes them (each query's mean row weight, in float32); with
        ``measures``, they weigh each query in the means (counts such as ``NumRet`` stay sums).
        Every value is higher-is-better but ``Unjudged`` and ``RBPResid``.

    Raises
    ------
    OptionError
        For an option :func:`fastndcg.ndcg` refuses, or ``ideal="global"`` (no judgment lists).

    Examples
    --------
    >>> import fastndcg.lightgbm
    >>> metric = fastndcg.lightgbm.eval_metric(k=[5, 10], preset="lightgbm")
    >>> metric([0, 1, 2, 0], [0.3, 0.2, 0.9, 0.1], None, [2, 2])  # y_true, y_pred, weight, group
    [('fastndcg_ndcg@5', 0.815..., True), ('fastndcg_ndcg@10', 0.815..., True)]
    >>> metric = fastndcg.lightgbm.eval_metric(measures=["map@2", "P@2"])
    >>> metric([0, 1, 2, 0], [0.3, 0.2, 0.9, 0.1], None, [2, 2])
    [('fastndcg_map@2', 0.75, True), ('fastndcg_P@2', 0.5, True)]
    """
    caller = "fastndcg.lightgbm.eval_metric"
    if measures is not None:
        return _EvalMetric(TrainingMeasures(caller, measures, definition, k))
    return _EvalMetric(TrainingDefinition(caller, k, definition))


class _EvalMetric:
    """The callable :func:`eval_metric` returns (picklable, so that estimators can be cloned)."""

    def __init__(self, definition: TrainingDefinition | TrainingMeasures) -> None:
        self.definition = definition

    def __repr__(self) -> str:
        return f"fastndcg.lightgbm.eval_metric({self.definition!r})"

    def __call__(
        self, preds: Any, data: Any, weight: Any = None, group: Any = None
    ) -> list[tuple[str, float, bool]]:
        """Score ``(preds, dataset)`` or ``(y_true, y_pred, weight, group)`` (scikit-learn API)."""
        if isinstance(data, lgb.Dataset):
            labels, scores = data.get_field("label"), preds
            weight, boundaries = data.get_field("weight"), data.get_field("group")
            offsets = None if boundaries is None else np.asarray(boundaries, dtype=np.int64)
        else:
            labels, scores = preds, data
            offsets = None if group is None else _offsets(group)
        if offsets is None:
            raise InputError(
                "fastndcg.lightgbm.eval_metric needs the query groups of the evaluated data",
                fix="pass group= to lightgbm.Dataset (eval_group= to LGBMRanker.fit)",
            )
        if np.ndim(scores) != 1:
            raise InputError(
                "fastndcg.lightgbm.eval_metric scores one prediction per row",
                value=np.shape(scores),
                fix="use a ranking objective (lambdarank, rank_xendcg), not a multiclass one",
            )
        result = self.definition.score(
            labels, scores, offsets=offsets, weights=_query_weights(weight, offsets)
        )
        higher = self.definition.higher_is_better
        return [
            (name, float(value), better)
            for name, value, better in zip(self.definition.names, result.mean, higher, strict=True)
        ]


def _offsets(group_sizes: Any) -> np.ndarray:
    """CSR offsets of LightGBM's group sizes."""
    return np.concatenate([[0], np.cumsum(np.asarray(group_sizes, dtype=np.int64))])


def _query_weights(row_weights: Any, offsets: np.ndarray) -> np.ndarray | None:
    """LightGBM's query weights: each query's mean row weight, as its C++ computes it.

    Row weights are added in float32 in row order, then divided by the query's size in float32
    (``Metadata::CalculateQueryWeights``).
    """
    if row_weights is None:
        return None
    weights = np.asarray(row_weights, dtype=np.float32)
    starts, sizes = offsets[:-1], np.diff(offsets)
    sums = np.zeros(sizes.size, dtype=np.float32)
    for position in range(int(sizes.max(initial=0))):  # one row of every query at a time
        longer = sizes > position
        sums[longer] += weights[starts[longer] + position]
    return sums / np.maximum(sizes, 1).astype(np.float32)
