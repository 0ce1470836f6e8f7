"""NDCG and the other measures as PyTorch metrics: ``update`` at every validation step.

Needs PyTorch, and torchmetrics for the ``Metric`` base class: ``pip install 'fastndcg[torch]'``.

:class:`NDCG`, :class:`Measures` and :class:`Measure` are :class:`torchmetrics.Metric` classes
where torchmetrics is installed, so that PyTorch Lightning's ``self.log``, ``reset``,
``forward``, ``MetricCollection`` and the syncing of states across processes (DDP) work as for
torchmetrics' own metrics; without torchmetrics they are plain classes with the same methods
(``update``, ``compute``, ``reset``, ``forward``, calling). They take the same ``update``
(1-D rows with ``indexes``, or 2-D ``[queries, documents]`` with a ``mask``) and hold the same
states. :class:`NDCG` scores with :func:`fastndcg.ndcg`: every definition option and preset
applies; with ``preset="torchmetrics"`` the per-query values are those of torchmetrics'
``RetrievalNormalizedDCG`` (``top_k``: ``k``; ``empty_target_action`` ``"neg"``, ``"pos"``,
``"skip"``, ``"error"``: ``zero_idcg="zero"``, ``"one"``, ``"skip"``, ``"error"``).
:class:`Measures` scores any measures of :func:`fastndcg.evaluate` (``"nDCG@10"``, ``"P@10"``,
``"AP"``, ``"RR@10"``...) from one ranking per query and returns a dict of them;
:class:`Measure` one of them, as a tensor.

Examples
--------
>>> import torch
>>> from fastndcg.torch import NDCG
>>> metric = NDCG(k=2, preset="torchmetrics")
>>> metric.update(torch.tensor([[0.9, 0.1, 0.5]]), torch.tensor([[2, 0, 1]]))  # 2-D: a row a query
>>> metric.update(torch.tensor([0.3, 0.8]), torch.tensor([1, 0]), indexes=torch.tensor([7, 7]))
>>> metric.compute()
tensor(0.8155)
>>> from fastndcg.torch import Measures
>>> measures = Measures(["P@2", "RR", "AP"], ties="stable")
>>> measures.update(torch.tensor([[0.9, 0.1, 0.5]]), torch.tensor([[2, 0, 1]]))
>>> measures.compute()
{'P@2': tensor(1.), 'RR': tensor(1.), 'AP': tensor(1.)}
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

from fastndcg._backends import ENV_BACKEND, available_backends
from fastndcg._core.options import DEFINITION
from fastndcg._errors import (
    NOT_GIVEN,
    FastNDCGError,
    InputError,
    InputTypeError,
    OptionError,
    OptionTypeError,
)
from fastndcg._result import MeasuresResult, NDCGResult
from fastndcg._training import (
    MEASURES_OPTIONS,
    PRESET_OPTIONS,
    TrainingDefinition,
    TrainingMeasures,
    require,
)

torch = require("torch", "torch")

__all__ = ["NDCG", "Measure", "Measures"]

# where compute() scores the accumulated tensors
IN_PLACE = "in place"  # read where they are (CPU memory, or a CUDA device by backend="cuda")
TO_HOST = "to host"  # copied to the host once, as the backend asked for runs there
TO_HOST_WARN = "to host, warn"  # copied to the host once, with a warning that says so

# the states: rows of 1-D updates (grouped by `indexes` over all updates), and rows of 2-D
# updates (each row of a batch a query of its own, `sizes` its number of documents)
_INDEXED = ("preds", "target", "indexes")
_DENSE = ("dense_preds", "dense_target", "dense_sizes")


class _PlainMetric:
    """The part of ``torchmetrics.Metric`` the metrics here use, where torchmetrics is missing.

    States are lists of tensors; ``forward`` returns the metric of the batch alone and adds the
    batch to the states, as torchmetrics does.
    """

    def __init__(self, **unknown: Any) -> None:
        if unknown:
            name = sorted(unknown)[0]
            valid = sorted((*DEFINITION, *self._options, "ignore_index"))
            raise OptionTypeError(
                f"fastndcg.torch.{type(self).__name__} got unknown option(s) "
                f"{', '.join(sorted(unknown))}",
                option=name,
                value=unknown[name],
                fix=f"valid options: {', '.join(valid)} (torchmetrics' own options need "
                "torchmetrics: pip install 'fastndcg[torch]')",
            )
        self._state_names: list[str] = []

    def add_state(self, name: str, default: list, dist_reduce_fx: Any = None) -> None:
        """Declare a list state (``dist_reduce_fx`` is for torchmetrics; unused here)."""
        self._state_names.append(name)
        setattr(self, name, list(default))

    def reset(self) -> None:
        """Forget every update."""
        for name in self._state_names:
            setattr(self, name, [])

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Update with this batch and return the metric of this batch alone."""
        kept = {name: getattr(self, name) for name in self._state_names}
        self.reset()
        self.update(*args, **kwargs)
        value = self.compute()
        for name, states in kept.items():
            setattr(self, name, states + getattr(self, name))
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)


