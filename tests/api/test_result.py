"""NDCGResult: shapes, exports, repr, float()."""

from __future__ import annotations

import numpy as np
import pytest

import fastndcg


@pytest.fixture
def result(backend):
    grades = [3.0, 0.0, 1.0, 0.0, 0.0, 2.0, 1.0]
    scores = [0.9, 0.8, 0.1, 0.5, 0.4, 0.3, 0.2]
    return fastndcg.ndcg(
        grades, scores, qid=["q1", "q1", "q1", "q2", "q2", "q3", "q3"], k=[1, None], backend=backend
    )


def test_shapes_and_fields(result):
    assert result.k == (1, None)
    assert result.per_query.shape == result.dcg.shape == result.idcg.shape == (3, 2)
    assert result.mean.shape == (2,)
    assert result.n_queries == 3
    assert list(result.query_ids) == ["q1", "q2", "q3"]
    assert np.isnan(result.per_query[1]).all()  # q2 has no relevant item
    assert list(result.n_skipped) == [1, 1]
    np.testing.assert_allclose(result.mean, np.nanmean(result.per_query, axis=0), rtol=1e-15)
    assert result.mean_at(None) == result.mean[1] and result.mean_at(1) == result.mean[0]
    with pytest.raises(KeyError, match=r"k=3 was not computed; computed cutoffs are \(1, None\)"):
        result.mean_at(3)
    with pytest.raises(TypeError, match=r"k must be an int or None .*; got True"):
        result.mean_at(True)  # True == 1, but it is no cutoff


def test_to_arrow_and_pandas(result):
    table = result.to_arrow()
    assert table.column_names == ["query_id", "ndcg@1", "dcg@1", "idcg@1", "ndcg", "dcg", "idcg"]
    np.testing.assert_array_equal(
        table["ndcg@1"].to_numpy(zero_copy_only=False), result.per_query[:, 0]
    )
    pd = pytest.importorskip("pandas")
    frame = result.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["query_id"]) == ["q1", "q2", "q3"]
    np.testing.assert_array_equal(frame["idcg"].to_numpy(), result.idcg[:, 1])


def test_repr_is_readable(result):
    text = repr(result)
    assert text.startswith(
        "NDCGResult(n_queries=3, gain='exp2', discount='log2', ideal='recall', ties='average'"
    )
    assert f"{result.mean[0]:.6f}" in text and "skipped" in text
    assert "all" in text.splitlines()[-1]


def test_options_record_the_drawn_seed_and_weights(backend):
    grades, scores, qid = [2, 0, 1, 1, 0], [0.5, 0.5, 0.5, 0.2, 0.2], [1, 1, 1, 2, 2]
    drawn = fastndcg.ndcg(grades, scores, qid=qid, ties="random", backend=backend)
    seed = drawn.options["seed"]
    again = fastndcg.ndcg(grades, scores, qid=qid, ties="random", seed=seed, backend=backend)
    np.testing.assert_array_equal(again.per_query, drawn.per_query)
    assert again.options == drawn.options and "weights" not in drawn.options
    assert "seed" not in fastndcg.ndcg(grades, scores, qid=qid, backend=backend).options
    weighted = fastndcg.ndcg(grades, scores, qid=qid, weights=[1, 3], backend=backend)
    assert weighted.options["weights"] == "per query"
    scorer = fastndcg.Scorer(ties="random", seed=4, backend=backend)
    assert "seed=4" in repr(scorer) and "aggregate" not in repr(scorer)


def test_float_with_one_cutoff(backend):
    result = fastndcg.ndcg([1.0, 0.0], [0.1, 0.2], k=2, backend=backend)
    assert float(result) == pytest.approx(1 / np.log2(3), rel=1e-15)


def test_a_comparison_lists_a_differing_cutoff_among_the_settings(backend):
    grades = [3, 2, 0, 1, 0, 2, 1, 0]
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.9, 0.9, 0.1]
    qid = [0, 0, 0, 0, 1, 1, 1, 1]
    definitions = {
        "base": {"k": 3},
        "deeper": {"k": 5},
        "stable": {"k": 3, "ties": "stable"},
        "both": {"k": [3, 5], "ties": "stable"},
        "all": {"k": None},
    }
    comparison = fastndcg.compare_definitions(
        grades, scores, qid=qid, definitions=definitions, backend=backend
    )
    settings = {row["definition"]: row["settings"] for row in comparison.rows}
    assert settings == {
        "base": "(baseline)",
        "deeper": "k=5",
        "stable": "ties=stable",
        "both": "k=[3, 5], ties=stable",
        "all": "k=None",
    }
    for label, options in definitions.items():
        expected = fastndcg.ndcg(grades, scores, qid=qid, backend=backend, **options)
        means = [row["mean"] for row in comparison.rows if row["definition"] == label]
        assert means == list(expected.mean)
