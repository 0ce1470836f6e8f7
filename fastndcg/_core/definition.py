"""The definition every entry point shares: options resolved once, then layouts scored.

:class:`Definition` holds the checked, data-independent options of :func:`fastndcg.ndcg` (an
NDCG definition) and the backend that computes it. Entry points build a
:class:`~fastndcg._core.layout.Layout` their own way (arrays, Arrow tables, streamed batches,
TREC files), call :meth:`Definition.score` for DCG and IDCG, and :meth:`Definition.finish` to
normalise, apply the zero-IDCG rule and aggregate.
"""

from __future__ import annotations

import numbers
import os
import sys
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fastndcg._backends import ENV_BACKEND, holder_of, resolve_backend
from fastndcg._contract import Backend, Layout, Plan, SharedRanking
from fastndcg._contract.codes import SPLITMIX_GOLDEN, TIE_KEY
from fastndcg._core.aggregate import query_weights, relative_weights
from fastndcg._core.coerce import HostColumns
from fastndcg._core.grouping import Judgments
from fastndcg._core.layout import align_ideal, check_grades, check_scores
from fastndcg._core.options import parse
from fastndcg._core.plan import make_plan
from fastndcg._core.specs import Discount, Gain
from fastndcg._core.vocabulary import IDEALS, KEYED_TIES, TIES, plain
from fastndcg._errors import InputError, OptionError, OptionTypeError
from fastndcg._result import NDCGResult, cutoff_label


