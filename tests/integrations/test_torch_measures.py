"""fastndcg.torch.Measures and Measure: fastndcg.evaluate on the same rows (bit for bit), the
oracle of tests/reference_measures.py, torchmetrics' retrieval metrics where they compute the
same measure, NDCG's update contract and Metric protocol, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import reference_measures as ref
from parity_data import Lists, random_lists, tool

import fastndcg
from fastndcg._core.measures import parse_measure

torch = tool("torch", "torch")
torchmetrics = tool("torchmetrics", "torchmetrics")
from torchmetrics.functional import retrieval as tmf  # noqa: E402

import fastndcg.torch as module  # noqa: E402
from fastndcg.torch import NDCG, TO_HOST_WARN, Measure, Measures  # noqa: E402

NAMES = ["nDCG@10", "P@5", "R@10", "AP", "AP@5", "RR@10", "Success@3", "Rprec", "NumRelRet@5"]


def tensors(data: Lists, order: np.ndarray | None = None):
    """(preds, target, indexes) tensors of ``data``'s rows in ``order``."""
    _, codes = np.unique(data.qid, return_inverse=True)
    order = np.arange(codes.size) if order is None else order
    target = torch.tensor(data.grades[order].astype(np.int64))
    return torch.tensor(data.scores[order]), target, torch.tensor(codes[order])


def per_query(result) -> dict[int, tuple]:
    """{query index: the row of every measure} (NaN kept, compared as NaN)."""
    return {
        int(q): tuple(np.nan_to_num(row, nan=-1.0))
        for q, row in zip(result.query_ids, result.per_query, strict=True)
    }


OPTIONS = [
    {"ties": "stable"},
    {"ties": "stable", "relevance_level": 2, "zero_idcg": "zero", "gain": "linear"},
    {"ties": "pessimistic", "zero_idcg": "one"},
    {},  # ties="average": the mean over every order of tied scores
    {"preset": "ranx", "relevance_level": 2},  # its denominators, -l2 in nDCG, stable ties
]


@pytest.mark.parametrize("shuffled", [True, False], ids=["shuffled", "query_by_query"])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_the_measures_of_evaluate_on_the_same_rows_bit_for_bit(options, shuffled):
    """Rows fed in three updates (grouped over all of them; query by query they are scored
    through offsets), as evaluate gets them."""
    data = random_lists(81, n_queries=80)  # ties, and queries without a relevant row
    rows = np.arange(data.qid.size)
    order = np.random.default_rng(82).permutation(rows) if shuffled else rows
    preds, target, indexes = tensors(data, order)
    metric = Measures(NAMES, **options)
    for part in np.array_split(np.arange(order.size), 3):
        metric.update(preds[part], target[part], indexes=indexes[part])
    ours = metric._result()
    theirs = fastndcg.evaluate(
        target.numpy(), preds.numpy(), qid=indexes.numpy(), measures=NAMES, **options
    )
    assert ours.measures == tuple(NAMES)
    assert per_query(ours) == per_query(theirs)
    values = metric.compute()
    assert list(values) == NAMES
    for j, name in enumerate(NAMES):
        np.testing.assert_array_equal(values[name].item(), theirs.mean[j])
        assert values[name].dtype == torch.float64  # the predictions' dtype


def test_the_oracle_query_by_query():
    """tests/reference_measures.py, one Python loop per measure, on distinct scores."""
    data = random_lists(83, n_queries=60, tied=False)
    preds, target, indexes = tensors(data)
    metric = Measures(NAMES, zero_idcg="zero", relevance_level=2)
    metric.update(preds, target, indexes=indexes)
    values = metric.compute()
    for name in NAMES:
        measure = parse_measure(name)
        expected = []
        for _, grades, scores in data.queries():
            ranked = [int(grades[i]) for i in np.argsort(-scores, kind="stable")]
            query = ref.Query(ranked, [int(g) for g in grades])
            expected.append(
                ref.value(measure.kind, query, cutoff=measure.cutoff, level=2, gain="exp2")
            )
        assert values[name].item() == pytest.approx(ref.summary(measure.kind, expected), abs=1e-12)


