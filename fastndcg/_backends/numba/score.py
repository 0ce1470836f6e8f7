"""Numba kernels: DCG and IDCG of every query of a CSR layout, for every cutoff, in one pass.

Kernels take flat arrays and integer codes only; they do no validation (the API has checked
everything before calling them) and never raise. Every helper a cached kernel calls, and every
bundle it names, lives in this file: Numba's cache notices changes to the kernel's own file only.

The kernel's inputs cross from Python as four plain tuples (see ``KernelArgs``) and are named on
entry: the helpers take :class:`Rules` (ranking and gains) and :class:`Ideal` (how IDCG is
found) as records, and DCG by counted ranks its scratch as one :class:`Counting` record.

One compiled signature serves every input dtype: grades and scores arrive as tuples of typed
read-only views (one slot per supported dtype, the unused slots empty) plus a code saying which
slot holds the data, so Arrow and NumPy columns reach the kernels without a conversion copy.

The per-query helpers are compiled with ``_nrt=False``: they allocate nothing, and without it
every call would increment and decrement the reference count of each array argument, atomic
operations that cost about 250 ns per query here (more when threads share the arrays). Only the
drivers, which allocate the per-chunk scratch, use Numba's runtime.

Work is split into chunks of consecutive queries holding about the same number of rows, and
a pool of threads runs the chunks (the kernel releases the GIL; a Python thread pool instead of
``prange`` spares the compile of a parallel kernel, seconds). Each query is computed by the
same serial code whatever chunk it falls in, so results are bit-identical for every thread
count.

Plans whose cutoffs are all short (``Plan.top_path``: the plan chooses it) go first through the
short-cutoff path (:func:`_top_queries`): it reads the columns in place, bounds the best rows by
lane maxima sorted by a network, orders the few rows above the bound by a second network on
keys, and counts the grade levels in one pass. It hands the queries it cannot serve exactly
(NaN or infinite scores, ties among the best rows, too many rows above the bound) to the
general path below, which serves every plan; the two give the same bits for every query.

The general path, per query (rows ``s:e``, ``n = e - s``, ``K`` = the largest cutoff, or ``n``
for the whole list):

1. rank the ``count = min(K, n)`` best rows by score. When ``count`` is small, rows scoring
   below a lower bound of the count-th best score (the count-th largest of 16 or 32 lane
   maxima up to a count of 32, else the smallest of ``count`` column maxima) are dropped
   without a branch; long candidate lists are narrowed again by a bound sampled from them
   (directly from the list when it is under 4x a count above 32: too few rows per column).
   With ties in input order ("stable", "average") the candidates are then ranked by
   counting, ``m * m`` branch-free comparisons, while ``m`` is small; otherwise they go
   through an insertion buffer with a running threshold. A whole list is ranked by counting
   when short, else by a stable merge sort of (score, row) pairs, the tie rule consulted only
   when two scores are equal. When ties go in input order and many candidates remain (deep
   cutoffs) or the whole list counts, nothing is ranked: each row with a gain counts the rows
   above it and puts its gain at that rank (under ``ties="average"`` each rank a tie group
   shares gets the group's mean gain, as in step 2), which replaces step 1's ranking (while rows
   with a gain x rows stays within :data:`COUNT_BUDGET` comparisons; sparse relevance makes
   this cheap even for long lists). These comparisons take float32 copies of the scores,
   eight to a vector; the float64 scores are compared only for rows whose float32 copy
   another row shares, when the scores were not float32 already;
2. prefix sums ``P[r] = sum_{t<r} g_t d_t`` of discounted gains, where with ``ties="average"``
   every row of a tie group carries the group's mean gain (a group cut by the selection is
   completed by a scan of the query, only when a row outside the selection ties with it).
   A group's total gain is that of its gains in descending order (:func:`_tie_total`; integer
   gains add exactly in any order, others are sorted), and every path (selection, whole-list
   sort, counted ranks) makes the same additions in the same order: a value under
   ``ties="average"`` is bit-identical under any permutation of the query's rows, and the
   value at a cutoff does not depend on the other cutoffs asked;
3. ``DCG@k = P[min(k, n)]``;
4. the ideal prefix sum from the counts of integer grade levels (no sort, one pass) when grades
   are small non-negative integers, otherwise from a selection on the gains.

What did not pay, measured on the short-cutoff path (1 thread, 300,000 lists of about 90 rows,
k=10): counting the ranks of the candidates transposed (16 x 16 vector comparisons: the mask
conversions of 512-bit compares made it 4x slower than the network); a network on (score,
position) pairs (branches: 2x slower than the keys); a bit mask of the candidates walked with
trailing-zero counts instead of the branch-free compaction (1.5x slower); lanes kept in 16
scalar variables (unrolled to scalar code, as a loop of a constant width is: no faster than the
run-time width; vectors written out in LLVM, :func:`_max16`, are); 32 lanes folded to 16; a
separate pass for the finiteness check folded into the lane maxima (slower: the blocks of the
folded loop could not stay in vector registers); on AMD EPYC, the compaction by AVX-512
compress (8 rows a step, in a register, then one store): 1.55x faster alone on float32 scores,
but the whole path 1.2-1.5x slower (the positions, read back at once, wait on the wide stores;
the table-driven blocks of :func:`_pack8`, measured later on Intel Ice Lake, pay there);
checking presumed float grades in the pass that counts them (the fused loop is slower than the
two: the work is arithmetic, not reads; on Intel Ice Lake 0.94-0.98 of the time, paired, where
the unchanged int8 path gave 0.98: no clear gain); the finiteness check by blocks of 16 rows,
by the largest exponent of the bit patterns, or by a reassociated sum of ``x - x`` (each 10-25%
slower on the whole path); the 16-value network as a bitonic one in vector registers (LLVM
shuffles, 6-9% slower: ten dependent stages, and wide loads of values just stored one by one);
the compaction storing each row's score beside its position (no faster than reading the few
candidates' scores after); exp2 gains looked up per grade level (no faster than computing
them); integer grades left unscanned for the kernel to check, as float grades are (no faster:
the check and the 8 presumed levels, against the data's 5, cost what the host's scan did);
prefetching the next query's rows (13-17% slower: the processor's own prefetch keeps up, and
the path runs only 3-7% faster on lists already in the cache than from memory: it is bound by
its arithmetic), or the query's own grades as it starts (Intel Ice Lake: 1-8% slower); the
compaction without its finiteness check (no faster, the bound of moving the check into the
vector lane maxima); the check of presumed float grades by 8-wide vector blocks as the lane
maxima are taken (0.97-1.01: no clear gain over LLVM's own vector loop).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from fastndcg._contract.codes import (
    GAIN_EXP2,
    GAIN_LINEAR,
    IDEAL_GLOBAL,
    IDEAL_LOCAL,
    IDEAL_MAX,
    IDEAL_RECALL,
    SPLITMIX_GOLDEN,
    SPLITMIX_MIX1,
    SPLITMIX_MIX2,
    TIE_AVERAGE,
    TIE_KEY,
    TIE_OPTIMISTIC,
    TIE_PESSIMISTIC,
    TIE_RANDOM,
    TIE_STABLE,
)

_GOLDEN = np.uint64(SPLITMIX_GOLDEN)
_MIX1 = np.uint64(SPLITMIX_MIX1)
_MIX2 = np.uint64(SPLITMIX_MIX2)
_MERGE_RUN = 32  # insertion-sorted runs before merging
SMALL_SELECT = 128  # selections up to this size use an insertion buffer instead of a sort
RANK_BY_COUNT = 256  # up to this many rows, rank by counting (n * n branch-free comparisons)
_SAMPLE = 32  # scores sampled to narrow long candidate lists
_PACKED_LEVELS = 8  # grade levels counted in two packed words (more: by a histogram) ...
_PACKED_ROWS = 1 << 16  # ... in lists shorter than this (16-bit counters)
_LAZY_ROWS = 1024  # lists this long, and 16 times the ranks IDCG fills, count level by level
_COUNT_FROM = 64  # longer candidate lists give DCG by counting ranks of the rows with a gain
_NARROW_FROM = 96  # candidate lists longer than this (and well above the selection) are narrowed
COUNT_BUDGET = 1 << 19  # most comparisons spent on DCG by counting (rows with a gain x rows)
_EXACT_SUM = 2.0**53  # integer gains whose magnitudes sum below this add exactly, in any order
_PAD = 16  # counting loops compare whole blocks of this many rows
_PAD32 = 32  # ... and of this many float32 values (8 per vector, 4 vectors per step)
_FEW = 32  # selections up to this size take the lane bound (16 or 32 lanes)
_TOP_CANDIDATES = 64  # the short-cutoff path ranks up to this many candidates (more: general)
_SHARED_COUNT = 1 << 15  # grade levels shared with the measures: int16 counts
_WEAK_BOUND = 4  # deeper selections from lists shorter than this many times their size skip
# the column bound (each column holds too few rows for its maximum to exclude many)


# ---------------------------------------------------------------------------------------------
# bundles: the rules and the ideal (fields in the order of ``KernelArgs``' plain tuples), and the
# scratch of DCG by counted ranks. Numba types a NamedTuple of stable field types like a tuple and
# passes it field by field (an array: 7 words on the stack): a call costs what passing its fields
# would, so a helper called per query takes only the records it reads.


class Rules(NamedTuple):
    """How rows are ordered and gained: the tie rule (its key, its seed) and the gain."""

    tie_mode: int
    tie_key: np.ndarray
    seed: np.uint64
    gain_mode: int
    gain_table: np.ndarray


class Ideal(NamedTuple):
    """How IDCG is found: the ideal ``mode`` and what it reads.

    ``level_order``: the integer grade levels in descending gain order (empty unless IDCG may
    count them), ``level_gain``: each level's gain, ``max_gain``: the largest (``"max"``);
    ``levels_presumed``: the grades were not scanned, and each query's are checked against the
    levels before they are used (:func:`_outside_levels`); on a grade outside them the kernel
    stops and reports it, and the caller scans the grades and plans again.
    """

    mode: int
    level_order: np.ndarray
    level_gain: np.ndarray
    max_gain: float
    levels_presumed: bool


class Counting(NamedTuple):
    """The scratch of DCG by counted ranks (:func:`_count_ranks` and the two that follow).

    ``narrow``: float32 copies of the candidates' scores; ``gains`` of the candidates, and
    ``useful``: those with a non-zero gain; ``by_rank``: the gain put at each rank; ``sums``:
    the prefix sums of discounted gains; ``span``: a tie group's size at its first rank (zeros
    between uses), ``starts``: the groups' first ranks; ``tied_at``/``tied_gain``: each tied
    row's group and gain, ``bucket``: those gains grouped, ``fill``: where each group's next
    gain goes. The driver lends it the buffers of the ranking it skips.
    """

    narrow: np.ndarray
    gains: np.ndarray
    useful: np.ndarray
    by_rank: np.ndarray
    sums: np.ndarray
    span: np.ndarray
    starts: np.ndarray
    tied_at: np.ndarray
    tied_gain: np.ndarray
    bucket: np.ndarray
    fill: np.ndarray


# ---------------------------------------------------------------------------------------------
# reading values of any supported dtype: each query is copied once into float64 scratch


@njit(cache=True, _nrt=False)
def _load_grades(views, code, s, n, out):
    """``out[:n]`` = rows ``s:s+n`` of the column in slot ``code`` of ``views``, as float64.

    ``views`` holds (f8, f4, i8, i4, i2, i1, u1) arrays, the column in one slot. Unsigned
    indices spare Numba's negative-index wraparound, so the conversions vectorise.
    """
    rows = np.uint64(n)
    if code == 0:
        column = views[0][s : s + n]
        for t in range(rows):
            out[t] = column[t]
    elif code == 1:
        column = views[1][s : s + n]
        for t in range(rows):
            out[t] = column[t]
    elif code == 2:
        column = views[2][s : s + n]
        for t in range(rows):
            out[t] = column[t]
    elif code == 3:
        column = views[3][s : s + n]
        for t in range(rows):
            out[t] = column[t]
    elif code == 4:
        column = views[4][s : s + n]
        for t in range(rows):
            out[t] = column[t]
    elif code == 5:
        column = views[5][s : s + n]
        for t in range(rows):
            out[t] = column[t]
    else:
        column = views[6][s : s + n]
        for t in range(rows):
            out[t] = column[t]


@njit(cache=True, _nrt=False)
def _load_scores(views, code, s, n, out):
    """``out[:n]`` = rows ``s:s+n`` of the scores in slot ``code`` of the (f8, f4) ``views``.

    Returns how many of them are NaN or infinite: the copy checks the scores on the way, so
    the API need not read the column once more before the kernel (see ``score_queries``).
    """
    rows = np.uint64(n)
    nonfinite = 0
    if code == 0:
        column = views[0][s : s + n]
        for t in range(rows):
            x = column[t]
            out[t] = x
            nonfinite += (x - x) != 0.0  # NaN for inf and NaN, 0 otherwise
    else:
        column = views[1][s : s + n]
        for t in range(rows):
            x = np.float64(column[t])
            out[t] = x
            nonfinite += (x - x) != 0.0
    return nonfinite


@njit(cache=True, _nrt=False)
def _holds_nan(values, n):
    """True when one of ``values[:n]`` is NaN."""
    for t in range(n):
        if values[t] != values[t]:
            return True
    return False


@njit(cache=True, inline="always")
def random_key(seed, row):
    """SplitMix64 hash of (seed, row): the random tie-breaking key of a row."""
    z = seed + np.uint64(row) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always", _nrt=False)
def _gain(grade, rules):
    if rules.gain_mode == GAIN_EXP2:
        return np.exp2(grade) - 1.0
    if rules.gain_mode == GAIN_LINEAR:
        return grade
    return rules.gain_table[np.int64(grade)]


@njit(cache=True, _nrt=False)
def _tie_total(pool, members):
    """Total gain of a tie group whose gains are ``pool[:members]``, whatever their order.

    The total is that of the gains in descending order, added one by one from 0.0: a tie
    group's mean gain (and so every value under ``ties="average"``) must not depend on the order
    of the query's rows, nor on the path that found the group. Two gains give the same sum in
    either order, and integer gains whose magnitudes sum below 2**53 add exactly in any order,
    so they are added as they come; other gains are sorted first (in place).
    """
    total = 0.0
    if members <= 2:
        for t in range(members):
            total += pool[t]
        return total
    spread = 0.0
    integral = True
    for t in range(members):
        x = pool[t]
        total += x
        spread += abs(x)
        integral &= x == np.floor(x)
    if integral and spread < _EXACT_SUM:
        return total
    _sort_desc(pool, members)
    total = 0.0
    for t in range(members):
        total += pool[t]
    return total


# ---------------------------------------------------------------------------------------------
# ranking: score descending; equal scores ordered by the tie rule (rarely consulted).
# Rows are local positions 0..n-1 of the query; ``first`` is the global row of position 0.


@njit(cache=True, _nrt=False)
def _tie_before(a, b, grades, first, rules):
    """Whether position ``a`` goes before position ``b`` when their scores are equal."""
    tie_mode = rules.tie_mode
    if tie_mode == TIE_PESSIMISTIC or tie_mode == TIE_OPTIMISTIC:
        ga = _gain(grades[a], rules)
        gb = _gain(grades[b], rules)
        if ga != gb:
            return (ga < gb) if tie_mode == TIE_PESSIMISTIC else (ga > gb)
    elif tie_mode == TIE_RANDOM:
        ka = random_key(rules.seed, first + a)
        kb = random_key(rules.seed, first + b)
        if ka != kb:
            return ka < kb
    elif tie_mode == TIE_KEY:
        tie_key = rules.tie_key
        if tie_key[first + a] != tie_key[first + b]:
            return tie_key[first + a] < tie_key[first + b]
    return a < b  # "stable" and "average": input order


# scores reaching the kernels are never NaN (validated) and -0.0 == 0.0 in every comparison, so
# these fast-math flags change no result; they let LLVM vectorise the comparisons
@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"})
def _candidates(cand, cand_scores, column_max, n, count, scores):
    """Positions that may rank among the best ``count`` of ``n`` into ``cand``; returns how many.

    Rows scoring below a lower bound of the count-th best score (:func:`_lane_bound` up to
    :data:`_FEW`, else :func:`_column_bound`) cannot be selected; the others are kept in input
    order without a branch. The candidates' scores go to ``cand_scores``; ``column_max`` is
    scratch of ``max(count, _FEW)`` entries; ``scores`` has room for ``_FEW`` more entries, which
    may be overwritten. Unsigned indices spare Numba's negative-index wraparound.
    """
    un = np.uint64(n)
    if count <= _FEW:
        bound = _lane_bound(column_max, scores, n, count)
    else:
        bound = _column_bound(column_max, scores, n, count)
    m = np.uint64(0)
    for i in range(un):
        x = scores[i]
        cand[m] = i
        cand_scores[m] = x
        m += np.uint64(x >= bound)
    return np.int64(m)


@njit(cache=True, _nrt=False)
def _every_row(cand, cand_scores, n, scores):
    """All ``n`` positions as candidates, in input order (no bound applies)."""
    for i in range(n):
        cand[i] = i
        cand_scores[i] = scores[i]


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"})
def _column_bound(column_max, scores, n, count):
    """A lower bound of the count-th best of ``scores[:n]``: the smallest of ``count`` maxima.

    Row ``i`` belongs to column ``i % count``; each column's maximum is a different row, so the
    smallest of them is at most the count-th best score. The maxima are element-wise maxima of
    consecutive slices (vectorised). ``column_max`` is scratch of ``count`` entries.
    """
    un = np.uint64(n)
    width = np.uint64(count)
    for j in range(width):
        column_max[j] = scores[j]
    row = width
    while row + width <= un:
        for j in range(width):
            x = scores[row + j]
            column_max[j] = x if x > column_max[j] else column_max[j]
        row += width
    for j in range(un - row):
        x = scores[row + j]
        column_max[j] = x if x > column_max[j] else column_max[j]
    bound = column_max[0]
    for j in range(np.uint64(1), width):
        bound = column_max[j] if column_max[j] < bound else bound
    return bound


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"})
def _lane_bound(lanes, scores, n, count):
    """A lower bound of the count-th best of ``scores[:n]``, for ``count <= _FEW``.

    Row ``i`` belongs to lane ``i % width`` (``width`` 16 or 32, at least ``count``). The
    count-th largest lane maximum is reached by ``count`` different rows, so it is at most the
    count-th best score; it is much tighter than :func:`_column_bound` (about 13 candidates
    instead of 22 for ``count=10`` among 100 random scores), and it is found by ``width**2``
    vectorised comparisons. ``scores`` is padded with -inf to whole lanes (the padding may be
    overwritten); ``lanes`` is scratch of ``_FEW`` entries.
    """
    width = np.uint64(16) if count <= 16 else np.uint64(32)  # run-time: see _rank_by_count
    un = np.uint64(n)
    padded = (un + width - np.uint64(1)) & ~(width - np.uint64(1))
    for i in range(un, padded):
        scores[i] = -np.inf
    for j in range(width):
        lanes[j] = scores[j]
    for row in range(width, padded, width):
        for j in range(width):
            x = scores[row + j]
            lanes[j] = x if x > lanes[j] else lanes[j]
    bound = np.inf
    for c in range(width):
        x = lanes[c]
        above = 0
        for d in range(width):
            above += lanes[d] > x
        bound = x if (above < count) & (x < bound) else bound
    return bound


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"})
def _rank_by_count(rank, values, m, seen):
    """``rank[c]`` = how many of ``values[:m]`` go before ``values[c]``.

    Higher values go before, and equal ones in input order. Each value counts the values above
    it over whole blocks of :data:`_PAD` padded with -inf (one vectorised loop, no remainder and
    no tie test): ``m * m`` branch-free comparisons, faster than a sort for short lists. Equal
    values share that count and then take consecutive ranks in input order. ``values`` has room
    for :data:`_PAD` more entries (the padding may be overwritten); ``seen`` is scratch of ``m``.
    Unsigned indices spare Numba's negative-index wraparound.
    """
    um = np.uint64(m)
    # a width known only at run time: with a constant one LLVM unrolls the counting loop
    # into scalar comparisons (measured 2x slower) instead of vectorising it
    width = (um + np.uint64(_PAD - 1)) & ~np.uint64(_PAD - 1)
    for d in range(um, width):
        values[d] = -np.inf
    for c in range(um):
        x = values[c]
        above = 0
        for d in range(width):
            above += values[d] > x
        rank[c] = above
        seen[c] = 0
    for c in range(um):
        above = rank[c]
        rank[c] = above + seen[above]
        seen[above] += 1


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"})
def _narrow(cand, cand_scores, sample, order, m, count):
    """Drop candidates below a tighter bound of the count-th best score; returns how many stay.

    Bounds are taken from a sample of the candidates' scores in descending order, starting a
    little below the count-th best in proportion and moving down: the first that at least
    ``count`` candidates reach is a true lower bound of the count-th best score, and the
    candidates below it are dropped (none if no sampled bound holds). Candidates keep their
    order. ``sample`` is scratch of :data:`_SAMPLE` + :data:`_PAD` entries, ``order`` of
    ``2 * _SAMPLE``; the sample is ordered by counting (:func:`_rank_by_count`), branch-free.
    """
    n_sample = sample.size - _PAD  # known at run time only: see _rank_by_count
    for j in range(n_sample):
        sample[j] = cand_scores[j * m // n_sample]
    rank = order[:n_sample]
    at = order[n_sample:]  # scratch of the ranking, then the sample position at each rank
    _rank_by_count(rank, sample, n_sample, at)
    for j in range(n_sample):
        at[rank[j]] = j
    rows = np.uint64(m)
    for pick in range((n_sample * count * 9) // (8 * m), n_sample):
        bound = sample[at[pick]]
        reaching = 0
        for c in range(rows):
            reaching += cand_scores[c] >= bound
        if reaching >= count:
            kept = 0
            for c in range(m):
                cand[kept] = cand[c]
                cand_scores[kept] = cand_scores[c]
                kept += cand_scores[c] >= bound
            return kept
    return m


@njit(cache=True, _nrt=False)
def _select_by_count(buf, top, cand, cand_scores, rank, m, count):
    """Best ``count`` of the ``m`` candidates into ``buf``/``top``, best first, by counting.

    Ties go in input order (``ties="stable"`` and ``"average"``); see :func:`_rank_by_count`.
    ``buf`` has room for ``max(m, count + 1)`` entries and ``top`` for ``count + 1`` (the last
    is scratch), ``cand_scores`` for :data:`_FEW` more than ``m`` (overwritten). Returns the
    score of the selection's last tie group if a candidate outside the selection shares it,
    else NaN (rows that are not candidates score below every selected one).
    """
    _rank_by_count(rank, cand_scores, m, buf)
    for c in range(m):
        r = min(rank[c], count)  # the rows beyond the selection all land in the scratch slot
        buf[r] = cand[c]
        top[r] = cand_scores[c]
    last = top[count - 1]
    shared = False
    for c in range(m):
        shared |= (rank[c] >= count) & (cand_scores[c] == last)
    return last if shared else np.nan


@njit(cache=True, _nrt=False)
def _sort_by_count(buf, top, rank, n, scores):
    """All ``n`` positions into ``buf``/``top`` in rank order (ties in input order), by counting.

    ``scores`` has room for :data:`_FEW` more entries, which may be overwritten.
    """
    _rank_by_count(rank, scores, n, buf)
    for i in range(n):
        buf[rank[i]] = i
        top[rank[i]] = scores[i]


@njit(cache=True, _nrt=False)
def _select_by_score(buf, top, cand, cand_scores, m, count, grades, first, rules):
    """Best ``count`` of the ``m`` candidates into ``buf``/``top``, best first, for any tie rule.

    The candidates (see :func:`_candidates`) go through an insertion buffer with a running
    threshold: almost every one is rejected by one comparison. Returns the score of the
    selection's last tie group if a row outside the selection shares it (``ties="average"``
    must then complete the group), else NaN.
    """
    threshold = -np.inf
    tied = np.nan
    for c in range(m):
        i = cand[c]
        x = cand_scores[c]
        filled = c < count
        if not filled and x <= threshold:
            if x == threshold:
                tied = threshold
                if not _tie_before(i, buf[count - 1], grades, first, rules):
                    continue
            else:
                continue
        if filled:
            p = c
        else:
            p = count - 1
            if count > 1 and top[count - 2] == threshold:
                tied = threshold  # the row falling out ties with the one above it
        while p > 0 and (
            x > top[p - 1] or (x == top[p - 1] and _tie_before(i, buf[p - 1], grades, first, rules))
        ):
            buf[p] = buf[p - 1]
            top[p] = top[p - 1]
            p -= 1
        buf[p] = i
        top[p] = x
        if c >= count - 1:
            threshold = top[count - 1]
    return tied


@njit(cache=True, _nrt=False)
def _sort_by_score(buf, top, tmp_buf, tmp_top, n, scores, grades, first, rules):
    """All ``n`` positions into ``buf``/``top`` in rank order: a stable merge sort of pairs."""
    for t in range(n):
        buf[t] = t
        top[t] = scores[t]
    for a in range(0, n, _MERGE_RUN):
        b = min(a + _MERGE_RUN, n)
        for t in range(a + 1, b):
            x = top[t]
            i = buf[t]
            p = t
            while p > a and (
                x > top[p - 1]
                or (x == top[p - 1] and _tie_before(i, buf[p - 1], grades, first, rules))
            ):
                top[p] = top[p - 1]
                buf[p] = buf[p - 1]
                p -= 1
            top[p] = x
            buf[p] = i
    src_top, src_buf, dst_top, dst_buf = top, buf, tmp_top, tmp_buf
    width = _MERGE_RUN
    passes = 0
    while width < n:
        for a in range(0, n, 2 * width):
            m = min(a + width, n)
            b = min(a + 2 * width, n)
            i = a
            j = m
            o = a
            while i < m and j < b:
                right_first = src_top[j] > src_top[i] or (
                    src_top[j] == src_top[i]
                    and _tie_before(src_buf[j], src_buf[i], grades, first, rules)
                )
                if right_first:
                    dst_top[o] = src_top[j]
                    dst_buf[o] = src_buf[j]
                    j += 1
                else:
                    dst_top[o] = src_top[i]
                    dst_buf[o] = src_buf[i]
                    i += 1
                o += 1
            while i < m:
                dst_top[o] = src_top[i]
                dst_buf[o] = src_buf[i]
                i += 1
                o += 1
            while j < b:
                dst_top[o] = src_top[j]
                dst_buf[o] = src_buf[j]
                j += 1
                o += 1
        src_top, src_buf, dst_top, dst_buf = dst_top, dst_buf, src_top, src_buf
        width *= 2
        passes += 1
    if passes % 2 == 1:  # the last merge pass wrote into the scratch arrays
        for t in range(n):
            top[t] = tmp_top[t]
            buf[t] = tmp_buf[t]


# ---------------------------------------------------------------------------------------------
# DCG: prefix sums of discounted gains over the ranks, read at each cutoff. With ties in input
# order and many candidates, the ranks of the rows with a gain are counted instead (no ranking).


@njit(cache=True, _nrt=False)
def _gather_gains(gains, useful, rows, m, grades, rules):
    """``gains[c]`` = gain of row ``rows[c]`` for ``c < m``; returns how many are not zero.

    The ``c`` with a non-zero gain go to ``useful``, without a branch.
    """
    kept = 0
    for c in range(m):
        gain = _gain(grades[rows[c]], rules)
        gains[c] = gain
        useful[kept] = c
        kept += gain != 0.0
    return kept


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"}, inline="always")
def _distinct_ranks(counting, m, padded, deepest):
    """Every row's gain at its rank if no two of the ``m`` float32 scores are equal.

    One comparison per pair of rows (the general count makes two per row with a gain): a row's
    rank is the number of scores above it, and the ranks sum to ``m * (m - 1) / 2`` exactly when
    no score is repeated (a tie group of ``t`` rows at one rank sums ``t * (t - 1) / 2`` less).
    Returns whether they did; if not, nothing is written but the ranks' scratch (``tied_at``).
    """
    narrow, rank = counting.narrow, counting.tied_at
    total = np.int64(0)
    for c in range(np.uint64(m)):
        x32 = narrow[c]
        higher = np.int32(0)
        for d in range(padded):
            higher = np.int32(higher + (narrow[d] > x32))
        rank[c] = higher
        total += higher
    if total != m * (m - 1) // 2:
        return False
    for c in range(np.uint64(m)):
        if rank[c] < deepest:
            counting.by_rank[rank[c]] = counting.gains[c]
    return True


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"}, inline="always")
def _count_ranks(counting, values, kept, m, deepest, exact, average, distinct):
    """The rank of each row with a gain, found by counting: its gain goes to ``by_rank``.

    ``values`` hold the ``m`` rows that may rank within ``deepest`` ranks (every row scoring as
    high as any of them among them), in input order, with room for :data:`_PAD` more entries
    (which may be overwritten); ``counting.gains`` hold their gains and ``counting.useful[:kept]``
    those of them with a non-zero gain. A row's rank is the number of rows going before it:
    higher scores, and with ``ties="stable"`` equal scores earlier in the input. A row with a
    rank of its own puts its gain at that rank. With ``average`` the rows tied at a score share
    the ranks ``[above, above + tied)``: their gains gather at the group's first rank (``span``
    holds the group's size there, ``starts`` lists the groups' first ranks, ``tied_at`` and
    ``tied_gain`` each tied row's group and gain). Nothing is ranked: the work is ``kept * m``
    branch-free comparisons of float32 copies of the values, made in ``narrow`` (room for
    :data:`_PAD32` more entries than ``m``); ``exact`` says the values are float32 values.

    With ``distinct``, every row is first ranked as if no score were repeated, which holds
    for most scores (:func:`_distinct_ranks`).

    Returns the number of tie groups, the number of their rows, whether the groups' totals,
    added in input order, may have rounded (then :func:`_exact_group_totals` adds them again),
    and whether the next query should try :func:`_distinct_ranks`: when it held here, or was
    not tried and no row with a gain was tied.
    """
    narrow, by_rank, span = counting.narrow, counting.by_rank, counting.span
    # the comparisons run on float32 copies, twice as many per vector; rounding to float32
    # keeps the order (it never swaps two values), so a row whose float32 value no other row
    # shares has exactly as many rows above it as float32 values above its own. Otherwise
    # (ties, or float64 values that round alike) the float64 values are counted, unless they
    # were float32 values to begin with (``exact``).
    # The loops run over whole vectors (no scalar remainder loop per row with a gain): the
    # padding is -inf, which is above no row; it ties with rows scoring -inf (float32
    # overflow), whose tie count then leaves the padding out.
    padded = (np.uint64(m) + np.uint64(_PAD - 1)) & ~np.uint64(_PAD - 1)
    padding = np.int64(padded) - m
    padded32 = (np.uint64(m) + np.uint64(_PAD32 - 1)) & ~np.uint64(_PAD32 - 1)
    padding32 = np.int32(padded32) - np.int32(m)
    for d in range(np.uint64(m)):
        narrow[d] = np.float32(values[d])
    for d in range(np.uint64(m), padded32):
        narrow[d] = -np.inf
    if distinct and 2 * kept >= m and _distinct_ranks(counting, m, padded, deepest):
        return 0, 0, False, True
    for r in range(deepest):
        by_rank[r] = 0.0
    widened = False  # whether the float64 values are padded
    n_tied = 0  # rows of tie groups that start within the deepest cutoff (ties="average")
    n_groups = 0  # those groups
    spread = 0.0  # sum of the magnitudes of their gains
    integral = True  # whether those gains are all integers
    for u in range(kept):
        c = np.uint64(counting.useful[u])
        gain = counting.gains[c]
        x = values[c]
        x32 = narrow[c]
        # 32-bit counters: 64-bit ones would halve the float32 comparisons per vector
        higher = np.int32(0)
        reaching = np.int32(0)
        for d in range(padded32):
            higher = np.int32(higher + (narrow[d] > x32))
            reaching = np.int32(reaching + (narrow[d] >= x32))
        above = np.int64(higher)
        tied = np.int64(reaching - higher)
        if x32 == -np.inf:
            tied -= padding32
        if tied > 1 and not exact:
            if not widened:
                for d in range(np.uint64(m), padded):
                    values[d] = -np.inf
                widened = True
            above = 0
            tied = 0
            for d in range(padded):
                above += values[d] > x
                tied += values[d] == x
            if x == -np.inf:
                tied -= padding
        if tied > 1 and not average:  # ties in input order: the tied rows before it go first
            for d in range(c):
                above += values[d] == x
            tied = 1
        if above >= deepest:
            continue
        if tied == 1:
            by_rank[above] = gain
            continue
        # a tie group: its total gain gathers at its first rank (which no other row takes)
        counting.starts[n_groups] = above
        n_groups += span[above] == 0  # a group met for the first time
        by_rank[above] += gain
        span[above] = tied
        counting.tied_at[n_tied] = above
        counting.tied_gain[n_tied] = gain
        n_tied += 1
        spread += abs(gain)
        integral &= gain == np.floor(gain)
    rounded = n_groups > 0 and not (integral and spread < _EXACT_SUM)
    return n_groups, n_tied, rounded, n_groups == 0 and not distinct


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"}, inline="always")
def _exact_group_totals(counting, n_groups, n_tied):
    """Each tie group's total gain at its first rank, added again as :func:`_tie_total` adds.

    For totals that :func:`_count_ranks` added in input order and that may have rounded. The
    tied rows' gains are put in ``bucket`` group by group (each group at most its size).
    """
    starts, span, fill, bucket = counting.starts, counting.span, counting.fill, counting.bucket
    end = 0
    for i in range(n_groups):
        a = starts[i]
        fill[a] = end
        end += span[a]
    for t in range(n_tied):
        a = counting.tied_at[t]
        bucket[fill[a]] = counting.tied_gain[t]
        fill[a] += 1
    end = 0
    for i in range(n_groups):
        a = starts[i]
        if fill[a] - end > 2:  # two gains add alike in either order
            counting.by_rank[a] = _tie_total(bucket[end:], fill[a] - end)
        end += span[a]


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"}, inline="always")
def _spread_means(counting, n_groups, deepest, discount):
    """``sums[r]`` = ``sum_{t<r} by_rank[t] * discount[t]`` for ``r <= deepest``, tie groups spread.

    Every rank a tie group shares carries the group's mean gain (its total over its size). These
    are bit for bit the prefix sums of the ranked rows (step 2 of ``score_queries``), whatever
    the order of the rows and whichever path a cutoff takes. ``span`` is left zeros.
    """
    sums, by_rank, span = counting.sums, counting.by_rank, counting.span
    if n_groups == 0:
        _prefix_sums(sums, by_rank, deepest, discount)
        return
    sums[0] = 0.0
    # every rank a group shares carries the group's mean gain: selected without a branch (a
    # loop over each group's ranks mispredicts its exit), off the chain of additions
    left = 0  # ranks of the current group from this one on
    mean = 0.0
    for r in range(deepest):
        tied = span[r]
        begins = tied > 0
        ratio = by_rank[r] / np.float64(max(tied, 1))
        mean = ratio if begins else mean
        left = tied if begins else left - 1
        value = mean if left > 0 else by_rank[r]
        sums[r + 1] = sums[r] + value * discount[r]
    for i in range(n_groups):
        span[counting.starts[i]] = 0


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"})
def _dcg_by_count(counting, values, kept, m, deepest, exact, average, distinct, discount):
    """``counting.sums[r]`` for ``r <= deepest`` from counted ranks: the jobs of the three above.

    One call from the driver, its parts inlined: a call passes each array of ``counting`` field
    by field on the stack, so a query pays for one call, not three. ``distinct``: try ranking
    as if no score were repeated first; returns whether the next query should (see
    :func:`_count_ranks`).
    """
    groups, tied_rows, rounded, try_distinct = _count_ranks(
        counting, values, kept, m, deepest, exact, average, distinct
    )
    if rounded:
        _exact_group_totals(counting, groups, tied_rows)
    _spread_means(counting, groups, deepest, discount)
    return try_distinct


# ---------------------------------------------------------------------------------------------
# ideal DCG


@njit(cache=True, _nrt=False)
def _sift_down(values, root, end):
    """Restore the min-heap order of ``values[:end]`` below ``root``."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and values[child + 1] < values[child]:
            child += 1
        if values[child] >= values[root]:
            return
        values[root], values[child] = values[child], values[root]
        root = child


