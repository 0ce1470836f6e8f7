"""The measures beside NDCG: their names, their records, the tools' definitions of them.

- :mod:`.kinds`: the vocabulary (every kind of measure, every tool's names for it);
- :mod:`.model`: :class:`Measure`, one measure as asked for;
- :mod:`.names`: the parsers of trec_eval's, ir_measures' and ranx's syntax;
- :mod:`.definitions`: what each tool computes for each measure (its choices, as data);
- :mod:`.trec_layout`: trec_eval's printed output.
"""

from fastndcg._core.measures.kinds import KINDS, Kind
from fastndcg._core.measures.model import Measure
from fastndcg._core.measures.names import parse_measure, parse_measures

__all__ = ["KINDS", "Kind", "Measure", "parse_measure", "parse_measures"]
