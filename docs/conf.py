"""Sphinx configuration of fastndcg's documentation (built by ``bash scripts/docs.sh``).

Pages are MyST Markdown (prose) and reStructuredText (pages made by directives). The API
reference comes from the numpydoc docstrings (autosummary + numpydoc); the command-line
reference, the option reference and the benchmark tables come from the code and the benchmark
JSON files through the directives of ``_ext/fastndcg_docs.py``; the figures are drawn by
``figures.py`` at build time.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # the fastndcg of this checkout, not an installed one
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS))  # figures.py

import fastndcg  # noqa: E402

project = "fastndcg"
author = "the fastndcg authors"
copyright = "the fastndcg authors"
release = fastndcg.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax served with the pages: the site reads offline too
    "numpydoc",
    "myst_parser",
    "fastndcg_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# MyST: $...$ and $$...$$ math, ::: fences, heading anchors for links between pages
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# the API reference: one page per public name, from numpydoc docstrings
autosummary_generate = True
autodoc_typehints = "none"  # the docstrings say the types, in numpydoc's words
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

html_theme = "pydata_sphinx_theme"
html_title = f"fastndcg {release}"
html_static_path = ["_static"]
html_css_files = ["fastndcg.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "header_links_before_dropdown": 6,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": [],
    "secondary_sidebar_items": ["page-toc"],
}
# pages without sub-pages need no section navigation: their content gets the width
html_sidebars = {
    page: [] for page in ("index", "getting-started", "cli", "options", "performance", "changelog")
}
pygments_style = "sphinx"
smartquotes = False  # quotes in option values are code: "exp2", not curly quotes