@njit(cache=True, _nrt=False)
def _sort_desc(values, n):
    """Sort ``values[:n]`` in descending order, in place (insertion sort, heapsort when long)."""
    if n <= SMALL_SELECT:
        for t in range(1, n):
            x = values[t]
            p = t
            while p > 0 and values[p - 1] < x:
                values[p] = values[p - 1]
                p -= 1
            values[p] = x
        return
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(values, root, n)
    for end in range(n - 1, 0, -1):
        values[0], values[end] = values[end], values[0]  # the smallest goes to the back
        _sift_down(values, np.int64(0), end)  # an int64 root: no second compile for root 0


@njit(cache=True, _nrt=False)
def _level_words(column, n):
    """The rows of each grade level 0..7 of ``column[:n]`` (``n < 2**16``), in two packed words.

    Level ``l`` is counted in bits ``16 * (l % 4)`` to ``16 * (l % 4) + 15`` of word ``l // 4``:
    one vectorised pass adds a shifted one per row, where a comparison pass per level would
    read the grades once for each level. ``column`` may be of any grade dtype (read in place).
    """
    low = np.uint64(0)
    high = np.uint64(0)
    for i in range(np.uint64(n)):
        level = np.uint64(column[i])
        bit = np.uint64(1) << ((level & np.uint64(3)) << np.uint64(4))
        low += np.uint64(0) if level > np.uint64(3) else bit
        high += bit if level > np.uint64(3) else np.uint64(0)
    return low, high