# -- torchmetrics' retrieval metrics: the same measure, query by query ------------------------

# torchmetrics' functional form -> the measure it computes per query (binary targets, distinct
# positive predictions: torchmetrics 1.9 counts a relevant document with a prediction <= 0 as
# not relevant in precision, recall, AP and RR, and breaks ties by torch.topk)
COUNTERPARTS = [
    (tmf.retrieval_precision, {"top_k": 5}, "P@5"),
    (tmf.retrieval_precision, {"top_k": 40}, "P@40"),  # beyond some lists: divides by k
    (tmf.retrieval_recall, {"top_k": 10}, "R@10"),
    (tmf.retrieval_average_precision, {}, "AP"),
    (tmf.retrieval_reciprocal_rank, {"top_k": 3}, "RR@3"),
    (tmf.retrieval_reciprocal_rank, {}, "RR"),
    (tmf.retrieval_hit_rate, {"top_k": 2}, "Success@2"),
    (tmf.retrieval_r_precision, {}, "Rprec"),
]


def binary_lists(seed: int) -> Lists:
    """Binary grades, every ninth query without a relevant row, distinct scores in (0, 1]."""
    return random_lists(seed, n_queries=90, tied=False, max_len=25, max_grade=1)


@pytest.mark.parametrize(
    ("function", "arguments", "name"), COUNTERPARTS, ids=[case[2] for case in COUNTERPARTS]
)
def test_torchmetrics_functional_retrieval_metrics_per_query(function, arguments, name):
    data = binary_lists(84)
    preds, target, indexes = tensors(data)
    metric = Measures([name], zero_idcg="zero")
    metric.update(preds, target, indexes=indexes)
    ours = metric._result()
    for row, (_, grades, scores) in enumerate(data.queries()):
        theirs = function(
            torch.tensor(scores, dtype=torch.float32), torch.tensor(grades > 0), **arguments
        )
        assert ours.per_query[row, 0] == pytest.approx(theirs.item(), abs=1e-6), (name, row)
    assert np.any(ours.per_query[:, 0] > 0) and np.any(ours.per_query[:, 0] == 0)


ACTIONS = {"neg": "zero", "pos": "one", "skip": "skip"}  # empty_target_action -> zero_idcg
MODULES = {
    "R@10": (torchmetrics.retrieval.RetrievalRecall, {"top_k": 10}),
    "AP": (torchmetrics.retrieval.RetrievalMAP, {}),
    "Rprec": (torchmetrics.retrieval.RetrievalRPrecision, {}),
    "nDCG@5": (torchmetrics.retrieval.RetrievalNormalizedDCG, {"top_k": 5}),
}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_empty_target_action_is_zero_idcg_for_the_measures_dividing_by_r(action):
    """torchmetrics' empty_target_action for a query without a relevant row is zero_idcg for
    the measures that divide by the number of relevant rows (nDCG with linear gains: binary
    targets make exp2 and linear alike)."""
    data = binary_lists(85)
    order = np.random.default_rng(86).permutation(data.qid.size)
    preds, target, indexes = tensors(data, order)
    metric = Measures(list(MODULES), zero_idcg=ACTIONS[action])
    metric.update(preds, target, indexes=indexes)
    ours = metric.compute()
    for name, (make, arguments) in MODULES.items():
        theirs = make(empty_target_action=action, **arguments)(preds, target, indexes=indexes)
        assert ours[name].item() == pytest.approx(theirs.item(), abs=1e-6), (name, action)


