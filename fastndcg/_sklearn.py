"""The scikit-learn drop-in :func:`ndcg_score`: its semantics and errors, fastndcg's speed."""

from __future__ import annotations

import numbers
import sys
from typing import Any

import numpy as np

from fastndcg._api import ndcg


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