@njit(cache=True, _nrt=False)
def _outside_levels(column, n, n_levels):
    """How many of ``column[:n]`` are not integers in ``[0, n_levels)`` (a vectorised pass).

    For grades not scanned, whose levels the plan presumes (:class:`Ideal`): run before the
    grades are used, so that none indexes a table or a histogram outside it.
    """
    top = np.float64(n_levels)
    outside = 0
    for i in range(np.uint64(n)):
        x = np.float64(column[i])
        outside += not ((x >= 0.0) & (x < top) & (x == np.floor(x)))
    return outside


@njit(cache=True, _nrt=False)
def _count_levels(hist, column, n):
    """Add the histogram of the integer grade levels of ``column[:n]`` to ``hist``.

    ``hist`` holds four copies of the ``L`` levels; rows are counted into the copies in turn,
    which breaks the store-to-load chain of consecutive rows with the same grade.
    """
    n_levels = hist.size // 4
    i = 0
    while i + 4 <= n:
        hist[np.int64(column[i])] += 1
        hist[n_levels + np.int64(column[i + 1])] += 1
        hist[2 * n_levels + np.int64(column[i + 2])] += 1
        hist[3 * n_levels + np.int64(column[i + 3])] += 1
        i += 4
    while i < n:
        hist[np.int64(column[i])] += 1
        i += 1


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"})
def _count_level(column, n, level):
    """How many of ``column[:n]`` equal ``level``: one vectorised comparison pass."""
    found = 0
    for i in range(np.uint64(n)):
        found += column[i] == level
    return found


