"""fastndcg.torch.NDCG: torchmetrics' RetrievalNormalizedDCG per query with its preset, every
fastndcg definition otherwise, the Metric protocol (update, compute, forward, reset, syncing
across processes), the plain class without torchmetrics, and the errors."""

from __future__ import annotations

import copy
import importlib.util
import pickle
import sys
import warnings

import numpy as np
import pytest
from parity_data import Lists, predictions, random_lists, tool
from reference import queries_from_csr, reference_ndcg

import fastndcg
from fastndcg._backends import automatic_backend
from fastndcg._core.grouping import group_rows

torch = tool("torch", "torch")
torchmetrics = tool("torchmetrics", "torchmetrics")
from fastndcg.torch import (  # noqa: E402
    IN_PLACE,
    NDCG,
    TO_HOST,
    TO_HOST_WARN,
    _placement,
)

ATOL = 2e-6  # torchmetrics adds gains and discounts in float32 (tests/parity)
ACTIONS = {"neg": "zero", "pos": "one", "skip": "skip"}  # empty_target_action -> zero_idcg


def float_targets(data: Lists) -> Lists:
    """Fractional grades (exact in float32, as torchmetrics holds float targets)."""
    return Lists(data.qid, data.grades * 0.75, data.scores)


DATA = {
    "lambdarank": predictions("lgb_lambdarank_example"),
    "tied": random_lists(71, n_queries=60),
    "float_targets": float_targets(random_lists(72, n_queries=60)),
}


def tensors(data: Lists, order: np.ndarray | None = None):
    """(preds, target, indexes) tensors, rows in ``order``; float targets stay float32."""
    _, codes = np.unique(data.qid, return_inverse=True)
    order = np.arange(codes.size) if order is None else order
    target = data.grades[order]
    target = torch.tensor(target.astype(np.int64 if np.all(target % 1 == 0) else np.float32))
    return torch.tensor(data.scores[order]), target, torch.tensor(codes[order])


def torchmetrics_per_query(preds, target, indexes, k, action) -> dict[int, float]:
    """{index: NDCG} of the queries torchmetrics does not skip."""
    metric = torchmetrics.retrieval.RetrievalNormalizedDCG(
        top_k=k, empty_target_action=action, aggregation=lambda values, dim=None: values
    )
    values = metric(preds, target, indexes=indexes).numpy()
    ids = torch.unique(indexes).numpy()
    if action == "skip":
        ids = [i for i in ids if target[indexes == i].sum() != 0]
    return dict(zip(map(int, ids), values.astype(np.float64), strict=True))


def ours_per_query(metric) -> dict[int, float]:
    result = metric._result()
    return {int(q): float(v) for q, v in zip(result.query_ids, result.per_query[:, 0], strict=True)}


@pytest.mark.parametrize("name", list(DATA))
@pytest.mark.parametrize("action", list(ACTIONS))
@pytest.mark.parametrize("k", [None, 1, 5, 10])
def test_preset_torchmetrics_equals_retrieval_normalized_dcg_per_query(name, action, k):
    """Rows shuffled and fed in three updates: a query's rows are gathered over all updates."""
    data = DATA[name]
    order = np.random.default_rng(73).permutation(data.qid.size)
    preds, target, indexes = tensors(data, order)
    metric = NDCG(k=k, preset="torchmetrics", zero_idcg=ACTIONS[action])
    for part in np.array_split(np.arange(order.size), 3):
        metric.update(preds[part], target[part], indexes=indexes[part])
    theirs = torchmetrics_per_query(preds, target, indexes, k, action)
    ours = {q: v for q, v in ours_per_query(metric).items() if not np.isnan(v)}
    assert ours.keys() == theirs.keys()
    gaps = [abs(ours[q] - theirs[q]) for q in theirs]
    assert max(gaps) <= ATOL, (name, action, k, max(gaps))
    assert abs(metric.compute().item() - np.mean(list(theirs.values()))) <= ATOL


def test_any_row_order_gives_the_same_queries_and_bits():
    """Rows query by query with increasing indexes, query by query with decreasing ones (both
    scored where they are), and shuffled (grouped by fastndcg) give the same values."""
    data = random_lists(77, n_queries=40)
    rows = np.arange(data.qid.size)
    orders = {
        "increasing": rows,
        "decreasing": np.argsort(-data.qid, kind="stable"),
        "shuffled": np.random.default_rng(78).permutation(rows),
    }
    found = {}
    for name, order in orders.items():
        preds, target, indexes = tensors(data, order)
        row_order = group_rows(indexes.numpy(), indexes.numel(), "qid", automatic_backend())[2]
        assert (row_order is None) == (name != "shuffled")  # None: the rows stay where they are
        metric = NDCG(k=[3, None], zero_idcg="zero")
        metric.update(preds, target, indexes=indexes)
        result = metric._result()
        found[name] = {
            int(q): tuple(v) for q, v in zip(result.query_ids, result.per_query, strict=True)
        }
    assert found["increasing"] == found["decreasing"] == found["shuffled"]
    assert len(found["increasing"]) == 40


