"""The validated public functions: :func:`ndcg` and the scikit-learn drop-in :func:`ndcg_score`."""

from __future__ import annotations

import numbers
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fastndcg._engine import Engine, query_weights
from fastndcg._layout import build_layout
from fastndcg._presets import accepts_preset
from fastndcg._result import NDCGResult

Cutoffs = int | Sequence[int | None] | None
GainSpec = str | Sequence[float] | Mapping[float, float] | Callable[[np.ndarray], Any]
DiscountSpec = str | Sequence[float] | np.ndarray | Callable[[np.ndarray], Any]


@accepts_preset("ndcg")
def ndcg(
    grades: Any,
    scores: Any = None,
    *,
    qid: Any = None,
    offsets: Any = None,
    mask: Any = None,
    k: Cutoffs = None,
    gain: GainSpec = "exp2",
    discount: DiscountSpec = "log2",
    ideal: str = "recall",
    ideal_grades: Any = None,
    ideal_qid: Any = None,
    ideal_offsets: Any = None,
    max_grade: float | None = None,
    ties: str = "average",
    seed: int | None = None,
    zero_idcg: str = "skip",
    aggregate: str = "mean",
    weights: Any = None,
    backend: str = "auto",
    n_threads: int | None = None,
    score_dtype: str = "float64",
) -> NDCGResult:
    r"""Normalised discounted cumulative gain of many ranked lists at once.

    For a query whose items, ranked by descending score, have grades
    :math:`g_1, g_2, \ldots, g_n`:

    .. math::

        \mathrm{DCG@k} = \sum_{r=1}^{\min(k, n)} G(g_r)\, D(r), \qquad
        \mathrm{NDCG@k} = \frac{\mathrm{DCG@k}}{\mathrm{IDCG@k}}

    with gain :math:`G`, discount :math:`D` and ideal :math:`\mathrm{IDCG}` chosen below.

    Parameters
    ----------
    grades : array-like
        Relevance grades. Flat 1-D (one entry per item; split into queries with ``qid`` or
        ``offsets``, otherwise a single query), or dense 2-D ``(n_queries, list_len)``.
    scores : array-like or None, default=None
        Model scores, same shape as ``grades``; higher ranks first. None means the items are
        already in ranked order (then ``ties`` does not apply).
    qid : array-like, optional
        Query id of every item (any dtype). Rows of a query need not be contiguous; they are
        grouped stably and queries keep their order of first appearance.
    offsets : array-like of int, optional
        CSR offsets: query ``q`` owns items ``offsets[q]:offsets[q+1]``.
    mask : array-like of bool, optional
        For 2-D input: True for real items, False for padding.
    k : int, list of (int or None), or None, default=None
        Cutoff(s). Several cutoffs are computed in one pass. None: the whole list.
    gain : {"exp2", "linear"}, sequence, dict or callable, default="exp2"
        ``"exp2"``: :math:`2^g - 1` (grades >= 0); ``"linear"``: :math:`g`; a sequence is a
        table indexed by integer grade; a dict maps grade -> gain; a callable maps an array of
        grades to an array of gains. Gains times the summed discounts must stay within float64
        (with ``"exp2"``, grades well below 1024), else a ValueError says so.
    discount : {"log2", "jarvelin", "reciprocal"}, array or callable, default="log2"
        ``"log2"``: :math:`1/\log_2(r+1)`; ``"jarvelin"``: 1 for :math:`r = 1`, else
        :math:`1/\log_2 r`; ``"reciprocal"``: :math:`1/r`; an array gives the discount of ranks
        1, 2, ...; a callable maps an array of 1-based ranks to discounts.
    ideal : {"recall", "local", "global", "max"}, default="recall"
        ``"recall"``: the list's own grades sorted by gain; ``"local"``: the returned top k
        re-sorted by gain (with ``ties="average"``, each slot a tie group straddling k fills
        carries the group's mean gain); ``"global"``: the judgment list given by
        ``ideal_grades`` with ``ideal_qid`` or ``ideal_offsets``, sorted by gain; ``"max"``:
        every one of the k slots (all n when k is None) holds ``max_grade``.
    ideal_grades, ideal_qid, ideal_offsets : array-like, optional
        Judgment lists for ``ideal="global"``.
    max_grade : float, optional
        Grade filling every slot for ``ideal="max"``; default the largest grade in the data.
    ties : {"average", "stable", "pessimistic", "optimistic", "random"}, default="average"
        Order of items with equal scores. ``"average"``: the expected DCG over every order of
        the tied items (each item of a tie group gets the group's mean gain), independent of
        row order up to rounding in the last bits; ``"stable"``: input order;
        ``"pessimistic"`` / ``"optimistic"``: lower / higher gain first; ``"random"``: a
        uniformly random order drawn from ``seed``.
    seed : int, optional
        Seed for ``ties="random"`` (reproducible); None draws a fresh one.
    zero_idcg : {"skip", "zero", "one", "error"}, default="skip"
        NDCG of a query whose IDCG@k is not positive (no relevant item): NaN and left out of the
        aggregate (``"skip"``, counted in ``n_skipped``), 0, 1, or a ValueError.
    aggregate : {"mean", "ratio", "lightgbm", "xgboost", "keras_rs"}, default="mean"
        ``"mean"``: :math:`\sum_q w_q \mathrm{NDCG}_q / \sum_q w_q`; ``"ratio"``:
        :math:`\sum_q w_q \mathrm{DCG}_q / \sum_q w_q \mathrm{IDCG}_q`, over the queries not
        skipped; the others are those tools' own rules (see :mod:`fastndcg._presets`).
    weights : array-like, optional
        Non-negative weight per query for the aggregate (default 1), in result order: the
        order of ``query_ids`` (first appearance of each ``qid``; rows of 2-D input; queries
        of ``offsets``).
    backend : {"auto", "numba", "numpy"}, default="auto"
        ``"auto"`` uses numba when importable unless ``FASTNDCG_BACKEND`` says otherwise.
    n_threads : int, optional
        Numba threads for this call (restored afterwards); default: numba's current setting.
    score_dtype : {"float64", "float32"}, default="float64"
        Precision the scores are held in before ranking. ``"float32"`` rounds them as tools that
        store float32 scores do, so scores closer than float32 resolution become ties.
    preset : str, optional
        A tool's definition by name (``"trec_eval"``, ``"sklearn"``, ``"lightgbm"``, ... see
        :func:`fastndcg.presets`): its settings replace the defaults of the options not given.
    decimals : int, optional
        Round per-query values to this many decimals before aggregating, as a tool that prints
        them does.

    Returns
    -------
    NDCGResult
        Per-query NDCG, DCG and IDCG, the aggregate per cutoff, query ids and skip counts.

    Examples
    --------
    >>> import fastndcg
    >>> result = fastndcg.ndcg([3, 2, 3, 0, 1, 2], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4], k=6)
    >>> round(float(result), 4)
    0.9488
    """
    engine = Engine.create(
        k=k,
        gain=gain,
        discount=discount,
        ideal=ideal,
        max_grade=max_grade,
        ties=ties,
        seed=seed,
        zero_idcg=zero_idcg,
        aggregate=aggregate,
        backend=backend,
        n_threads=n_threads,
        score_dtype=score_dtype,
    )
    engine.check_ideal_inputs(ideal_grades, ideal_qid, ideal_offsets)
    with engine.threads():
        layout = build_layout(
            grades, scores, qid=qid, offsets=offsets, mask=mask, use_numba=engine.use_numba
        )
        query_weights(weights, layout.n_queries)
        dcg, idcg = engine.score(
            layout, ideal_grades=ideal_grades, ideal_qid=ideal_qid, ideal_offsets=ideal_offsets
        )
    return engine.finish(layout.query_ids, dcg, idcg, weights=weights, ranked=layout.scores is None)


