"""backend="cuda" (issue 28): the same NDCG as the CPU backends, from host or device arrays.

Without a GPU these run under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1`` set before
numba is imported; ``scripts/test.sh`` runs this file so, in its own pytest invocation), where
the kernels' size classes are tiny (lists of 4 to 8 rows are sorted whole, two lists of 4 or one
of 8 per block; longer ones in chunks of 8), so that lists of a dozen rows take every path: one
thread per list, several lists per block, one block per chunk, merge passes. Torch CUDA tensors and CuPy arrays cannot be made here: fake producers expose the CUDA
Array Interface and DLPack over host memory, which the simulator takes for device memory.

The tests that need no kernel (the NumPy alias, the errors naming what is missing, the device
probe) run in every invocation.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import queries_from_csr, reference_ndcg
from strategies import (
    INDEPENDENT_JUDGMENTS,
    cutoffs,
    discount_option,
    discounts,
    gain_option,
    gains,
    ideals,
    ragged,
    ties,
)

import fastndcg
from fastndcg import _backends
from fastndcg._backends import get_backend, register_backend
from fastndcg._backends.cuda import (
    MISSING_DEVICE,
    MISSING_DRIVER,
    MISSING_PACKAGE,
    CudaUnavailable,
    ensure_numpy_aliases,
)
from fastndcg._backends.cuda.memory import on_cuda_device
from fastndcg._errors import BackendUnavailableError, InputError

ROOT = Path(__file__).resolve().parents[2]
TOL = dict(rtol=1e-12, atol=1e-12)
CUDA = get_backend("cuda")
HOST = "numba" if get_backend("numba") is not None else "numpy"
_unavailable = pytest.mark.skipif(
    CUDA is None,
    reason="backend='cuda' cannot run here (numba-cuda missing, or no GPU and "
    "NUMBA_ENABLE_CUDASIM is not set: scripts/test.sh runs this file under the simulator)",
)


def needs_cuda(test):
    """A test of the kernels: marked ``cuda``, skipped where the backend cannot run."""
    return pytest.mark.cuda(_unavailable(test))


# the simulator runs the kernels' integer hashing and inf - inf tests in NumPy scalars, which warn
pytestmark = [
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
]
few = settings(max_examples=int(os.environ.get("FASTNDCG_CUDA_EXAMPLES", "25")))


class Interface:
    """A producer exposing the CUDA Array Interface over a host array (simulator memory)."""

    def __init__(self, values, stream=None):
        self.values = np.ascontiguousarray(values)
        self.__cuda_array_interface__ = {
            "shape": self.values.shape,
            "typestr": self.values.dtype.str,
            "data": (self.values.ctypes.data, True),
            "strides": None,
            "version": 3,
            "stream": stream,
        }


class DLPackOnly:
    """A producer speaking only DLPack, on "CUDA device 0" (host memory under the simulator)."""

    def __init__(self, values):
        self.values = np.ascontiguousarray(values)
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.values.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)


# -- without a kernel -----------------------------------------------------------------------


def test_the_row_stack_alias_is_set_where_numpy_lacks_it(monkeypatch):
    """numba-cuda 0.30.4 registers np.row_stack, which NumPy 2.5 removed."""
    name = "row_stack"  # spelled apart: the linter would rewrite np.row_stack
    monkeypatch.delattr(np, name, raising=False)
    ensure_numpy_aliases()
    assert getattr(np, name) is np.vstack
    kept = object()
    monkeypatch.setattr(np, name, kept)
    ensure_numpy_aliases()  # an existing name is left alone
    assert getattr(np, name) is kept


@pytest.mark.parametrize(
    ("missing", "words"),
    [
        (MISSING_PACKAGE, "numba-cuda, which cannot be imported here"),
        (MISSING_DRIVER, "a CUDA driver"),
        (MISSING_DEVICE, "a CUDA device"),
    ],
)
def test_backend_cuda_names_what_is_missing(monkeypatch, missing, words):
    monkeypatch.setattr(_backends, "_REGISTRY", dict(_backends._REGISTRY))
    monkeypatch.setattr(_backends, "_LOADED", dict(_backends._LOADED))

    def load():
        raise CudaUnavailable(missing)

    register_backend("cuda", load, automatic=False, missing=MISSING_PACKAGE, holds=on_cuda_device)
    with pytest.raises(BackendUnavailableError) as info:
        fastndcg.ndcg([1, 0], [0.5, 0.2], backend="cuda")
    assert str(info.value).startswith(f"backend='cuda' needs {words}")
    assert info.value.option == "backend" and info.value.value == "cuda"
    assert "backend='numpy'" in str(info.value)
    assert isinstance(info.value, ImportError)
    with pytest.raises(BackendUnavailableError, match=words):  # device input under "auto"
        fastndcg.ndcg(Interface(np.array([1, 0])), Interface(np.array([0.5, 0.2])))


def test_the_device_probe():
    assert on_cuda_device(Interface(np.zeros(3)))
    assert on_cuda_device(DLPackOnly(np.zeros(3)))
    for host in (np.zeros(3), [1, 2], 3.0, None, "abc"):
        assert not on_cuda_device(host)

    class CpuDLPack(DLPackOnly):
        def __dlpack_device__(self):
            return (1, 0)

    assert not on_cuda_device(CpuDLPack(np.zeros(3)))
    torch = pytest.importorskip("torch")
    assert not on_cuda_device(torch.zeros(3))


def test_auto_never_picks_cuda_for_host_inputs():
    result = fastndcg.ndcg([3, 2, 0, 1], [0.4, 0.3, 0.2, 0.1], k=2)
    assert result.options["backend"] != "cuda"


# -- under the simulator (or on a GPU) ------------------------------------------------------


def both(grades, scores, **kwargs):
    """The cuda backend's result and the host backend's."""
    return (
        fastndcg.ndcg(grades, scores, backend="cuda", **kwargs),
        fastndcg.ndcg(grades, scores, backend=HOST, **kwargs),
    )


def assert_same(a, b):
    np.testing.assert_allclose(a.dcg, b.dcg, **TOL)
    np.testing.assert_allclose(a.idcg, b.idcg, **TOL)
    np.testing.assert_allclose(a.per_query, b.per_query, **TOL)
    np.testing.assert_allclose(a.mean, b.mean, **TOL)
    np.testing.assert_array_equal(a.n_skipped, b.n_skipped)
    np.testing.assert_array_equal(a.query_ids, b.query_ids)


@needs_cuda
@few
@given(
    data=ragged(max_len=14),
    k=cutoffs,
    gain=gains,
    discount=discounts,
    ideal=ideals,
    tie=ties,
    seed=st.integers(0, 2**64 - 1),
    ranked=st.booleans(),
    zero_idcg=st.sampled_from(["skip", "zero", "one"]),
    aggregate=st.sampled_from(["mean", "ratio"]),
    extra=st.data(),
)
def test_cuda_matches_the_host_backend_and_the_reference(
    data, k, gain, discount, ideal, tie, seed, ranked, zero_idcg, aggregate, extra
):
    offsets, grades, scores = data
    n_queries = offsets.size - 1
    kwargs = dict(
        k=k,
        gain=gain_option(gain),
        discount=discount_option(discount),
        ideal=ideal,
        ties=tie,
        zero_idcg=zero_idcg,
        aggregate=aggregate,
        offsets=offsets,
    )
    if tie == "random":
        kwargs["seed"] = seed
    ideal_lists = None
    if ideal == "global":
        lengths = extra.draw(st.lists(st.integers(0, 13), min_size=n_queries, max_size=n_queries))
        ideal_offsets = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum(lengths, out=ideal_offsets[1:])
        ideal_grades = np.array(
            extra.draw(
                st.lists(
                    st.integers(0, 4).map(float),
                    min_size=int(ideal_offsets[-1]),
                    max_size=int(ideal_offsets[-1]),
                )
            )
        )
        kwargs.update(ideal_grades=ideal_grades, ideal_offsets=ideal_offsets)
        ideal_lists = [list(ideal_grades[a:b]) for a, b in itertools.pairwise(ideal_offsets)]
    if extra.draw(st.booleans()):
        kwargs["weights"] = extra.draw(
            st.lists(st.sampled_from([0.0, 0.5, 2.0]), min_size=n_queries, max_size=n_queries)
        )
    shown = None if ranked else scores
    gpu, host = both(grades, shown, **kwargs)
    assert gpu.options["backend"] == "cuda"
    assert_same(gpu, host)
    expected = reference_ndcg(
        queries_from_csr(offsets, grades, scores),
        k=gpu.k,
        gain=gain_option(gain),
        discount=discount_option(discount),
        ideal=ideal,
        ideal_lists=ideal_lists,
        ties="ranked" if ranked else tie,
        seed=kwargs.get("seed", 0),
        zero_idcg=zero_idcg,
        aggregate=aggregate,
        weights=kwargs.get("weights"),
    )
    shape = gpu.dcg.shape
    np.testing.assert_allclose(gpu.dcg, np.array(expected.dcg).reshape(shape), **TOL)
    np.testing.assert_allclose(gpu.idcg, np.array(expected.idcg).reshape(shape), **TOL)
    np.testing.assert_allclose(gpu.mean, expected.mean, **TOL)


@needs_cuda
@few
@given(
    data=ragged(max_len=14, integer_grades=False),
    k=cutoffs,
    ideal=ideals,
    tie=ties,
    score_dtype=st.sampled_from(["float64", "float32"]),
)
def test_fractional_grades_and_float32_scores(data, k, ideal, tie, score_dtype):
    """Grades off the integer levels sort gains for the ideal; float32 makes more ties."""
    offsets, grades, scores = data
    kwargs = dict(k=k, ideal="recall" if ideal == "global" else ideal, ties=tie, gain="linear")
    if tie == "random":
        kwargs["seed"] = 11
    assert_same(*both(grades, scores / 3.0, offsets=offsets, score_dtype=score_dtype, **kwargs))


@needs_cuda
@pytest.mark.parametrize(
    ("tie", "k"),
    # every tie rule and every kind of cutoff once (the simulator runs each thread in Python)
    [
        ("average", 1),
        ("average", [1, 3, 5, 10, 20, 100]),
        ("stable", 5),
        ("pessimistic", 1),
        ("optimistic", None),
        ("random", 20),
    ],
)
def test_long_lists_among_short_ones(tie, k):
    """Every size class under the simulator: one thread per list (0-3 rows), two lists of 4 or
    one of 8 sorted per block (4-8 rows), and chunks of 8 merged (a list of 41 rows is 6 chunks
    and three merge levels, one of them with an odd run out)."""
    rng = np.random.default_rng(5)
    lengths = np.array([1, 41, 2, 0, 9, 3, 17, 4, 6, 8, 4, 5, 7, 4, 6, 4])
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    grades = rng.integers(0, 5, offsets[-1]).astype(np.int8)
    scores = rng.integers(0, 6, offsets[-1]).astype(np.float32)  # many ties
    kwargs = dict(offsets=offsets, k=k, ties=tie, seed=3 if tie == "random" else None)
    for ideal in ("recall", "local", "max"):
        assert_same(*both(grades, scores, ideal=ideal, **kwargs))


@needs_cuda
def test_classify_files_each_list_under_the_smallest_width_holding_it():
    from numba import cuda

    from fastndcg._backends.cuda import common, groups

    lengths = np.array([0, 5, 1, 3, 4, 9, 2, 8, 7, 0, 30, 6, 4, 8] * 3)
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    counts = cuda.to_device(np.zeros(common.LONG + 1, np.int64))
    members = cuda.to_device(np.full((common.LONG + 1, lengths.size), -1, np.int64))
    groups.classify[2, common.THREADS](cuda.to_device(offsets), counts, members)
    counts, members = counts.copy_to_host(), members.copy_to_host()
    widths = np.array(common.WIDTHS)
    for c in range(common.LONG + 1):
        if c == common.LONG:
            expected = np.flatnonzero(lengths > common.CAP)
        else:
            low = common.SMALL if c == 0 else widths[c - 1]
            expected = np.flatnonzero((lengths > low) & (lengths <= widths[c]))
        assert counts[c] == expected.size
        assert sorted(members[c, : counts[c]]) == list(expected)
    assert counts.sum() == np.count_nonzero(lengths > common.SMALL)


@needs_cuda
@INDEPENDENT_JUDGMENTS
def test_long_judgment_lists_and_ranked_input():
    rng = np.random.default_rng(6)
    offsets = np.array([0, 30, 31, 60])
    grades = rng.integers(0, 4, 60).astype(float) / 2
    ideal_offsets = np.array([0, 2, 50, 50])
    ideal_grades = rng.integers(0, 4, 50).astype(float) / 2
    for k in (2, None, [1, 40]):
        kwargs = dict(offsets=offsets, k=k, gain="linear")
        assert_same(*both(grades, None, **kwargs))
        assert_same(
            *both(
                grades,
                None,
                ideal="global",
                ideal_grades=ideal_grades,
                ideal_offsets=ideal_offsets,
                **kwargs,
            )
        )


@needs_cuda
def test_results_are_the_same_bits_every_run():
    rng = np.random.default_rng(7)
    offsets = np.array([0, 50, 53, 80])
    grades = rng.integers(0, 3, 80)
    scores = rng.integers(0, 4, 80).astype(float)
    runs = [
        fastndcg.ndcg(grades, scores, offsets=offsets, k=[3, None], backend="cuda")
        for _ in range(2)
    ]
    assert runs[0].dcg.tobytes() == runs[1].dcg.tobytes()
    assert runs[0].idcg.tobytes() == runs[1].idcg.tobytes()


def _data(seed=8, n_queries=6):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 12, n_queries)
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    grades = rng.integers(0, 4, offsets[-1]).astype(np.int8)
    scores = rng.integers(0, 5, offsets[-1]).astype(np.float32)
    return offsets, grades, scores


@needs_cuda
@pytest.mark.parametrize("producer", ["numba", "interface", "dlpack"])
def test_device_inputs_are_read_in_place_and_auto_picks_cuda(producer):
    from numba import cuda

    offsets, grades, scores = _data()
    make = {"numba": cuda.to_device, "interface": Interface, "dlpack": DLPackOnly}[producer]
    device_grades, device_scores = make(grades), make(scores)
    result = fastndcg.ndcg(device_grades, device_scores, offsets=make(offsets), k=[1, 3, None])
    assert result.options["backend"] == "cuda"
    assert_same(result, fastndcg.ndcg(grades, scores, offsets=offsets, k=[1, 3, None]))
    if producer == "dlpack":
        assert device_grades.streams == [1]  # asked for the legacy default stream


@needs_cuda
def test_device_offsets_of_int64_are_read_where_they_are():
    """Contiguous int64 offsets on the device reach the kernels in place; others are copied."""
    from numba import cuda

    from fastndcg._core.definition import Definition
    from fastndcg._core.layout import build_layout

    offsets, grades, scores = _data(seed=9, n_queries=9)
    backend = get_backend("cuda")
    expected = fastndcg.ndcg(grades, scores, offsets=offsets, k=[2, None])
    for given_offsets, in_place in (
        (cuda.to_device(offsets), True),
        (cuda.to_device(offsets.astype(np.int32)), False),
        (offsets, False),
    ):
        layout = build_layout(
            cuda.to_device(grades), cuda.to_device(scores), offsets=given_offsets, backend=backend
        )
        plan = Definition.create(backend="cuda", k=[2, None]).plan(layout)
        assert (plan.device_offsets is given_offsets) == in_place
        assert (plan.device_offsets is None) != in_place
        np.testing.assert_array_equal(plan.offsets, offsets)
        result = fastndcg.ndcg(
            cuda.to_device(grades), cuda.to_device(scores), offsets=given_offsets, k=[2, None]
        )
        assert_same(result, expected)


@needs_cuda
def test_dlpack_tensors_are_released():
    released = []
    owner = np.arange(5, dtype=np.float32)

    class Counted(DLPackOnly):
        def __dlpack__(self, stream=None):
            capsule = super().__dlpack__(stream)
            released.append(False)
            return capsule

    columns = get_backend("cuda").columns()
    column = columns.array(Counted(owner), "grades")
    np.testing.assert_array_equal(columns.host(column), owner)
    assert len(released) == 1


@needs_cuda
def test_device_query_ids_dense_input_and_masks():
    from numba import cuda

    offsets, grades, scores = _data(9)
    qid = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))[::-1].copy()  # regrouped
    device = cuda.to_device
    a = fastndcg.ndcg(device(grades), device(scores), qid=device(qid), k=3)
    assert_same(a, fastndcg.ndcg(grades, scores, qid=qid, k=3))
    rng = np.random.default_rng(10)
    dense_grades = rng.integers(0, 3, (4, 6))
    dense_scores = rng.random((4, 6))
    mask = rng.random((4, 6)) > 0.3
    for m in (None, mask, device(mask)):
        a = fastndcg.ndcg(device(dense_grades), device(dense_scores), mask=m, k=2)
        b = fastndcg.ndcg(dense_grades, dense_scores, mask=mask if m is not None else None, k=2)
        assert_same(a, b)
    strided = device(np.asfortranarray(dense_scores))  # not C-contiguous: copied on the device
    assert_same(
        fastndcg.ndcg(device(dense_grades), strided, k=2),
        fastndcg.ndcg(dense_grades, dense_scores, k=2),
    )


@needs_cuda
@pytest.mark.parametrize(
    ("grades", "scores", "options"),
    [
        ([1, 0, 2], [0.5, np.nan, 0.1], {}),
        ([1, 0, 2], [0.5, np.inf, 0.1], {}),
        ([1.0, np.nan, 2.0], [0.5, 0.2, 0.1], {}),
        ([1, -1, 2], [0.5, 0.2, 0.1], {}),
        ([1, 0, 2], [0.5, 0.2, 0.1], {"gain": {0: 0.0, 1: 1.0}}),
        ([1, 0, 2], [0.5, 0.2, 0.1], {"gain": [0.0, 1.0]}),
        ([1.5, 0, 2], [0.5, 0.2, 0.1], {"gain": [0.0, 1.0, 3.0]}),
        (np.array([1, 2**53 + 1, 0]), [0.5, 0.2, 0.1], {}),
        (np.array([1, 2**63 + 5, 0], dtype=np.uint64), [0.5, 0.2, 0.1], {}),
        ([1, 0, 2], np.array([5, 2**53 + 1, 1]), {}),
        ([1, 0, 2], [0.5, 0.2, 0.1], {"max_grade": 1, "ideal": "max"}),
    ],
)
def test_device_inputs_fail_as_host_inputs_do(grades, scores, options):
    from numba import cuda

    grades, scores = np.asarray(grades), np.asarray(scores)
    with pytest.raises(Exception) as host:
        fastndcg.ndcg(grades, scores, qid=[7, 7, 8], **options)
    with pytest.raises(type(host.value)) as device:
        fastndcg.ndcg(cuda.to_device(grades), cuda.to_device(scores), qid=[7, 7, 8], **options)
    assert str(device.value) == str(host.value)
    if isinstance(host.value, InputError):
        assert device.value.where == host.value.where
        np.testing.assert_equal(device.value.value, host.value.value)  # NaN equals NaN here


@needs_cuda
def test_device_inputs_with_callable_and_dict_gains_and_float32():
    from numba import cuda

    offsets, grades, scores = _data(11)
    for options in (
        dict(gain=lambda g: np.asarray(g) / 3.0),
        dict(gain={0: 0.0, 1: 2.5, 2: 1.0, 3: 6.0}),
        dict(score_dtype="float32", ties="pessimistic"),
    ):
        a = fastndcg.ndcg(
            cuda.to_device(grades),
            cuda.to_device(scores.astype(float)),
            offsets=offsets,
            k=[2, None],
            **options,
        )
        b = fastndcg.ndcg(grades, scores.astype(float), offsets=offsets, k=[2, None], **options)
        assert_same(a, b)


@needs_cuda
def test_tables_scorers_and_trec_runs_on_cuda(tmp_path):
    import pyarrow as pa
    from numba import cuda

    offsets, grades, scores = _data(12)
    qid = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    table = pa.table({"qid": qid, "grade": grades, "score": scores})
    assert_same(
        fastndcg.ndcg_table(table, k=[1, 5], backend="cuda"),
        fastndcg.ndcg_table(table, k=[1, 5], backend=HOST),
    )
    for scorer in (fastndcg.Scorer(k=3), fastndcg.Scorer(k=[1, None], backend="cuda")):
        first = slice(0, int(offsets[2]))
        on_gpu = scorer(cuda.to_device(grades[first]), cuda.to_device(scores[first]))
        np.testing.assert_allclose(on_gpu, scorer(grades[first], scores[first]), **TOL)
    run = tmp_path / "run.txt"
    qrels = tmp_path / "qrels.txt"
    run.write_text("".join(f"1 Q0 d{i} {i} {i % 3} r\n" for i in range(12)))
    qrels.write_text("".join(f"1 0 d{i} {i % 4}\n" for i in range(0, 12, 2)))
    for rule in ("docid_desc", "average"):
        assert_same(
            fastndcg.ndcg_run(qrels, run, ties=rule, backend="cuda"),
            fastndcg.ndcg_run(qrels, run, ties=rule, backend=HOST),
        )


@needs_cuda
@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_comparisons_on_cuda_match_the_host(test):
    """The per-query values agree to 1e-12, and the resampling runs on the host for both."""
    offsets, grades, scores = _data(40)
    rng = np.random.default_rng(3)
    better = scores + grades * rng.random(scores.size)
    qid = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    import pyarrow as pa

    table = pa.table({"qid": qid, "grade": grades, "a": scores, "b": better})
    runs = {
        name: fastndcg.compare_table(
            table, scores=["a", "b"], k=[3, 10], test=test, n_resamples=500, backend=name
        )
        for name in ("cuda", HOST)
    }
    assert len(runs["cuda"].rows) == len(runs[HOST].rows) == 2
    for on_gpu, on_host in zip(runs["cuda"].rows, runs[HOST].rows, strict=True):
        assert on_gpu.keys() == on_host.keys()
        for key, value in on_host.items():
            if isinstance(value, float):
                assert on_gpu[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
            else:
                assert on_gpu[key] == value, key


@needs_cuda
def test_empty_inputs():
    for grades in ([], np.zeros((0, 3))):
        a, b = both(np.asarray(grades), np.asarray(grades, dtype=float), k=2)
        assert_same(a, b)


simulator_only = pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") != "1", reason="simulator run only"
)


if CUDA is not None and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    from numba import cuda  # (a module global: the simulator swaps it for its own module)

    @cuda.jit
    def _neighbours(out):
        """``out[b, t]``: the entry thread ``t + 1`` of block ``b`` wrote to the block's array."""
        shared = cuda.shared.array(16, np.int64)
        t = cuda.threadIdx.x
        shared[t] = 100 * cuda.blockIdx.x + t
        cuda.syncthreads()
        out[cuda.blockIdx.x, t] = shared[(t + 1) % 16]


