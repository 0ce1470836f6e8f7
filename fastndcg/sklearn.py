"""NDCG (or another measure) as a scikit-learn scorer, for tuning rankers by query group.

Needs scikit-learn: ``pip install 'fastndcg[sklearn]'``.

scikit-learn's ``ndcg_score`` takes padded 2-D arrays, one query per row, and knows nothing of
query groups. :func:`make_ndcg_scorer` scores a ranker's predictions on flat rows grouped by
query id instead, under any definition or preset of :func:`fastndcg.ndcg`. The query ids reach
it through scikit-learn's metadata routing, as they reach ``GroupKFold`` and the ranker, so
that ``cross_validate`` and ``GridSearchCV`` score every fold by query (the documentation's
*Training loops* page tunes an ``XGBRanker`` so). With ``measure=`` the scorer computes that
measure of :func:`fastndcg.evaluate` instead (``"AP"``, ``"P@10"``, ``"RR@10"``...).
"""

from __future__ import annotations

from typing import Any

from fastndcg._api import ndcg
from fastndcg._errors import NOT_GIVEN, InputError, OptionError
from fastndcg._evaluate import evaluate
from fastndcg._training import TrainingDefinition, TrainingMeasures, require

sklearn = require("sklearn", "sklearn")
metrics = require("sklearn.metrics", "sklearn")

__all__ = ["make_ndcg_scorer"]


def make_ndcg_scorer(k: Any = NOT_GIVEN, *, measure: Any = None, **definition: Any) -> Any:
    """A scikit-learn scorer of NDCG over query groups, for ``cross_validate`` and searches.

    Parameters
    ----------
    k : int or None, optional
        The cutoff (a scorer returns one number). Left out: the preset's, else the whole list.
    measure : str or Measure, optional
        Another measure instead of NDCG, as :func:`fastndcg.evaluate` takes it (``"AP"``,
        ``"P@10"``, ``"RR@10"``...; it names its cutoff, so no ``k``): one.
    **definition
        Options of :func:`fastndcg.ndcg` that define NDCG (``gain``, ``discount``, ``ties``,
        ``zero_idcg``, ``aggregate``, ``score_dtype``, ``backend``, ``n_threads``, ...),
        ``preset`` and ``decimals``; with ``measure``, those of :func:`fastndcg.evaluate`
        (``relevance_level``, ``preset``, ``ties``, ``zero_idcg``...). Checked now.

    Returns
    -------
    scorer
        ``scorer(estimator, X, y, qid=...)``: NDCG of ``estimator.predict(X)`` against the
        grades ``y``, rows grouped by ``qid`` (any order; each query's rows may be anywhere). With
        metadata routing enabled (``sklearn.set_config(enable_metadata_routing=True)``) the
        scorer requests ``qid`` already (``scorer.set_score_request(qid=True)``), so that
        ``cross_validate(..., params={"qid": qid})`` and ``GridSearchCV.fit(..., qid=qid)``
        route each fold's query ids to it. Split with ``GroupKFold`` (``groups=qid``) so that
        no query is cut across folds.

    Raises
    ------
    OptionError
        For an option :func:`fastndcg.ndcg` refuses, several cutoffs, or ``ideal="global"``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyRegressor
    >>> from fastndcg.sklearn import make_ndcg_scorer
    >>> X, y = np.array([[0.9], [0.2], [0.4], [0.1]]), np.array([1, 0, 2, 0])
    >>> model = DummyRegressor().fit(X, y)  # predicts one value: every list is a tie
    >>> import sklearn
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     scorer = make_ndcg_scorer(k=2, preset="sklearn")
    ...     print(round(scorer(model, X, y, qid=[1, 1, 2, 2]), 4))
    ...     scorer = make_ndcg_scorer(measure="RR@2", ties="pessimistic")
    ...     print(scorer(model, X, y, qid=[1, 1, 2, 2]))
    0.8155
    0.5
    """
    caller = "fastndcg.sklearn.make_ndcg_scorer"
    if measure is not None:
        measured = TrainingMeasures(caller, measure, definition, k)
        if len(measured.names) != 1:
            raise OptionError(
                f"a scorer returns one number, and `measure={measure!r}` names "
                f"{len(measured.names)} measures",
                option="measure",
                value=measure,
                fix="make one scorer per measure (scoring={'P@5': ..., 'AP': ...})",
            )
        return _requesting_qid(
            metrics.make_scorer(
                measure_by_query,
                response_method="predict",
                measures=measured.measures,
                **measured.options,
            )
        )
    training = TrainingDefinition(caller, k, definition)
    if len(training.cutoffs) != 1:
        raise OptionError(
            f"a scorer returns one number, and `k={list(training.cutoffs)}` asks for "
            f"{len(training.cutoffs)}",
            option="k",
            value=list(training.cutoffs),
            fix="make one scorer per cutoff (scoring={'ndcg@5': ..., 'ndcg@10': ...})",
        )
    return _requesting_qid(
        metrics.make_scorer(ndcg_by_query, response_method="predict", **training.options)
    )


def _requesting_qid(scorer: Any) -> Any:
    """``scorer``, requesting ``qid`` where metadata routing is enabled."""
    if sklearn.get_config().get("enable_metadata_routing"):
        scorer = scorer.set_score_request(qid=True)
    return scorer


def ndcg_by_query(y_true: Any, y_pred: Any, *, qid: Any = None, **options: Any) -> float:
    """NDCG of predictions ``y_pred`` against grades ``y_true``, rows grouped by ``qid``.

    The score function of :func:`make_ndcg_scorer` (``options``: the options it was made with).

    Raises
    ------
    InputError
        Without ``qid``: the scorer was not routed the query ids.
    """
    _check_qid(qid, "NDCG")
    return float(ndcg(y_true, y_pred, qid=qid, **options))


def measure_by_query(y_true: Any, y_pred: Any, *, qid: Any = None, **options: Any) -> float:
    """A measure of predictions ``y_pred`` against grades ``y_true``, rows grouped by ``qid``.

    The score function of :func:`make_ndcg_scorer` with ``measure=`` (``options``: the options
    of :func:`fastndcg.evaluate` it was made with, ``measures`` the one measure).

    Raises
    ------
    InputError
        Without ``qid``: the scorer was not routed the query ids.
    """
    _check_qid(qid, "measure")
    return float(evaluate(y_true, y_pred, qid=qid, **options).mean[0])


def _check_qid(qid: Any, what: str) -> None:
    if qid is None:
        raise InputError(
            f"the {what} scorer needs the query id of every row (qid), and got none",
            fix="enable metadata routing (sklearn.set_config(enable_metadata_routing=True)) "
            "before make_ndcg_scorer, and pass qid: cross_validate(..., params={'qid': qid}) "
            "or search.fit(X, y, qid=qid)",
        )