@njit(cache=True, _nrt=False)
def _level_rows(level_rows, hist, column, n, count, level_order):
    """``level_rows[l]`` = how many of ``column[:n]`` are grade level ``l``, as far as IDCG needs.

    The levels that fill the first ``count`` ranks of the ideal ranking (``level_order``: the
    levels in descending gain order) are counted; those after them are counted as empty. Long
    lists of shallow ideals count one level per comparison pass, best first, until the ranks
    are filled (mostly one pass); others count every level at once: up to
    :data:`_PACKED_LEVELS` levels in lists shorter than :data:`_PACKED_ROWS` by
    :func:`_level_words`, else by a histogram (``hist``: four copies of the levels, zeros
    between uses).
    """
    n_levels = level_rows.size
    if n >= _LAZY_ROWS and n >= 16 * count:
        filled = 0
        for lv in range(n_levels):
            rows = _count_level(column, n, level_order[lv]) if filled < count else 0
            level_rows[level_order[lv]] = rows
            filled += rows
        return
    if n_levels <= _PACKED_LEVELS and n < _PACKED_ROWS:
        low, high = _level_words(column, n)
        for level in range(n_levels):
            word = low if level < 4 else high
            level_rows[level] = (word >> np.uint64(16 * (level % 4))) & np.uint64(0xFFFF)
        return
    _count_levels(hist, column, n)
    for level in range(n_levels):
        level_rows[level] = 0
        for copy in range(4):
            level_rows[level] += hist[copy * n_levels + level]
    hist[:] = 0


@njit(cache=True, _nrt=False)
def _share(best_rows, best_grades, level_counts, at, grades, count, recall, level_rows, n):
    """What the measures beside nDCG read of a query, into its rows of ``SharedRanking``.

    Where ``level_counts`` has room and the ideal counted the query's grade levels
    (``recall``) in every row (not once the first ``count`` ranks were filled in a long list)
    into no more levels than it has: those counts, and the ``grades`` of the best rows
    ``at[:count]``; otherwise the rows (and -2 in the counts' first entry, where given).
    (Not inlined, and given rows, not the whole arrays: the short path's loop is faster
    without this code in it, and a call passes every field of an array argument.)
    """
    n_levels = level_rows.size
    shares_counts = level_counts.size > 0
    counted = recall and shares_counts and n_levels <= level_counts.size
    counted = counted and n < _SHARED_COUNT and not (n >= _LAZY_ROWS and n >= 16 * count)
    if counted:
        for level in range(level_counts.size):
            level_counts[level] = level_rows[level] if level < n_levels else 0
        for r in range(count):
            best_grades[r] = np.int8(grades[r])
        return
    for r in range(count):
        best_rows[r] = at[r]
    if shares_counts:
        level_counts[0] = -2


@njit(cache=True, _nrt=False, inline="always")
def _fill_ranks(gains, at, value, ranks):
    """``gains[at:at + ranks] = value``, and maybe more entries after them.

    Up to :data:`_FEW` ranks, as one or two 16-entry vector stores (:func:`_fill16`; ``gains``
    has room for ``at + 32``): a loop of ``ranks`` stores, with its vector part and its tail,
    took 7% of NDCG@10's kernel (Intel Ice Lake) for 5 levels of 10 ranks per query.
    """
    if ranks <= np.uint64(16):
        _fill16(gains[at:], value)
    elif ranks <= np.uint64(_FEW):
        _fill16(gains[at:], value)
        _fill16(gains[at + np.uint64(16) :], value)
    else:
        for t in range(ranks):
            gains[at + t] = value


@njit(cache=True, _nrt=False, inline="always")
def _ideal_gains(gains, level_rows, count, ideal):
    """``gains[r]`` = the gain at rank ``r < count`` of the ideal ranking of ``level_rows``.

    Each level, best first, writes its gain over ``count`` entries from its first rank
    (:func:`_fill_ranks`; ``gains`` has room for ``count + max(count, 32)``; a level starting
    past the ranks writes past them): the next level overwrites from its own first rank, so
    each rank keeps its level's gain. Stores of a fixed length vectorise, where a loop over
    each level's own ranks would end at a different rank in every query (a mispredicted branch
    per level), and a select over all ranks per level made k=10 calls 5-7% slower. Inlined: a
    call passes ``ideal`` field by field.
    """
    level_order, level_gain = ideal.level_order, ideal.level_gain
    ranks = np.uint64(count)
    # (the levels cover every rank; 0.0 is the safe value if one did not)
    _fill_ranks(gains, np.uint64(0), 0.0, ranks)
    start = np.uint64(0)
    for lv in range(level_order.size):
        level = np.uint64(level_order[lv])  # (unsigned: no wraparound test)
        _fill_ranks(gains, min(start, ranks), level_gain[level], ranks)
        start += np.uint64(level_rows[level])


@njit(cache=True, _nrt=False)
def _ideal_prefix(prefix, vals, level_rows, hist, grades, n, count, rules, ideal, discount):
    """``prefix[r]`` = ideal DCG of the first ``r`` ranks of ``grades[:n]``, for ``r <= count``.

    With integer grade levels, from the rows of each level (:func:`_ideal_gains`); otherwise
    from a selection on the gains.
    """
    if ideal.level_order.size > 0:
        _level_rows(level_rows, hist, grades, n, count, ideal.level_order)
        _ideal_gains(vals, level_rows, count, ideal)
        _prefix_sums(prefix, vals, count, discount)
        return
    prefix[0] = 0.0
    if count > SMALL_SELECT or count == n:
        for t in range(n):
            vals[t] = _gain(grades[t], rules)
        _sort_desc(vals, n)
    else:
        filled = 0
        for i in range(n):
            g = _gain(grades[i], rules)
            if filled < count:
                p = filled
                filled += 1
            elif g > vals[count - 1]:
                p = count - 1
            else:
                continue
            while p > 0 and vals[p - 1] < g:
                vals[p] = vals[p - 1]
                p -= 1
            vals[p] = g
    for t in range(count):
        prefix[t + 1] = prefix[t] + vals[t] * discount[t]


@njit(cache=True, _nrt=False)
def _local_ideal(vals, buf, mean_gain, group_end, cut, average, grades, rules, discount):
    """Ideal DCG of the top ``cut`` rows re-sorted by gain.

    With tie averaging, the rows of a tie group that straddles ``cut`` each carry the group's
    mean gain (the expected gain of whichever of its rows land above the cutoff), as step 2 of
    ``score_queries`` left it in ``mean_gain``.
    """
    for t in range(cut):
        if average and group_end[t] > cut:
            vals[t] = mean_gain[t]
        else:
            vals[t] = _gain(grades[buf[t]], rules)
    _sort_desc(vals, cut)
    total = 0.0
    for t in range(cut):
        total += vals[t] * discount[t]
    return total


