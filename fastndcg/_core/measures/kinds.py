"""The measures' vocabulary: every kind of measure, and every name the tools give it.

One :class:`Kind` record per measure, in the order trec_eval prints its measures (the others
after them), and one table of names per tool: trec_eval's (``-m`` names and their printed
forms), ir_measures' and ranx's. The parsers (:mod:`.names`), the measure record
(:mod:`.model`), the tools' definitions (:mod:`.definitions`) and trec_eval's layout
(:mod:`.trec_layout`) read these tables and nothing else; a new name is added here only.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Kind:
    """A kind of measure: what its name stands for and what it takes.

    Attributes
    ----------
    name : str
        The canonical name (ir_measures' spelling where ir_measures has the measure).
    title : str
        What the measure is, in words.
    cutoff : bool
        Whether it takes a cutoff ``k`` (the top ``k`` of the ranking); without one it reads
        the whole ranking.
    relevant : bool
        Whether it divides by the number of relevant judgments (or, for nDCG, by the ideal
        DCG): a query without any is then 0/0, and the definitions' ``no_relevant`` rule says
        what it gets.
    count : bool
        Whether the value is a count, summed over queries rather than averaged.
    param : str or None
        The name of the number it takes besides the cutoff: ``"p"`` (RBP's persistence) or
        ``"recall"`` (IPrec's recall level).
    aggregate : str
        How per-query values become one: ``"mean"``, ``"sum"`` or ``"geometric"``.
    """

    name: str
    title: str
    cutoff: bool = True
    relevant: bool = False
    count: bool = False
    param: str | None = None
    aggregate: str = "mean"


_KINDS = (
    Kind("NumQ", "number of queries", cutoff=False, count=True, aggregate="sum"),
    Kind("NumRet", "number of documents retrieved", count=True, aggregate="sum"),
    Kind("NumRel", "number of relevant judgments", cutoff=False, count=True, aggregate="sum"),
    Kind("NumRelRet", "number of relevant documents retrieved", count=True, aggregate="sum"),
    Kind("AP", "average precision", relevant=True),
    Kind("GMAP", "average precision, averaged geometrically", cutoff=False, relevant=True,
         aggregate="geometric"),
    Kind("Rprec", "precision at R, the number of relevant judgments", cutoff=False,
         relevant=True),
    Kind("Bpref", "binary preference", cutoff=False, relevant=True),
    Kind("RR", "reciprocal rank of the first relevant document"),
    Kind("IPrec", "interpolated precision at a recall level", cutoff=False, relevant=True,
         param="recall"),
    Kind("P", "precision"),
    Kind("R", "recall", relevant=True),
    Kind("DCG", "discounted cumulative gain"),
    Kind("nDCG", "normalised discounted cumulative gain", relevant=True),
    Kind("Success", "whether a relevant document is retrieved"),
    Kind("F1", "harmonic mean of precision and recall", relevant=True),
    Kind("RBP", "rank-biased precision", param="p"),
    Kind("RBPResid", "rank-biased precision's residual (unjudged documents and the tail)",
         cutoff=False, param="p"),
    Kind("Unjudged", "fraction of the top k without a judgment (trec_eval's unj)"),
    Kind("Judged", "fraction of the top k with a judgment"),
    Kind("ERR", "expected reciprocal rank (cascade model, graded)"),
)  # fmt: skip
KINDS: MappingProxyType[str, Kind] = MappingProxyType({kind.name: kind for kind in _KINDS})

# Gains a name can fix for nDCG and DCG (otherwise the call's gain applies).
GAINS = ("linear", "exp2")

# -- trec_eval --------------------------------------------------------------------------------

# trec_eval's measure names -> (kind, whether the parameters are cutoffs of that kind). Names
# whose parameters are not cutoffs: iprec_at_recall (recall levels), rbp and rbp_resid
# (``p=...`` pairs). In the order trec_eval computes and prints them (its measures.c table).
TREC_NAMES: MappingProxyType[str, tuple[str, bool]] = MappingProxyType(
    {
        "num_q": ("NumQ", False),
        "num_ret": ("NumRet", False),
        "num_rel": ("NumRel", False),
        "num_rel_ret": ("NumRelRet", False),
        "map": ("AP", False),
        "gm_map": ("GMAP", False),
        "Rprec": ("Rprec", False),
        "bpref": ("Bpref", False),
        "recip_rank": ("RR", False),
        "iprec_at_recall": ("IPrec", False),
        "P": ("P", True),
        "recall": ("R", True),
        "dcg": ("DCG", False),
        "ndcg": ("nDCG", False),
        "ndcg_cut": ("nDCG", True),
        "map_cut": ("AP", True),
        "success": ("Success", True),
        "set_P": ("P", False),
        "set_recall": ("R", False),
        "set_F": ("F1", False),
        "rbp": ("RBP", False),
        "rbp_resid": ("RBPResid", False),
        "unj": ("Unjudged", True),
    }
)
# (kind, whether the parameters are cutoffs) -> trec_eval's name: how a measure is printed
TREC_NAME_OF: MappingProxyType[tuple[str, bool], str] = MappingProxyType(
    {meaning: name for name, meaning in TREC_NAMES.items()}
)
# What a trec_eval name without parameters means: its default cutoffs or recall levels.
_TREC_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_DEFAULTS: MappingProxyType[str, tuple[Any, ...]] = MappingProxyType(
    {
        "P": _TREC_CUTS,
        "recall": _TREC_CUTS,
        "ndcg_cut": _TREC_CUTS,
        "map_cut": _TREC_CUTS,
        "success": (1, 5, 10),
        "unj": (5, 10, 20),
        "iprec_at_recall": tuple(level / 10 for level in range(11)),
    }
)
# ``trec_eval Q R`` with no -m: its "official" measures, in the order it prints them.
TREC_OFFICIAL = (
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
# Measures trec_eval prints in its summary only (not per query with -q).
TREC_SUMMARY_ONLY = ("num_q", "gm_map")

# -- ir_measures ------------------------------------------------------------------------------

# ir_measures' names and aliases -> kind. The canonical names of the kinds ir_measures lacks
# (DCG, F1, GMAP, RBPResid, Unjudged) are read in this syntax too.
IR_MEASURES_NAMES: MappingProxyType[str, str] = MappingProxyType(
    {
        **{kind.name: kind.name for kind in _KINDS},
        "NDCG": "nDCG",
        "Precision": "P",
        "Recall": "R",
        "MAP": "AP",
        "MRR": "RR",
        "RPrec": "Rprec",
        "BPref": "Bpref",
    }
)
# ir_measures' set measures: the kind over the whole ranking (they take no cutoff).
IR_MEASURES_SETS: MappingProxyType[str, str] = MappingProxyType(
    {"SetP": "P", "SetR": "R", "SetF": "F1"}
)
# NumRelRet is ir_measures' NumRet(rel=1): NumRet with a relevance level counts relevant ones.

# -- ranx -------------------------------------------------------------------------------------

# ranx's metric names -> (kind, the gain the name spells or None). A name fixes the gain only
# when it spells one, as ``ndcg_burges`` does; otherwise the call's (or the preset's) applies.
# ``rbp`` takes p as the digits after "." or "@" (``rbp.95`` is p = 0.95); the others take
# ``@k``; all take ``-lN``.
RANX_NAMES: MappingProxyType[str, tuple[str, str | None]] = MappingProxyType(
    {
        "hits": ("NumRelRet", None),
        "hit_rate": ("Success", None),
        "precision": ("P", None),
        "recall": ("R", None),
        "f1": ("F1", None),
        "r-precision": ("Rprec", None),
        "mrr": ("RR", None),
        "map": ("AP", None),
        "dcg": ("DCG", None),
        "dcg_burges": ("DCG", "exp2"),
        "ndcg": ("nDCG", None),
        "ndcg_burges": ("nDCG", "exp2"),
        "bpref": ("Bpref", None),
        "rbp": ("RBP", None),
    }
)


def all_names() -> tuple[str, ...]:
    """Every base name of every syntax (for suggestions), each once."""
    names = [*TREC_NAMES, *IR_MEASURES_NAMES, *IR_MEASURES_SETS, *RANX_NAMES]
    return tuple(dict.fromkeys(names))