class InvalidParameterError(ValueError, TypeError):
    """Raised by :func:`ndcg_score` where scikit-learn raises its own InvalidParameterError."""


def ndcg_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int | None = None,
    sample_weight: Any = None,
    ignore_ties: bool = False,
) -> float:
    r"""Drop-in for ``sklearn.metrics.ndcg_score``: same semantics, same errors.

    Each row of the dense 2-D inputs is one query. Linear gain, :math:`1/\log_2(r+1)`
    discount, ideal from the row's own grades; with ``k`` both DCG and IDCG stop at rank k.
    Tied scores are averaged (expected DCG over their orders) unless ``ignore_ties=True``, which
    ranks by ``numpy.argsort(y_score)`` reversed, as scikit-learn does (in ``y_score``'s own
    dtype: NumPy orders ties differently per dtype). Rows whose IDCG is 0 score 0 and count in
    the (optionally ``sample_weight``-ed) average.

    Deliberate differences from scikit-learn 1.9.1: with tie averaging, unsigned or bool
    ``y_score`` ranks as the numbers it holds (scikit-learn sorts ``-y_score``, which wraps
    unsigned scores around so that 0 ranks first, and is a TypeError for bool); ``y_true`` and
    ``y_score`` of different shapes are a ValueError that says so (scikit-learn's error comes
    from inside NumPy and depends on the shapes and ``ignore_ties``); gains large enough that a
    DCG could exceed the float64 range are a ValueError, as in :func:`ndcg`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        Non-negative relevance of every item.
    y_score : array-like of shape (n_samples, n_labels)
        Predicted scores.
    k : int, optional
        Only the first k ranks count.
    sample_weight : array-like of shape (n_samples,), optional
        Weight of each row in the average.
    ignore_ties : bool, default=False
        Skip tie averaging.

    Returns
    -------
    float
        The average NDCG.

    Examples
    --------
    >>> from fastndcg import ndcg_score
    >>> round(ndcg_score([[10, 0, 0, 1, 5]], [[0.1, 0.2, 0.3, 4, 70]]), 4)
    0.6957
    """
    # the parameters are checked in scikit-learn's order, the order of the signature
    _sklearn_check_array_like("y_true", y_true, none_ok=False)
    _sklearn_check_array_like("y_score", y_score, none_ok=False)
    if k is not None and (not isinstance(k, numbers.Integral) or k < 1):
        raise InvalidParameterError(
            "The 'k' parameter of ndcg_score must be an int in the range [1, inf) or None. "
            f"Got {k!r} instead."
        )
    _sklearn_check_array_like("sample_weight", sample_weight, none_ok=True)
    if not isinstance(ignore_ties, (bool, np.bool_)):
        raise InvalidParameterError(
            "The 'ignore_ties' parameter of ndcg_score must be an instance of 'bool' or an "
            f"instance of 'numpy.bool'. Got {ignore_ties!r} instead."
        )
    true = _sklearn_check_array(y_true).astype(np.float64, copy=False)  # gains: float64 sums
    score = _sklearn_check_array(y_score)  # its own dtype: NumPy orders ties per dtype
    lengths = [true.shape[0], score.shape[0]]
    if sample_weight is not None:
        lengths.append(_sklearn_num_samples(sample_weight))
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths}")
    if true.min() < 0:
        raise ValueError("ndcg_score should not be used on negative y_true values.")
    if true.ndim > 1 and true.shape[1] <= 1:
        raise ValueError(
            "Computing NDCG is only meaningful when there is more than 1 document. "
            f"Got {true.shape[1]} instead."
        )
    if true.ndim == 1:
        is_whole = np.all(true == np.floor(true))
        kind = (
            "continuous"
            if not is_whole
            else ("binary" if np.unique(true).size <= 2 else "multiclass")
        )
        raise ValueError(
            "Only ('multilabel-indicator', 'continuous-multioutput', 'multiclass-multioutput') "
            f"formats are supported. Got {kind} instead"
        )
    if score.shape != true.shape:
        raise ValueError(
            f"y_true and y_score must have the same shape; got {true.shape} and {score.shape}"
        )
    cut = None if k is None else int(min(k, true.shape[1]))  # deeper cutoffs change nothing
    if ignore_ties:
        order = np.argsort(score, axis=1)[:, ::-1]
        result = ndcg(
            np.take_along_axis(true, order, axis=1), k=cut, gain="linear", zero_idcg="zero"
        )
    else:
        result = ndcg(true, _exact_ranking(score), k=cut, gain="linear", zero_idcg="zero")
    return float(np.average(result.per_query[:, 0], weights=sample_weight))


