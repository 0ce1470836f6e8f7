"""Numba kernels of TREC files and runs.

The separator scan of text files, the join of a run with its judgments, trec_eval's order of
tied scores by document id, and the ``-M`` cut.

One call tree per file (Numba's cache sees the changes of this file only): the heap helper
``_sift_down`` is this file's own.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fastndcg._contract.codes import SPLITMIX_GOLDEN

_GOLDEN = np.uint64(SPLITMIX_GOLDEN)


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


# ---------------------------------------------------------------------------------------------
# the separator scan of TREC text files

_ONES = np.uint64(0x0101010101010101)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)


@njit(cache=True, inline="always")
def _zero_bytes(word):
    """The high bit of each byte of ``word`` that is zero, and no other bit."""
    return ~(((word & _LOW7) + _LOW7) | word | _LOW7)


@njit(cache=True, nogil=True)
def stray_whitespace(words, a, b, separator, other):
    """Whether bytes ``words[a:b]`` (8 to a word) hold whitespace besides single separators.

    That is a byte ``other`` (the other field separator), a vertical tab or a form feed, or two
    ``separator`` bytes in a row (``words[b]`` is read for the pair across the last word).
    Eight bytes are compared at once in each 64-bit word, and the words are vectorised.
    """
    separators = _ONES * np.uint64(separator)
    others = _ONES * np.uint64(other)
    vertical_tabs = _ONES * np.uint64(11)
    form_feeds = _ONES * np.uint64(12)
    found = np.uint64(0)
    for j in range(np.uint64(a), np.uint64(b)):
        word = words[j]
        here = _zero_bytes(word ^ separators)  # the separator bytes of this word
        next_word = _zero_bytes(words[j + np.uint64(1)] ^ separators)
        found |= _zero_bytes(word ^ others) | _zero_bytes(word ^ vertical_tabs)
        found |= _zero_bytes(word ^ form_feeds) | (here & (here >> np.uint64(8)))
        found |= (here >> np.uint64(56)) & next_word & np.uint64(0x80)
    return found != 0


# ---------------------------------------------------------------------------------------------
# joining a run with its judgments (fastndcg.ndcg_run)


@njit(cache=True, _nrt=False)
def _id_hash(data, a, b):
    """FNV-1a hash of the bytes ``data[a:b]`` (a document id).

    Its low bits see only the low bits of each byte: tables take the high bits of
    ``hash * _GOLDEN``.
    """
    h = np.uint64(0xCBF29CE484222325)
    for i in range(a, b):
        h = (h ^ np.uint64(data[i])) * np.uint64(0x100000001B3)
    return h


@njit(cache=True, _nrt=False)
def _compare_ids(data, a0, a1, other, b0, b1):
    """Sign of the byte-wise comparison of ``data[a0:a1]`` with ``other[b0:b1]`` (-1, 0, 1).

    Lexicographic on unsigned bytes; a proper prefix comes first (C's ``strcmp`` order).
    """
    n = min(a1 - a0, b1 - b0)
    for i in range(n):
        x = data[a0 + i]
        y = other[b0 + i]
        if x != y:
            return -1 if x < y else 1
    if a1 - a0 == b1 - b0:
        return 0
    return -1 if a1 - a0 < b1 - b0 else 1


@njit(cache=True, _nrt=False)
def _table_size(entries):
    """Size of a hash table for ``entries`` keys, and the shift that picks its slots.

    The size is the smallest power of two of at least ``2 * entries`` (and at least 2); a
    key's slot is the high bits of ``hash * _GOLDEN``, shifted right by 64 - log2(size).
    """
    size = 2
    shift = np.uint64(63)
    while size < 2 * entries:
        size *= 2
        shift -= np.uint64(1)
    return size, shift


@njit(cache=True, nogil=True)
def match_judgments(
    q0,
    q1,
    offsets,
    order,
    bounds,
    data,
    judged_offsets,
    judged_rows,
    judged_bounds,
    judged_data,
    judged_labels,
    labels,
    duplicate,
):
    """Label of every run row of queries ``q0:q1`` from its query's judgments (NaN: unjudged).

    Document ids are byte strings: id ``r`` of the run is ``data[bounds[r]:bounds[r + 1]]``,
    likewise for the judgments. Run rows are grouped by query through ``order`` (position
    ``p`` of the CSR ``offsets`` is row ``order[p]``; empty: row ``p``) and judgments through
    ``judged_rows`` (position ``p`` of ``judged_offsets`` is judgment ``judged_rows[p]``), over
    the same queries. Each query is joined through a small hash table (a power of two, at
    least twice the query's run rows plus judgments) of its ids, compared byte by byte when
    their hashes agree: nothing global is hashed, and no table outgrows the CPU caches. A
    document met twice in the run is a repeated row: the first such position of the range goes
    to ``duplicate[0]`` if that is still negative. ``labels[p]`` is written by position.
    Releases the GIL, so threads join different query ranges at once.
    """
    longest = 1
    for q in range(q0, q1):
        longest = max(
            longest, offsets[q + 1] - offsets[q] + judged_offsets[q + 1] - judged_offsets[q]
        )
    capacity = 2
    while capacity < 2 * longest:
        capacity *= 2
    entry = np.empty(capacity, dtype=np.int64)  # -1: empty; j < m: judgment j; m + t: run row t
    hashes = np.empty(capacity, dtype=np.uint64)
    values = np.empty(capacity, dtype=np.float64)
    in_run = np.empty(capacity, dtype=np.bool_)
    grouped = order.size == 0
    for q in range(q0, q1):
        s = offsets[q]
        n = offsets[q + 1] - s
        js = judged_offsets[q]
        m = judged_offsets[q + 1] - js
        size, shift = _table_size(n + m)
        mask = np.uint64(size - 1)
        entry[:size] = -1
        for t in range(m):
            r = judged_rows[js + t]
            a = judged_bounds[r]
            b = judged_bounds[r + 1]
            h = _id_hash(judged_data, a, b)
            slot = (h * _GOLDEN) >> shift
            while entry[slot] != -1:
                if hashes[slot] == h:
                    other = judged_rows[js + entry[slot]]
                    c = judged_bounds[other]
                    d = judged_bounds[other + 1]
                    if _compare_ids(judged_data, a, b, judged_data, c, d) == 0:
                        break  # a repeated judgment keeps its first label
                slot = (slot + np.uint64(1)) & mask
            if entry[slot] == -1:
                entry[slot] = t
                hashes[slot] = h
                values[slot] = judged_labels[r]
                in_run[slot] = False
        for t in range(n):
            r = s + t if grouped else order[s + t]
            a = bounds[r]
            b = bounds[r + 1]
            h = _id_hash(data, a, b)
            slot = (h * _GOLDEN) >> shift
            while entry[slot] != -1:
                if hashes[slot] == h:
                    e = entry[slot]
                    if e < m:
                        other = judged_rows[js + e]
                        same = _compare_ids(
                            data, a, b, judged_data, judged_bounds[other], judged_bounds[other + 1]
                        )
                    else:
                        other = s + e - m if grouped else order[s + e - m]
                        same = _compare_ids(data, a, b, data, bounds[other], bounds[other + 1])
                    if same == 0:
                        break
                slot = (slot + np.uint64(1)) & mask
            if entry[slot] == -1:
                entry[slot] = m + t
                hashes[slot] = h
                values[slot] = np.nan
            elif in_run[slot] and duplicate[0] < 0:
                duplicate[0] = s + t
            in_run[slot] = True
            labels[s + t] = values[slot]


@njit(cache=True, _nrt=False)
def _id_prefix(data, a, b):
    """The first 8 bytes of ``data[a:b]`` as a big-endian integer, zero-padded.

    Ids whose integers differ compare as the integers do; equal ones must compare their bytes.
    """
    key = np.uint64(0)
    for i in range(8):
        byte = np.uint64(data[a + i]) if a + i < b else np.uint64(0)
        key = (key << np.uint64(8)) | byte
    return key


_NEGATIVE_ZERO = np.uint64(0x8000000000000000)


@njit(cache=True, _nrt=False)
def _scores_tie(rows, n, scores, score_bits, slots):
    """Whether two of the rows ``rows[:n]`` have equal ``scores``.

    An open-addressing set of the scores (hashed by their bits, -0.0 as 0.0) in ``slots``:
    the smallest power of two of at least ``2 * n`` entries, so ``4 * n`` suffice.
    """
    size, shift = _table_size(n)
    mask = np.uint64(size - 1)
    slots[:size] = -1
    for t in range(n):
        r = rows[t]
        bits = score_bits[r]
        if bits == _NEGATIVE_ZERO:
            bits = np.uint64(0)
        slot = (bits * _GOLDEN) >> shift
        while slots[slot] != -1:
            if scores[slots[slot]] == scores[r]:
                return True
            slot = (slot + np.uint64(1)) & mask
        slots[slot] = r
    return False


@njit(cache=True, nogil=True)
def descending_id_ranks(q0, q1, offsets, order, bounds, data, scores, score_bits, ranks):
    """``ranks[row]`` = place of the row's document id in its query, in descending byte order.

    For the rows of queries ``q0:q1`` (grouped as in :func:`match_judgments`); the ids of a
    query are distinct. A bottom-up merge sort of the query's rows by the integer of 8 bytes of
    each id (:func:`_id_prefix`), those after the bytes all the query's ids start with,
    comparing the whole ids byte by byte only when those integers agree
    (:func:`_compare_ids`). trec_eval breaks score ties this way; only the order within a
    query matters, so no id is compared with another query's.

    The ranks matter only between rows with equal ``scores`` (the scores as ranked;
    ``score_bits`` their bits): a query without two equal scores is not sorted, its rows get
    distinct ranks in row order.
    """
    longest = 1
    for q in range(q0, q1):
        longest = max(longest, offsets[q + 1] - offsets[q])
    rows = np.empty(longest, dtype=np.int64)
    prefix = np.empty(longest, dtype=np.uint64)
    src = np.empty(longest, dtype=np.int64)  # positions in the query, sorted in runs
    dst = np.empty(longest, dtype=np.int64)
    slots = np.empty(4 * longest, dtype=np.int64)
    b = bounds
    grouped = order.size == 0
    for q in range(q0, q1):
        s = offsets[q]
        n = offsets[q + 1] - s
        for t in range(n):
            rows[t] = s + t if grouped else order[s + t]
            src[t] = t
        if not _scores_tie(rows, n, scores, score_bits, slots):
            for t in range(n):
                ranks[rows[t]] = t
            continue
        # the bytes all ids of the query start with ("msmarco_passage_..."): the integers
        # start after them
        common = 0
        if n > 0:
            first = b[rows[0]]
            common = b[rows[0] + 1] - first
            for t in range(1, n):
                start = b[rows[t]]
                length = min(common, b[rows[t] + 1] - start)
                common = 0
                while common < length and data[start + common] == data[first + common]:
                    common += 1
        for t in range(n):
            prefix[t] = _id_prefix(data, b[rows[t]] + common, b[rows[t] + 1])
        a_buf, b_buf = src, dst
        width = 1
        while width < n:
            for lo in range(0, n, 2 * width):
                mid = min(lo + width, n)
                hi = min(lo + 2 * width, n)
                i = lo
                j = mid
                o = lo
                while i < mid and j < hi:
                    x = a_buf[i]
                    y = a_buf[j]
                    # the larger id goes first; equal ones (none in a query) keep their order
                    if prefix[y] != prefix[x]:
                        right = prefix[y] > prefix[x]
                    else:
                        u = rows[x]
                        v = rows[y]
                        right = _compare_ids(data, b[v], b[v + 1], data, b[u], b[u + 1]) > 0
                    if right:
                        b_buf[o] = y
                        j += 1
                    else:
                        b_buf[o] = x
                        i += 1
                    o += 1
                while i < mid:
                    b_buf[o] = a_buf[i]
                    i += 1
                    o += 1
                while j < hi:
                    b_buf[o] = a_buf[j]
                    j += 1
                    o += 1
            a_buf, b_buf = b_buf, a_buf
            width *= 2
        for t in range(n):
            ranks[rows[a_buf[t]]] = t


@njit(cache=True, nogil=True)
def first_ranked(q0, q1, offsets, order, scores, tie_key, max_docs, keep):
    """``keep[row] = True`` for the first ``max_docs`` rows of each query ``q0:q1``'s ranking.

    Rows grouped as in :func:`match_judgments`. The ranking is by score, descending; tied
    scores by ``tie_key`` ascending (distinct within a query), or by place in the query (run
    order) when ``tie_key`` is empty. No query is sorted: a min-heap of the ``max_docs`` best
    scores gives the threshold score ``T`` (the ``max_docs``-th best); rows above ``T`` are
    kept, and among the rows at ``T`` those first in tie order, found by a second heap when
    more of them tie than places are left. ``O(n log max_docs)`` per query of ``n`` rows.
    """
    longest = 1
    for q in range(q0, q1):
        longest = max(longest, offsets[q + 1] - offsets[q])
    heap = np.empty(min(longest, max_docs), dtype=np.float64)
    tied = np.empty(longest, dtype=np.int64)  # rows scoring the threshold
    grouped = order.size == 0
    by_key = tie_key.size > 0
    for q in range(q0, q1):
        s = offsets[q]
        n = offsets[q + 1] - s
        if n <= max_docs:
            for t in range(n):
                keep[s + t if grouped else order[s + t]] = True
            continue
        for t in range(max_docs):
            heap[t] = scores[s + t if grouped else order[s + t]]
        for root in range(max_docs // 2 - 1, -1, -1):
            _sift_down(heap, root, max_docs)
        for t in range(max_docs, n):
            value = scores[s + t if grouped else order[s + t]]
            if value > heap[0]:
                heap[0] = value
                _sift_down(heap, np.int64(0), max_docs)
        threshold = heap[0]
        left = max_docs  # places left for the rows at the threshold
        n_tied = 0
        for t in range(n):
            row = s + t if grouped else order[s + t]
            value = scores[row]
            if value > threshold:
                keep[row] = True
                left -= 1
            elif value == threshold:
                tied[n_tied] = row
                n_tied += 1
        if n_tied == left or not by_key:  # run order: the first ``left`` of them
            for t in range(left):
                keep[tied[t]] = True
            continue
        # the ``left`` smallest keys: a min-heap of negated keys (exact below 2**53)
        for t in range(left):
            heap[t] = -np.float64(tie_key[tied[t]])
        for root in range(left // 2 - 1, -1, -1):
            _sift_down(heap, root, left)
        for t in range(left, n_tied):
            value = -np.float64(tie_key[tied[t]])
            if value > heap[0]:
                heap[0] = value
                _sift_down(heap, np.int64(0), left)
        for t in range(n_tied):
            if -np.float64(tie_key[tied[t]]) >= heap[0]:
                keep[tied[t]] = True
