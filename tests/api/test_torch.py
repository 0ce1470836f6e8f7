"""torch tensors from a training loop: scored as their NumPy values, or a clear error."""

from __future__ import annotations

import numpy as np
import pytest

import fastndcg

torch = pytest.importorskip("torch", reason="needs torch")

RNG = np.random.default_rng(7)
GRADES = RNG.integers(0, 4, 40)
SCORES = RNG.integers(0, 6, 40).astype(np.float32) / 4  # ties; exact in bfloat16
QID = np.repeat(np.arange(4), 10)
OPTIONS = dict(k=[1, 5, None], ties="average")


def same_result(got, expected):
    for field in ("per_query", "dcg", "idcg", "mean"):
        np.testing.assert_array_equal(getattr(got, field), getattr(expected, field))


def test_scores_that_require_grad_score_as_their_values(backend):
    scores = torch.tensor(SCORES, requires_grad=True)
    got = fastndcg.ndcg(torch.tensor(GRADES), scores, qid=QID, backend=backend, **OPTIONS)
    same_result(got, fastndcg.ndcg(GRADES, SCORES, qid=QID, backend=backend, **OPTIONS))
    dense = torch.tensor(SCORES.reshape(4, 10), requires_grad=True)
    got = fastndcg.ndcg(GRADES.reshape(4, 10), dense, backend=backend, **OPTIONS)
    same_result(got, fastndcg.ndcg(GRADES, SCORES, qid=QID, backend=backend, **OPTIONS))
    assert scores.requires_grad and scores.grad is None  # the caller's tensor is left alone


def test_a_detached_tensor_is_read_in_place():
    from fastndcg._core.coerce import from_torch

    scores = torch.tensor(SCORES, requires_grad=True)
    assert np.shares_memory(np.asarray(from_torch(scores, "scores")), scores.detach().numpy())


@pytest.mark.parametrize("which", ["grades", "scores"])
def test_bfloat16_is_widened_exactly(backend, which):
    grades, scores = torch.tensor(GRADES), torch.tensor(SCORES)
    if which == "grades":
        grades = grades.to(torch.bfloat16)
    else:
        scores = scores.to(torch.bfloat16)
    got = fastndcg.ndcg(grades, scores, qid=QID, backend=backend, **OPTIONS)
    plain = (grades.float().numpy(), scores.float().numpy())
    same_result(got, fastndcg.ndcg(*plain, qid=QID, backend=backend, **OPTIONS))


@pytest.mark.parametrize("options", [dict(k=5), dict(k=[1, 5], ties="stable")])
def test_scorer_takes_training_loop_tensors(backend, options):
    score = fastndcg.Scorer(backend=backend, **options)
    for q in range(4):
        rows = QID == q
        expected = score(GRADES[rows], SCORES[rows])
        logits = torch.tensor(SCORES[rows], requires_grad=True)
        np.testing.assert_array_equal(score(torch.tensor(GRADES[rows]), logits), expected)
        np.testing.assert_array_equal(score(GRADES[rows], logits.to(torch.bfloat16)), expected)
        assert logits.grad is None


def test_a_tensor_outside_cpu_memory_names_the_argument_and_the_fix(backend):
    # the meta device stands in for cuda/mps, which this machine lacks
    def elsewhere(values):
        return torch.tensor(values).to("meta")

    grades, scores = GRADES[:10], SCORES[:10]
    cases = {
        "grades": lambda: fastndcg.ndcg(elsewhere(grades), scores, backend=backend),
        "scores": lambda: fastndcg.ndcg(grades, elsewhere(scores), backend=backend),
        "qid": lambda: fastndcg.ndcg(grades, scores, qid=elsewhere(QID[:10]), backend=backend),
        "offsets": lambda: fastndcg.ndcg(grades, scores, offsets=elsewhere([0, 4, 10])),
        "mask": lambda: fastndcg.ndcg(
            grades.reshape(2, 5), scores.reshape(2, 5), mask=elsewhere(np.ones((2, 5), bool))
        ),
    }
    for name, call in cases.items():
        with pytest.raises(
            TypeError, match=rf"^{name} is a torch tensor on meta, .*; pass {name}\.cpu\(\)$"
        ):
            call()
    score = fastndcg.Scorer(k=3, backend=backend)
    with pytest.raises(TypeError, match=r"^scores is a torch tensor on meta, .*scores\.cpu\(\)"):
        score(grades, elsewhere(scores))
    with pytest.raises(TypeError, match=r"^grades is a torch tensor on meta, .*grades\.cpu\(\)"):
        score(elsewhere(grades), scores)


def test_weights_and_keras_rs_inputs_that_require_grad(backend):
    weights = torch.tensor([1.0, 2.0, 0.5, 1.0], requires_grad=True)
    got = fastndcg.ndcg(GRADES, SCORES, qid=QID, weights=weights, backend=backend, **OPTIONS)
    expected = fastndcg.ndcg(
        GRADES, SCORES, qid=QID, weights=[1.0, 2.0, 0.5, 1.0], backend=backend, **OPTIONS
    )
    same_result(got, expected)
    labels = torch.tensor(GRADES.reshape(4, 10).astype(np.float32), requires_grad=True)
    logits = torch.tensor(SCORES.reshape(4, 10), requires_grad=True)
    same_result(
        fastndcg.ndcg(labels, logits, preset="keras_rs", seed=1, backend=backend),
        fastndcg.ndcg(
            GRADES.reshape(4, 10), SCORES.reshape(4, 10), preset="keras_rs", seed=1, backend=backend
        ),
    )
