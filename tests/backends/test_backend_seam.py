"""The backend seam: every backend is one object with the same operations, and they agree.

A third backend is one class registered with ``register_backend``: the entry points then take
it by name.
"""

from __future__ import annotations

import inspect
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import BACKENDS

import fastndcg
from fastndcg import _backends
from fastndcg import cli as command
from fastndcg._backends import get_backend, register_backend
from fastndcg._backends.numpy import NumpyBackend
from fastndcg._contract import (
    Backend,
    CompiledBackend,
    DeviceBackend,
    ListScoringBackend,
    MeasuresBackend,
)

OPERATIONS = [
    name
    for name, member in inspect.getmembers(Backend)
    if not name.startswith("_") and callable(member)
]


@pytest.mark.parametrize("name", BACKENDS)
def test_every_backend_has_every_operation(name):
    backend = get_backend(name)
    assert backend.name == name
    for operation in OPERATIONS:
        assert callable(getattr(backend, operation, None)), (name, operation)
    assert isinstance(backend.checks_scores, bool)


def test_backends_declare_their_capabilities():
    capabilities = (DeviceBackend, ListScoringBackend, CompiledBackend, MeasuresBackend)
    declared = {
        name: {c.__name__ for c in capabilities if isinstance(get_backend(name), c)}
        for name in BACKENDS
    }
    assert declared["numpy"] == {"MeasuresBackend"}
    if "numba" in declared:
        assert declared["numba"] == {"ListScoringBackend", "CompiledBackend", "MeasuresBackend"}
    if "cuda" in declared:
        assert declared["cuda"] == {"DeviceBackend"}  # nDCG only: the others are refused


def test_the_seam_lists_the_operations_the_package_uses():
    assert {
        "score",
        "column_stats",
        "run_bounds",
        "stray_whitespace",
        "document_ids",
        "match_judgments",
        "docid_ranks",
        "first_ranked",
        "threads",
        "thread_ceiling",
        "rank_query",
        "signflip_sums",
        "bootstrap_sums",
    } <= set(OPERATIONS)


needs_both = pytest.mark.skipif(len(BACKENDS) < 2, reason="numba is not available in this run")


@needs_both
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int8])
def test_the_backends_scan_columns_alike(dtype):
    rng = np.random.default_rng(1)
    values = rng.integers(-50, 50, 300_000) / (4 if dtype in (np.float64, np.float32) else 1)
    values = values.astype(dtype)
    numba, numpy = get_backend("numba"), get_backend("numpy")
    for integral in (True, False):
        assert numba.column_stats(values, integral) == numpy.column_stats(values, integral)
    if values.dtype.kind == "f":
        values = values.copy()
        values[123_456] = np.nan
        assert numba.column_stats(values).first_nonfinite == 123_456
        assert numpy.column_stats(values).first_nonfinite == 123_456


@needs_both
def test_the_backends_find_the_same_runs():
    ids = np.repeat(np.random.default_rng(2).integers(0, 30, 5_000), 3)
    for dtype in (np.int64, np.int32, np.float64, np.uint8):
        column = ids.astype(dtype)
        np.testing.assert_array_equal(
            get_backend("numba").run_bounds(column), get_backend("numpy").run_bounds(column)
        )


@needs_both
@pytest.mark.parametrize(
    "text", [b"a b c\nd e f\n", b"a  b\n", b"a\tb c\n", b"a b\x0bc\n", b"x" * 40 + b"  y\n"]
)
def test_the_backends_see_the_same_stray_whitespace(text):
    data = np.frombuffer(text, dtype=np.uint8)
    found = {get_backend(name).stray_whitespace(data, ord(" "), ord("\t")) for name in BACKENDS}
    assert len(found) == 1


@needs_both
def test_the_backends_join_a_run_alike():
    rng = np.random.default_rng(3)
    n_queries, per_query = 50, 20
    offsets = np.arange(n_queries + 1, dtype=np.int64) * per_query
    run_docs = pa.chunked_array([[f"d{rng.integers(0, 40)}" for _ in range(offsets[-1])]])
    judged_docs = pa.chunked_array([[f"d{j}" for _ in range(n_queries) for j in range(0, 40, 3)]])
    judged_offsets = np.arange(n_queries + 1, dtype=np.int64) * 14
    labels = rng.integers(0, 4, len(judged_docs)).astype(np.float64)
    rows = np.arange(len(judged_docs), dtype=np.int64)
    out = {}
    for name in BACKENDS:
        backend = get_backend(name)
        judged_ids, run_ids = backend.document_ids(judged_docs, run_docs, ordered=True)
        grades, duplicate = backend.match_judgments(
            offsets, None, run_ids, judged_offsets, rows, judged_ids, labels
        )
        out[name] = (grades, duplicate)
    np.testing.assert_array_equal(out["numba"][0], out["numpy"][0])
    assert out["numba"][1] == out["numpy"][1] >= 0  # documents repeat within queries here


@needs_both
def test_the_backends_cut_rankings_alike():
    """Rows of a query in run order, grouped in place or by a stable grouping of the rows."""
    rng = np.random.default_rng(4)
    grouped_offsets = np.array([0, 7, 7, 30, 31, 60], dtype=np.int64)
    labels = rng.integers(0, 5, 60)
    order = np.argsort(labels, kind="stable").astype(np.int64)
    scattered_offsets = np.zeros(6, dtype=np.int64)
    np.cumsum(np.bincount(labels, minlength=5), out=scattered_offsets[1:])
    scores = rng.integers(0, 4, 60).astype(np.float64)
    key = rng.permutation(60).astype(np.int64)
    for tie_key in (None, key):
        for offsets, grouping in ((grouped_offsets, None), (scattered_offsets, order)):
            kept = [
                get_backend(name).first_ranked(offsets, grouping, scores, tie_key, 5)
                for name in BACKENDS
            ]
            np.testing.assert_array_equal(kept[0], kept[1])