def _exact_ranking(score: np.ndarray) -> np.ndarray:
    """``score``, or its dense ranks where float64 would round distinct scores into ties.

    scikit-learn compares integers beyond 2**53 and long doubles exactly; ``ndcg`` ranks in
    float64 (and refuses such scores). The ranks over the whole array keep every row's order
    and ties. Other numeric scores are exact in float64 and are passed as they are.
    """
    if score.dtype.itemsize > 8 or (
        score.dtype.kind in "iu" and (score.min() < -(2**53) or score.max() > 2**53)
    ):
        return np.unique(score, return_inverse=True)[1].reshape(score.shape)
    return score


def _sklearn_check_array_like(name: str, value: Any, none_ok: bool) -> None:
    """scikit-learn's parameter check for "array-like" (``None`` too where ``none_ok``)."""
    if value is None and none_ok:
        return
    if (
        np.isscalar(value)
        or not (hasattr(value, "__len__") or hasattr(value, "shape") or hasattr(value, "__array__"))
        or _is_scipy_sparse(value)
    ):
        raise InvalidParameterError(
            f"The {name!r} parameter of ndcg_score must be an array-like"
            f"{' or None' if none_ok else ''}. Got {value!r} instead."
        )


def _is_scipy_sparse(value: Any) -> bool:
    """Whether ``value`` is a SciPy sparse array or matrix (never one unless SciPy is loaded)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(value)


def _sklearn_num_samples(values: Any) -> int:
    """scikit-learn's ``_num_samples``: the length of ``values``; a 0-d array is a TypeError."""
    if hasattr(values, "shape") and len(values.shape) == 0:
        raise TypeError(
            "Input should have at least 1 dimension i.e. satisfy `len(x.shape) > 0`, got "
            f"scalar `{values!r}` instead."
        )
    return len(values) if hasattr(values, "__len__") else np.asarray(values).shape[0]


