"""The structured errors of the core (coerce, grouping, layout, plan, aggregate), the scorer,
the result and the backends: class, option, value, where and fix, not only the words.

The words themselves are checked by test_errors.py and the other test files; here each site
must also say what it is about, so that a front end can word it its own way.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import fastndcg
from fastndcg import _backends as backends
from fastndcg._core.aggregate import tool_mean
from fastndcg._core.coerce import nonfinite_error
from fastndcg._core.grouping import plain_float_ids
from fastndcg._core.layout import build_layout
from fastndcg._core.plan import _max_grade
from fastndcg._errors import (
    NOT_GIVEN,
    BackendUnavailableError,
    FastNDCGError,
    InputError,
    InputTypeError,
    OptionError,
    OptionTypeError,
)

_ANY = object()  # an attribute the test does not look at


def check(info, cls, *, option=None, value=_ANY, where=None, fix=_ANY, message=_ANY):
    """The error in ``info`` is exactly ``cls`` with these attributes; its text is its parts."""
    exc = info.value
    assert type(exc) is cls
    assert exc.option == option
    assert exc.where == where
    if value is not _ANY:
        if isinstance(value, float) and math.isnan(value):
            assert isinstance(exc.value, float) and math.isnan(exc.value)
        else:
            assert exc.value == value
            assert type(exc.value) is type(value)
    if fix is not _ANY:
        assert exc.fix == fix
    if message is not _ANY:
        assert exc.message == message
    # the Python text is the template without its marks, then the fix after the joiner
    text = exc.message.replace("`", "")
    if exc.fix:
        text += exc.joiner + exc.fix.replace("`", "")
    assert str(exc) == text
    return exc


# -- coerce --------------------------------------------------------------------------------------


def test_masked_grades_are_a_type_error_whose_fix_names_mask(backend):
    with pytest.raises(TypeError) as info:
        fastndcg.ndcg(np.ma.masked_array([1, 0], mask=[0, 1]), [1, 2], backend=backend)
    check(
        info,
        InputTypeError,
        fix="drop the masked rows first (grades.compressed()), or pass dense 2-D input with "
        "`mask=`",
        message="grades is a numpy masked array, whose mask would be ignored",
    )


def test_a_missing_grade_is_named_by_its_row(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, None, 0], [1, 2, 3], backend=backend)
    check(info, InputError, value=None, where="row 1", fix="drop or fill it first")


def test_non_numeric_grades(backend):
    with pytest.raises(TypeError) as info:
        fastndcg.ndcg(["a", "b"], [1, 2], backend=backend)
    exc = check(
        info,
        InputTypeError,
        value=np.dtype("<U1"),
        fix="Convert it first, e.g. grades.astype(float)",
    )
    assert exc.joiner == ". "


def test_lists_of_different_lengths_tell_to_pass_qid_or_offsets(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([[1, 0], [1]], backend=backend)
    check(
        info,
        InputError,
        fix="pass them flat (1-D) with `qid=` or `offsets=`, or padded to a 2-D array with `mask=`",
    )


@pytest.mark.parametrize(
    "grades, scores, where, value",
    [
        ([1, 0], [1.0, np.inf], "row 1", math.inf),
        ([1, np.nan], [1.0, 2.0], "row 1", math.nan),
        ([[1, 0], [0, 1]], [[1.0, 2.0], [-np.inf, 0.0]], "query row 1, item 0", -math.inf),
    ],
)
def test_a_non_finite_value_is_named_by_its_row(backend, grades, scores, where, value):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg(grades, scores, backend=backend)
    exc = check(info, InputError, where=where, value=value)
    nan = " (a null or missing value reads as NaN)" if math.isnan(value) else ""
    assert exc.fix.endswith("must be finite: drop or fill those rows first" + nan)


def test_the_non_finite_helper_returns_the_error_other_modules_raise():
    exc = nonfinite_error("column 'score'", np.float32("nan"), "row 7")
    assert isinstance(exc, InputError) and exc.where == "row 7"
    assert type(exc.value) is float and math.isnan(exc.value)
    assert str(exc) == (
        "column 'score' has a NaN value at row 7; column 'score' must be finite: drop or fill "
        "those rows first (a null or missing value reads as NaN)"
    )


def test_integers_beyond_float64_are_named_with_their_value(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0], np.array([1, 2**60]), backend=backend)
    exc = check(info, InputError, where="row 1", value=2**60)
    assert exc.fix == "rescale them, or convert scores to float64 to accept the rounding"


@pytest.mark.parametrize(
    "n, offsets, cls, where, value, fix",
    [
        (2, [0.0, 2.0], InputTypeError, None, np.dtype(np.float64), "got dtype float64"),
        (2, [1, 2], InputError, "offsets[0]", 1, "got 1"),
        (2, [0, 1], InputError, "offsets[1]", 1, "got 1"),
        (3, [0, 2, 1, 3], InputError, "offsets[2]", 1, "offsets[1]=2 > offsets[2]=1"),
    ],
)
def test_offsets_errors_name_the_entry(backend, n, offsets, cls, where, value, fix):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1] * n, list(range(n)), offsets=offsets, backend=backend)
    check(info, cls, where=where, value=value, fix=fix)


def test_mask_of_another_shape(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([[1, 0]], [[1, 2]], mask=[[1, 1, 1]], backend=backend)
    exc = check(info, InputError, value=(1, 3), fix="grades (1, 2), mask (1, 3)")
    assert exc.joiner == ": "


def test_a_tensor_outside_cpu_memory():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError) as info:
        fastndcg.ndcg(torch.zeros(2, device="meta"), [1, 2])
    check(info, InputTypeError, value="meta", fix="pass grades.cpu()")


# -- grouping ------------------------------------------------------------------------------------


def test_mixed_id_types_name_the_row(backend):
    with pytest.raises(TypeError) as info:
        fastndcg.ndcg([1, 0], [1, 2], qid=["a", 1], backend=backend)
    check(info, InputTypeError, where="row 1", value=1, fix="give every id the same type")


@pytest.mark.parametrize(
    "qid, where, value",
    [([1.0, np.nan], "row 1", math.nan), (np.array([None, 1], dtype=object), "row 0", None)],
)
def test_a_missing_query_id_is_named_by_its_row(backend, qid, where, value):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0], [1, 2], qid=qid, backend=backend)
    check(info, InputError, where=where, value=value, fix="every row needs a query id")


def test_float_ids_take_the_callers_row_words():
    ids = np.array([1.0, np.nan])
    with pytest.raises(ValueError) as info:
        plain_float_ids(ids, "column 'q' (qid)", lambda r: f"row {10 + r}")
    check(info, InputError, where="row 11", value=math.nan)


def test_ideal_ids_of_another_type(backend):
    with pytest.raises(TypeError) as info:
        fastndcg.ndcg(
            [1, 0],
            [1, 2],
            qid=[1, 1],
            ideal="global",
            ideal_grades=[1],
            ideal_qid=["a"],
            backend=backend,
        )
    check(info, InputTypeError, value="string", fix="give both the same type")


def test_query_ids_of_another_length(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0], [1, 2], qid=[1], backend=backend)
    check(info, InputError, value=NOT_GIVEN, fix="2 rows, 1 ids")


# -- layout --------------------------------------------------------------------------------------


def test_qid_and_offsets_together(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0], [1, 2], qid=[1, 1], offsets=[0, 2], backend=backend)
    check(info, InputError, message="pass `qid=` or `offsets=`, not both", fix=None)


@pytest.mark.parametrize(
    "grades, value, got",
    [
        (np.zeros((1, 1, 1)), (1, 1, 1), "got shape (1, 1, 1)"),
        (5, "int", "got one int; pass a list or an array (list(...) of an iterator)"),
    ],
)
def test_grades_of_another_dimension(backend, grades, value, got):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg(grades, backend=backend)
    check(
        info,
        InputError,
        value=value,
        fix=got,
        message="grades must be 1-D (flat, with `qid=` or `offsets=`) or 2-D (one query per row)",
    )


def test_global_ideal_without_judgments_is_about_the_ideal_option(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0], [1, 2], ideal="global", backend=backend)
    exc = check(
        info,
        OptionError,
        option="ideal",
        value="global",
        fix="pass `ideal_grades=` with `ideal_qid=` or `ideal_offsets=`",
    )
    assert exc.joiner == ": "


def test_one_judgment_list_per_query(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg(
            [1, 0],
            [1, 2],
            ideal="global",
            ideal_grades=[1],
            ideal_offsets=[0, 1, 1],
            backend=backend,
        )
    check(info, InputError, fix="give one list per query (empty ones allowed)")


# -- plan ----------------------------------------------------------------------------------------


def test_negative_grades_with_exp2_name_row_and_query(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0, -2], [1, 2, 3], qid=["a", "b", "b"], backend=backend)
    exc = check(info, InputError, where="row 2 (query 'b')", value=-2)
    assert exc.message.startswith("`gain='exp2'` (2**g - 1)")
    assert "`gain='linear'`" in exc.fix


@pytest.mark.parametrize(
    "gain, grades, fix",
    [
        ([0, 1], [1, 5], "add a gain for that grade or fix the grade"),
        ({0: 0, 1: 1, 3: 3}, [1, 2], "add that grade to the dict"),
        ({0.5: 0, 1: 1}, [1, 2.5], "add that grade to the dict"),
        ([0, 1], [1, 0.5], "round the grades or pass a callable gain"),
    ],
)
def test_grades_a_gain_table_lacks(backend, gain, grades, fix):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg(grades, [1, 2], gain=gain, backend=backend)
    check(info, InputError, where="row 1 (query 0)", value=grades[1], fix=fix)


def test_a_gain_callable_returning_inf_is_an_error_of_the_gain(backend):
    def gain(g):
        return np.where(g > 1, np.inf, g)

    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 2], [1, 2], gain=gain, backend=backend)
    check(
        info,
        OptionError,
        option="gain",
        value=gain,
        where="row 1 (query 0)",
        fix="gains must be finite",
    )


def test_gains_that_overflow_a_dcg(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 2000], [1, 2], backend=backend)
    exc = check(info, OptionError, option="gain", value="exp2")
    assert exc.fix == "Use `gain='linear'`, a gain table, or grades well below 1024"
    assert exc.joiner == ". "


def test_max_grade_below_the_data(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 2], [1, 2], ideal="max", max_grade=1, backend=backend)
    exc = check(
        info, OptionError, option="max_grade", value=1, fix="Raise `max_grade=` or leave it unset"
    )
    assert exc.message.startswith("`max_grade=1` is below")


def test_a_max_grade_the_gain_cannot_take_is_an_error_of_max_grade(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg(
            [1, 2], [1, 2], ideal="max", max_grade=2.5, gain=[0, 1, 2, 3], backend=backend
        )
    # the row words stay in the text as before; the error is about the option, not a row
    check(info, OptionError, option="max_grade", value=2.5, where=None)


def test_max_grade_of_another_type_in_the_plan():
    layout = build_layout([1, 2], [1, 2], backend=backends.get_backend("numpy"))
    with pytest.raises(TypeError) as info:
        _max_grade(layout, "x")
    check(info, OptionTypeError, option="max_grade", value="x", fix="got 'x'")


def test_ideal_max_with_too_deep_a_cutoff(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0], [1, 2], ideal="max", k=10**9, backend=backend)
    exc = check(info, OptionError, option="k", value=10**9, fix="pass a smaller `k`")
    assert exc.message.startswith("`ideal='max'` fills all `k=1,000,000,000` slots")


# -- aggregate -----------------------------------------------------------------------------------


def test_negative_weight_is_named_by_its_index(backend):
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0, 1], [1, 2, 3], qid=[1, 1, 2], weights=[1, -1], backend=backend)
    check(info, InputError, where="weights[1]", value=-1.0, fix="weights[1] = -1.0")


def test_a_column_name_as_weights(backend):
    with pytest.raises(TypeError) as info:
        fastndcg.ndcg([1, 0], [1, 2], weights="w", backend=backend)
    check(info, InputTypeError, value="w")


def test_xgboost_mean_above_one_is_an_error_of_the_aggregate():
    per_query = np.array([[1.0], [1.0]])
    idcg = np.array([[0.0], [1.0]])  # the first query has no relevant item: added unweighted
    with pytest.raises(ValueError) as info:
        tool_mean("xgboost", per_query, idcg, np.array([1e-3, 1e-3]))
    exc = check(
        info, OptionError, option="aggregate", value="xgboost", fix="use `aggregate='mean'`"
    )
    assert exc.message.startswith("`aggregate='xgboost'`: the weighted mean is 500")


def test_weights_beyond_float32_for_xgboost():
    with pytest.raises(ValueError) as info:
        tool_mean("xgboost", np.ones((2, 1)), np.ones((2, 1)), np.array([1e39, 1.0]))
    check(info, InputError, value=1e39, fix="scale them down")


# -- scorer and result ---------------------------------------------------------------------------


def test_scorer_refuses_global_ideal():
    with pytest.raises(ValueError) as info:
        fastndcg.Scorer(ideal="global")
    check(
        info,
        OptionError,
        option="ideal",
        value="global",
        fix="use fastndcg.ndcg(..., ideal='global', ideal_grades=...)",
    )


def test_scorer_scores_one_list(backend):
    scorer = fastndcg.Scorer(backend=backend)
    with pytest.raises(ValueError) as info:
        scorer([[1, 0], [0, 1]], [[1, 2], [1, 2]])
    check(info, InputError, fix="Use fastndcg.ndcg(..., qid= or offsets=) for many")


def test_mean_at_of_another_type_is_an_error_of_k(backend):
    result = fastndcg.ndcg([1, 0], [1, 2], k=[1, 2], backend=backend)
    with pytest.raises(TypeError) as info:
        result.mean_at("a")
    check(info, OptionTypeError, option="k", value="a", fix="got 'a'")
    # a cutoff not computed stays a plain KeyError, and float() of many cutoffs a TypeError
    with pytest.raises(KeyError) as missing:
        result.mean_at(3)
    assert not isinstance(missing.value, FastNDCGError)
    with pytest.raises(TypeError) as many:
        float(result)
    assert not isinstance(many.value, FastNDCGError)


# -- backends ------------------------------------------------------------------------------------


def test_unknown_backend_in_the_environment(monkeypatch):
    monkeypatch.setenv(backends.ENV_BACKEND, "nope")
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0], [1, 2])
    check(
        info,
        OptionError,
        option="backend",
        value="nope",
        where="environment variable FASTNDCG_BACKEND",
        fix="valid values are 'auto', 'numba', 'numpy', 'cuda'",
    )


def _fake_backends(monkeypatch, missing):
    def load():
        raise ImportError("not here")

    monkeypatch.setattr(backends, "_REGISTRY", dict(backends._REGISTRY))
    monkeypatch.setattr(backends, "_LOADED", dict(backends._LOADED))
    backends.register_backend("fake", load, automatic=False, missing=missing)


def test_a_backend_that_cannot_run_here(monkeypatch):
    _fake_backends(monkeypatch, "fakepkg, which cannot be imported here; install it (pip fakepkg)")
    with pytest.raises(ImportError) as info:
        backends.resolve_backend("fake")
    exc = check(
        info,
        BackendUnavailableError,
        option="backend",
        value="fake",
        fix="install it (pip fakepkg) or use `backend='numpy'`",
        message="`backend='fake'` needs fakepkg, which cannot be imported here",
    )
    assert isinstance(exc, ImportError) and isinstance(exc, OptionError)
    # named by the environment: the error says where the name came from
    monkeypatch.setenv(backends.ENV_BACKEND, "fake")
    with pytest.raises(ImportError) as info:
        backends.resolve_backend("auto")
    check(
        info,
        BackendUnavailableError,
        option="backend",
        value="fake",
        where="environment variable FASTNDCG_BACKEND",
    )


def test_a_backend_whose_reason_has_no_fix(monkeypatch):
    _fake_backends(monkeypatch, "fakepkg")
    with pytest.raises(ImportError) as info:
        backends.resolve_backend("fake")
    exc = check(info, BackendUnavailableError, option="backend", value="fake")
    assert str(exc) == "backend='fake' needs fakepkg or use backend='numpy'"


@pytest.mark.numba
def test_numba_thread_ceiling():
    with pytest.raises(ValueError) as info:
        fastndcg.ndcg([1, 0], [1, 2], n_threads=10**6, backend="numba")
    check(info, OptionError, option="n_threads", value=10**6, fix="got 1000000")


def test_numpy_threads():
    with pytest.raises(ValueError) as info:
        with backends.get_backend("numpy").threads(0):
            pass
    check(info, OptionError, option="n_threads", value=0, fix="got 0")
