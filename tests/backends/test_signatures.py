"""Each Numba kernel compiles once per input dtype, whatever the shape or writeability.

Numba compiles a kernel for every distinct argument type, and an array's layout and
writeability are part of its type; each extra signature is seconds of cold compile.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
from fastndcg.trec import ndcg_run

pytestmark = pytest.mark.numba


def test_the_measure_kernel_compiles_once_for_every_shape():
    from fastndcg._backends.numba.measures import measure_queries

    grades = np.array([2, 0, 1, 1, 0, 3])
    scores = np.linspace(1.0, 0.0, 6)
    # one query and one measure: an output of one row and one column is both C- and F-ordered
    fastndcg.evaluate(grades[:3], scores[:3], measures=["AP"], backend="numba")
    fastndcg.evaluate(grades, scores, qid=[0, 0, 1, 1, 2, 2], measures=["AP", "P@2"],
                      backend="numba")  # fmt: skip
    fastndcg.evaluate(grades, None, offsets=[0, 3, 6], measures=["AP"], backend="numba")  # ranked
    assert len(measure_queries.signatures) == 1, measure_queries.signatures


def test_the_trec_join_compiles_once_for_arrow_and_numpy_labels():
    from fastndcg._backends.numba.trec import match_judgments

    judgments = pa.table({"qid": ["q", "q"], "docid": ["a", "b"], "grade": [1.0, 0.0]})
    run = pa.table({"qid": ["q", "q"], "docid": ["a", "c"], "score": [0.5, 0.4]})
    # the run's duplicate check joins it with no judgments; the scoring with Arrow's labels
    ndcg_run(judgments, run, backend="numba")
    assert len(match_judgments.signatures) == 1, match_judgments.signatures


def test_dcg_by_counted_ranks_compiles_once():
    from fastndcg._backends.numba.score import _dcg_by_count

    rng = np.random.default_rng(3)
    grades = rng.integers(0, 3, 400)
    # a whole list under stable ties: DCG by counted ranks
    fastndcg.ndcg(grades, rng.random(400), k=None, ties="stable", backend="numba")
    # a helper loaded with its caller from the cache lists no signature: read the cache's index,
    # which holds every signature compiled from this source (a literal argument made a second)
    index = _dcg_by_count._cache._cache_file._load_index()
    assert len(index) == 1, list(index)