def _sklearn_check_array(values: Any) -> np.ndarray:
    """The subset of scikit-learn's ``check_array`` that ``ndcg_score`` relies on.

    Numeric data keeps its dtype; object data becomes float64. scikit-learn converts only
    inputs that have an object dtype, so a set or a dict stays a 0-d object array for the
    error that shows it (nested lists of Python objects are converted here, kept there).
    """
    array = np.asarray(values)
    if array.dtype.kind == "O" and (array.ndim or hasattr(values, "dtype")):
        array = array.astype(np.float64)
    if array.dtype.kind == "c":
        raise ValueError(f"Complex data not supported\n{array}\n")
    if array.dtype.kind in "US":
        raise ValueError(
            "dtype='numeric' is not compatible with arrays of bytes/strings.Convert your "
            "data to numeric values explicitly instead."
        )
    if array.ndim > 2:
        raise ValueError(f"Found array with dim {array.ndim}, while dim <= 2 is required.")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ValueError("Input contains NaN.")
    if array.dtype.kind == "f" and np.isinf(array).any():
        raise ValueError(f"Input contains infinity or a value too large for {array.dtype!r}.")
    if _sklearn_num_samples(array) == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={array.shape}) while a minimum of 1 is required."
        )
    if array.ndim == 2 and array.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={array.shape}) while a minimum of 1 is required."
        )
    return array
