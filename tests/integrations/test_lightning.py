"""fastndcg.torch.NDCG, Measures and Measure logged by PyTorch Lightning: the value at the end of
each validation epoch is over every batch of the epoch (not a mean of batch means), and the next
epoch starts afresh."""

from __future__ import annotations

import numpy as np
import pytest
from parity_data import tool
from training_data import lambdarank

import fastndcg

torch = tool("torch", "torch")
pl = tool("pytorch_lightning", "pytorch-lightning")
torchmetrics = tool("torchmetrics", "torchmetrics")
from fastndcg.torch import NDCG, Measure, Measures  # noqa: E402

# Lightning 2.6 with torch 2.13 warns from its own internals
pytestmark = pytest.mark.filterwarnings("ignore:.*LeafSpec.*is deprecated")


class Ranker(pl.LightningModule):
    """A linear scorer of documents; one batch holds several whole queries (1-D, with indexes)."""

    def __init__(self, n_features: int) -> None:
        super().__init__()
        self.score = torch.nn.Linear(n_features, 1)
        self.val_ndcg = NDCG(k=10, preset="lightgbm")
        self.seen: list[tuple] = []

    def forward(self, features):
        return self.score(features).squeeze(-1)

    def validation_step(self, batch, batch_index):
        features, grades, query = batch
        scores = self(features)
        self.seen.append((scores.detach().clone(), grades, query))
        self.val_ndcg.update(scores, grades, indexes=query)
        self.log("val_ndcg@10", self.val_ndcg, on_epoch=True, batch_size=len(query))


def test_lightning_logs_ndcg_over_the_whole_epoch():
    data = lambdarank().queries(0, 20)
    tensors = [
        torch.tensor(data.features, dtype=torch.float32),
        torch.tensor(data.grades, dtype=torch.int64),
        torch.tensor(data.qid),
    ]
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*tensors), batch_size=64)
    torch.manual_seed(0)
    model = Ranker(data.features.shape[1])
    trainer = pl.Trainer(
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    for _ in range(2):  # the second epoch is not mixed with the first
        model.seen.clear()
        logged = trainer.validate(model, loader, verbose=False)[0]["val_ndcg@10"]
        scores, grades, query = (
            torch.cat(parts).numpy() for parts in zip(*model.seen, strict=True)
        )
        assert len(model.seen) > 1 and query.size == data.grades.size
        expected = fastndcg.ndcg(grades, scores, qid=query, k=10, preset="lightgbm")
        batch_means = [
            float(fastndcg.ndcg(g.numpy(), s.numpy(), qid=q.numpy(), k=10, preset="lightgbm"))
            for s, g, q in model.seen
        ]
        assert logged == pytest.approx(float(expected), abs=1e-6)  # logged as float32
        assert abs(np.mean(batch_means) - float(expected)) > 1e-4  # what a batch mean would give


class MeasuresRanker(Ranker):
    """Measures in a MetricCollection logged with log_dict, and one Measure with log."""

    def __init__(self, n_features: int) -> None:
        super().__init__(n_features)
        self.val_measures = torchmetrics.MetricCollection(
            [Measures(["P@5", "AP", "nDCG@10"], ties="stable")], prefix="val_"
        )
        self.val_rr = Measure("RR@10", ties="stable")

    def validation_step(self, batch, batch_index):
        features, grades, query = batch
        scores = self(features)
        self.seen.append((scores.detach().clone(), grades, query))
        self.val_measures.update(scores, grades, indexes=query)
        self.val_rr.update(scores, grades, indexes=query)
        self.log("val_rr@10", self.val_rr, batch_size=len(query))

    def on_validation_epoch_end(self):
        self.log_dict(self.val_measures.compute())
        self.val_measures.reset()


def test_lightning_logs_the_measures_over_the_whole_epoch():
    data = lambdarank().queries(0, 20)
    tensors = [
        torch.tensor(data.features, dtype=torch.float32),
        torch.tensor(data.grades, dtype=torch.int64),
        torch.tensor(data.qid),
    ]
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*tensors), batch_size=64)
    torch.manual_seed(0)
    model = MeasuresRanker(data.features.shape[1])
    trainer = pl.Trainer(
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    for _ in range(2):  # the second epoch is not mixed with the first
        model.seen.clear()
        logged = trainer.validate(model, loader, verbose=False)[0]
        scores, grades, query = (
            torch.cat(parts).numpy() for parts in zip(*model.seen, strict=True)
        )
        expected = fastndcg.evaluate(
            grades, scores, qid=query, measures=["P@5", "AP", "nDCG@10", "RR@10"], ties="stable"
        )
        logged_as = ("val_P@5", "val_AP", "val_nDCG@10", "val_rr@10")
        for key, value in zip(logged_as, expected.mean, strict=True):
            assert logged[key] == pytest.approx(float(value), abs=1e-6), key