@dataclass(frozen=True)
class Definition:
    """Checked options of an NDCG computation (see :func:`fastndcg.ndcg` for their meaning).

    ``backend`` is the backend object that computes it (``backend_name`` its name).
    """

    cutoffs: tuple[int | None, ...]
    gain: Gain
    discount: Discount
    ideal: str
    max_grade: float | None
    ties: str
    seed: int
    zero_idcg: str
    aggregate: str
    backend: Backend
    n_threads: int | None
    score_dtype: str = "float64"
    requested_backend: str = "auto"  # the backend= value ("auto" may follow the inputs)

    @classmethod
    def create(
        cls,
        *,
        k: Any = None,
        gain: Any = "exp2",
        discount: Any = "log2",
        ideal: str = "recall",
        max_grade: float | None = None,
        ties: str = "average",
        seed: int | None = None,
        zero_idcg: str = "skip",
        aggregate: str = "mean",
        backend: str = "auto",
        n_threads: int | None = None,
        score_dtype: str = "float64",
    ) -> Definition:
        """Check every option (before any data is read) and resolve the backend.

        Each value is checked as the option table says (:mod:`fastndcg._core.options`);
        then the options that only go together.
        """
        tie_name = parse("ties", ties)
        if tie_name == "random":
            seed = _random_seed(seed)
        elif seed is not None:
            raise OptionError(
                "`seed=` is only used with `ties='random'`", option="seed", value=seed
            )
        if max_grade is not None and ideal != "max":
            raise OptionError(
                "`max_grade=` is only used with `ideal='max'`", option="max_grade", value=max_grade
            )
        backend_name = parse("backend", backend)
        return cls(
            cutoffs=parse("k", k),
            gain=parse("gain", gain),
            discount=parse("discount", discount),
            ideal=parse("ideal", ideal),
            max_grade=max_grade,
            ties=tie_name,
            seed=seed or 0,
            zero_idcg=parse("zero_idcg", zero_idcg),
            aggregate=parse("aggregate", aggregate),
            backend=resolve_backend(backend_name),
            n_threads=parse("n_threads", n_threads),
            score_dtype=parse("score_dtype", score_dtype),
            requested_backend=backend_name,
        )

    @property
    def backend_name(self) -> str:
        """The name of the backend (as ``backend=`` takes it)."""
        return self.backend.name

    def threads(self):
        """Context manager applying ``n_threads`` for the duration of a computation."""
        return self.backend.threads(self.n_threads)

    def check_tie_keys(self, known: bool) -> None:
        """A tie rule on document ids needs them (``known``): only TREC runs carry them."""
        if self.ties in KEYED_TIES and not known:
            raise OptionError(
                f"`ties={self.ties!r}` orders ties by document id, which only TREC runs carry "
                "(fastndcg.ndcg_run)",
                option="ties",
                value=self.ties,
                fix="pass another tie rule",
            )

    def check_ideal_inputs(
        self, ideal_grades: Any = None, ideal_qid: Any = None, ideal_offsets: Any = None
    ) -> None:
        """Judgment lists go with ``ideal="global"`` and nothing else."""
        given = not (ideal_grades is None and ideal_qid is None and ideal_offsets is None)
        if given and self.ideal != "global":
            raise OptionError(
                "`ideal_grades`/`ideal_qid`/`ideal_offsets` are judgment lists for "
                f"`ideal='global'`; they are not used with `ideal={self.ideal!r}`",
                option="ideal",
                value=self.ideal,
            )

    def score(
        self,
        layout: Layout,
        *,
        shared: SharedRanking | None = None,
        rows_judged: bool = True,
        **inputs: Any,
    ) -> tuple[np.ndarray, np.ndarray]:
        """DCG and IDCG of every query of ``layout`` at every cutoff (call inside threads()).

        ``inputs`` as for :meth:`plan`; ``shared``: where the backend may write its ranking
        (:attr:`~fastndcg._contract.Plan.shared`). ``rows_judged``: every row is one of its
        query's judgments, so with ``ideal="global"`` an NDCG above 1 means judgment lists that
        lack rows given, and a warning says so (:func:`_warn_above_ideal`); False for TREC runs,
        whose unjudged documents are rows without a judgment. Scores not checked yet
        (``layout.scores_checked``) are checked by the kernel as it reads them; a NaN or
        infinite one raises a ValueError here.
        So are float grades not scanned yet (``layout.grades_checked``) where the kernel counts
        every one for IDCG (exp2 or linear gains, the ideal from the query's own rows): the
        plan presumes them integers 0..7, and on any other the grades are scanned (a bad one
        raises) and scored again.
        """
        layout = self.held_scores(layout)
        presume = not layout.grades_checked and self.gain.kind in ("exp2", "linear")
        presume = presume and self.ideal == "recall"
        try:
            plan = self.plan(layout, presumed_grades=presume, **inputs)
        except OptionError:
            if not presume:
                raise
            plan = None  # the presumed gains may not fit the discounts: the real ones decide
        flagged = 1
        if plan is not None:
            if shared is not None:
                plan = replace(plan, shared=shared)
            dcg, idcg, flagged = self.backend.score(plan)
        if flagged and not layout.grades_checked:
            layout = check_grades(layout, self.backend)
            return self.score(layout, shared=shared, rows_judged=rows_judged, **inputs)
        if flagged and not layout.scores_checked:
            check_scores(layout, self.backend)
        if self.ideal == "global" and rows_judged and plan is not None:
            _warn_above_ideal(self.cutoffs, layout.query_ids, dcg, idcg, plan.discount)
        return dcg, idcg

    def plan(
        self,
        layout: Layout,
        *,
        ideal_grades: Any = None,
        ideal_qid: Any = None,
        ideal_offsets: Any = None,
        judgments: Judgments | None = None,
        tie_key: np.ndarray | None = None,
        row_base: int = 0,
        presumed_grades: bool = False,
    ) -> Plan:
        """The kernel inputs for ``layout`` (its scores as held: see :meth:`held_scores`).

        Judgment lists for ``ideal="global"`` come as arrays or as prebuilt ``judgments``.
        ``row_base`` is the stream position of the layout's first row, so that random tie keys
        of a streamed piece equal those of the whole input. Grades not scanned yet are scanned
        first, unless ``presumed_grades`` (see :meth:`score`).
        """
        if not presumed_grades:
            layout = check_grades(layout, self.backend)
        self.check_tie_keys(tie_key is not None)
        ideal = None
        if self.ideal == "global":
            if judgments is not None:
                ideal = judgments.for_queries(layout.query_ids)
            else:
                ideal = align_ideal(layout, ideal_grades, ideal_qid, ideal_offsets, self.backend)
        tie_mode = TIE_KEY if self.ties in KEYED_TIES else TIES[self.ties]
        return make_plan(
            layout,
            cutoffs=self.cutoffs,
            gain=self.gain,
            discount=self.discount,
            tie_mode=tie_mode,
            tie_key=tie_key,
            seed=(self.seed + row_base * SPLITMIX_GOLDEN) % (1 << 64),
            ideal_mode=IDEALS[self.ideal],
            ideal=ideal,
            max_grade=self.max_grade,
        )

    def for_inputs(self, *inputs: Any) -> Definition:
        """The definition for these inputs.

        ``backend="auto"`` picks the backend whose memory holds one of them (a GPU's: cuda),
        unless ``FASTNDCG_BACKEND`` names a backend (whose errors such inputs then meet).
        """
        if self.requested_backend != "auto" or (os.environ.get(ENV_BACKEND) or "auto") != "auto":
            return self
        holder = holder_of(*inputs)
        if holder is None or holder == self.backend.name:
            return self
        return replace(self, backend=resolve_backend(holder))

    def held(self, scores: np.ndarray, layout: Layout | None = None) -> np.ndarray:
        """``scores`` as held before ranking: rounded to ``score_dtype`` (unchanged if float64).

        Rounding to float32 makes scores that differ by less than float32 resolution equal, as
        in tools that store scores as float32; ``ties`` then orders them. Scores beyond the
        float32 range become +-inf, as they do in those tools. ``layout`` says where they are.
        """
        if self.score_dtype == "float64":
            return scores
        columns = layout.columns if layout is not None and layout.columns else None
        return (columns or HostColumns(self.backend)).as_float32(scores)

    def held_scores(self, layout: Layout) -> Layout:
        """``layout`` with its scores as held before ranking (see :meth:`held`).

        Scores wider than float32 are checked before they are rounded to it, which turns large
        finite ones into infinities the kernel would otherwise take for bad input; the kernel
        checks the others as it reads them.
        """
        if self.score_dtype == "float64" or layout.scores is None:
            return layout
        if layout.scores.dtype.kind == "f" and layout.scores.dtype.itemsize > 4:
            layout = check_scores(layout, self.backend)
        return replace(layout, scores=self.held(layout.scores, layout))

    def options(self, ranked: bool) -> dict[str, Any]:
        """The options as shown in results."""
        shown = {
            "gain": self.gain.describe(),
            "discount": self.discount.describe(),
            "ideal": self.ideal,
            "ties": "ranked input" if ranked else self.ties,
            # the seed drawn when none was given, which a rerun can pass
            **({"seed": self.seed} if self.ties == "random" and not ranked else {}),
            "zero_idcg": self.zero_idcg,
            "aggregate": self.aggregate,
            "backend": self.backend.name,
        }
        if self.score_dtype != "float64":
            shown["score_dtype"] = self.score_dtype
        return shown

    def per_query(self, query_ids: np.ndarray, dcg: np.ndarray, idcg: np.ndarray) -> np.ndarray:
        """NDCG per query and cutoff under the zero-IDCG rule (NaN where skipped)."""
        relevant = idcg > 0
        values = np.full_like(dcg, np.nan)
        np.divide(dcg, idcg, out=values, where=relevant)
        if self.zero_idcg == "error" and not relevant.all():
            q, j = np.argwhere(~relevant)[0]
            raise InputError(
                f"query {plain(query_ids[q])!r} has no relevant item "
                f"(IDCG{cutoff_label(self.cutoffs[j])} = {idcg[q, j]:g}) and "
                "`zero_idcg='error'`",
                where=f"query {plain(query_ids[q])!r}",
                fix="pass `zero_idcg='skip'`, `'zero'` or `'one'` to score such queries",
            )
        if self.zero_idcg in ("zero", "one"):
            values[~relevant] = 0.0 if self.zero_idcg == "zero" else 1.0
        return values

    def finish(
        self,
        query_ids: np.ndarray,
        dcg: np.ndarray,
        idcg: np.ndarray,
        *,
        weights: Any = None,
        ranked: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> NDCGResult:
        """Normalise DCG by IDCG, apply the zero-IDCG rule and aggregate per cutoff."""
        # each cutoff's column contiguous, as the kernels give them: the sums below then add in
        # the same order whichever path built the arrays
        dcg, idcg = np.asfortranarray(dcg), np.asfortranarray(idcg)
        per_query = self.per_query(query_ids, dcg, idcg)
        w = query_weights(weights, dcg.shape[0])
        w = None if w is None else relative_weights(w)  # mean and ratio: only ratios matter
        counted = ~np.isnan(per_query)
        # sums per cutoff: the kernels' (n_queries, n_cutoffs) arrays hold each column contiguous
        weight = counted if w is None else np.where(counted, w[:, None], 0.0)
        if self.aggregate == "mean":
            top, bottom = np.where(counted, per_query, 0.0), weight
        else:
            top, bottom = np.where(counted, dcg, 0.0), np.where(counted, idcg, 0.0)
        if w is not None:
            top = top * weight
            bottom = weight if self.aggregate == "mean" else bottom * weight
        numerator, denominator = top.sum(axis=0), bottom.sum(axis=0)
        mean = np.full(len(self.cutoffs), np.nan)
        np.divide(numerator, denominator, out=mean, where=denominator > 0)
        return NDCGResult(
            k=self.cutoffs,
            per_query=per_query,
            dcg=dcg,
            idcg=idcg,
            mean=mean,
            query_ids=query_ids,
            n_skipped=(~counted).sum(axis=0).astype(np.int64),
            options=self.options(ranked) | ({} if w is None else {"weights": "per query"}),
            **(extra or {}),
        )


# DCG and IDCG of the same gains may differ by rounding where the ranking is an ideal one
# (tie groups' mean gains): a DCG this far above its IDCG is not rounding
_ABOVE_IDEAL = 1e-9


def _warn_above_ideal(
    cutoffs: tuple[int | None, ...],
    query_ids: np.ndarray,
    dcg: np.ndarray,
    idcg: np.ndarray,
    discount: np.ndarray,
) -> None:
    """Warn where a DCG exceeds the positive IDCG of its judgment list (``ideal="global"``).

    A judgment list holding every row given has a best ranking at least as good as any ranking
    of those rows wherever discounts do not grow with the rank (every named discount), so an
    NDCG above 1 means a list that lacks rows given. (A query whose list holds no relevant
    judgment keeps the zero-IDCG rule, as trec_eval skips queries without judgments.)
    """
    if np.any(discount < 0) or np.any(np.diff(discount) > 0):
        return  # (a discount growing with the rank: the best ranking is not by gain)
    above = (idcg > 0) & (dcg > idcg * (1.0 + _ABOVE_IDEAL))
    if not above.any():
        return
    q, j = np.argwhere(above)[0]
    label = cutoff_label(cutoffs[j])
    warnings.warn(
        f"NDCG is above 1 for {np.count_nonzero(above.any(axis=1))} of {len(query_ids)} queries "
        f"(first: query {plain(query_ids[q])!r}, DCG{label} = {dcg[q, j]:g}, IDCG{label} = "
        f"{idcg[q, j]:g}): their judgment lists lack rows given, while `ideal='global'` takes "
        "every row as one of its query's judgments; add the missing judgments to "
        "`ideal_grades`, or score with `ideal='recall'`",
        UserWarning,
        stacklevel=_outside_the_package(),
    )


def _outside_the_package() -> int:
    """The ``stacklevel`` of the innermost caller outside fastndcg (entry points nest deeply)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _random_seed(seed: Any) -> int:
    """``seed`` checked as an int in [0, 2**64), or one drawn when it is None."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise OptionTypeError(
            "`seed` must be a non-negative int `or None`",
            option="seed",
            value=seed,
            fix=f"got {seed!r}",
        )
    if seed >= 1 << 64:
        raise OptionError(
            "`seed` must be below 2**64", option="seed", value=seed, fix=f"got {seed}"
        )
    return int(seed)