def test_preset_torchmetrics_errors_where_torchmetrics_does():
    preds, target, indexes = tensors(DATA["tied"])  # every ninth query has no relevant item
    with pytest.raises(ValueError, match="no positive target"):
        torchmetrics_per_query(preds, target, indexes, None, "error")
    metric = NDCG(preset="torchmetrics", zero_idcg="error")
    metric.update(preds, target, indexes=indexes)
    with pytest.raises(fastndcg.InputError, match="no relevant item"):
        metric.compute()


def test_two_dimensional_input_is_averaged_per_row_with_its_mask():
    """torchmetrics flattens 2-D input into one ranking; NDCG takes each row as a query,
    which is torchmetrics with one index per row (and the padding left out)."""
    data = DATA["lambdarank"]
    grades, scores, mask = data.dense()
    grades[~mask] = 0
    metric = NDCG(k=5, preset="torchmetrics")
    value = metric(
        torch.tensor(scores), torch.tensor(grades.astype(np.int64)), mask=torch.tensor(mask)
    )
    rows = torch.arange(mask.shape[0])[:, None].expand(mask.shape)
    theirs = torchmetrics.retrieval.RetrievalNormalizedDCG(top_k=5)(
        torch.tensor(scores[mask]),
        torch.tensor(grades[mask].astype(np.int64)),
        indexes=rows[torch.tensor(mask)],
    )
    assert abs(value.item() - theirs.item()) <= ATOL


OPTIONS = [
    {},
    {"k": [1, 3, None], "gain": "linear", "ties": "pessimistic"},
    {"k": 3, "discount": "reciprocal", "zero_idcg": "one", "aggregate": "ratio"},
    {"k": [2, 10], "ideal": "local", "ties": "optimistic", "zero_idcg": "zero"},
]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_every_definition_against_the_reference(options):
    data = random_lists(74, n_queries=40, max_len=12)
    preds, target, indexes = tensors(data)
    metric = NDCG(**options)
    metric.update(preds, target, indexes=indexes)
    value = metric.compute()
    reference_options = {key: value for key, value in options.items() if key != "k"}
    cutoffs = options.get("k")
    cutoffs = cutoffs if isinstance(cutoffs, list) else [cutoffs]
    expected = reference_ndcg(
        queries_from_csr(data.bounds, data.grades, data.scores), k=cutoffs, **reference_options
    ).mean
    np.testing.assert_allclose(np.atleast_1d(value.numpy()), expected, rtol=1e-6)
    assert value.shape == (() if len(cutoffs) == 1 else (len(cutoffs),))


def test_mixed_updates_forward_and_reset():
    """1-D and 2-D updates in one epoch score as one set of queries; forward returns the batch
    alone and keeps it; reset forgets everything."""
    data = random_lists(75, n_queries=30, max_len=8)
    preds, target, indexes = tensors(data)
    dense_grades = np.array([[3, 0, 1, 0], [0, 0, 0, 2]])
    dense_scores = np.array([[0.1, 0.9, 0.5, 0.2], [0.3, 0.4, 0.8, 0.1]])
    metric = NDCG(k=3)
    metric.update(preds, target, indexes=indexes)
    batch = metric(torch.tensor(dense_scores), torch.tensor(dense_grades))
    alone = fastndcg.ndcg(dense_grades, dense_scores, k=3)
    assert batch.item() == pytest.approx(float(alone), abs=1e-12)
    flat_qid = np.concatenate([data.qid, [1000] * 4 + [1001] * 4])
    everything = fastndcg.ndcg(
        np.concatenate([data.grades, dense_grades.ravel()]),
        np.concatenate([data.scores, dense_scores.ravel()]),
        qid=flat_qid,
        k=3,
    )
    assert metric.compute().item() == pytest.approx(float(everything), abs=1e-12)
    assert metric.compute().dtype == torch.float64  # the predictions' dtype
    metric.reset()
    with pytest.warns(UserWarning, match="before the ``update``"):  # torchmetrics' warning
        assert np.isnan(metric.compute().item())


def test_ignore_index_and_half_precision():
    metric = NDCG(k=2, ignore_index=-100)
    preds = torch.tensor([[0.5, 0.9, 0.1], [0.2, 0.3, 0.4]], dtype=torch.float16)
    target = torch.tensor([[1, -100, 0], [-100, 2, 0]])
    value = metric(preds, target)
    expected = fastndcg.ndcg([[1, 0], [2, 0]], [[0.5, 0.1], [0.3, 0.4]], k=2)
    assert value.dtype == torch.float32
    assert value.item() == pytest.approx(float(expected), abs=1e-6)


