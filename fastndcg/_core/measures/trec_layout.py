"""trec_eval's printed layout: what ``trec_eval [-q] qrels run`` writes, line for line.

Each line is ``%-22s<tab>%s<tab>%s``: the measure's printed name padded to 22 characters, the query
id (``all`` for the summary), the value (counts as integers, the rest with ``%6.4f``). With
``-q`` every query's lines come first, in the order given, then the summary, which starts with
the run's id. Measures are printed in trec_eval's order (its table of measures, then the
cutoffs or levels ascending), those trec_eval lacks after them in the order given; ``num_q`` and
``gm_map`` are printed in the summary only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fastndcg._core.measures.kinds import (
    KINDS,
    TREC_NAME_OF,
    TREC_NAMES,
    TREC_OFFICIAL,
    TREC_SUMMARY_ONLY,
)
from fastndcg._core.measures.model import Measure
from fastndcg._core.measures.names import parse_measures

_TREC_ORDER = {name: place for place, name in enumerate(TREC_NAMES)}


def trec_eval_measures() -> tuple[Measure, ...]:
    """The measures ``trec_eval qrels run`` prints when no ``-m`` is given (its "official")."""
    return parse_measures(list(TREC_OFFICIAL))


def trec_eval_order(measures: Sequence[Measure]) -> list[int]:
    """The positions of ``measures`` in the order trec_eval prints them."""

    def key(position: int) -> tuple:
        measure = measures[position]
        name = TREC_NAME_OF.get((measure.kind, measure.cutoff is not None))
        if name is None:  # trec_eval lacks it: after its own, in the order given
            return (len(_TREC_ORDER), position, 0.0)
        number = measure.cutoff if measure.cutoff is not None else measure.param
        return (_TREC_ORDER[name], 0, -math.inf if number is None else number)

    return sorted(range(len(measures)), key=key)


def summarize(measure: Measure, values: np.ndarray, gm_floor: float = 1e-5) -> float:
    """The summary trec_eval prints of per-query ``values``.

    The sum of a count, the geometric mean of GMAP (AP floored at ``gm_floor``), else the
    mean; NaN values (skipped queries) are left out.
    """
    kind = KINDS[measure.kind]
    if kind.aggregate == "sum":
        return float(np.nansum(values))
    skipped = np.isnan(values)
    # the kept values, contiguous (a copy only where some are skipped or they are strided)
    kept = values[~skipped] if skipped.any() else np.ascontiguousarray(values)
    if kept.size == 0:
        return math.nan
    if kind.aggregate == "geometric":
        return float(np.exp(np.mean(np.log(np.maximum(kept, gm_floor)))))
    return float(np.mean(kept))


def format_trec_eval(
    measures: Sequence[Measure],
    query_ids: Sequence[str],
    per_query: np.ndarray,
    *,
    run_id: str | None = None,
    queries: bool = False,
    summary: Sequence[float] | None = None,
) -> str:
    """The text trec_eval prints for these values.

    Parameters
    ----------
    measures : sequence of Measure
        The measures (columns of ``per_query``); :func:`trec_eval_measures` are trec_eval's
        default ones.
    query_ids : sequence of str
        The queries (rows of ``per_query``), in the order their lines are printed.
    per_query : ndarray of shape (n_queries, n_measures)
        Each query's value of each measure (GMAP's is the query's AP; NaN: a skipped query).
    run_id : str, optional
        The run's id (its tag column), printed first in the summary as trec_eval's ``runid``.
    queries : bool, default=False
        Print each query's lines before the summary (trec_eval's ``-q``).
    summary : sequence of float, optional
        The summary values, aligned with ``measures``; by default :func:`summarize` of each
        column.

    Returns
    -------
    str
        The lines, each ending with a newline.
    """
    values = np.asarray(per_query, dtype=np.float64).reshape(len(query_ids), len(measures))
    order = trec_eval_order(measures)
    lines = []
    if queries:
        printed = [j for j in order if _trec_base(measures[j]) not in TREC_SUMMARY_ONLY]
        for row, query in enumerate(query_ids):
            lines.extend(_line(measures[j], str(query), values[row, j]) for j in printed)
    if run_id is not None:
        lines.append(f"{'runid':<22}\tall\t{run_id}")
    for j in order:
        total = summarize(measures[j], values[:, j]) if summary is None else summary[j]
        lines.append(_line(measures[j], "all", total))
    return "".join(line + "\n" for line in lines)


def _trec_base(measure: Measure) -> str | None:
    return TREC_NAME_OF.get((measure.kind, measure.cutoff is not None))


def _line(measure: Measure, query: str, value: float) -> str:
    if KINDS[measure.kind].count and not math.isnan(value):
        shown = str(round(value))
    else:
        shown = f"{value:6.4f}"
    return f"{measure.trec_name():<22}\t{query}\t{shown}"
