"""Comparisons: one input under several definitions, and systems against each other.

Modules (no module here imports a kernel; the resampling runs behind the backend seam):

* :mod:`.definitions`: :func:`compare_definitions` and :class:`Comparison`, one input scored
  under several NDCG definitions;
* :mod:`.runs`: :func:`compare` (paired comparison of systems), :func:`compare_runs` and
  :func:`compare_table`, option checks and orchestration;
* :mod:`.align`: pairing queries by id under the missing-query policy;
* :mod:`.significance`: the tests and intervals (Student's t and Wilcoxon from scipy);
  :mod:`.draws`: the resampling in blocks, and the intervals' order statistics in bounded
  memory; :mod:`.multitest`: the adjustments of ``statsmodels``' ``multipletests``;
* :mod:`.rng`: the counter-based random streams (keys and Poisson tables) the backends'
  ``signflip_sums`` and ``bootstrap_sums`` draw from;
* :mod:`.report`: :class:`PairedComparison`; :mod:`.tables`: the table model its printed,
  Markdown and LaTeX tables and those of the explanations share;
* :mod:`.explain`: one query's ranked list, row by row (:mod:`.explanation`: its result and
  rendering); :mod:`.plots`: the figures.
"""

from fastndcg._compare.conveniences import compare_runs, compare_table, system_names
from fastndcg._compare.definitions import ENTRY_POINTS, Comparison, compare_definitions
from fastndcg._compare.report import PairedComparison
from fastndcg._compare.runs import compare

__all__ = [
    "ENTRY_POINTS",
    "Comparison",
    "PairedComparison",
    "compare",
    "compare_definitions",
    "compare_runs",
    "compare_table",
    "system_names",
]