def test_updates_keep_views_not_copies_and_leave_inputs_alone():
    preds = torch.rand(4, 6, requires_grad=True)
    target = torch.randint(0, 3, (4, 6))
    before = (preds.detach().clone(), target.clone())
    metric = NDCG()
    metric.update(preds, target)
    metric.update(preds.reshape(-1), target.reshape(-1), indexes=torch.arange(24) // 6)
    assert metric.dense_preds[0].data_ptr() == preds.data_ptr()
    assert metric.preds[0].data_ptr() == preds.data_ptr()
    assert not metric.dense_preds[0].requires_grad
    metric.compute()
    assert torch.equal(preds.detach(), before[0]) and torch.equal(target, before[1])
    assert preds.grad is None


def test_a_metric_collection_and_copies():
    collection = torchmetrics.MetricCollection(
        {"ndcg@5": NDCG(k=5), "tm": NDCG(k=5, preset="torchmetrics")}
    )
    data = DATA["lambdarank"]
    preds, target, indexes = tensors(data)
    collection.update(preds, target, indexes=indexes)
    values = collection.compute()
    assert values["ndcg@5"].item() == pytest.approx(
        float(fastndcg.ndcg(data.grades, data.scores, qid=data.qid, k=5)), abs=1e-12
    )
    clone = copy.deepcopy(collection["tm"])
    restored = pickle.loads(pickle.dumps(collection["tm"]))
    assert clone.compute().item() == restored.compute().item() == values["tm"].item()


def test_states_sync_across_processes_by_concatenation():
    """Two ranks' states gathered as DDP gathers them: rank 1 had no 1-D update at all."""
    ranks = [NDCG(k=4), NDCG(k=4)]
    first = random_lists(76, n_queries=10, max_len=6)
    preds, target, indexes = tensors(first)
    ranks[0].update(preds, target, indexes=indexes)
    ranks[0].update(torch.tensor([[0.1, 0.7]]), torch.tensor([[1, 0]]))
    ranks[1].update(
        torch.tensor([[0.6, 0.2, 0.4], [0.5, 0.9, 0.1]]), torch.tensor([[0, 2, 1], [1, 0, 0]])
    )
    states = [{name: list(getattr(rank, name)) for name in rank._defaults} for rank in ranks]
    names = iter(states[0])  # torchmetrics gathers the states in the order they were added

    def gather_all(tensor, group=None):  # each rank's list state arrives as one tensor
        name = next(names)
        return [torch.cat(state[name]) if state[name] else torch.tensor([]) for state in states]

    ranks[0].dist_sync_fn = gather_all
    ranks[0].distributed_available_fn = lambda: True
    synced = ranks[0].compute()
    expected = fastndcg.ndcg(
        np.concatenate([first.grades, [1, 0], [0, 2, 1, 1, 0, 0]]),
        np.concatenate([first.scores, [0.1, 0.7], [0.6, 0.2, 0.4, 0.5, 0.9, 0.1]]),
        qid=np.concatenate([first.qid, [100] * 2, [101] * 3, [102] * 3]),
        k=4,
    )
    assert synced.item() == pytest.approx(float(expected), abs=1e-12)


@pytest.mark.parametrize(
    ("device", "backend", "cuda", "expected"),
    [
        ("cpu", "auto", False, IN_PLACE),
        ("cpu", "numpy", False, IN_PLACE),
        ("cuda", "auto", True, IN_PLACE),
        ("cuda", "cuda", True, IN_PLACE),
        ("cuda", "auto", False, TO_HOST_WARN),
        ("cuda", "numba", True, TO_HOST),
        ("mps", "auto", False, TO_HOST_WARN),
        ("mps", "cuda", True, TO_HOST),
    ],
)
def test_where_tensors_are_scored(device, backend, cuda, expected, monkeypatch):
    monkeypatch.delenv("FASTNDCG_BACKEND", raising=False)
    assert _placement(device, backend, cuda) == expected


def test_the_environment_backend_is_a_host_backend_for_auto(monkeypatch):
    monkeypatch.setenv("FASTNDCG_BACKEND", "numpy")
    assert _placement("cuda", "auto", True) == TO_HOST


def test_tensors_no_backend_reads_are_copied_once_with_one_warning(monkeypatch):
    """A stand-in for CUDA tensors where backend='cuda' cannot run: the decision says copy."""
    import fastndcg.torch as module

    monkeypatch.setattr(module, "_placement", lambda *_: TO_HOST_WARN)
    metric = NDCG(k=2)
    metric.update(torch.tensor([[0.2, 0.9, 0.4]]), torch.tensor([[1, 0, 2]]))
    with pytest.warns(RuntimeWarning, match="copies the cpu tensors") as caught:
        first = metric.compute()
        metric.update(torch.tensor([0.5, 0.1]), torch.tensor([1, 0]), indexes=torch.tensor([4, 4]))
        second = metric.compute()
    assert len(caught) == 1
    assert first.item() == pytest.approx(float(fastndcg.ndcg([[1, 0, 2]], [[0.2, 0.9, 0.4]], k=2)))
    assert second.item() == pytest.approx((first.item() + 1.0) / 2)


def test_cpu_tensors_never_warn():
    metric = NDCG()
    metric.update(torch.rand(3, 4), torch.randint(0, 2, (3, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric.compute()


def test_bad_input_is_named_at_update():
    metric = NDCG()
    with pytest.raises(fastndcg.InputError, match="1-D preds need indexes") as caught:
        metric.update(torch.rand(5), torch.zeros(5))
    assert caught.value.value == (5,)
    with pytest.raises(fastndcg.InputError, match="target has shape"):
        metric.update(torch.rand(2, 3), torch.zeros(2, 4))
    with pytest.raises(fastndcg.InputError, match="indexes has shape"):
        metric.update(torch.rand(6), torch.zeros(6), indexes=torch.zeros(5, dtype=torch.long))
    with pytest.raises(fastndcg.InputTypeError, match="indexes must be an integer tensor"):
        metric.update(torch.rand(6), torch.zeros(6), indexes=torch.zeros(6))
    with pytest.raises(fastndcg.InputTypeError, match="mask must be a bool tensor"):
        metric.update(torch.rand(2, 3), torch.zeros(2, 3), mask=torch.ones(2, 3))
    with pytest.raises(fastndcg.InputTypeError, match="preds must be real"):
        metric.update(torch.rand(2, 3, dtype=torch.complex64), torch.zeros(2, 3))
    assert not metric.preds and not metric.dense_preds  # nothing kept from refused updates


def test_bad_values_are_named_at_compute():
    metric = NDCG()
    metric.update(torch.tensor([[0.5, float("nan")]]), torch.tensor([[1, 0]]))
    with pytest.raises(fastndcg.InputError, match=r"NDCG.compute\(\).*scores: preds"):
        metric.compute()


def test_bad_options_fail_when_the_metric_is_made():
    with pytest.raises(fastndcg.OptionError, match="zero_idcg"):
        NDCG(zero_idcg="never")
    with pytest.raises(fastndcg.OptionError, match="judgment lists"):
        NDCG(ideal="global")
    with pytest.raises(fastndcg.OptionError, match="document id"):
        NDCG(preset="trec_eval")
    with pytest.raises(fastndcg.OptionTypeError, match="ignore_index"):
        NDCG(ignore_index=0.5)
    with pytest.raises(ValueError, match="zero_idgc"):  # torchmetrics refuses what it does not know
        NDCG(zero_idgc="zero")


def test_random_ties_draw_one_seed_for_every_compute():
    metric = NDCG(ties="random")
    metric.update(torch.tensor([[0.5, 0.5, 0.5, 0.5]]), torch.tensor([[2, 0, 1, 0]]))
    assert metric.compute().item() == metric.compute().item()
    assert metric.definition.options["seed"] is not None


def load_without_torchmetrics(monkeypatch):
    """fastndcg/torch.py loaded afresh (under another name) where torchmetrics cannot import."""
    monkeypatch.setitem(sys.modules, "torchmetrics", None)
    spec = importlib.util.spec_from_file_location(
        "fastndcg_torch_plain", fastndcg.__path__[0] + "/torch.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_torchmetrics_a_plain_class_does_the_same(monkeypatch):
    plain = load_without_torchmetrics(monkeypatch)
    assert not issubclass(plain.NDCG, torchmetrics.Metric)
    data = DATA["lambdarank"]
    preds, target, indexes = tensors(data)
    metric, reference = plain.NDCG(k=5, preset="torchmetrics"), NDCG(k=5, preset="torchmetrics")
    batch = metric(preds[:100], target[:100], indexes=indexes[:100])
    assert batch.item() == reference(preds[:100], target[:100], indexes=indexes[:100]).item()
    metric.update(preds[100:], target[100:], indexes=indexes[100:])
    reference.update(preds[100:], target[100:], indexes=indexes[100:])
    assert metric.compute().item() == reference.compute().item()
    metric.reset()
    assert np.isnan(metric.compute().item())
    with pytest.raises(fastndcg.OptionTypeError, match="sync_on_compute") as caught:
        plain.NDCG(sync_on_compute=False)
    assert "pip install 'fastndcg[torch]'" in str(caught.value)