def test_retrieval_map_with_top_k_divides_by_the_relevant_rows_it_retrieved():
    """torchmetrics' AP@k is not AP@k of any tool: it divides by the relevant documents in the
    top k, where trec_eval and ranx divide by all of them (the training-loops page)."""
    preds = torch.tensor([0.9, 0.8, 0.7, 0.6])
    target = torch.tensor([1, 0, 0, 1])
    theirs = tmf.retrieval_average_precision(preds, target, top_k=2).item()
    ours = Measure("AP@2", ties="stable")(preds[None], target[None]).item()
    ranx = fastndcg.evaluate([1, 0, 0, 1], preds.numpy(), measures="map@2", preset="ranx")["map@2"]
    assert theirs == 1.0 and ours == 0.5 and ranx == 0.5


# -- the update contract and the Metric protocol, as NDCG's ----------------------------------


def test_two_dimensional_updates_with_a_mask_are_their_rows():
    data = random_lists(87, n_queries=30, max_len=9)
    grades, scores, mask = data.dense()
    grades[~mask] = 0
    dense = Measures(NAMES, ties="stable")
    dense.update(
        torch.tensor(scores), torch.tensor(grades.astype(np.int64)), mask=torch.tensor(mask)
    )
    flat = Measures(NAMES, ties="stable")
    preds, target, indexes = tensors(data)
    flat.update(preds, target, indexes=indexes)
    np.testing.assert_array_equal(dense._result().per_query, flat._result().per_query)


def test_measure_is_its_one_measure_of_measures_and_ndcg_agrees():
    data = random_lists(88, n_queries=40)
    preds, target, indexes = tensors(data)
    several = Measures(["nDCG@5", "RR@10"], ties="stable")
    one = Measure("RR@10", ties="stable")
    ndcg = NDCG(k=5, ties="stable")
    for metric in (several, one, ndcg):
        metric.update(preds, target, indexes=indexes)
    values = several.compute()
    assert one.compute().item() == values["RR@10"].item()
    assert one.compute().shape == ()
    assert ndcg.compute().item() == pytest.approx(values["nDCG@5"].item(), abs=1e-15)


def test_a_metric_collection_flattens_the_dict_forward_and_reset():
    data = random_lists(89, n_queries=30)
    preds, target, indexes = tensors(data)
    collection = torchmetrics.MetricCollection(
        [Measures(["P@5", "AP"], ties="stable"), Measure("RR@3", ties="stable")], prefix="val_"
    )
    batch = collection(preds[:100], target[:100], indexes=indexes[:100])
    expected = fastndcg.evaluate(
        target[:100].numpy(), preds[:100].numpy(), qid=indexes[:100].numpy(),
        measures=["P@5", "AP", "RR@3"], ties="stable",
    )  # fmt: skip
    assert sorted(batch) == ["val_AP", "val_Measure", "val_P@5"]
    assert batch["val_P@5"].item() == expected.mean[0]
    assert batch["val_AP"].item() == expected.mean[1]
    assert batch["val_Measure"].item() == expected.mean[2]
    collection.update(preds[100:], target[100:], indexes=indexes[100:])
    everything = fastndcg.evaluate(
        target.numpy(), preds.numpy(), qid=indexes.numpy(), measures=["AP"], ties="stable"
    )
    assert collection.compute()["val_AP"].item() == everything.mean[0]
    collection.reset()
    with pytest.warns(UserWarning, match="before the ``update``"):  # torchmetrics' warning
        assert np.isnan(collection.compute()["val_AP"].item())


def test_device_tensors_are_copied_to_the_host_with_one_warning(monkeypatch):
    """A stand-in for CUDA tensors: the measures are computed on the host, whatever backend."""
    monkeypatch.setattr(module, "_placement", lambda *_: TO_HOST_WARN)
    metric = Measures(["P@2"])
    metric.update(torch.tensor([[0.2, 0.9, 0.4]]), torch.tensor([[1, 0, 2]]))
    with pytest.warns(RuntimeWarning, match="Measures copies .* computed on the host") as caught:
        metric.compute()
        metric.compute()
    assert len(caught) == 1


