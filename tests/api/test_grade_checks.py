"""Float grades left to the Numba kernel: it checks them as it counts them, the core scans them
only where it must, and every number and error is the one a scan first would give."""

from __future__ import annotations

import numpy as np
import pytest

import fastndcg
from fastndcg._backends import get_backend
from fastndcg._core.layout import build_layout

pytestmark = pytest.mark.numba

OFFSETS = np.array([0, 5, 12, 40, 41])


def _outcome(grades, scores, offsets, backend, **options):
    """Per-query values as bytes, or the error's type and message."""
    try:
        result = fastndcg.ndcg(grades, scores, offsets=offsets, backend=backend, **options)
    except Exception as exc:  # the errors must be the same too
        return f"{type(exc).__name__}: {exc}"
    return result.per_query.tobytes(), result.dcg.tobytes(), result.idcg.tobytes()


def test_only_float_grades_of_rows_in_place_are_left_to_the_kernel():
    numba, numpy = get_backend("numba"), get_backend("numpy")
    grades = np.array([0.0, 3.0, 1.0])
    assert not build_layout(grades, offsets=np.array([0, 3]), backend=numba).grades_checked
    assert build_layout(grades, offsets=np.array([0, 3]), backend=numpy).grades_checked
    assert build_layout(
        grades.astype(np.int8), offsets=np.array([0, 3]), backend=numba
    ).grades_checked
    grouped = build_layout(grades, qid=np.array([2, 1, 2]), backend=numba)
    assert grouped.grades_checked  # rows moved: scanned before, as errors name input rows


GRADES = {
    "levels 0..7": np.arange(41) % 8 * 1.0,
    "levels to 11": np.arange(41) % 12 * 1.0,
    "fractional": np.arange(41) % 8 * 0.5,
    "negative": np.arange(41) % 5 - 1.0,
    "NaN": np.where(np.arange(41) == 17, np.nan, 1.0),
    "infinite": np.where(np.arange(41) == 30, np.inf, 2.0),
    "huge": np.where(np.arange(41) == 30, 1e300, 2.0),
    "int8 levels 0..7": (np.arange(41) % 8).astype(np.int8),
    "int16 levels to 11": (np.arange(41) % 12).astype(np.int16),
    "int64 negative": np.arange(41) % 5 - 1,
    "int64 huge": np.where(np.arange(41) == 30, 2**60, 2),
    "uint64 huge": np.where(np.arange(41) == 30, 2**63 + 1, 2).astype(np.uint64),
}


@pytest.mark.parametrize("name", GRADES)
@pytest.mark.parametrize("k", [3, [1, None]])
@pytest.mark.parametrize(
    "options",
    [
        dict(gain="exp2"),
        dict(gain="linear"),
        dict(gain="linear", ideal="local"),
        dict(gain="linear", ideal="max"),
        dict(gain=[0.0, 1.0, 3.0, 7.0, 15.0, 31.0, 63.0, 127.0]),
        dict(gain="exp2", ties="stable", score_dtype="float32"),
    ],
    ids=["exp2", "linear", "local", "max", "table", "float32 scores"],
)
def test_numbers_and_errors_are_those_of_a_scan_first(name, k, options):
    rng = np.random.default_rng(1)
    scores = rng.standard_normal(41)
    grades = GRADES[name]
    kwargs = dict(k=k, zero_idcg="zero", **options)
    mine = _outcome(grades, scores, OFFSETS, "numba", **kwargs)
    assert mine == _outcome(grades, scores, OFFSETS, "numpy", **kwargs)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("length", [100, 70_000])  # levels counted at once, or one by one
def test_a_grade_outside_the_presumed_levels_late_in_the_data(threads, length):
    """The kernel stops at the first query holding one; the grades are scanned and scored again
    (in every chunk of every thread), and a NaN among them is reported as without the kernel."""
    rng = np.random.default_rng(length)
    offsets = np.arange(0, 40 * length + 1, length)
    grades = rng.integers(0, 5, offsets[-1]).astype(np.float64)
    scores = rng.standard_normal(offsets[-1])
    expected = _outcome(grades, scores, offsets, "numpy", k=10, n_threads=1)
    assert _outcome(grades, scores, offsets, "numba", k=10, n_threads=threads) == expected
    grades[-3] = 9.0
    expected = _outcome(grades, scores, offsets, "numpy", k=10, n_threads=1)
    assert _outcome(grades, scores, offsets, "numba", k=10, n_threads=threads) == expected
    grades[-2] = np.nan
    message = _outcome(grades, scores, offsets, "numba", k=10, n_threads=threads)
    assert message == _outcome(grades, scores, offsets, "numpy", k=10, n_threads=1)
    assert "NaN" in message