@pytest.mark.parametrize("name", BACKENDS)
def test_every_backend_resamples_the_documented_shapes(name):
    """signflip_sums and bootstrap_sums: (resamples, columns); exact signs enumerate 2**n."""
    from fastndcg._compare import rng

    backend = get_backend(name)
    d = np.array([[0.5, -0.25, 0.125], [1.0, 2.0, 4.0]])
    sums = backend.signflip_sums(d, rng.sign_key(0), True, 8)
    assert sums.shape == (8, 2)
    signs = 1.0 - 2.0 * ((np.arange(8)[:, None] >> np.arange(3)[None, :]) & 1)
    np.testing.assert_array_equal(sums, signs @ d.T)  # small exact values: any order agrees
    part = backend.signflip_sums(d, rng.sign_key(0), True, 3, first=5)  # sign vectors 5, 6, 7
    np.testing.assert_array_equal(part, sums[5:])
    ones = np.ones((1, 50))
    boot = backend.bootstrap_sums(ones, rng.bootstrap_key(1), rng.poisson_bounds(50), 130)
    assert boot.shape == (130, 1) and np.all(boot == 50.0)  # n draws with replacement


@needs_both
@pytest.mark.parametrize(("columns", "n"), [(1, 7), (3, 64), (6, 1500)])
def test_the_backends_resample_alike(columns, n):
    """Bit for bit, whatever the chunking of the resamples (compare's reproducibility)."""
    from fastndcg._compare import rng

    d = np.random.default_rng(n).normal(0.0, 0.3, (columns, n))
    numba, numpy = get_backend("numba"), get_backend("numpy")
    key, boot_key, bounds = rng.sign_key(3), rng.bootstrap_key(3), rng.poisson_bounds(n)
    flips = numpy.signflip_sums(d, key, False, 333)
    boots = numpy.bootstrap_sums(d, boot_key, bounds, 333)
    for chunks in (None, 1, 5):
        np.testing.assert_array_equal(numba.signflip_sums(d, key, False, 333, chunks), flips)
        np.testing.assert_array_equal(numba.bootstrap_sums(d, boot_key, bounds, 333, chunks), boots)
    for backend in (numba, numpy):  # a block of resamples from `first` on: rows of the whole
        for first, size in ((64, 100), (128, 205), (0, 333)):
            part = backend.signflip_sums(d, key, False, size, first=first)
            np.testing.assert_array_equal(part, flips[first : first + size])
            part = backend.bootstrap_sums(d, boot_key, bounds, size, first=first)
            np.testing.assert_array_equal(part, boots[first : first + size])


class _Wrapped(NumpyBackend):
    """A host-only backend of a test's own: the NumPy backend under another name."""

    name = "wrapped"
    plans_scored = 0

    def score(self, plan):
        type(self).plans_scored += 1
        return super().score(plan)


def test_a_host_backend_is_one_class_registered(monkeypatch, tmp_path, capsys):
    """Nothing outside this test changes: the keyword, --backend and its help take the name."""
    monkeypatch.setattr(_backends, "_REGISTRY", dict(_backends._REGISTRY))
    monkeypatch.setattr(_backends, "_LOADED", dict(_backends._LOADED))
    register_backend("wrapped", _Wrapped, automatic=False, missing="nothing")
    grades, scores = [3, 2, 3, 0, 1, 2], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    result = fastndcg.ndcg(grades, scores, k=6, backend="wrapped")
    assert result.options["backend"] == "wrapped"
    assert float(result) == float(fastndcg.ndcg(grades, scores, k=6, backend="numpy"))
    assert "wrapped" in fastndcg.available_backends()
    assert fastndcg.ndcg(grades, scores).options["backend"] != "wrapped"  # not automatic
    assert fastndcg.Scorer(k=6, backend="wrapped")(grades, scores) == float(result)

    path = tmp_path / "predictions.parquet"
    pq.write_table(pa.table({"qid": [1] * 6, "grade": grades, "score": scores}), path)
    argv = ["score", str(path), "-k", "6", "--format", "json", "--backend", "wrapped"]
    before = _Wrapped.plans_scored
    assert command.main(argv) == 0
    assert _Wrapped.plans_scored == before + 1
    out = json.loads(capsys.readouterr().out)
    assert out["results"][0]["ndcg@6"] == pytest.approx(float(result), abs=1e-12)
    score_help = command.build_parser()._subparsers._group_actions[0].choices["score"]
    assert "wrapped" in score_help.format_help()


def test_a_device_backend_is_chosen_for_inputs_it_holds(monkeypatch):
    """A backend registered with ``holds`` is what ``"auto"`` picks for such inputs."""

    class Held(np.ndarray):
        pass

    class Device(_Wrapped):
        name = "device"

        @staticmethod
        def holds(values):
            return isinstance(values, Held)

        def columns(self):
            from fastndcg._core.coerce import HostColumns

            return HostColumns(self)

    monkeypatch.setattr(_backends, "_REGISTRY", dict(_backends._REGISTRY))
    monkeypatch.setattr(_backends, "_LOADED", dict(_backends._LOADED))
    register_backend("device", Device, automatic=False, holds=Device.holds)
    grades = np.array([3, 2, 3, 0, 1, 2]).view(Held)
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    assert fastndcg.ndcg(grades, scores).options["backend"] == "device"
    assert fastndcg.ndcg(np.asarray(grades), scores).options["backend"] != "device"
    assert fastndcg.ndcg(grades, scores, backend="numpy").options["backend"] == "numpy"
