"""Every code example of the documentation and the README runs (see doc_blocks.py for how).

One test per page: its blocks run in order in a fresh directory. A block whose requirement is
missing is reported as skipped, with the requirement; a block that fails fails the page with the
page's line. Then the docstring examples of the modules the API reference documents run too.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import warnings

import pytest
from doc_blocks import ROOT, RUNNABLE, blocks, pages, run_page

import fastndcg

PAGES = [page for page in pages() if page.name != "README.md"]  # tests/api/test_readme.py
# what a page must print: output that shows the examples do what the text says
EXPECTED = {
    "docs/getting-started.md": ["NDCGResult(n_queries=2", "ndcg@10"],
    "docs/user-guide/inputs.md": ["judged queries missing from the run: 1", "n_queries=10000"],
    "docs/user-guide/ties.md": ["average      0.5078", "True True"],
    "docs/user-guide/presets.md": ["trec_eval9", "(baseline)"],
    "docs/user-guide/training-loops.md": ["{'nDCG@10': ", "'RR@10': "],
    "docs/user-guide/measures.md": ["True [ True  True  True  True]", "nDCG@3"],
    "docs/user-guide/comparing-runs.md": [
        "PairedComparison",
        "query 2, NDCG@3",
        "ideal",
        "one family of 4 across the 4 measure(s)",
    ],
}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_examples_run(page, tmp_path, monkeypatch, capsys):
    ran, skipped, out = run_page(page, tmp_path, monkeypatch, capsys)
    key = str(page.relative_to(ROOT))
    for expected in EXPECTED.get(key, []):
        assert expected in out, (key, expected, out[-3000:])
    if skipped and not ran:
        pytest.skip("; ".join(skipped))
    for reason in skipped:  # shown in the summary with -ra
        warnings.warn(f"example not run: {reason}", pytest.PytestWarning, stacklevel=1)


def test_pages_have_examples_and_markers_are_known():
    """The runner finds the blocks (a broken extractor would pass every page)."""
    runnable = [b for page in pages() for b in blocks(page) if b.language in RUNNABLE]
    assert len(runnable) >= 40, len(runnable)
    for block in runnable:
        assert block.code.strip(), block.where
        for name in block.requires:
            assert name in ("java", "cuda") or "." in name or name.isidentifier(), block.where


# the training-loop modules and the library each imports
TRAINING = {
    "fastndcg.torch": "torch",
    "fastndcg.lightgbm": "lightgbm",
    "fastndcg.xgboost": "xgboost",
    "fastndcg.sklearn": "sklearn",
}


def api_modules() -> list[str]:
    """The modules whose objects the API reference documents."""
    names = {"fastndcg.stream", "fastndcg.trec", "fastndcg.synthetic", "fastndcg.dask"}
    names.update(("fastndcg.spark", *TRAINING))
    for name in fastndcg.__all__:
        module = inspect.getmodule(getattr(fastndcg, name))
        if module is not None and module.__name__.startswith("fastndcg"):
            names.add(module.__name__)
    return sorted(names)


@pytest.mark.parametrize("name", api_modules())
def test_docstring_examples_of_the_api_reference(name):
    optional = {"fastndcg.dask": "dask", "fastndcg.spark": "pyspark", **TRAINING}
    if name in optional:
        pytest.importorskip(optional[name], reason=f"{name} needs the {optional[name]} extra")
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0