# ---------------------------------------------------------------------------------------------
# the short-cutoff path: the columns read in place, the top ranks counted (see _top_queries)


def _splat(builder, value, width):
    """An LLVM vector of ``width`` copies of ``value``."""
    lane = ir.IntType(32)
    zeros = ir.Constant(ir.VectorType(value.type, width), None)
    first = builder.insert_element(zeros, value, lane(0))
    return builder.shuffle_vector(first, first, ir.Constant(ir.VectorType(lane, width), None))


def _vector_at(context, builder, array_type, array, index, width):
    """A pointer to ``width`` elements of ``array`` from ``index`` on, as an LLVM vector."""
    data = context.make_array(array_type)(context, builder, array).data
    vector = ir.VectorType(context.get_data_type(array_type.dtype), width)
    return builder.bitcast(builder.gep(data, [index]), vector.as_pointer())


@intrinsic
def _fill16(typingctx, lanes, value):
    """``lanes[:16] = value``, as one vector store.

    (The vector loads of :func:`_max16` that follow would wait for 16 scalar stores.)
    """
    if value != lanes.dtype:
        return None  # (a typing error)

    def codegen(context, builder, sig, args):
        zero = context.get_constant(types.intp, 0)
        target = _vector_at(context, builder, sig.args[0], args[0], zero, 16)
        builder.store(_splat(builder, args[1], 16), target, align=1)
        return context.get_dummy_value()

    return types.void(lanes, value), codegen


@intrinsic
def _max16(typingctx, lanes, column, row, skip):
    """``lanes[j] = max(lanes[j], column[row + j])`` for ``skip <= j < 16``, as vectors.

    ``lanes`` and ``column`` hold the same float type. A loop of 16 scalar maxima compiles to
    scalar code: LLVM unrolls it, and may not move a load of ``column`` above a store to
    ``lanes`` (to it, the two arrays may overlap), so it cannot join the loads into vectors.
    """
    if lanes.dtype != column.dtype or not isinstance(skip, types.Integer):
        return None  # (a typing error)

    def codegen(context, builder, sig, args):
        zero = context.get_constant(types.intp, 0)
        target = _vector_at(context, builder, sig.args[0], args[0], zero, 16)
        source = _vector_at(context, builder, sig.args[1], args[1], args[2], 16)
        old, new = builder.load(target, align=1), builder.load(source, align=1)
        index = args[3].type
        position = ir.Constant(ir.VectorType(index, 16), [index(j) for j in range(16)])
        fresh = builder.icmp_unsigned(">=", position, _splat(builder, args[3], 16))
        higher = builder.and_(builder.fcmp_ordered(">", new, old), fresh)
        builder.store(builder.select(higher, new, old), target, align=1)
        return context.get_dummy_value()

    return types.void(lanes, column, row, skip), codegen


@njit(cache=True, _nrt=False)
def _lane_maxima(lanes, column, n, wide, lowest):
    """``lanes[j]`` = the largest of ``column[:n]`` in lane ``j`` (``lowest``, -inf, for none).

    16 lanes, or 32 when ``wide``: the list goes by blocks of as many rows, row ``j`` of each
    block in lane ``j``, and each block is taken as 16-wide vectors (:func:`_max16`). The rows
    past the last whole block go in one more block, the list's last rows, the rows already
    counted left out (each row still in exactly one lane), where a loop over the remaining
    rows ran scalar (NDCG@10 5% slower on lists of 60 rows on average). ``lanes`` and
    ``lowest`` are of the column's type: float32 scores need no conversion. The vector blocks
    take half the time of a loop of 16 scalar maxima (NDCG@10 2-4% faster on float64 scores).
    """
    un = np.uint64(n)
    half = np.uint64(16)
    width = half + half if wide else half
    _fill16(lanes, lowest)
    if wide:
        _fill16(lanes[16:], lowest)
    if un < width:
        for j in range(un):
            lanes[j] = column[j]
        return
    full = un - (un & (width - np.uint64(1)))
    for row in range(np.uint64(0), full, width):
        _max16(lanes, column, row, np.uint64(0))
        if wide:
            _max16(lanes[16:], column, row + half, np.uint64(0))
    if full != un:
        last = un - width
        counted = width - (un - full)  # lanes whose row of the last block was counted
        _max16(lanes, column, last, min(counted, half))
        if wide:
            _max16(lanes[16:], column, last + half, max(counted, half) - half)


def _left_pack_table():
    """Row ``b`` of 256: the positions of the set bits of ``b``, ascending (then zeros)."""
    table = np.zeros((256, 8), dtype=np.uint8)
    for bits in range(256):
        set_bits = [j for j in range(8) if bits >> j & 1]
        table[bits, : len(set_bits)] = set_bits
    return table


_LEFT_PACK = _left_pack_table()
_BYTES8 = ir.VectorType(ir.IntType(8), 8)
_LEFT_PACK_IR = ir.Constant(
    ir.ArrayType(_BYTES8, 256), [ir.Constant(_BYTES8, [int(v) for v in r]) for r in _LEFT_PACK]
)


@intrinsic
def _pack8(typingctx, cand, column, row, m, bound, skip):
    """Rows ``row + j`` (``skip <= j < 8``) of ``column`` scoring ``bound`` or more, appended.

    Their positions go to ``cand[m:]`` in input order, as one 8-wide store (``cand`` needs
    room for 8 past the last candidate): the comparison mask of the 8 scores picks a row of
    positions from a table of 256 (:data:`_LEFT_PACK`), and advances ``m`` by its bit count.
    Returns ``(m, bad)``, ``bad`` non-zero when one of the scores is NaN or infinite. (The
    scalar loop takes a compare, a store and an add with carry per row.)
    """
    index = types.uint64
    if column.dtype != bound or not all(isinstance(t, types.Integer) for t in (row, m, skip)):
        return None  # (a typing error)

    def codegen(context, builder, sig, args):
        bound = args[4]
        row, m, skip = (context.cast(builder, args[j], sig.args[j], index) for j in (2, 3, 5))
        source = _vector_at(context, builder, sig.args[1], args[1], row, 8)
        x = builder.load(source, align=1)
        i64, i8 = ir.IntType(64), ir.IntType(8)
        position = ir.Constant(ir.VectorType(i64, 8), [i64(j) for j in range(8)])
        fresh = builder.icmp_unsigned(">=", position, _splat(builder, skip, 8))
        above = builder.and_(builder.fcmp_ordered(">=", x, _splat(builder, bound, 8)), fresh)
        spread = builder.fsub(x, x)  # NaN for NaN and infinite scores
        bad = builder.bitcast(builder.fcmp_unordered("uno", spread, spread), i8)
        bits = builder.zext(builder.bitcast(above, i8), i64)
        table = cgutils.global_constant(builder, "_left_pack", _LEFT_PACK_IR)
        picked = builder.load(builder.gep(table, [i64(0), bits]), align=1)
        rows = builder.add(builder.zext(picked, ir.VectorType(i64, 8)), _splat(builder, row, 8))
        target = _vector_at(context, builder, sig.args[0], args[0], m, 8)
        builder.store(rows, target, align=1)
        counted = builder.add(m, builder.ctpop(bits))
        return context.make_tuple(builder, sig.return_type, [counted, builder.zext(bad, i64)])

    return types.UniTuple(index, 2)(cand, column, row, m, bound, skip), codegen


@njit(cache=True, _nrt=False)
def _compact(cand, column, n, bound):
    """The positions of ``column[:n]`` scoring ``bound`` or more into ``cand``, in input order.

    By blocks of 8 rows (:func:`_pack8`; ``cand`` has room for ``n + 8``), the last block
    overlapping the one before, its rows already counted left out: NDCG@10 6-9% faster than a
    branch-free scalar loop (Intel Ice Lake, float64 and int8/float32). Returns how many, or
    -1 when a score is NaN or infinite: the check rides in this pass, where a pass of its own
    read the scores once more (NDCG@10 2-4% faster).
    """
    un = np.uint64(n)
    m = np.uint64(0)
    bad = np.uint64(0)
    if un < np.uint64(8):
        for i in range(un):
            x = column[i]
            cand[m] = i
            m += np.uint64(x >= bound)
            d = x - x  # NaN for inf and NaN, 0 otherwise
            bad |= np.uint64(d != d)
        return -1 if bad else np.int64(m)
    full = un & ~np.uint64(7)
    for row in range(np.uint64(0), full, np.uint64(8)):
        m, found = _pack8(cand, column, row, m, bound, np.uint64(0))
        bad |= found
    if full != un:
        m, found = _pack8(cand, column, un - np.uint64(8), m, bound, full + np.uint64(8) - un)
        bad |= found
    return -1 if bad else np.int64(m)


@njit(cache=True, inline="always", fastmath={"nnan", "nsz"})
def _ordered(a, b):
    """``(a, b)`` with the larger first: a compare-exchange of a sorting network."""
    return max(a, b), min(a, b)


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"})
def _sort16(values):
    """Sort ``values[:16]`` (no NaN) in descending order, by a sorting network.

    Green's network of 60 compare-exchanges in 10 layers (Knuth, TAOCP vol. 3, 5.3.4): on
    values held in registers it is straight-line code of minima and maxima, without a branch
    or a memory round trip, 4x faster here than counting ranks 16 x 16 (which ran as a vector
    loop with a conversion of every comparison mask).
    """
    a0, a1, a2, a3 = values[0], values[1], values[2], values[3]
    a4, a5, a6, a7 = values[4], values[5], values[6], values[7]
    a8, a9, a10, a11 = values[8], values[9], values[10], values[11]
    a12, a13, a14, a15 = values[12], values[13], values[14], values[15]
    a0, a13, a1, a12, a2, a15 = *_ordered(a0, a13), *_ordered(a1, a12), *_ordered(a2, a15)
    a3, a14, a4, a8, a5, a6 = *_ordered(a3, a14), *_ordered(a4, a8), *_ordered(a5, a6)
    a7, a11, a9, a10 = *_ordered(a7, a11), *_ordered(a9, a10)
    a0, a5, a1, a7, a2, a9 = *_ordered(a0, a5), *_ordered(a1, a7), *_ordered(a2, a9)
    a3, a4, a6, a13, a8, a14 = *_ordered(a3, a4), *_ordered(a6, a13), *_ordered(a8, a14)
    a10, a15, a11, a12 = *_ordered(a10, a15), *_ordered(a11, a12)
    a0, a1, a2, a3, a4, a5 = *_ordered(a0, a1), *_ordered(a2, a3), *_ordered(a4, a5)
    a6, a8, a7, a9, a10, a11 = *_ordered(a6, a8), *_ordered(a7, a9), *_ordered(a10, a11)
    a12, a13, a14, a15 = *_ordered(a12, a13), *_ordered(a14, a15)
    a0, a2, a1, a3, a4, a10 = *_ordered(a0, a2), *_ordered(a1, a3), *_ordered(a4, a10)
    a5, a11, a6, a7, a8, a9 = *_ordered(a5, a11), *_ordered(a6, a7), *_ordered(a8, a9)
    a12, a14, a13, a15 = *_ordered(a12, a14), *_ordered(a13, a15)
    a1, a2, a3, a12, a4, a6 = *_ordered(a1, a2), *_ordered(a3, a12), *_ordered(a4, a6)
    a5, a7, a8, a10, a9, a11 = *_ordered(a5, a7), *_ordered(a8, a10), *_ordered(a9, a11)
    a13, a14 = _ordered(a13, a14)
    a1, a4, a2, a6, a5, a8 = *_ordered(a1, a4), *_ordered(a2, a6), *_ordered(a5, a8)
    a7, a10, a9, a13, a11, a14 = *_ordered(a7, a10), *_ordered(a9, a13), *_ordered(a11, a14)
    a2, a4, a3, a6, a9, a12 = *_ordered(a2, a4), *_ordered(a3, a6), *_ordered(a9, a12)
    a11, a13 = _ordered(a11, a13)
    a3, a5, a6, a8, a7, a9 = *_ordered(a3, a5), *_ordered(a6, a8), *_ordered(a7, a9)
    a10, a12 = _ordered(a10, a12)
    a3, a4, a5, a6, a7, a8 = *_ordered(a3, a4), *_ordered(a5, a6), *_ordered(a7, a8)
    a9, a10, a11, a12 = *_ordered(a9, a10), *_ordered(a11, a12)
    a6, a7, a8, a9 = *_ordered(a6, a7), *_ordered(a8, a9)
    values[0], values[1], values[2], values[3] = a0, a1, a2, a3
    values[4], values[5], values[6], values[7] = a4, a5, a6, a7
    values[8], values[9], values[10], values[11] = a8, a9, a10, a11
    values[12], values[13], values[14], values[15] = a12, a13, a14, a15


