r"""Presets: other tools' NDCG definitions by name, so that their per-query numbers come out.

Every tool fixes the choices of :func:`fastndcg.ndcg` its own way (gain, tie order, where the
ideal ranking comes from, what a query without relevant items scores, score precision, how
queries are averaged). A preset is that set of choices under the tool's name::

    fastndcg.ndcg_run(qrels, run, preset="trec_eval", k=10)   # trec_eval -m ndcg_cut.10

``preset=`` is accepted by :func:`fastndcg.ndcg`, :func:`fastndcg.ndcg_table`,
:func:`fastndcg.ndcg_parquet` and :func:`fastndcg.ndcg_run`; options given alongside override
the preset's. :func:`presets` lists them; the documentation (``docs/user-guide/presets.md``)
has the side-by-side table.

Two settings exist for the tools' sake and are accepted by those four functions, with or
without a preset:

- ``aggregate`` also takes a tool's own averaging rule. With per-query weights :math:`w_q`,
  NDCG :math:`v_q` and :math:`Z` the queries whose IDCG is 0:

  - ``"lightgbm"``: :math:`\big(\sum_{q \notin Z} w_q v_q + \sum_{q \in Z} v_q\big) /
    \sum_q w_q` (a query without relevant items adds its value unweighted);
  - ``"xgboost"``: the same with weights rounded to float32 as XGBoost holds them, capped at
    1; above :math:`1 + 10^{-6}` XGBoost stops with an error, and so does this rule;
  - ``"keras_rs"``: :math:`\sum_q \omega_q v_q / \sum_q \omega_q` with keras-rs's list
    weights :math:`\omega_q = \sum_i w_i G_i / \sum_i G_i` (item weights :math:`w_i`, gains
    :math:`G_i`); a list without gain gets the mean weight of the lists with gain (1 if
    there is none), a list whose weights sum to 0 gets 0; 0 when every weight is 0.

- ``decimals``: per-query values are rounded to that many decimals (correctly rounded, as
  ``printf`` does) before averaging, for tools whose numbers pass through text (gdeval).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from fastndcg._core.options import PRESET_SETTINGS
from fastndcg._core.vocabulary import listed
from fastndcg._errors import OptionError, OptionTypeError

SETTINGS = PRESET_SETTINGS  # what a preset may set, in the order listings show them
EXP2_TABLE = tuple(float(2**g - 1) for g in range(31))  # LightGBM's default label_gain


@dataclass(frozen=True)
class Preset:
    """A tool's NDCG definition: the options that reproduce its per-query values.

    ``preset=`` takes a registered name or a Preset of one's own, e.g. a team's definition:
    ``Preset("ours", "our dashboards", {"k": 10, "gain": "exp2", "ties": "stable"})``.

    Attributes
    ----------
    name : str
        What ``preset=`` takes.
    tool : str
        The tool, version and measure(s) reproduced.
    options : dict
        The settings (options of :func:`fastndcg.ndcg` and :func:`fastndcg.ndcg_run`, plus
        ``decimals`` and tool aggregates); options passed alongside the preset override them.
    flags : str
        How the tool's own switches translate into options.
    parity : str
        Where parity is claimed, and its limits.
    """

    name: str
    tool: str
    options: Mapping[str, Any] = field(default_factory=dict)
    flags: str = ""
    parity: str = ""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.options) - set(SETTINGS))
        if unknown:
            raise OptionError(
                f"preset {self.name!r} sets unknown option(s) {', '.join(unknown)}",
                option="preset",
                value=self.name,
                fix=f"a preset sets {', '.join(SETTINGS)}",
            )
        ordered = sorted(self.options.items(), key=lambda item: SETTINGS.index(item[0]))
        object.__setattr__(self, "options", MappingProxyType(dict(ordered)))

    def __repr__(self) -> str:
        settings = ", ".join(f"{key}={_short(value)}" for key, value in self.options.items())
        return f"Preset({self.name!r}: {self.tool}; {settings})"


def _short(value: Any) -> str:
    """A setting as shown in listings (LightGBM's 31-entry gain table in short)."""
    if isinstance(value, tuple) and value == EXP2_TABLE:
        return "[0, 1, 3, ..., 2**30 - 1]"
    return repr(list(value) if isinstance(value, tuple) else value)


_TREC = dict(
    k=None,
    gain="linear",
    discount="log2",
    ideal="global",
    ties="docid_desc",
    zero_idcg="zero",
    aggregate="mean",
)
_TREC_FLAGS = (
    "-c: missing='zero'; without -c: missing='skip'; -J: judged_only=True; -M n: max_docs=n; "
    "-m ndcg_cut.k: k=k; printed (%6.4f) values: decimals=4"
)
_LIST = dict(discount="log2", ideal="recall")

_REGISTRY = (
    Preset(
        "trec_eval",
        "trec_eval 10.0: ndcg (k=None) and ndcg_cut.k (k=k)",
        dict(_TREC, score_dtype="float64"),
        _TREC_FLAGS,
        "per query against trec_eval 10's own expected outputs (4 decimals) and, where float32 "
        "scores order the same, against pytrec_eval at 1e-12",
    ),
    Preset(
        "trec_eval9",
        "trec_eval 9.0.8: ndcg, ndcg_cut.k (scores held as float32)",
        dict(_TREC, score_dtype="float32"),
        _TREC_FLAGS,
        "per query against pytrec_eval (which vendors 9.0.8) at 1e-12",
    ),
    Preset(
        "pytrec_eval",
        "pytrec_eval / pytrec-eval-terrier: 'ndcg', 'ndcg_cut_k' (trec_eval 9.0.8 inside)",
        dict(_TREC, score_dtype="float32"),
        "ndcg_cut_k: k=k; judged_docs_only_flag: judged_only=True; judged queries absent from "
        "the run (left out): missing='skip'; pytrec_eval returns no mean",
        "per query at 1e-12",
    ),
    Preset(
        "ir_measures",
        "ir_measures nDCG, nDCG@k (pytrec_eval provider)",
        dict(_TREC, score_dtype="float32"),
        "nDCG@k: k=k; judged_only=True: judged_only=True; gains={label: gain}: gain={...}; "
        "the mean over every judged query (absent from the run: 0): missing='zero'",
        "per query and mean at 1e-12",
    ),
    Preset(
        "gdeval",
        "gdeval.pl (TREC Web track) as ir_measures runs it for nDCG(dcg='exp-log2')@k",
        dict(
            _TREC,
            k=20,
            gain="exp2",
            score_dtype="float64",
            decimals=5,
        ),
        "k: the script's k argument (20 in the Web track); judged queries absent from the run "
        "(scored 0): missing='zero'",
        "per query exactly (values rounded to 5 decimals), where gdeval runs: numeric query "
        "ids and labels <= 4 (it cuts ids at the last '-', and ir_measures then scores the "
        "real ids 0)",
    ),
    Preset(
        "sklearn",
        "scikit-learn ndcg_score",
        dict(
            _LIST,
            k=None,
            gain="linear",
            ties="average",
            zero_idcg="zero",
            aggregate="mean",
            score_dtype="float64",
        ),
        "k: k; sample_weight: weights; fastndcg.ndcg_score is a drop-in with ignore_ties",
        "per query and mean at 1e-12",
    ),
    Preset(
        "torchmetrics",
        "torchmetrics RetrievalNormalizedDCG (float32 scores and arithmetic)",
        dict(
            _LIST,
            k=None,
            gain="linear",
            ties="average",
            zero_idcg="zero",
            aggregate="mean",
            score_dtype="float32",
        ),
        "top_k: k; empty_target_action 'neg'/'pos'/'skip'/'error': zero_idcg='zero'/'one'/"
        "'skip'/'error'",
        "per query within float32 accumulation error (fastndcg adds in float64)",
    ),
    Preset(
        "keras_rs",
        "keras_rs.metrics.NDCG (float32; random tie order)",
        dict(
            _LIST,
            k=None,
            gain="exp2",
            ties="random",
            zero_idcg="zero",
            aggregate="keras_rs",
            score_dtype="float32",
        ),
        "k: k; gain_fn, rank_discount_fn: gain, discount; sample_weight: weights (per list, or "
        "per item for 2-D input); items with label < 0 or weight <= 0 are dropped (2-D input)",
        "per list within float32 accumulation error, on lists without tied scores (keras-rs "
        "shuffles ties at random even with shuffle_ties=False)",
    ),
    Preset(
        "lightgbm",
        "LightGBM ndcg@k (lambdarank metric)",
        dict(
            _LIST,
            k=(1, 2, 3, 4, 5),
            gain=EXP2_TABLE,
            ties="stable",
            zero_idcg="one",
            aggregate="lightgbm",
            score_dtype="float64",
        ),
        "eval_at: k; label_gain: gain=[...]",
        "per query and mean at 1e-12",
    ),
    Preset(
        "xgboost",
        "XGBoost ndcg, ndcg@n, ndcg@n- (float32 predictions; plain ndcg is ndcg@32)",
        dict(
            _LIST,
            k=32,
            gain="exp2",
            ties="stable",
            zero_idcg="one",
            aggregate="xgboost",
            score_dtype="float32",
        ),
        "ndcg@n: k=n; ndcg@n-: zero_idcg='zero'; ndcg_exp_gain=false: gain='linear'",
        "per query and mean at 1e-12 (fractional labels: float32-representable ones)",
    ),
    Preset(
        "ranx",
        "ranx ndcg, ndcg@k (Run/Qrels objects)",
        dict(
            _TREC,
            ties="stable",
            score_dtype="float64",
        ),
        "ndcg@k: k=k; ndcg_burges: gain='exp2'; -lN (rel_lvl): gain=ranx_gain(N) or "
        "ranx_gain(N, burges=True); make_comparable=True: missing='zero'",
        "per query at 1e-12 on lists without tied scores, and on tied lists of up to 15 "
        "documents (ranx's quicksort scrambles ties in longer lists)",
    ),
)
PRESETS: Mapping[str, Preset] = MappingProxyType({preset.name: preset for preset in _REGISTRY})


def presets() -> dict[str, Preset]:
    """The presets by name, each with its tool, settings, switches and parity claim.

    Returns
    -------
    dict of str to Preset
        In the order of the presets table of the documentation.

    Examples
    --------
    >>> import fastndcg
    >>> fastndcg.presets()["lightgbm"].options["zero_idcg"]
    'one'
    """
    return dict(PRESETS)


def get_preset(name: Any) -> Preset:
    """The preset called ``name``; a ValueError listing the valid names otherwise."""
    if isinstance(name, Preset):
        return name
    if isinstance(name, str) and name in PRESETS:
        return PRESETS[name]
    raise OptionError(
        f"unknown `preset={name!r}`",
        option="preset",
        value=name,
        fix=f"valid presets are {listed(tuple(PRESETS))}",
    )


class ranx_gain:  # named after the ranx parameter it reproduces
    r"""Gain of ranx's ``-lN`` metrics: grades below ``rel_lvl`` count 0, others keep theirs.

    ``G(g) = g`` (or :math:`2^g - 1` with ``burges=True``) for :math:`g \ge` ``rel_lvl``,
    else 0. ranx removes judgments below ``rel_lvl`` from both the ranking and the ideal,
    which is what a gain of 0 does.

    Examples
    --------
    >>> import fastndcg
    >>> r = fastndcg.ndcg([2, 1, 3], [0.9, 0.8, 0.7], gain=fastndcg.ranx_gain(2))
    >>> round(float(r), 4)  # gains 2, 0, 3: DCG 2 + 3/2, IDCG 3 + 2/log2(3)
    0.8212
    """

    def __init__(self, rel_lvl: int = 1, burges: bool = False) -> None:
        if isinstance(rel_lvl, bool) or not isinstance(rel_lvl, numbers.Integral):
            raise OptionTypeError(
                "rel_lvl must be an int", option="rel_lvl", value=rel_lvl, fix=f"got {rel_lvl!r}"
            )
        self.rel_lvl = int(rel_lvl)
        self.burges = bool(burges)

    def __call__(self, grades: np.ndarray) -> np.ndarray:
        grades = np.asarray(grades, dtype=np.float64)
        gains = np.exp2(grades) - 1.0 if self.burges else grades
        return np.where(grades >= self.rel_lvl, gains, 0.0)

    def __repr__(self) -> str:
        return f"ranx_gain({self.rel_lvl}{', burges=True' if self.burges else ''})"
