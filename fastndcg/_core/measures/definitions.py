"""What each tool computes for each measure: its choices, declared as data.

The tools agree on the formulas and disagree on the details: which denominator precision,
recall and AP@k divide by, what bpref counts as judged non-relevant, RBP's gains and default
persistence, how IPrec turns a recall level into a number of documents, the tie order and score
precision of the ranking, and which query a mean counts. A tool's definition
(:class:`MeasureRules`) is one value for each of those choices, and which of its measures it
computes where (:class:`Route`, :class:`Provider`: ir_measures hands measures to providers that
rank differently). The names match the NDCG presets (:mod:`fastndcg._presets.registry`), whose
NDCG options still apply to nDCG.

Where a tool has a defect, its rules say whether fastndcg reproduces it (only where per-query
parity needs it) or not, in :attr:`MeasureRules.notes`; nothing is reproduced silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType

from fastndcg._core.measures.kinds import KINDS
from fastndcg._core.measures.model import Measure
from fastndcg._core.vocabulary import listed
from fastndcg._errors import OptionError

# the tie orders the tools use: score descending, then document id descending (trec_eval), or
# ascending (ir_measures' msmarco and judged providers), or the run's own order (a stable sort)
TIE_ORDERS = ("docid_desc", "docid_asc", "stable")
# the choices, and the values each takes (checked when a MeasureRules is made)
CHOICES = MappingProxyType(
    {
        "precision_denominator": ("k", "min(k,n)"),  # P@k when the ranking has n < k documents
        "recall_denominator": ("R", "min(R,k)"),  # R@k: R relevant judgments
        "ap_denominator": ("R", "min(R,k)"),  # AP@k
        "judged_denominator": ("min(k,n)", "k"),  # Judged@k
        "judged_labels": ("any", "nonnegative"),  # Judged@k: which judgments count
        "bpref_negative": ("skip", "nonrelevant"),  # bpref: a negative grade
        "bpref_no_nonrelevant": ("one", "nan"),  # bpref when no judgment is non-relevant
        "rbp_gain": ("scaled", "raw", "binary"),  # RBP's gain of a grade
        "iprec_rounding": ("nearest", "plus_0.9"),  # IPrec: documents for a recall level
        "gm_per_query": ("ap", "log"),  # GMAP's per-query value
        "no_relevant": ("zero", "skip", "one", "error", None),  # 0/0 (None: the call's)
        "missing": ("error", "zero", "skip", None),  # judged queries absent from the run
        "absent": ("ranking", "zero"),  # what missing='zero' scores: an empty ranking, or 0
    }
)


@dataclass(frozen=True)
class Provider:
    """How a tool, or one of ir_measures' providers, ranks documents and reports values.

    Attributes
    ----------
    name : str
        The provider (the tool itself, or ir_measures' ``msmarco``, ``judged``, ``gdeval``,
        ``cwl_eval``).
    ties : str or None
        The order of tied scores: one of :data:`TIE_ORDERS`; None: the call's ``ties``.
    score_dtype : str or None
        ``"float64"``, or ``"float32"`` for tools that hold scores as float32 (ties that
        float32 creates are then ties); None: the call's.
    decimals : int or None
        Values rounded to this many decimals, for providers whose numbers pass through text.
    """

    name: str
    ties: str | None = "docid_desc"
    score_dtype: str | None = "float64"
    decimals: int | None = None


@dataclass(frozen=True)
class Route:
    """Which provider computes measures of ``kind`` (with or without a cutoff, which gains).

    ``cutoff``: True when the tool needs one, False when it takes none, None for either.
    ``gains``: the gains (of nDCG and DCG) it takes, None standing for the call's.
    ``needs_rel``: the tool computes it only with a relevance level in the name.
    """

    kind: str
    provider: str
    cutoff: bool | None = None
    gains: tuple[str | None, ...] = (None, "linear")
    needs_rel: bool = False

    def takes(self, measure: Measure) -> bool:
        """Whether this route computes ``measure``."""
        has_cutoff = measure.cutoff is not None
        return (
            measure.kind == self.kind
            and (self.cutoff is None or self.cutoff == has_cutoff)
            and measure.gain in self.gains
            and (measure.rel is not None or not self.needs_rel)
        )


@dataclass(frozen=True)
class MeasureRules:
    """A tool's definition of the measures: one value per choice, and where each is computed.

    The choices (values in :data:`CHOICES`; ``k`` the cutoff, ``n`` the documents ranked, ``R``
    the relevant judgments, ``N`` the judged non-relevant ones):

    - ``precision_denominator``: P@k divides by ``k`` or by ``min(k, n)``;
    - ``recall_denominator``, ``ap_denominator``: R@k and AP@k divide by ``R`` or ``min(R, k)``;
    - ``judged_denominator``, ``judged_labels``: Judged@k divides by ``min(k, n)`` or ``k``,
      and counts every judged document (``"any"``, a negative grade too) or those graded >= 0;
    - ``bpref_negative``: a negative grade is skipped and left out of ``N`` (``"skip"``), or is
      a judged non-relevant document (``"nonrelevant"``); ``bpref_no_nonrelevant``: with no
      judged non-relevant document above it a relevant one adds 1 (``"one"``), or, when
      ``N = 0``, NaN (``"nan"``);
    - ``rbp_gain``: the grade divided by the query's largest grade when that is above 1
      (``"scaled"``), the grade itself when at or above the level (``"raw"``), or 1 at or
      above the level (``"binary"``); ``rbp_p``: the default persistence (None: p must be
      given);
    - ``err_max_grade``: ERR's stopping probability of grade ``g`` is
      ``(2**g - 1) / 2**err_max_grade``, and a grade above it is an error;
    - ``iprec_rounding``: IPrec at recall level ``r`` starts at the ``round(r R)``-th
      relevant document (``"nearest"``) or the ``int(r R + 0.9)``-th (``"plus_0.9"``);
    - ``gm_floor``, ``gm_per_query``: GMAP is ``exp(mean(log(max(AP, gm_floor))))``; its
      per-query value is AP (``"ap"``) or the log (``"log"``);
    - ``ndcg_level``: whether grades below the relevance level count 0 in nDCG and DCG;
    - ``no_relevant``: what a measure dividing by ``R`` (or by IDCG) gets when it is 0: the
      values of ``zero_idcg`` (None: the call's);
    - ``missing``: what the tool does with a judged query absent from the run (None: the
      call's; the NDCG presets leave ``missing`` to the call, and the measures follow them);
      ``absent``: what scoring such a query means: an empty ranking (``"ranking"``, trec_eval
      -c: its num_rel still counts) or 0 for every measure, counts included (``"zero"``).

    Attributes
    ----------
    name : str
        The preset's name.
    tool : str
        The tool and version.
    providers : tuple of Provider
        How the tool ranks (the first is the default provider).
    routes : tuple of Route
        The measures the tool has, each with its provider (the first route that takes a
        measure computes it); a measure no route takes is one the tool lacks.
    notes : tuple of str
        The tool's deviations and defects, and whether fastndcg reproduces each.
    """

    name: str
    tool: str
    providers: tuple[Provider, ...]
    routes: tuple[Route, ...]
    precision_denominator: str = "k"
    recall_denominator: str = "R"
    ap_denominator: str = "R"
    judged_denominator: str = "min(k,n)"
    judged_labels: str = "any"
    bpref_negative: str = "skip"
    bpref_no_nonrelevant: str = "one"
    rbp_gain: str = "scaled"
    rbp_p: float | None = 0.9
    err_max_grade: int = 4
    iprec_rounding: str = "nearest"
    gm_floor: float = 1e-5
    gm_per_query: str = "ap"
    ndcg_level: bool = False
    no_relevant: str | None = "zero"
    missing: str | None = "zero"
    absent: str = "ranking"
    notes: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        for choice, valid in CHOICES.items():
            if getattr(self, choice) not in valid:
                raise ValueError(f"{self.name}: {choice}={getattr(self, choice)!r} not in {valid}")
        names = {provider.name for provider in self.providers}
        for provider in self.providers:
            assert provider.ties is None or provider.ties in TIE_ORDERS, provider
        for route in self.routes:
            assert route.provider in names, (self.name, route)

    def route(self, measure: Measure) -> Route | None:
        """The route that computes ``measure``; None when the tool lacks it."""
        return next((route for route in self.routes if route.takes(measure)), None)

    def has(self, measure: Measure) -> bool:
        """Whether the tool computes ``measure``."""
        return self.route(measure) is not None

    def provider(self, measure: Measure) -> Provider:
        """How ``measure`` is ranked and reported; an OptionError when the tool lacks it."""
        route = self.route(measure)
        if route is None:
            have = sorted({route.kind for route in self.routes})
            raise OptionError(
                f"{self.tool} has no measure {measure.name!r} ({measure.canonical})",
                option="measures",
                value=measure.name,
                where=f"preset {self.name!r}",
                fix=f"its measures are {listed(have)}; leave the preset out to compute "
                f"{measure.name!r} with fastndcg's own definition",
            )
        return next(p for p in self.providers if p.name == route.provider)


def _routes(provider: str, *specs: tuple) -> tuple[Route, ...]:
    """Routes to ``provider``: each spec is (kind,) or (kind, cutoff[, gains[, needs_rel]])."""
    return tuple(Route(spec[0], provider, *spec[1:]) for spec in specs)


_ANY_GAIN = (None, "linear", "exp2")
# trec_eval 9.0.8's measures (hence pytrec_eval's); 10.0 adds dcg, rbp, rbp_resid and unj
_TREC9 = (
    ("NumQ",),
    ("NumRet", False),
    ("NumRel",),
    ("NumRelRet", False),
    ("AP",),
    ("GMAP",),
    ("Rprec",),
    ("Bpref",),
    ("RR", False),
    ("IPrec",),
    ("P",),
    ("R",),
    ("nDCG",),
    ("Success", True),
    ("F1", False),
)
_TREC10 = (*_TREC9, ("DCG", False), ("RBP", False), ("RBPResid",), ("Unjudged", True))

_TREC_NOTES = (
    "RR has no cutoff in trec_eval: RR@k is `trec_eval -M k -m recip_rank` (max_docs=k).",
    "A negative qrels grade is 'in the pool, not judged': never relevant, not counted in R or "
    "in bpref's N, unjudged for unj.",
    "gm_map is printed in the summary only: exp of the mean of log(max(AP, 1e-5)).",
    "iprec_at_recall of a ranking left empty by -J is 0/0 (NaN, and a NaN mean); not "
    "reproduced: fastndcg gives 0.",
    "With -c, the num_rel summary line counts every qrels line graded above 0 whatever -l; "
    "not reproduced: the summary is the sum of the per-query values.",
)
TREC_EVAL = MeasureRules(
    "trec_eval",
    "trec_eval 10.0",
    (Provider("trec_eval"),),
    _routes("trec_eval", *_TREC10),
    missing="error",
    notes=(
        *_TREC_NOTES,
        "Without -c a judged query absent from the run stops trec_eval 10 (missing='error'); "
        "-c scores it as an empty ranking (missing='zero').",
        "rbp ignores -l; its gain is the grade, divided by the query's largest grade when "
        "that is above 1. m_rbp.c compares gains with min and max variables it never "
        "initialises (undefined behaviour); fastndcg gives what trec_eval's builds print.",
        "rbp_resid is set only when a retrieved document is unjudged (otherwise 0, though the "
        "tail p**n is not); reproduced, as trec_eval prints it.",
        "iprec_at_recall rounds r*R to the nearest int (since 2023); 9.0.8 adds 0.9 and truncates.",
    ),
)
TREC_EVAL9 = replace(
    TREC_EVAL,
    name="trec_eval9",
    tool="trec_eval 9.0.8",
    providers=(Provider("trec_eval", score_dtype="float32"),),
    routes=_routes("trec_eval", *_TREC9),
    iprec_rounding="plus_0.9",
    missing="skip",
    notes=(
        *_TREC_NOTES,
        "Scores are held as float32: scores float32 cannot tell apart are tied.",
        "A judged query absent from the run is left out (missing='skip'); -c scores it 0.",
    ),
)
PYTREC_EVAL = replace(
    TREC_EVAL9,
    name="pytrec_eval",
    tool="pytrec_eval (trec_eval 9.0.8 inside)",
    gm_per_query="log",
    notes=(
        *TREC_EVAL9.notes,
        "Its per-query gm_map is log(max(AP, 1e-5)) (gm_per_query='log').",
        "Several iprec_at_recall levels in one evaluator can fail with 'duplicate cutoffs "
        "detected' (cvangysel/pytrec_eval#41); fastndcg computes every level.",
    ),
)
IR_MEASURES = MeasureRules(
    "ir_measures",
    "ir_measures 0.4.3 (default pipeline)",
    (
        Provider("pytrec_eval", score_dtype="float32"),
        Provider("msmarco", ties="docid_asc"),
        Provider("judged", ties="docid_asc"),
        Provider("gdeval", decimals=5),
        Provider("cwl_eval", ties="stable"),
    ),
    (
        *_routes("pytrec_eval", *(spec for spec in _TREC9 if spec[0] != "GMAP")),
        *_routes("msmarco", ("RR", True)),
        *_routes("judged", ("Judged",)),
        *_routes("gdeval", ("ERR", True), ("nDCG", True, ("exp2",))),
        *_routes("cwl_eval", ("RBP", False, (None,), True)),
    ),
    rbp_gain="binary",
    rbp_p=0.8,
    iprec_rounding="plus_0.9",
    absent="zero",
    notes=(
        "Its providers rank ties differently (terrierteam/ir_measures#18): RR@k (msmarco) and "
        "Judged@k (judged) by document id ascending on float64 scores; the pytrec_eval "
        "measures by document id descending on float32 scores; RBP (cwl_eval) in run order.",
        "ERR@k and nDCG(dcg='exp-log2')@k come from gdeval.pl: 5 decimals, g_max = 4 whatever "
        "the grades (terrierteam/ir_measures#50), a grade above 4 stops the script (fastndcg: "
        "an error). gdeval cuts query ids at the last '-'; fastndcg does not.",
        "Judged@k divides by min(k, n) and counts negative grades as judged; a run query with "
        "no document divides by 0 in ir_measures (fastndcg: 0).",
        "RBP needs the optional cwl_eval provider and a relevance level: binary gains, p = 0.8 "
        "by default.",
        "NumRel(rel=2) is refused by every provider; fastndcg computes it.",
        "The mean is over every judged query; one absent from the run gets 0 for every "
        "measure, NumRel and NumQ included (absent='zero').",
    ),
)
RANX = MeasureRules(
    "ranx",
    "ranx 0.3.21 (Qrels and Run objects)",
    (Provider("ranx", ties="stable"),),
    _routes(
        "ranx",
        ("nDCG", None, _ANY_GAIN),
        ("DCG", None, _ANY_GAIN),
        ("P",),
        ("R",),
        ("F1",),
        ("RR",),
        ("AP",),
        ("Rprec",),
        ("Bpref",),
        ("Success",),
        ("NumRelRet",),
        ("RBP", False),
    ),
    bpref_negative="nonrelevant",
    bpref_no_nonrelevant="nan",
    rbp_gain="raw",
    rbp_p=None,
    ndcg_level=True,
    missing="error",
    notes=(
        "A Run keeps tied documents in file order in lists of up to 15 tied documents; its "
        "Numba quicksort scrambles longer tied lists (not reproduced).",
        "bpref counts negative grades as judged non-relevant (in N too), and gives NaN when "
        "no judgment is non-relevant (AmenRa/ranx#66): reproduced, as ranx returns it.",
        "bpref with no relevant judgment divides by 0 inside ranx's parallel loop, which can "
        "leave other queries of the batch at 0: not reproduced (the query gets 0).",
        "bpref@k ignores k and rbp.0.95 reads p = 0: the names are refused.",
        "rbp uses the raw grade (values above 1 with grades above 1); -lN keeps grades >= N.",
        "-lN also removes grades below N from nDCG and DCG (trec_eval ignores -l there).",
        "Query sets must be equal (an assertion) unless make_comparable=True (missing='zero').",
    ),
)
GDEVAL = MeasureRules(
    "gdeval",
    "gdeval.pl 1.2a (TREC Web track), as ir_measures runs it",
    (Provider("gdeval", decimals=5),),
    _routes("gdeval", ("ERR", True), ("nDCG", True, (None, "exp2"))),
    notes=(
        "ERR@k: stopping probability (2**g - 1) / 16 (g_max = 4 whatever the grades); a grade "
        "above 4 stops the script (fastndcg: an error); values printed with 5 decimals.",
        "Only grades above 0 are read; a query with none is not printed (scored 0).",
    ),
)
# fastndcg's own definitions, where no preset is named: trec_eval's choices, with the call's
# tie order, score precision, queries without relevant judgments and absent queries
DEFAULT = MeasureRules(
    "fastndcg",
    "fastndcg",
    (Provider("fastndcg", ties=None, score_dtype=None),),
    tuple(Route(kind, "fastndcg", gains=_ANY_GAIN) for kind in KINDS),
    no_relevant=None,
    missing=None,
)

RULES = MappingProxyType(
    {rules.name: rules for rules in (TREC_EVAL, TREC_EVAL9, PYTREC_EVAL, IR_MEASURES, RANX, GDEVAL)}
)


def rules_of(preset: str | None) -> MeasureRules:
    """The measures' definitions of ``preset`` (None: fastndcg's own)."""
    if preset is None:
        return DEFAULT
    if preset not in RULES:
        raise OptionError(
            f"preset {preset!r} defines NDCG only",
            option="preset",
            value=preset,
            fix=f"the presets with measures besides NDCG are {listed(tuple(RULES))}",
        )
    return RULES[preset]