@needs_cuda
@simulator_only
def test_the_simulated_threads_of_a_block_share_its_arrays(monkeypatch):
    # tests/cuda_simulator.py: the shared-array lookup under a lock. An allocation that lets
    # the other threads run before it returns has every thread of an unlocked simulator make
    # its own array; then a thread reads its neighbour's entry from an array it never wrote.
    from numba.cuda.simulator import kernelapi

    real_empty = np.empty

    def slow_empty(*args, **kwargs):
        time.sleep(1e-3)
        return real_empty(*args, **kwargs)

    out = np.zeros((3, 16), dtype=np.int64)
    with monkeypatch.context() as patch:
        patch.setattr(kernelapi.np, "empty", slow_empty)
        _neighbours[3, 16](out)
    expected = 100 * np.arange(3)[:, None] + (np.arange(16)[None, :] + 1) % 16
    np.testing.assert_array_equal(out, expected)


@needs_cuda
@simulator_only
def test_the_gpu_benchmark_runs_end_to_end_in_the_simulator():
    # as ``python scripts/bench_gpu.py --queries 6 --simulate``, in a simulator made safe and
    # quick as this run's (tests/cuda_simulator.py)
    script = str(ROOT / "scripts" / "bench_gpu.py")
    code = (
        f"import runpy, sys; sys.path.insert(0, {str(ROOT / 'tests')!r}); "
        "import cuda_simulator; cuda_simulator.install(); "
        f"sys.argv = [{script!r}, '--queries', '6', '--simulate']; "
        f"runpy.run_path({script!r}, run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| GPU floor" in done.stdout and "| fastndcg cuda, k=10 |" in done.stdout
    assert "values agree" in done.stdout
