"""Results do not depend on the thread count, and the caller's thread setting is restored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastndcg

pytestmark = pytest.mark.numba


def skewed_data(seed=0, n_queries=12000):
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(1.6, n_queries), 400)
    lengths[7] = 5000  # one long query among many short ones
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    grades = rng.integers(0, 5, offsets[-1]).astype(float)
    scores = np.round(grades + rng.normal(0, 1, offsets[-1]), 1)  # many ties
    return offsets, grades, scores


OPTIONS = [
    dict(k=[1, 5, 10, None]),
    dict(k=[3, 100], ties="random", seed=9),
    dict(k=10, ideal="local"),
    dict(k=[2, 50], ties="pessimistic", gain="linear"),
]


@pytest.mark.parametrize("options", OPTIONS)
def test_bit_identical_for_every_thread_count(options):
    import numba

    from fastndcg._backends.tuning import PARALLEL_MIN_ROWS

    offsets, grades, scores = skewed_data()
    assert offsets[-1] >= PARALLEL_MIN_ROWS  # else one thread runs whatever the thread count
    results = [
        fastndcg.ndcg(grades, scores, offsets=offsets, backend="numba", n_threads=t, **options)
        for t in range(1, numba.config.NUMBA_NUM_THREADS + 1)
    ]
    for other in results[1:]:
        np.testing.assert_array_equal(results[0].dcg, other.dcg)
        np.testing.assert_array_equal(results[0].idcg, other.idcg)
        np.testing.assert_array_equal(results[0].mean, other.mean)


def test_ndcg_run_is_bit_identical_for_every_thread_count():
    """The per-query joins, id sorts and max_docs cuts of ndcg_run, and the repeated pair it
    names."""
    import numba
    import pyarrow as pa

    offsets, grades, scores = skewed_data(n_queries=3000)
    rng = np.random.default_rng(1)
    qid = np.repeat(np.arange(offsets.size - 1), np.diff(offsets)).astype(str)
    docid = np.char.add("msmarco_passage_", rng.permutation(offsets[-1]).astype(str))
    run = pa.table({"qid": qid, "docid": docid, "score": scores})
    judged = grades > 0
    qrels = pa.table({"qid": qid[judged], "docid": docid[judged], "grade": grades[judged]})
    threads = range(1, numba.config.NUMBA_NUM_THREADS + 1)
    for cut in ({}, {"max_docs": 7}):
        results = [
            fastndcg.ndcg_run(
                qrels, run, k=[1, 10, None], ties="docid_desc", backend="numba", n_threads=t, **cut
            )
            for t in threads
        ]
        for other in results[1:]:
            np.testing.assert_array_equal(results[0].per_query, other.per_query)
    repeated = docid.copy()
    q, q_later = np.flatnonzero(np.diff(offsets) >= 4)[[5, -5]]  # in different chunks
    first, later = offsets[q] + 1, offsets[q_later] + 3
    repeated[first], repeated[later] = repeated[first - 1], repeated[later - 2]
    run = pa.table({"qid": qid, "docid": repeated, "score": scores})
    for t in threads:
        with pytest.raises(ValueError, match=f"document '{docid[first - 1]}' of query '{q}'"):
            fastndcg.ndcg_run(qrels, run, backend="numba", n_threads=t)


CHILD = """
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_threads import OPTIONS, skewed_data
import fastndcg
offsets, grades, scores = skewed_data()
out = {{}}
for t in (1, 3, 5):
    out[t] = [
        fastndcg.ndcg(grades, scores, offsets=offsets, backend="numba", n_threads=t, **o)
        .dcg.tobytes().hex()
        for o in OPTIONS
    ]
print(json.dumps(out))
"""


def test_more_threads_than_cores_in_a_fresh_process():
    """NUMBA_NUM_THREADS is fixed at import, so larger pools are checked in a subprocess."""

    code = CHILD.format(tests=str(Path(__file__).parent))
    env = dict(__import__("os").environ, NUMBA_NUM_THREADS="5")
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    by_threads = json.loads(run.stdout)
    assert by_threads["1"] == by_threads["3"] == by_threads["5"]
    offsets, grades, scores = skewed_data()
    here = [
        fastndcg.ndcg(grades, scores, offsets=offsets, backend="numba", n_threads=1, **o)
        .dcg.tobytes()
        .hex()
        for o in OPTIONS
    ]
    assert by_threads["1"] == here


def test_thread_count_is_restored():
    import numba

    numba.set_num_threads(1)
    try:
        fastndcg.ndcg(
            [1.0, 0.0], [0.2, 0.1], backend="numba", n_threads=numba.config.NUMBA_NUM_THREADS
        )
        assert numba.get_num_threads() == 1
        with pytest.raises(ValueError):
            fastndcg.ndcg([1.0, 0.0], [0.2, 0.1], backend="numba", n_threads=0)
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def test_backends_agree_on_skewed_data():
    if "numba" not in fastndcg.available_backends():
        pytest.skip("numba unavailable")
    offsets, grades, scores = skewed_data(seed=3, n_queries=800)
    for options in OPTIONS:
        a = fastndcg.ndcg(grades, scores, offsets=offsets, backend="numba", **options)
        b = fastndcg.ndcg(grades, scores, offsets=offsets, backend="numpy", **options)
        np.testing.assert_allclose(a.dcg, b.dcg, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a.idcg, b.idcg, rtol=1e-12, atol=1e-12)