@njit(cache=True, _nrt=False, fastmath={"nnan", "nsz"})
def _count_higher(above, values, m, width):
    """``above[c]`` = how many of ``values[:m]`` are higher than ``values[c]``, for ``c < width``.

    ``width`` (a multiple of 16, known at run time only) bounds the counting loops, whose
    inner blocks of 16 comparisons LLVM unrolls and vectorises across the values ``c``;
    ``values`` is padded to ``width`` with -inf (which is higher than no value).
    """
    for c in range(np.uint64(width)):
        above[c] = 0
    for block in range(np.uint64(0), np.uint64(width), np.uint64(16)):
        for c in range(np.uint64(width)):
            x = values[c]
            a = above[c]
            for d in range(16):
                a += values[block + d] > x
            above[c] = a


@njit(cache=True, _nrt=False, inline="always")
def _top_bound(lanes, above, views, code, s, n, count):
    """A lower bound of the count-th best score of rows ``s:s+n`` (``count <= 32``), or NaN.

    The count-th largest of 16 (or 32) lane maxima is reached by ``count`` different rows, so
    it is at most the count-th best score. The scores are read in place, in slot ``code`` of
    ``views``; NaN or infinite ones make the bound meaningless (NaN, maybe), and
    :func:`_top_candidates` finds them.
    """
    wide = count > 15  # (32 lanes: 16 bound too loosely above; measured)
    width = 32 if wide else 16
    if code == 0:
        _lane_maxima(lanes, views[0][s : s + n], n, wide, -np.inf)
    else:
        narrow = lanes[_FEW:].view(np.float32)
        _lane_maxima(narrow, views[1][s : s + n], n, wide, np.float32(-np.inf))
        for j in range(width):
            lanes[j] = narrow[j]
    if not wide:
        _sort16(lanes)
        return lanes[count - 1]
    _count_higher(above, lanes, width, width)
    bound = np.inf
    for c in range(width):
        x = lanes[c]
        bound = x if (above[c] < count) & (x < bound) else bound
    return bound


@njit(cache=True, _nrt=False, inline="always")
def _top_candidates(cand, values, views, code, s, n, bound, most):
    """Rows ``s:s+n`` scoring ``bound`` or more: positions in ``cand``, scores in ``values``.

    Returns how many, or -1 when there are more than ``most`` (heavy ties) or a score is NaN
    or infinite (the general path counts them).
    """
    if code == 0:
        m = _compact(cand, views[0][s : s + n], n, bound)
    else:
        # (the bound is one of the float32 scores: compared as float32, exactly)
        m = _compact(cand, views[1][s : s + n], n, np.float32(bound))
    if m < 0 or m > most:
        return -1
    for c in range(m):
        row = np.uint64(s + cand[c])  # (unsigned: no wraparound test for a negative index)
        values[c] = views[0][row] if code == 0 else np.float64(views[1][row])
    return m


@njit(cache=True, _nrt=False, inline="always")
def _top_order(at, cand, values, bits, above, m, count):
    """``at[r]`` = the candidate ranked ``r`` for ``r < count``; False on a tie in the top.

    Tie rules differ only where scores tie: without a tie among the ``count`` best (or
    between the last of them and the next), every rule ranks alike; with one, the general
    path applies the rule. Up to 16 candidates are sorted by :func:`_sort16` on keys: each
    score with the candidate's number in its 4 lowest bits (``bits`` views ``values``).
    Rounding those bits away keeps the order of scores that differ above them (the order of
    floats is that of their bit patterns, reversed for negative ones), and scores that agree
    above them are caught as a tie. More candidates are ranked by counting
    (:func:`_count_higher`), ties caught by two candidates with the same count.
    ``values`` has room for :data:`_TOP_CANDIDATES` entries, padded with -inf here.
    """
    if m <= 16:
        for c in range(m):
            x = values[c] + 0.0  # -0.0 as 0.0: they tie
            values[c] = x
            bits[c] = (bits[c] & ~np.int64(15)) | c
        for c in range(np.uint64(m), np.uint64(16)):  # (unsigned: no wraparound test)
            values[c] = -np.inf
        _sort16(values)
        # (a loop that exits early stays scalar: as a vector loop, its wide loads of the
        # network's scalar stores waited for them to reach the cache; int8/float32 2% faster)
        for r in range(min(count, m - 1)):
            if (bits[r] >> 4) == (bits[r + 1] >> 4):
                return False
        for r in range(count):
            at[r] = cand[bits[r] & 15]
        return True
    width = (m + 15) & ~15
    for c in range(np.uint64(m), np.uint64(width)):
        values[c] = -np.inf
    _count_higher(above, values, m, width)
    seen = np.uint64(0)
    shared = np.uint64(0)
    for c in range(m):
        a = above[c]
        bit = np.uint64(a < count) << np.uint64(min(a, 63))
        shared |= seen & bit
        seen |= bit
        at[min(a, count)] = cand[c]
    return shared == 0


@njit(cache=True, _nrt=False)
def _top_ideal(sums, vals, lanes, above, cand, values, views, code, s, n, count, rules, discount):
    """IDCG prefix sums ``sums[:count + 1]`` of the float grades of rows ``s:s+n``, or False.

    Gains that grow with the grade (exp2, linear, and gains the host computed) are largest for
    the largest grades, whatever their order among equal ones: the best grades are bounded as
    the best scores are (:func:`_top_bound`: at least ``count`` rows reach the bound), the rows
    above the bound are kept, and each is put at its rank, the number of them above it (equal
    grades share it; the ranks after it, left empty, take its grade); the ranks past them hold
    the bound. The gains then add in rank order, as the general path adds its selected gains:
    the same bits. False for integer grade columns or a table of gains (the plan takes the
    short path for these only with integer levels), grades that are NaN or infinite, or more
    than :data:`_TOP_CANDIDATES` rows above the bound: the general path selects the query's
    ideal then. (``vals`` has room for ``count`` entries; the others are the ranking's scratch,
    free again here.)
    """
    if code > 1 or (rules.gain_mode != GAIN_EXP2 and rules.gain_mode != GAIN_LINEAR):
        return False
    if count == 0:  # an empty judgment list
        sums[0] = 0.0
        return True
    bound = _top_bound(lanes, above, views, code, s, n, count)
    if bound != bound:  # (NaN: a grade is NaN; _top_candidates finds the others)
        return False
    # the rows above the bound reach the next value up (of the column's type)
    if code == 0:
        higher = np.nextafter(bound, np.inf)
    else:
        higher = np.float64(np.nextafter(np.float32(bound), np.float32(np.inf)))
    m = _top_candidates(cand, values, views, code, s, n, higher, _TOP_CANDIDATES)
    if m < 0:
        return False
    width = (m + 15) & ~15
    for c in range(np.uint64(m), np.uint64(width)):  # (unsigned: no wraparound test)
        values[c] = -np.inf
    _count_higher(above, values, m, width)
    ranks = np.uint64(count)
    for r in range(ranks):
        vals[r] = np.nan
    for c in range(m):
        rank = above[c]
        if rank < count:
            vals[rank] = values[c]
    if m < count:
        vals[m] = bound
    for r in range(np.uint64(1), ranks):
        vals[r] = vals[r - np.uint64(1)] if vals[r] != vals[r] else vals[r]
    for r in range(ranks):
        vals[r] = _gain(vals[r], rules)
    _prefix_sums(sums, vals, count, discount)
    return True


@njit(cache=True, _nrt=False)
def _gains_at(gains, grades, column, first, at, count, rules):
    """``gains[r]`` = the gain of row ``first + at[r]`` of ``column``, ``grades[r]`` its grade."""
    for r in range(np.uint64(count)):
        grade = np.float64(column[np.uint64(first + at[r])])
        grades[r] = grade
        gains[r] = _gain(grade, rules)


@njit(cache=True, _nrt=False, inline="always")
def _top_gains(gains, grades, views, code, s, at, count, rules):
    """:func:`_gains_at` of rows ``s + at[r]`` of slot ``code`` of the grade ``views``."""
    if code == 0:
        _gains_at(gains, grades, views[0], s, at, count, rules)
    elif code == 1:
        _gains_at(gains, grades, views[1], s, at, count, rules)
    elif code == 2:
        _gains_at(gains, grades, views[2], s, at, count, rules)
    elif code == 3:
        _gains_at(gains, grades, views[3], s, at, count, rules)
    elif code == 4:
        _gains_at(gains, grades, views[4], s, at, count, rules)
    elif code == 5:
        _gains_at(gains, grades, views[5], s, at, count, rules)
    else:
        _gains_at(gains, grades, views[6], s, at, count, rules)


@njit(cache=True, _nrt=False)
def _prefix_sums(sums, gains, count, discount):
    """``sums[r] = sum_{t<r} gains[t] * discount[t]`` for ``r <= count``, added in rank order.

    The running sum is held in a register: through memory each rank would wait for the
    store of the one before.
    """
    total = 0.0
    sums[0] = total
    for r in range(np.uint64(count)):
        total += gains[r] * discount[r]
        sums[r + np.uint64(1)] = total


