"""Parity of ``preset="torchmetrics"`` with torchmetrics' RetrievalNormalizedDCG, per query.

Tolerance 2e-6 (absolute): torchmetrics casts scores to float32 (ties in float32 are ties; the
preset reproduces that exactly with ``score_dtype="float32"``) and also adds gains and discounts
in float32, which fastndcg does in float64. Observed differences stay below 6e-7 on lists of up
to 300 items; a wrong tie rule or float64 scores give differences of 0.01 to 0.8 on the same
data (checked below).
"""

from __future__ import annotations

import numpy as np
import pytest
from parity_data import PREDICTIONS, assert_same_values, predictions, random_lists, tool, trec_lists

import fastndcg

torch = tool("torch", "torch")
retrieval = tool("torchmetrics.retrieval", "torchmetrics")

ATOL = 2e-6  # float32 accumulation (see module docstring)
ACTIONS = {"neg": "zero", "pos": "one", "skip": "skip"}  # empty_target_action -> zero_idcg


def lists():
    yield from (predictions(name) for name in PREDICTIONS)
    yield from (trec_lists(name) for name in ("adhoc", "rag2024"))
    yield random_lists(31)
    yield random_lists(32, n_queries=40, max_len=300)


def torchmetrics_per_query(data, k, action):
    """Per-query values in query-id order (an aggregation that returns them all)."""
    ids, codes = np.unique(data.qid, return_inverse=True)
    metric = retrieval.RetrievalNormalizedDCG(
        top_k=k, empty_target_action=action, aggregation=lambda values, dim=None: values
    )
    values = metric(
        torch.tensor(data.scores),
        torch.tensor(data.grades.astype(np.int64)),
        indexes=torch.tensor(codes),
    )
    return ids, values.numpy().astype(np.float64)


@pytest.mark.parametrize("data", list(lists()), ids=lambda d: f"{d.qid.size}rows")
@pytest.mark.parametrize("action", list(ACTIONS))
def test_per_query(data, action):
    for k in (None, 1, 5, 10):
        ids, theirs = torchmetrics_per_query(data, k, action)
        ours = fastndcg.ndcg(
            data.grades,
            data.scores,
            qid=data.qid,
            preset="torchmetrics",
            k=k,
            zero_idcg=ACTIONS[action],
        )
        mine = dict(zip(map(str, ours.query_ids), ours.per_query[:, 0], strict=True))
        if action == "skip":  # torchmetrics returns only the queries it did not skip
            ids = [q for q in ids if not np.isnan(mine[str(q)])]
        assert_same_values(
            {str(q): mine[str(q)] for q in ids},
            dict(zip(map(str, ids), theirs, strict=True)),
            ATOL,
            f"k={k} {action}",
        )
        assert abs(float(ours) - float(np.mean(theirs))) <= ATOL


def test_error_action_and_what_float32_scores_change():
    data = random_lists(33)  # every ninth query has no relevant item; near-ties below float32
    with pytest.raises(ValueError, match="no positive target"):
        torchmetrics_per_query(data, None, "error")
    with pytest.raises(ValueError, match="no relevant item"):
        fastndcg.ndcg(
            data.grades, data.scores, qid=data.qid, preset="torchmetrics", zero_idcg="error"
        )
    _, theirs = torchmetrics_per_query(data, 10, "neg")
    float64 = fastndcg.ndcg(
        data.grades, data.scores, qid=data.qid, preset="torchmetrics", k=10, score_dtype="float64"
    )
    assert np.abs(float64.per_query[:, 0] - theirs).max() > 0.01
