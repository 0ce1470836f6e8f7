"""fastndcg: NDCG for millions of queries, under every definition in use, exactly and fast.

The main entry point is :func:`ndcg`; :func:`ndcg_score` is a drop-in for scikit-learn's;
:func:`evaluate` and :func:`evaluate_run` compute the measures reported beside NDCG.
"""

from fastndcg._api import ndcg
from fastndcg._backends import available_backends
from fastndcg._compare import (
    Comparison,
    PairedComparison,
    compare,
    compare_definitions,
    compare_runs,
    compare_table,
)
from fastndcg._compare.explain import explain
from fastndcg._compare.explanation import QueryExplanation
from fastndcg._compare.measure_explanation import MeasureExplanation
from fastndcg._core.measures import Measure
from fastndcg._errors import (
    BackendUnavailableError,
    ColumnNotFoundError,
    FastNDCGError,
    InputError,
    InputTypeError,
    OptionError,
    OptionTypeError,
)
from fastndcg._evaluate import evaluate, evaluate_run, evaluate_table
from fastndcg._parquet import evaluate_parquet, ndcg_parquet
from fastndcg._presets import Preset, presets, ranx_gain
from fastndcg._result import MeasuresResult, NDCGResult
from fastndcg._runtime import warmup
from fastndcg._scorer import Scorer
from fastndcg._sklearn import InvalidParameterError, ndcg_score
from fastndcg._tables import ndcg_table
from fastndcg._version import __version__
from fastndcg.trec import ndcg_run

__all__ = [
    "BackendUnavailableError",
    "ColumnNotFoundError",
    "Comparison",
    "FastNDCGError",
    "InputError",
    "InputTypeError",
    "InvalidParameterError",
    "Measure",
    "MeasureExplanation",
    "MeasuresResult",
    "NDCGResult",
    "OptionError",
    "OptionTypeError",
    "PairedComparison",
    "Preset",
    "QueryExplanation",
    "Scorer",
    "__version__",
    "available_backends",
    "compare",
    "compare_definitions",
    "compare_runs",
    "compare_table",
    "evaluate",
    "evaluate_parquet",
    "evaluate_run",
    "evaluate_table",
    "explain",
    "ndcg",
    "ndcg_parquet",
    "ndcg_run",
    "ndcg_score",
    "ndcg_table",
    "presets",
    "ranx_gain",
    "warmup",
]