@njit(cache=True, _nrt=False)
def _touch(column, n):
    """The sum of one value per 64 bytes of ``column[:n]``: reads that bring it into the cache.

    A sequential pass lets the processor fetch the lines ahead; the scattered reads of a few
    rows would each wait for memory.
    """
    total = 0.0
    for i in range(0, n, max(64 // column.itemsize, 1)):
        total += column[i]
    return total


@njit(cache=True, _nrt=False, inline="always")
def _touch_in_place(views, code, s, n):
    """:func:`_touch` of rows ``s:s+n`` of slot ``code`` of the grade ``views``."""
    if code == 0:
        return _touch(views[0][s : s + n], n)
    if code == 1:
        return _touch(views[1][s : s + n], n)
    if code == 2:
        return _touch(views[2][s : s + n], n)
    if code == 3:
        return _touch(views[3][s : s + n], n)
    if code == 4:
        return _touch(views[4][s : s + n], n)
    if code == 5:
        return _touch(views[5][s : s + n], n)
    return _touch(views[6][s : s + n], n)


@njit(cache=True, _nrt=False, inline="always")
def _levels_in_place(level_rows, hist, views, code, s, n, presumed, count, level_order):
    """:func:`_level_rows` of rows ``s:s+n`` of slot ``code`` of the grade ``views``.

    Where the levels are ``presumed``, the grades are checked first: returns how many are not
    among the levels (then nothing is counted).
    """
    outside = 0
    if code == 0:
        column = views[0][s : s + n]
        outside = _outside_levels(column, n, level_rows.size) if presumed else 0
        if not outside:
            _level_rows(level_rows, hist, column, n, count, level_order)
    elif code == 1:
        column = views[1][s : s + n]
        outside = _outside_levels(column, n, level_rows.size) if presumed else 0
        if not outside:
            _level_rows(level_rows, hist, column, n, count, level_order)
    elif code == 2:
        _level_rows(level_rows, hist, views[2][s : s + n], n, count, level_order)
    elif code == 3:
        _level_rows(level_rows, hist, views[3][s : s + n], n, count, level_order)
    elif code == 4:
        _level_rows(level_rows, hist, views[4][s : s + n], n, count, level_order)
    elif code == 5:
        _level_rows(level_rows, hist, views[5][s : s + n], n, count, level_order)
    else:
        _level_rows(level_rows, hist, views[6][s : s + n], n, count, level_order)
    return outside


@njit(cache=True)
def _top_scratch(longest, k_max, n_levels):
    """The scratch of :func:`_top_queries`, for lists up to ``longest`` rows, as one tuple."""
    values = np.empty(_TOP_CANDIDATES, dtype=np.float64)  # the candidates' scores
    return (
        np.empty(2 * _FEW, dtype=np.float64),  # lanes: their maxima (float32 ones: the 2nd half)
        np.empty(_TOP_CANDIDATES, dtype=np.int64),  # above: counted ranks
        np.empty(longest + 8, dtype=np.int64),  # cand: the candidates' positions
        values,
        values.view(np.int64),  # bits: the scores as bit patterns (ranking keys)
        np.empty(k_max + 1, dtype=np.int64),  # at: the candidate at each rank (and overflow)
        np.empty(k_max, dtype=np.float64),  # gains: the gain at each rank
        np.empty(k_max + 1, dtype=np.float64),  # sums: DCG prefix sums
        np.empty(k_max + 1, dtype=np.float64),  # ideal_sums: IDCG prefix sums
        np.empty(2 * k_max + _FEW, dtype=np.float64),  # vals: ideal gains, sorted gains
        np.empty(n_levels, dtype=np.int64),  # level_rows: rows per grade level
        np.zeros(4 * max(n_levels, 1), dtype=np.int64),  # hist: the histogram's copies
    )


@njit(cache=True, _nrt=False)
def _top_queries(q0, q1, inputs, dcg_out, idcg_out, pending, scratch):
    """Score queries ``q0:q1`` by the short-cutoff path; the others' numbers go to ``pending``.

    For plans with scores whose cutoffs are all at most :data:`_FEW` (the plan chooses it:
    ``top_path``). Per query, with ``count = min(k_max, n)``:

    1. one pass over the scores, in place: the maxima of 16 (or 32) lanes; the count-th
       largest lane maximum bounds the count-th best;
    2. a second pass keeps the rows reaching the bound (about ``count + 3`` of them) and
       checks for NaN and infinite scores;
    3. their order (:func:`_top_order`); the gains of the ``count`` best, by rank, and
       their prefix sums, as the general path adds them; the order (or the rows' grades and
       the query's grade levels) where the plan asks for it (``shared``: the measures beside
       nDCG read it);
    4. IDCG: the grade levels counted in one pass (in place), or the largest gain, or the top
       gains sorted (``ideal="local"``), or, for float grades without levels (fractional, or
       gains computed by the host), the gains of the best grades (:func:`_top_ideal`).

    A query goes to ``pending`` (the general path) when a score is NaN or infinite, when
    candidates tie among the best ``count`` (the tie rule decides there), when more than
    :data:`_TOP_CANDIDATES` rows reach the bound (of the scores, or of grades without levels),
    or when it is empty. Returns how many queries are pending, or minus the number of grades
    not among presumed levels in the first query holding one (nothing more is scored then: see
    :class:`Ideal`). ``scratch`` is :func:`_top_scratch`'s (without Numba's runtime here:
    reading an array out of a tuple or a record takes and drops a reference to it, atomic
    operations that doubled the cost of a query).
    """
    offsets, grade_views, grade_code, score_views, score_code = inputs[0][:5]
    ideal_offsets, ideal_views, ideal_code = inputs[0][6:]
    discount, discount_prefix, cutoffs, k_max = inputs[2][:4]
    best_rows, best_grades, level_counts = inputs[2][5:8]
    rules, ideal = Rules(*inputs[1]), Ideal(*inputs[3])
    lanes, above, cand, values, bits, at, gains, sums, ideal_sums, vals = scratch[:10]
    level_rows, hist = scratch[10:]
    n_cut = cutoffs.size
    # grades without levels (fractional, or gains computed by the host): IDCG from the best
    by_grades = ideal.mode == IDEAL_RECALL or ideal.mode == IDEAL_GLOBAL
    selects = by_grades and ideal.level_order.size == 0
    n_pending = 0
    for q in range(q0, q1):
        s = offsets[q]
        n = offsets[q + 1] - s
        si = s
        m_ideal = n
        if ideal.mode == IDEAL_GLOBAL:
            si = ideal_offsets[q]
            m_ideal = ideal_offsets[q + 1] - si
        if n == 0:
            pending[n_pending] = q
            n_pending += 1
            continue
        count = min(k_max, n)
        # 1-2. the rows that may rank among the best `count`
        bound = _top_bound(lanes, above, score_views, score_code, s, n, count)
        m = -1
        if bound == bound:  # (NaN: a score is NaN or infinite)
            m = _top_candidates(cand, values, score_views, score_code, s, n, bound, _TOP_CANDIDATES)
        if m < 0 or not _top_order(at, cand, values, bits, above, m, count):
            pending[n_pending] = q
            n_pending += 1
            continue
        # 3. the grade levels of the ideal, counted first: the pass brings the query's grades
        #    into the cache before the gains of the best rows are read from them (without it,
        #    one row per cache line is read for that)
        outside = 0
        ideal_count = min(k_max, m_ideal)
        presumed, order = ideal.levels_presumed, ideal.level_order
        found = True
        if selects and ideal.mode == IDEAL_GLOBAL:  # (each list named in its own call)
            found = _top_ideal(
                ideal_sums, vals, lanes, above, cand, values, ideal_views, ideal_code, si,
                m_ideal, ideal_count, rules, discount,
            )  # fmt: skip
        elif selects:
            found = _top_ideal(
                ideal_sums, vals, lanes, above, cand, values, grade_views, grade_code, s, n,
                ideal_count, rules, discount,
            )  # fmt: skip
        elif ideal.mode == IDEAL_RECALL:
            outside = _levels_in_place(
                level_rows, hist, grade_views, grade_code, s, n, presumed, ideal_count, order
            )
        else:
            if ideal.mode == IDEAL_GLOBAL:
                outside = _levels_in_place(
                    level_rows,
                    hist,
                    ideal_views,
                    ideal_code,
                    si,
                    m_ideal,
                    presumed,
                    ideal_count,
                    order,
                )
            lanes[0] = _touch_in_place(grade_views, grade_code, s, n)
        if outside:  # grades presumed among the levels are not: the plan is made again
            return -outside
        if not found:  # grades without levels the bound cannot select: the general path does
            pending[n_pending] = q
            n_pending += 1
            continue
        # 4. DCG: gains by rank (their grades in `vals`), summed in rank order
        _top_gains(gains, vals, grade_views, grade_code, s, at, count, rules)
        # the measures beside nDCG read this ranking (no tie: any rule's) where asked, once the
        # grades are checked: the query's grade levels and the rows' grades, or the rows
        if best_rows.shape[0]:
            recall = ideal.mode == IDEAL_RECALL and not selects
            rows, grades, counts = best_rows[q], best_grades[q], level_counts[q]
            _share(rows, grades, counts, at, vals, count, recall, level_rows, n)
        _prefix_sums(sums, gains, count, discount)
        for j in range(n_cut):
            dcg_out[j, q] = sums[min(cutoffs[j], n)]
        # 5. IDCG
        if ideal.mode == IDEAL_MAX:
            for j in range(n_cut):
                idcg_out[j, q] = ideal.max_gain * discount_prefix[cutoffs[j]]
        elif ideal.mode == IDEAL_LOCAL:
            for j in range(n_cut):
                cut = min(cutoffs[j], n)
                for t in range(cut):
                    vals[t] = gains[t]
                _sort_desc(vals, cut)
                total = 0.0
                for t in range(cut):
                    total += vals[t] * discount[t]
                idcg_out[j, q] = total
        else:
            if not selects:
                _ideal_gains(vals, level_rows, ideal_count, ideal)
                _prefix_sums(ideal_sums, vals, ideal_count, discount)
            for j in range(n_cut):
                idcg_out[j, q] = ideal_sums[min(cutoffs[j], m_ideal)]
    return n_pending


# ---------------------------------------------------------------------------------------------
# driver


@njit(cache=True, inline="always")
def _depth(cutoff, n):
    """The ranks a cutoff reads in a list of ``n`` rows (``cutoff < 0``: the whole list)."""
    return n if cutoff < 0 else min(cutoff, n)


@njit(cache=True, nogil=True)
def _general_queries(
    q0, q1, inputs, dcg_out, idcg_out, pending, n_pending, top_path, longest, longest_ideal
):
    """Score the queries the general path serves (see :func:`score_queries`).

    Those are ``pending[:n_pending]`` after the short-cutoff path (``top_path``), else
    ``q0:q1``; lists have up to ``longest`` rows (``longest_ideal`` for judgment lists). Returns
    the number of NaN or infinite scores met, plus that of grades not among presumed levels.
    """
    # the data and the cutoffs, read by this function only, as names (as records their array
    # fields would be counted references: 0.17 us more a call, 5% of a one-list call)
    offsets, grade_views, grade_code, score_views, score_code, ranked = inputs[0][:6]
    ideal_offsets, ideal_views, ideal_code = inputs[0][6:]
    discount, discount_prefix, cutoffs, k_max = inputs[2][:4]
    rules, ideal = Rules(*inputs[1]), Ideal(*inputs[3])
    n_cut = cutoffs.size
    whole = False
    for j in range(n_cut):
        whole |= cutoffs[j] < 0
    cap = longest if whole else min(k_max, longest)
    size = max(longest, 1)
    # scratch, sized for the chunk's longest list
    g = np.empty(size, dtype=np.float64)  # the query's grades
    sc = np.empty(size + _FEW, dtype=np.float64)  # the query's scores (room for padding)
    ig = np.empty(max(longest_ideal, 1), dtype=np.float64)  # its judgment list (global ideal)
    buf = np.empty(size, dtype=np.int64)  # the ranked positions, best first
    top = np.empty(size, dtype=np.float64)  # ... and their scores
    tmp_buf = np.empty(size, dtype=np.int64)  # candidate positions; the merge sort's scratch
    tmp_top = np.empty(size + _FEW, dtype=np.float64)  # ... and their scores (room for padding)
    rank = np.empty(size, dtype=np.int64)
    sample = np.empty(_SAMPLE + _PAD, dtype=np.float64)  # (room for padding)
    sample_order = np.empty(2 * _SAMPLE, dtype=np.int64)
    column_max = np.empty(max(SMALL_SELECT, _FEW), dtype=np.float64)
    prefix = np.empty(cap + 1, dtype=np.float64)  # prefix sums of discounted gains
    mean_gain = np.empty(max(cap, 1), dtype=np.float64)  # the gain each rank carries
    group_end = np.empty(max(cap, 1), dtype=np.int64)  # where the rank's tie group ends
    pool = np.empty(size, dtype=np.float64)  # the gains of a tie group
    ideal_prefix = np.empty(max(longest_ideal, cap) + 1, dtype=np.float64)
    vals = np.empty(2 * max(longest_ideal, cap, 1) + _FEW, dtype=np.float64)  # ideal gains, room
    level_rows = np.empty(ideal.level_order.size, dtype=np.int64)
    hist = np.zeros(4 * max(ideal.level_order.size, 1), dtype=np.int64)
    # DCG by counted ranks ranks nothing: it borrows the ranking's and the prefix sums' buffers
    counting = Counting(
        narrow=np.empty(size + _PAD32, dtype=np.float32),
        gains=top,
        useful=rank,
        by_rank=mean_gain,
        sums=prefix,
        span=np.zeros(max(cap, 1), dtype=np.int64),
        starts=buf,
        tied_at=tmp_buf,
        tied_gain=pool,
        bucket=np.empty(size, dtype=np.float64),
        fill=group_end,
    )
    average = rules.tie_mode == TIE_AVERAGE and not ranked
    input_order_ties = rules.tie_mode == TIE_STABLE or rules.tie_mode == TIE_AVERAGE
    by_count = input_order_ties and ideal.mode != IDEAL_LOCAL
    # whether counting first tries ranks without a repeated score (not a literal True: a
    # literal passed on has Numba compile the callee once more)
    distinct = np.bool_(True)
    nonfinite = 0

    for p in range(n_pending):
        q = pending[p] if top_path else q0 + p
        s = offsets[q]
        n = offsets[q + 1] - s
        count = n if whole else min(k_max, n)
        _load_grades(grade_views, grade_code, s, n, g)
        if ideal.levels_presumed:  # grades not scanned: checked before any is used (see Ideal)
            outside = _outside_levels(g, n, ideal.level_order.size)
            if outside:
                return nonfinite + outside

        # 0. IDCG from the query's (or its judgment list's) grades, before the ranking: its
        #    chain of additions then runs beside the ranking's independent work
        if ideal.mode != IDEAL_MAX and ideal.mode != IDEAL_LOCAL:
            #    (each list named in its own call: a variable naming either would take and drop
            #    a reference per query, two atomic operations, 5% of a 40-row query)
            m = n
            if ideal.mode == IDEAL_GLOBAL:
                si = ideal_offsets[q]
                m = ideal_offsets[q + 1] - si
                _load_grades(ideal_views, ideal_code, si, m, ig)
            ideal_count = m if whole else min(k_max, m)
            if ideal.mode == IDEAL_GLOBAL:
                _ideal_prefix(
                    ideal_prefix, vals, level_rows, hist, ig, m, ideal_count, rules, ideal, discount
                )
            else:
                _ideal_prefix(
                    ideal_prefix, vals, level_rows, hist, g, m, ideal_count, rules, ideal, discount
                )
            for j in range(n_cut):
                idcg_out[j, q] = ideal_prefix[_depth(cutoffs[j], m)]

        # 1. the best `count` positions in rank order, their scores in `top`; `tied`: score of
        #    the last selected tie group when positions outside the selection share it. With
        #    ties in input order and no local ideal, the prefix sums come from counted ranks.
        tied = np.nan
        counted = False
        kept = 0
        if ranked:
            for t in range(count):
                buf[t] = t
        else:
            bad = _load_scores(score_views, score_code, s, n, sc)
            if bad:
                nonfinite += bad
                if _holds_nan(sc, n):  # the caller raises; the ranking code assumes no NaN
                    for j in range(n_cut):
                        dcg_out[j, q] = np.nan
                        idcg_out[j, q] = np.nan
                    continue
            select = count <= SMALL_SELECT and count < n
            m = n
            if select:
                if count <= _FEW or n >= _WEAK_BOUND * count:
                    m = _candidates(tmp_buf, tmp_top, column_max, n, count, sc)
                else:  # the column bound would keep nearly every row: narrow them all
                    _every_row(tmp_buf, tmp_top, n, sc)
                if m > max(count + count // 4 + 16, _NARROW_FROM):
                    m = _narrow(tmp_buf, tmp_top, sample, sample_order, m, count)
            if by_count and (not select or _COUNT_FROM < m <= RANK_BY_COUNT):
                if not select:
                    _every_row(tmp_buf, tmp_top, n, sc)
                kept = _gather_gains(top, rank, tmp_buf, m, g, rules)  # counting's gains, useful
                counted = kept * m <= COUNT_BUDGET
            if counted:
                exact = score_code == 1  # float32 scores
                distinct = _dcg_by_count(
                    counting, tmp_top, kept, m, count, exact, average, distinct, discount
                )
            elif select:
                if input_order_ties and m <= RANK_BY_COUNT:
                    tied = _select_by_count(buf, top, tmp_buf, tmp_top, rank, m, count)
                else:
                    tied = _select_by_score(buf, top, tmp_buf, tmp_top, m, count, g, s, rules)
            else:
                if input_order_ties and n <= RANK_BY_COUNT:
                    _sort_by_count(buf, top, rank, n, sc)
                else:
                    _sort_by_score(buf, top, tmp_buf, tmp_top, n, sc, g, s, rules)
                if count < n and top[count] == top[count - 1]:
                    tied = top[count]

        # 2. prefix sums of discounted gains (tie groups carry their mean gain). Not a helper:
        #    a call passes every array field by field on the stack, and this one, even where
        #    not taken, made the whole loop slower (measured: k=10 +40%, one-row lists 2x)
        if not counted:
            prefix[0] = 0.0
            if average:
                t = 0
                while t < count:
                    level = top[t]
                    stop = t + 1
                    while stop < count and top[stop] == level:
                        stop += 1
                    total = 0.0
                    members = stop - t
                    if stop == count and tied == level:
                        # positions with this score lie beyond the selection: take the whole group
                        members = np.int64(0)  # (not a literal: see longest)
                        for i in range(n):
                            if sc[i] == level:
                                pool[members] = _gain(g[i], rules)
                                members += 1
                        total = _tie_total(pool, members)
                    elif members > 1:
                        for u in range(t, stop):
                            pool[u - t] = _gain(g[buf[u]], rules)
                        total = _tie_total(pool, members)
                    else:
                        total += _gain(g[buf[t]], rules)
                    mean = total / members if members > 1 else total
                    for u in range(t, stop):
                        mean_gain[u] = mean
                        group_end[u] = t + members
                        prefix[u + 1] = prefix[u] + mean * discount[u]
                    t = stop
            else:
                for t in range(count):
                    gain = _gain(g[buf[t]], rules)
                    prefix[t + 1] = prefix[t] + gain * discount[t]

        # 3. DCG per cutoff
        for j in range(n_cut):
            dcg_out[j, q] = prefix[_depth(cutoffs[j], n)]

        # 4. IDCG per cutoff, where it needs no grade count (see 0.)
        if ideal.mode == IDEAL_MAX:
            for j in range(n_cut):
                slots = n if cutoffs[j] < 0 else cutoffs[j]
                idcg_out[j, q] = ideal.max_gain * discount_prefix[slots]
        elif ideal.mode == IDEAL_LOCAL:
            for j in range(n_cut):
                cut = _depth(cutoffs[j], n)
                idcg_out[j, q] = _local_ideal(
                    vals, buf, mean_gain, group_end, cut, average, g, rules, discount
                )
    return nonfinite


@njit(cache=True, nogil=True)
def score_queries(q0, q1, inputs, dcg_out, idcg_out):
    """Fill ``dcg_out[j, q]`` and ``idcg_out[j, q]`` for queries ``q0:q1`` and every cutoff ``j``.

    The outputs are (n_cutoffs, n_queries): callers see them transposed, as (n_queries,
    n_cutoffs) arrays whose columns are contiguous, which the per-cutoff means read fast.

    ``inputs`` is :meth:`KernelArgs.packed() <fastndcg._backends.numba.args.KernelArgs.packed>`:
    four plain tuples (the lists, :class:`Rules`, the cutoffs, :class:`Ideal`), named here.
    ``cutoffs[j] < 0`` means the whole list; ``k_max`` is the largest finite cutoff.

    Returns the number of NaN or infinite scores met (scores are checked as they are loaded,
    not by a separate pass; infinite scores are valid where the caller has checked the column
    already, as before rounding to float32), plus that of grades not among the plan's levels
    where they are presumed (:class:`Ideal`; scoring stops at the first query holding one).
    A query holding a NaN score is not ranked: its DCG and IDCG are NaN, and the caller raises.
    The GIL is released, so threads score different query ranges at once. The short-cutoff
    path (:func:`_top_queries`) and the general one (:func:`_general_queries`) are compiled
    apart, so that ``fastndcg warmup`` compiles them in two processes at once
    (:func:`compile_part`); this driver then links them from the cache.
    """
    offsets, ideal_offsets = inputs[0][0], inputs[0][6]
    k_max, top_path = inputs[2][3], inputs[2][4]
    # int64 zeros, not literals: a literal passed on has Numba compile the callee once more
    longest = np.int64(0)
    longest_ideal = np.int64(0)
    for q in range(q0, q1):
        longest = max(longest, offsets[q + 1] - offsets[q])
        longest_ideal = max(longest_ideal, ideal_offsets[q + 1] - ideal_offsets[q])
    # the short-cutoff path first; the queries it leaves (and all, without it) follow here
    pending = np.empty(q1 - q0 if top_path else 0, dtype=np.int64)
    n_pending = q1 - q0
    if top_path:
        # (the best grades of judgment lists, ideal="global", are compacted too)
        rows = max(longest, longest_ideal)
        scratch = _top_scratch(rows, k_max, Ideal(*inputs[3]).level_order.size)
        n_pending = _top_queries(q0, q1, inputs, dcg_out, idcg_out, pending, scratch)
        if n_pending <= 0:  # (0: none left; the general path's scratch is not allocated)
            return -n_pending
    return _general_queries(
        q0, q1, inputs, dcg_out, idcg_out, pending, n_pending, top_path, longest, longest_ideal
    )


def compile_part(part, inputs, dcg_out, idcg_out):
    """Compile ``part`` of :func:`score_queries` into the cache, by calling it on no query.

    ``"short"`` (:func:`_top_queries`) and ``"general"`` (:func:`_general_queries`), with the
    types the driver passes them, compile independently: ``fastndcg warmup`` compiles them in
    two processes at once; ``"whole"``, the driver, then links them from the cache.
    ``inputs``, ``dcg_out`` and ``idcg_out`` are those of any call of :func:`score_queries`.
    """
    pending = np.empty(0, dtype=np.int64)
    none = np.int64(0)
    if part == "short":
        scratch = _top_scratch(none, inputs[2][3], Ideal(*inputs[3]).level_order.size)
        _top_queries(none, none, inputs, dcg_out, idcg_out, pending, scratch)
    elif part == "general":
        _general_queries(none, none, inputs, dcg_out, idcg_out, pending, none, False, none, none)
    else:
        score_queries(none, none, inputs, dcg_out, idcg_out)


@njit(cache=True)
def compiled_codes():
    """The integer codes as frozen into the compiled kernels (to detect a stale cache)."""
    return (
        TIE_AVERAGE,
        TIE_STABLE,
        TIE_PESSIMISTIC,
        TIE_OPTIMISTIC,
        TIE_RANDOM,
        TIE_KEY,
        GAIN_EXP2,
        GAIN_LINEAR,
        IDEAL_GLOBAL,
        IDEAL_LOCAL,
        IDEAL_MAX,
        IDEAL_RECALL,
    )