def test_the_states_and_the_caller_tensors_are_ndcgs():
    preds = torch.rand(4, 6, requires_grad=True)
    target = torch.randint(0, 3, (4, 6))
    before = (preds.detach().clone(), target.clone())
    metric = Measures(["AP"])
    metric.update(preds, target)
    assert sorted(metric._defaults) == sorted(NDCG()._defaults)
    assert metric.dense_preds[0].data_ptr() == preds.data_ptr()
    metric.compute()
    assert torch.equal(preds.detach(), before[0]) and torch.equal(target, before[1])


# -- errors: at construction where the options are wrong --------------------------------------


def test_bad_options_fail_when_the_metric_is_made():
    with pytest.raises(fastndcg.OptionError, match="unknown measure 'MPA'") as caught:
        Measures(["P@5", "MPA"])
    assert (caught.value.option, caught.value.value) == ("measures", "MPA")
    with pytest.raises(fastndcg.OptionTypeError, match="names its cutoff") as caught:
        Measures(["AP"], k=10)
    assert caught.value.option == "k"
    with pytest.raises(fastndcg.OptionError, match="defines NDCG only"):
        Measures(["AP"], preset="torchmetrics")
    with pytest.raises(fastndcg.OptionError, match="needs document ids"):
        Measures(["AP"], preset="trec_eval")  # unless ties= is given
    with pytest.raises(fastndcg.OptionError, match="ERR@5"):  # needs a tie order
        Measures(["ERR@5"])
    with pytest.raises(fastndcg.OptionError, match="judgment lists"):
        Measures(["AP"], ideal="global")
    with pytest.raises(fastndcg.OptionTypeError, match="decimals"):
        Measures(["AP"], decimals=4)
    with pytest.raises(fastndcg.OptionError, match="relevance_level"):
        Measures(["AP"], relevance_level=-1)
    with pytest.raises(fastndcg.OptionError, match="one measure") as caught:
        Measure("P.5,10")
    assert caught.value.option == "measures"
    with pytest.raises(ValueError, match="zero_idgc"):  # torchmetrics refuses what it does not know
        Measures(["AP"], zero_idgc="zero")


def test_bad_values_are_named_at_compute():
    metric = Measures(["AP"])
    metric.update(torch.tensor([[0.5, float("nan")]]), torch.tensor([[1, 0]]))
    with pytest.raises(fastndcg.InputError, match=r"Measures.compute\(\).*scores: preds"):
        metric.compute()


def test_random_ties_draw_one_seed_for_every_compute():
    metric = Measures(["RR", "P@2"], ties="random")
    metric.update(torch.tensor([[0.5, 0.5, 0.5, 0.5]] * 8), torch.tensor([[2, 0, 1, 0]] * 8))
    assert metric.compute() == metric.compute()
    assert metric.definition.options["seed"] is not None


def test_without_torchmetrics_a_plain_class_does_the_same(monkeypatch):
    from test_torch_metric import load_without_torchmetrics

    plain = load_without_torchmetrics(monkeypatch)
    assert not issubclass(plain.Measures, torchmetrics.Metric)
    preds, target, indexes = tensors(random_lists(90, n_queries=30))
    metric, reference = plain.Measures(NAMES, ties="stable"), Measures(NAMES, ties="stable")
    assert metric(preds[:50], target[:50], indexes=indexes[:50]) == reference(
        preds[:50], target[:50], indexes=indexes[:50]
    )
    metric.update(preds[50:], target[50:], indexes=indexes[50:])
    reference.update(preds[50:], target[50:], indexes=indexes[50:])
    assert metric.compute() == reference.compute()
    assert plain.Measure("AP", ties="stable")(preds, target, indexes=indexes).shape == ()
    with pytest.raises(fastndcg.OptionTypeError, match="Measures got unknown option") as caught:
        plain.Measures(["AP"], sync_on_compute=False)
    assert "relevance_level" in caught.value.fix