try:
    from torchmetrics import Metric as _MetricBase
except ImportError:
    _MetricBase = _PlainMetric


class _Accumulated(_MetricBase):
    """What the metrics here share: their options, ``update``, the states, the rows of ``compute``.

    The rows are grouped by query, on the device that scores them. A subclass says which
    options are its own (``_options``, besides the definition's), gives ``make_definition``
    (its options -> an object with ``backend`` and ``score(grades, scores, qid=/offsets=)``),
    and turns :meth:`_result` into what ``compute`` returns.
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    _options: tuple[str, ...] = ()
    _reads_cuda = True  # whether its definition scores CUDA tensors with backend="cuda"
    _host_only = ""  # why it copies device tensors to the host, where it always does

    def __init__(
        self,
        make_definition: Callable[[dict[str, Any]], Any],
        ignore_index: int | None,
        options: dict[str, Any],
    ) -> None:
        ours = {name: options.pop(name) for name in list(options) if name in self._own_options()}
        super().__init__(**options)
        self.definition = make_definition(ours)
        if ignore_index is not None and (
            isinstance(ignore_index, bool) or not isinstance(ignore_index, int)
        ):
            raise OptionTypeError(
                "`ignore_index` must be an int or None",
                option="ignore_index",
                value=ignore_index,
                fix=f"got {ignore_index!r}",
            )
        self.ignore_index = ignore_index
        for name in (*_INDEXED, *_DENSE):
            self.add_state(name, default=[], dist_reduce_fx="cat")
        self._warned = False

    @classmethod
    def _own_options(cls) -> frozenset[str]:
        """The options its definition checks (``decimals`` too: the measures refuse it there)."""
        return frozenset((*DEFINITION, *cls._options, *PRESET_OPTIONS))

    def update(self, preds: Any, target: Any, indexes: Any = None, mask: Any = None) -> None:
        """Add a batch of predictions and their targets (grades).

        Parameters
        ----------
        preds, target : Tensor
            Scores and grades of the same shape. With ``indexes``: any shape, flattened. Without:
            2-D ``[queries, documents]``, each row a query of its own.
        indexes : Tensor of int, optional
            The query of every row. Rows of a query may come in any order and in several
            updates (they are grouped over everything accumulated, as torchmetrics does).
        mask : Tensor of bool, optional
            True for real documents, False for padding; same shape as ``preds``.
        """
        preds, target = _tensor(preds, "preds"), _tensor(target, "target")
        keep = None if mask is None else _matching(_tensor(mask, "mask"), preds, "mask")
        if keep is not None and keep.dtype != torch.bool:
            raise InputTypeError(
                f"mask must be a bool tensor; got {keep.dtype}",
                value=str(keep.dtype),
                fix="pass mask.bool() (True for real documents)",
            )
        _matching(target, preds, "target")
        if self.ignore_index is not None:
            kept = target != self.ignore_index
            keep = kept if keep is None else keep & kept
        if indexes is not None:
            indexes = _matching(_tensor(indexes, "indexes"), preds, "indexes")
            if indexes.dtype.is_floating_point or indexes.dtype.is_complex:
                raise InputTypeError(
                    f"indexes must be an integer tensor; got {indexes.dtype}",
                    value=str(indexes.dtype),
                    fix="pass indexes.long()",
                )
            for name, values in zip(_INDEXED, (preds, target, indexes), strict=True):
                getattr(self, name).append(_rows(values, keep))
            return
        if preds.ndim != 2:
            raise InputError(
                f"{preds.ndim}-D preds need `indexes` (the query of every row)",
                value=tuple(preds.shape),
                fix="pass indexes=..., or 2-D [queries, documents] tensors (a row a query)",
            )
        n_queries, n_documents = preds.shape
        if keep is None:
            sizes = torch.full((n_queries,), n_documents, dtype=torch.int64, device=preds.device)
        else:
            sizes = keep.sum(dim=1, dtype=torch.int64)
        for name, values in zip(_DENSE, (preds, target, sizes), strict=True):
            getattr(self, name).append(_rows(values, None if values is sizes else keep))

    def _output(self) -> dict[str, Any]:
        """The dtype and device of ``compute``'s tensors.

        The predictions' float dtype (float32 for half precision or integer predictions) and
        device.
        """
        parts = [*_parts(self.preds), *_parts(self.dense_preds)]
        dtype = parts[0].dtype if parts else torch.float32
        return {
            "dtype": dtype if dtype in (torch.float32, torch.float64) else torch.float32,
            "device": parts[0].device if parts else "cpu",
        }

    def _result(self) -> NDCGResult | MeasuresResult:
        """The per-query values of the states (this process's, or the synced ones in compute)."""
        indexed = [_joined(getattr(self, name)) for name in _INDEXED]
        dense = [_joined(getattr(self, name)) for name in _DENSE]
        scores, grades = _joined(indexed[0], dense[0]), _joined(indexed[1], dense[1])
        query, sizes = indexed[2].long(), dense[2].long()  # synced states may arrive as floats
        if not sizes.numel():  # (rows already query by query are not moved: see fastndcg.ndcg)
            data = {"qid": query}
        elif not query.numel():
            data = {"offsets": torch.cat([sizes.new_zeros(1), torch.cumsum(sizes, 0)])}
        else:  # both kinds: each 2-D row gets a query index after the largest 1-D one
            rows = torch.arange(sizes.numel(), device=sizes.device).repeat_interleave(sizes)
            data = {"qid": torch.cat([query, rows + query.max() + 1])}
        caller = f"fastndcg.torch.{type(self).__name__}"
        device = scores.device.type
        cuda = self._reads_cuda and _cuda_available()
        placement = _placement(device, self.definition.backend, cuda)
        if placement != IN_PLACE:
            if placement == TO_HOST_WARN and not self._warned:
                self._warned = True
                why = self._host_only or (
                    f"no backend here reads {device} memory (backend='cuda' reads CUDA tensors "
                    "where numba-cuda and an NVIDIA GPU are: pip install 'fastndcg[cuda]')"
                )
                warnings.warn(
                    f"{caller} copies the {device} tensors it accumulated to the host once per "
                    f"compute(): {why}",
                    RuntimeWarning,
                    stacklevel=3,
                )
            scores, grades = scores.cpu(), grades.cpu()
            data = {key: values.cpu() for key, values in data.items()}
        try:
            result = self.definition.score(grades, scores, **data)
        except FastNDCGError as exc:
            raise exc.extended(
                before=f"{caller}.compute() (grades: target, scores: preds, rows in update order): "
            ) from exc
        return result


class NDCG(_Accumulated):
    """NDCG of ranked lists accumulated over a validation epoch, averaged per query.

    Parameters
    ----------
    k : int, list of (int or None), or None, optional
        Cutoff(s). Left out: the preset's, else the whole list. With several cutoffs
        ``compute()`` returns one value per cutoff.
    ignore_index : int, optional
        Rows whose target equals it are dropped (as torchmetrics' ``ignore_index``).
    **options
        Options of :func:`fastndcg.ndcg` that define NDCG (``gain``, ``discount``, ``ties``,
        ``zero_idcg``, ``aggregate``, ``score_dtype``, ``backend``, ``n_threads``, ...),
        ``preset`` and ``decimals``, checked now; the others go to ``torchmetrics.Metric``
        (``sync_on_compute``, ``dist_sync_on_step``, ``compute_on_cpu``, ...).

    Notes
    -----
    ``update`` keeps references to the tensors it is given (detached; a masked or
    ``ignore_index`` update keeps the selected rows): the state holds, per row, the prediction
    and the target in their own dtypes and, for 1-D updates, an 8-byte query index; 2-D updates
    add 8 bytes per query instead. ``compute()`` concatenates the states (no copy when there was
    one update) and scores them all in one call of :func:`fastndcg.ndcg`: CPU tensors are read
    in place; CUDA tensors are scored by ``backend="cuda"`` where it can run, otherwise they
    are copied to the host once, with one warning that says so.

    Examples
    --------
    >>> import torch
    >>> from fastndcg.torch import NDCG
    >>> metric = NDCG(k=[1, 3])
    >>> preds = torch.tensor([[0.9, 0.2, 0.4], [0.1, 0.7, 0.3]])
    >>> target = torch.tensor([[1, 0, 2], [0, 0, 1]])
    >>> metric(preds, target, mask=torch.tensor([[True, True, True], [True, True, False]]))
    tensor([0.3333, 0.7967])
    """

    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    _options = PRESET_OPTIONS

    def __init__(self, k: Any = NOT_GIVEN, *, ignore_index: int | None = None, **options: Any):
        super().__init__(
            lambda ours: TrainingDefinition("fastndcg.torch.NDCG", k, ours), ignore_index, options
        )

    def compute(self) -> Any:
        """NDCG of everything accumulated, on the inputs' device.

        Returns
        -------
        Tensor
            A scalar for one cutoff, one value per cutoff otherwise; in the predictions' float
            dtype (float32 for half precision or integer predictions).
        """
        mean = self._result().mean
        return torch.tensor(mean[0] if mean.size == 1 else mean, **self._output())


class Measures(_Accumulated):
    """Measures of ranked lists (nDCG, P, R, AP, RR, ...) accumulated over a validation epoch.

    ``compute()`` returns a dict of the measures' means over the queries, keyed by their names
    as given, so that a :class:`torchmetrics.MetricCollection` holding it, and Lightning's
    ``self.log_dict``, log each measure under its name.

    Parameters
    ----------
    measures : str, Measure or list of them
        The measures, as :func:`fastndcg.evaluate` takes them (``"nDCG@10"``, ``"P@10"``,
        ``"AP"``, ``"RR@10"``, ``"R@100"``, ``"P(rel=2)@10"``, trec_eval's ``"map"``, ranx's
        ``"mrr@10"``...); each names its own cutoff.
    relevance_level : int, default=1
        A grade at or above it is relevant, for the measures whose name sets none.
    ignore_index : int, optional
        Rows whose target equals it are dropped (as torchmetrics' ``ignore_index``).
    **options
        ``preset`` and the options of :func:`fastndcg.evaluate` (``ties``, ``gain``,
        ``zero_idcg``, ``backend``...), checked now; the others go to ``torchmetrics.Metric``.

    Notes
    -----
    ``update`` and the states are :class:`NDCG`'s. ``compute()`` scores everything accumulated
    in one call of :func:`fastndcg.evaluate` (one ranking per query for all the measures), on
    the host: tensors on another device are copied to the host once per ``compute``, with one
    warning that says so. With ``zero_idcg="skip"`` (the default) a query without a relevant
    row counts in no measure that divides by the number of relevant rows (nDCG, R, AP,
    R-Prec...), and in the others.

    torchmetrics' retrieval metrics compute, per query, for binary targets and distinct
    positive predictions: ``RetrievalPrecision(top_k=k)`` is ``P@k``, ``RetrievalRecall`` ``R@k``,
    ``RetrievalMRR`` ``RR@k``, ``RetrievalHitRate`` ``Success@k``, ``RetrievalRPrecision``
    ``Rprec``, ``RetrievalMAP()`` ``AP``; their ``empty_target_action="neg"`` is
    ``zero_idcg="zero"``. See the training-loops page for where they differ.

    Examples
    --------
    >>> import torch
    >>> from fastndcg.torch import Measures
    >>> metric = Measures(["nDCG@2", "P@2", "AP", "RR"], ties="stable")
    >>> preds = torch.tensor([[0.9, 0.2, 0.4], [0.1, 0.7, 0.3]])
    >>> target = torch.tensor([[1, 0, 2], [0, 0, 1]])
    >>> {name: round(value.item(), 4) for name, value in metric(preds, target).items()}
    {'nDCG@2': 0.7138, 'P@2': 0.75, 'AP': 0.75, 'RR': 0.75}
    """

    _options = MEASURES_OPTIONS
    _reads_cuda = False
    _host_only = "the measures besides NDCG are computed on the host"

    def __init__(self, measures: Any, *, ignore_index: int | None = None, **options: Any) -> None:
        caller = f"fastndcg.torch.{type(self).__name__}"
        super().__init__(
            lambda ours: TrainingMeasures(caller, measures, ours), ignore_index, options
        )

    def compute(self) -> dict[str, Any]:
        """The measures of everything accumulated: name -> tensor on the inputs' device.

        Returns
        -------
        dict of str to Tensor
            Each measure's mean over the queries it counts (a sum for counts such as
            ``NumRet``; NaN where it counts none), in the predictions' float dtype (float32 for
            half precision or integer predictions).
        """
        result = self._result()
        output = self._output()
        return {
            name: torch.tensor(value, **output)
            for name, value in zip(result.measures, result.mean, strict=True)
        }


class Measure(Measures):
    """One measure of ranked lists accumulated over a validation epoch, as one tensor.

    :class:`Measures` of one name, whose ``compute()`` returns the tensor itself (for
    Lightning's ``self.log``).

    Parameters
    ----------
    measure : str or fastndcg.Measure
        The measure (``"AP@10"``, ``"RR@10"``, ``"P(rel=2)@5"``...): one.
    ignore_index, **options
        As for :class:`Measures`.

    Examples
    --------
    >>> import torch
    >>> from fastndcg.torch import Measure
    >>> metric = Measure("RR@10")
    >>> metric(torch.tensor([[0.9, 0.2, 0.4]]), torch.tensor([[0, 0, 1]]))
    tensor(0.5000)
    """

    def __init__(self, measure: Any, *, ignore_index: int | None = None, **options: Any) -> None:
        super().__init__(measure, ignore_index=ignore_index, **options)
        names = self.definition.names
        if len(names) != 1:
            raise OptionError(
                f"fastndcg.torch.Measure computes one measure, and {measure!r} names {len(names)}",
                option="measures",
                value=measure,
                fix="use fastndcg.torch.Measures for several, or name one ('P@5')",
            )

    def compute(self) -> Any:
        """The measure of everything accumulated, as a scalar tensor on the inputs' device."""
        return next(iter(super().compute().values()))


def _placement(device_type: str, backend: str, cuda_available: bool) -> str:
    """Where tensors on a ``device_type`` device are scored: in place, or copied to the host.

    ``backend`` is the ``backend=`` option (``"auto"`` follows ``FASTNDCG_BACKEND``). CPU
    tensors are read in place; CUDA tensors too where the CUDA backend can run and is asked
    for or chosen automatically. A backend named for the host (or ``"cuda"`` for tensors on
    another device) is served by a copy; ``"auto"`` with tensors no backend here can read warns.
    """
    if backend == "auto":
        backend = os.environ.get(ENV_BACKEND) or "auto"
    if device_type == "cpu":
        return IN_PLACE
    if device_type == "cuda" and backend in ("auto", "cuda") and cuda_available:
        return IN_PLACE
    return TO_HOST_WARN if backend == "auto" else TO_HOST


def _cuda_available() -> bool:
    return "cuda" in available_backends()


def _tensor(values: Any, name: str) -> Any:
    """``values`` as a tensor (a NumPy array shares its memory); complex values refused."""
    tensor = values if isinstance(values, torch.Tensor) else torch.as_tensor(values)
    if tensor.is_complex():
        raise InputTypeError(
            f"{name} must be real; got {tensor.dtype}",
            value=str(tensor.dtype),
            fix=f"pass {name}.real",
        )
    return tensor.detach()


def _matching(values: Any, preds: Any, name: str) -> Any:
    """``values``, checked to have the shape and device of ``preds``."""
    if values.shape != preds.shape:
        raise InputError(
            f"{name} has shape {tuple(values.shape)}, preds {tuple(preds.shape)}",
            value=tuple(values.shape),
            fix=f"pass {name} with one entry per prediction",
        )
    if values.device != preds.device:
        raise InputError(
            f"{name} is on {values.device}, preds on {preds.device}",
            value=str(values.device),
            fix=f"move them to one device, e.g. {name}.to(preds.device)",
        )
    return values


def _rows(values: Any, keep: Any) -> Any:
    """``values`` flattened (a view where possible), or the rows ``keep`` selects."""
    return values.reshape(-1) if keep is None else values[keep]


def _parts(state: Any) -> list:
    """The tensors of a list state, or a synced tensor state as a list of one."""
    return [state] if isinstance(state, torch.Tensor) else list(state)


def _joined(*states: Any) -> Any:
    """The tensors of these states as one tensor (no copy for one; empty ones left out)."""
    parts = [part for state in states for part in _parts(state)]
    filled = [part for part in parts if part.numel()] or parts[:1]
    if not filled:
        return torch.zeros(0)
    return filled[0] if len(filled) == 1 else torch.cat(filled)
