"""The Examples sections of the public docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "fastndcg._api",
    "fastndcg._sklearn",
    "fastndcg._tables",
    "fastndcg.stream",
    "fastndcg._compare.runs",
    "fastndcg._compare.conveniences",
    "fastndcg._compare.explain",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{name} has no examples"
    assert failures == 0
