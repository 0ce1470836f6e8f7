"""The documentation covers the package: every public name has an API page, every module its
page, and the files a user looks for at the top of the repository are there."""

from __future__ import annotations

import re

from doc_blocks import DOCS, ROOT

import fastndcg

MODULES = [
    "fastndcg.stream",
    "fastndcg.trec",
    "fastndcg.synthetic",
    "fastndcg.dask",
    "fastndcg.spark",
    "fastndcg.torch",
    "fastndcg.lightgbm",
    "fastndcg.xgboost",
    "fastndcg.sklearn",
]


def listed(page: str) -> set[str]:
    """The names the autosummary directives of an API page list."""
    names = set()
    for block in (DOCS / "api" / page).read_text().split(".. autosummary::")[1:]:
        body = re.match(r"(?:\n(?:   .*)?)*", block).group(0)  # the directive's indented lines
        names |= set(re.findall(r"^   ([A-Za-z_][\w.]*)$", body, flags=re.M))
    return names


def test_every_public_name_has_an_api_page():
    documented = listed("index.rst")
    public = set(fastndcg.__all__) - {"__version__"}
    assert public <= documented, public - documented
    assert documented <= public, documented - public  # no page for a name that went away


def test_every_public_module_has_an_api_page():
    assert listed("modules.rst") == set(MODULES)


def test_the_top_level_files():
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "the fastndcg authors" in licence
    assert "## 0.1.0" in (ROOT / "CHANGELOG.md").read_text()
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    for what in ("scripts/test.sh", "tests/data", "scripts/bench", "scripts/docs.sh", "numpydoc"):
        assert what in contributing, what
    for name in ("CHANGELOG", "CONTRIBUTING", "ARCHITECTURE"):
        page = DOCS / f"{name.lower()}.md"
        assert f"../{name}.md" in page.read_text(), page  # included, not copied


def test_placeholders_are_marked_for_the_integrator():
    """The comparison and GPU pages describe APIs of other branches: marked until merged."""
    for page, issue in (("comparing-runs.md", 29), ("gpu.md", 28)):
        text = (DOCS / "user-guide" / page).read_text()
        if f"PLACEHOLDER(issue {issue})" in text:
            assert f"END PLACEHOLDER(issue {issue})" in text
            assert "Placeholder for the integrator" in text
