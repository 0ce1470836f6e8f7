"""Host side of the CUDA backend: device columns in, kernel launches, results out.

Every launch and copy of one call goes on one stream: the stream a device input named (CUDA
Array Interface ``stream``), else numba's default stream. Launches are queued without waiting;
the host waits once, for the few numbers a check needs or for the results at the end, and the
call's device memory is released before it returns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fastndcg._backends.cuda import common, groups, interop, scan, score, sort
from fastndcg._backends.cuda.common import Cuts, Keys, Levels, Lists, Out, Rules, Segments, Sorted
from fastndcg._contract import ColumnStats, Plan
from fastndcg._contract import codes as C

_TESTS = {
    "negative": scan.NEGATIVE,
    "outside": scan.OUTSIDE,
    "nonintegral": scan.NONINTEGRAL,
    "beyond_exact": scan.BEYOND_EXACT,
    "unmapped": scan.UNMAPPED,
    "nonfinite": scan.NONFINITE,
}
_MAX_GRID = 1 << 16  # blocks of a grid-stride kernel
_SCAN_BLOCKS = 1024  # blocks of the column scans (their partial results come to the host)


def _blocks(n: int, per_block: int) -> int:
    return max(1, min(_MAX_GRID, -(-n // per_block)))


def _exclusive(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=out[1:])
    return out


class Launcher:
    """Launches the kernels of ``score.py``, ``sort.py`` and ``scan.py`` with numba-cuda."""

    def __init__(self, cuda: Any) -> None:
        self.cuda = cuda
        self.simulated = bool(cuda.config.ENABLE_CUDASIM)

    # -- device columns ----------------------------------------------------------------------

    def is_device_array(self, values: Any) -> bool:
        """Whether ``values`` is a numba device array (real or simulated)."""
        return bool(getattr(values, "__cuda_ndarray__", False))

    def device_column(self, values: Any) -> Any:
        """``values`` as a numba device array over the same memory (host arrays: a copy)."""
        if self.is_device_array(values):
            return values
        if isinstance(values, np.ndarray):
            return self.cuda.to_device(np.ascontiguousarray(values))
        owner, interface = interop.interface_of(values)
        if self.simulated:
            return self.cuda.to_device(interop.host_view(interface, owner), copy=False)
        array = self.cuda.from_cuda_array_interface(interface, owner=owner, sync=False)
        stream = interface.get("stream")
        if stream == 1:
            array.stream = self.cuda.legacy_default_stream()
        elif stream == 2:
            array.stream = self.cuda.per_thread_default_stream()
        return array

    def stream_of(self, *arrays: Any) -> Any:
        """The stream the first device array with one names (0: numba's default stream)."""
        if self.simulated:
            return 0
        for array in arrays:
            stream = getattr(array, "stream", 0)
            if stream:
                return stream
        return 0

    def to_host(self, values: Any) -> np.ndarray:
        """A host copy of a device column (waits for it)."""
        array = self.device_column(values)
        return array.copy_to_host(stream=self.stream_of(array))

    def _device(self, values: np.ndarray | Any, stream: Any) -> Any:
        if self.is_device_array(values):
            return values
        values = np.ascontiguousarray(values)
        if values.size == 0:  # the kernels index nothing in it, but want an array
            values = np.zeros(1, dtype=values.dtype)
        return self.cuda.to_device(values, stream=stream)

    def take(self, values: Any, rows: np.ndarray) -> Any:
        """``values[rows]`` on the device."""
        array = self.device_column(values)
        stream = self.stream_of(array)
        out = self.cuda.device_array(rows.size, dtype=array.dtype, stream=stream)
        if rows.size:
            rows_d = self._device(rows.astype(np.int64), stream)
            scan.take[-(-rows.size // 256), 256, stream](array, rows_d, out)
        return out

    def convert(self, values: Any, dtype: np.dtype) -> Any:
        """``values`` converted to ``dtype`` on the device."""
        array = self.device_column(values)
        stream = self.stream_of(array)
        if array.ndim != 1:
            array = self.flatten(array)
        out = self.cuda.device_array(array.size, dtype=dtype, stream=stream)
        if array.size:
            scan.convert[-(-array.size // 256), 256, stream](array, out)
        return out

    def flatten(self, values: Any) -> Any:
        """A 2-D device array as 1-D, rows after rows."""
        array = self.device_column(values)
        if array.is_c_contiguous():
            return array.reshape(array.size)
        stream = self.stream_of(array)
        out = self.cuda.device_array(array.size, dtype=array.dtype, stream=stream)
        if array.size:
            grid = (-(-array.shape[0] // 16), -(-array.shape[1] // 16))
            scan.flatten[grid, (16, 16), stream](array, out)
        return out

    # -- validation --------------------------------------------------------------------------

    def column_stats(self, values: Any, integral: bool) -> ColumnStats:
        """Extremes, first non-finite and first non-integral row of a device column."""
        array = self.device_column(values)
        if array.size == 0:
            return ColumnStats(np.inf, -np.inf, -1, -1)
        stream = self.stream_of(array)
        blocks = min(_SCAN_BLOCKS, -(-array.size // common.THREADS))
        low = self.cuda.device_array(blocks, np.float64, stream=stream)
        high = self.cuda.device_array(blocks, np.float64, stream=stream)
        bad = self.cuda.device_array(blocks, np.int64, stream=stream)
        frac = self.cuda.device_array(blocks, np.int64, stream=stream)
        is_float = array.dtype.kind == "f"
        scan.column_stats[blocks, common.THREADS, stream](
            array, bool(integral), is_float, low, high, bad, frac
        )
        bad_h, frac_h = bad.copy_to_host(stream=stream), frac.copy_to_host(stream=stream)
        low_h, high_h = low.copy_to_host(stream=stream), high.copy_to_host(stream=stream)
        first_bad = _first(bad_h)
        first_frac = _first(frac_h) if integral and is_float else -1
        return ColumnStats(float(low_h.min()), float(high_h.max()), first_bad, first_frac)

    def first_where(self, values: Any, test: str, low: float, high: float, table: Any) -> int:
        """First row passing ``test`` (-1: none)."""
        array = self.device_column(values)
        if array.size == 0:
            return -1
        code = _TESTS[test]
        if code == scan.BEYOND_EXACT and array.dtype == np.uint64:
            array, code = array.view(np.int64), scan.BEYOND_UNSIGNED
        stream = self.stream_of(array)
        table_d = self._device(np.zeros(1) if table is None else table, stream)
        blocks = min(_SCAN_BLOCKS, -(-array.size // common.THREADS))
        first = self.cuda.device_array(blocks, np.int64, stream=stream)
        scan.first_where[blocks, common.THREADS, stream](
            array, code, float(low), float(high), table_d, first
        )
        return _first(first.copy_to_host(stream=stream))

    # -- scoring -----------------------------------------------------------------------------

    def score(self, plan: Plan) -> tuple[np.ndarray, np.ndarray, int]:
        """DCG and IDCG of ``plan`` (see the backend's docstring for the size classes)."""
        cuda = self.cuda
        n_queries, n_cut = plan.n_queries, plan.cutoffs.size
        if n_queries == 0:
            empty = np.zeros((n_cut, 0))
            return empty.T, empty.copy().T, 0
        stream = self.stream_of(plan.grades, plan.scores)
        dev = lambda values: self._device(values, stream)  # noqa: E731
        ranked = plan.scores is None
        grades = dev(plan.grades)
        scores = dev(np.zeros(1) if ranked else plan.scores)
        offsets = dev(plan.offsets) if plan.device_offsets is None else plan.device_offsets
        lists = Lists(offsets, grades, scores, ranked)
        same_lists = plan.ideal_offsets is plan.offsets
        ideal_offsets = offsets if same_lists else dev(plan.ideal_offsets)
        same_grades = _same(plan.ideal_grades, plan.grades)
        ideal_grades = grades if same_grades else dev(plan.ideal_grades)
        tie_key = dev(plan.tie_key if plan.tie_key.size else np.zeros(1, np.int64))
        seed = np.uint64(plan.seed)
        rules = Rules(plan.tie_mode, tie_key, seed, plan.gain_mode, dev(plan.gain_table))
        whole = bool((plan.cutoffs < 0).any())
        discounts = (dev(plan.discount), dev(plan.discount_prefix))
        cuts = Cuts(*discounts, dev(plan.cutoffs), int(plan.k_max), whole)
        n_levels = int(plan.level_order.size)
        levels = Levels(n_levels, dev(plan.level_order), dev(plan.level_gain))
        out = Out(
            cuda.device_array((n_cut, n_queries), np.float64, stream=stream),
            cuda.device_array((n_cut, n_queries), np.float64, stream=stream),
            cuda.to_device(np.zeros(1, np.int64), stream=stream),
        )
        grid2 = (-(-n_cut // 4), -(-n_queries // 64))
        score.fill[grid2, (4, 64), stream](out.dcg, 0.0)
        score.fill[grid2, (4, 64), stream](out.idcg, 0.0)
        per_list = -(-n_queries // common.SMALL_THREADS)
        max_gain = float(plan.max_gain)
        score.dcg_small[per_list, common.SMALL_THREADS, stream](
            lists, rules, cuts, plan.ideal_mode, max_gain, out
        )
        from_lists = plan.ideal_mode in (C.IDEAL_RECALL, C.IDEAL_GLOBAL)
        if from_lists:
            score.idcg_small[per_list, common.SMALL_THREADS, stream](
                ideal_offsets, ideal_grades, rules, levels, cuts, out.idcg
            )
        counts, members = self._classify(offsets, n_queries, stream)
        ideal_counts, ideal_members = counts, members
        if from_lists and not same_lists:
            ideal_counts, ideal_members = self._classify(ideal_offsets, n_queries, stream)
        # the ideal of the list itself, from grade levels counted while its rows are loaded
        counted = from_lists and same_lists and same_grades and n_levels > 0
        for c, width in enumerate(common.WIDTHS):
            if counts[c]:
                grid = _blocks(counts[c], common.CAP // width)
                groups.score_groups[grid, common.THREADS, stream](
                    width,
                    members[c, : counts[c]],
                    lists,
                    rules,
                    cuts,
                    plan.ideal_mode,
                    counted,
                    levels,
                    out,
                )
        if counts[common.LONG]:
            big = np.sort(members[common.LONG, : counts[common.LONG]].copy_to_host(stream=stream))
            self._score_long(plan, big, lists, rules, cuts, out, stream)
        if from_lists and n_levels:  # integer levels: counted
            for c in range(common.LONG + 1):
                if ideal_counts[c] and (c == common.LONG or not counted):
                    score.idcg_levels[_blocks(ideal_counts[c], 1), common.THREADS, stream](
                        ideal_members[c, : ideal_counts[c]],
                        ideal_offsets,
                        ideal_grades,
                        levels,
                        cuts,
                        out.idcg,
                    )
        elif from_lists and sum(ideal_counts):  # gains sorted
            ideal_big = np.sort(
                np.concatenate(
                    [
                        ideal_members[c, : ideal_counts[c]].copy_to_host(stream=stream)
                        for c in range(common.LONG + 1)
                        if ideal_counts[c]
                    ]
                )
            )
            m = plan.ideal_offsets[ideal_big + 1] - plan.ideal_offsets[ideal_big]
            keep = m if whole else np.minimum(m, plan.k_max)
            unread = dev(np.zeros(1))  # sorting gains reads neither scores nor values
            keys = Keys(common.MODE_GAIN, unread, ideal_grades, unread)
            segments = Segments(ideal_big, plan.ideal_offsets[ideal_big], m, keep)
            segments, ranking = self._sort(keys, segments, rules, None, stream)
            no_cutoff = dev(np.zeros(1, np.int64))  # every cutoff of each segment is summed
            score.sum_sorted[_blocks(ideal_big.size, 1), common.THREADS, stream](
                keys, segments, no_cutoff, ranking, rules, cuts, out.idcg
            )
        dcg_h = out.dcg.copy_to_host(stream=stream)
        idcg_h = out.idcg.copy_to_host(stream=stream)
        bad = int(out.nonfinite.copy_to_host(stream=stream)[0])
        if stream:
            stream.synchronize()
        return dcg_h.T, idcg_h.T, bad

    def _classify(self, offsets: Any, n_queries: int, stream: Any) -> tuple[list[int], Any]:
        """The lists over ``SMALL`` rows by width class: host counts, device member rows.

        Waits for the counts (a few numbers): the launches that follow are sized by them.
        """
        counts = self.cuda.to_device(np.zeros(common.LONG + 1, np.int64), stream=stream)
        members = self.cuda.device_array((common.LONG + 1, n_queries), np.int64, stream=stream)
        groups.classify[_blocks(n_queries, common.THREADS), common.THREADS, stream](
            offsets, counts, members
        )
        counts_h = counts.copy_to_host(stream=stream)
        if stream:
            stream.synchronize()
        return [int(count) for count in counts_h], members

    def _score_long(
        self, plan: Plan, big: Any, lists: Lists, rules: Rules, cuts: Cuts, out: Out, stream: Any
    ) -> None:
        """DCG (and ``ideal="local"`` IDCG) of the queries ``big``, longer than ``CAP`` rows."""
        dev = lambda values: self._device(values, stream)  # noqa: E731
        n = plan.offsets[big + 1] - plan.offsets[big]
        keep = n if cuts.whole else np.minimum(n, cuts.k_max)
        segments = Segments(big, plan.offsets[big], n, keep)
        keys = Keys(common.MODE_RANK, lists.scores, lists.grades, dev(np.zeros(1)))
        if lists.ranked:  # the rows are the ranking
            segments = self._segments(segments, stream)
            no_rows = dev(np.zeros(1, np.int64))
            unflagged = dev(np.zeros(big.size, np.int8))
            ranking = Sorted(no_rows, no_rows, dev(_exclusive(keep)), unflagged, unflagged)
            total = int(keep.sum())
        else:
            segments, ranking = self._sort(keys, segments, rules, out.nonfinite, stream)
            total = ranking.buf0.size
        effective = self.cuda.device_array(max(total, 1), np.float64, stream=stream)
        group_end = self.cuda.device_array(max(total, 1), np.int64, stream=stream)
        score.dcg_finish[_blocks(big.size, 1), common.THREADS, stream](
            segments, ranking, lists, rules, cuts, effective, group_end, out.dcg
        )
        if plan.ideal_mode != C.IDEAL_LOCAL:
            return
        cut = np.where(plan.cutoffs[None, :] < 0, n[:, None], np.minimum(plan.cutoffs, n[:, None]))
        item_segment = np.repeat(np.arange(big.size), plan.cutoffs.size)
        item_cutoff = np.tile(np.arange(plan.cutoffs.size), big.size)
        item_cut = cut.reshape(-1).astype(np.int64)
        item_base = _exclusive(item_cut)
        values = self.cuda.device_array(max(int(item_cut.sum()), 1), np.float64, stream=stream)
        items = (dev(item_segment), dev(item_cut), dev(item_base))
        ranked, grades = lists.ranked, lists.grades
        score.local_values[_blocks(item_cut.size, 1), common.THREADS, stream](
            items, segments.start, ranking, ranked, grades, rules, effective, group_end, values
        )
        keys = Keys(common.MODE_VALUE, keys.values, grades, values)  # scores: not read
        cut_values = Segments(big[item_segment], item_base, item_cut, item_cut)
        cut_values, ranking = self._sort(keys, cut_values, rules, None, stream)
        score.sum_sorted[_blocks(item_cut.size, 1), common.THREADS, stream](
            keys, cut_values, dev(item_cutoff), ranking, rules, cuts, out.idcg
        )

    def _sort(
        self, keys: Keys, segments: Segments, rules: Rules, nonfinite: Any, stream: Any
    ) -> tuple[Segments, Sorted]:
        """The ``count`` first items of each segment (host arrays) in order (see ``sort.py``).

        Returns the segments on the device, and where their items are (:class:`Sorted`; ``bad``
        flags the segments where a NaN score was met, in ``MODE_RANK``).
        """
        cuda = self.cuda
        cap = common.CAP
        dev = lambda array: self._device(array, stream)  # noqa: E731
        n = np.asarray(segments.n, dtype=np.int64)
        keep = np.asarray(segments.count, dtype=np.int64)
        chunks = -(-n // cap)
        kept0 = np.minimum(keep, cap)
        base = _exclusive(chunks * kept0)
        total = int((chunks * kept0).sum())
        levels = np.zeros(n.size, dtype=np.int64)
        several = chunks > 1
        levels[several] = np.ceil(np.log2(chunks[several])).astype(np.int64)
        buf0 = cuda.device_array(max(total, 1), np.int64, stream=stream)
        buf1 = cuda.device_array(max(total, 1) if several.any() else 1, np.int64, stream=stream)
        bad = cuda.to_device(np.zeros(n.size, np.int8), stream=stream)
        nonfinite = dev(np.zeros(1, np.int64)) if nonfinite is None else nonfinite
        n_chunks = int(chunks.sum())
        chunk_segment = np.repeat(np.arange(n.size, dtype=np.int64), chunks)
        chunk_number = np.arange(n_chunks, dtype=np.int64) - np.repeat(_exclusive(chunks), chunks)
        segments = self._segments(segments, stream)
        base_d = dev(base)
        chunks_d = (dev(chunk_segment), dev(chunk_number))
        sort.sort_chunks[_blocks(n_chunks, 1), common.THREADS, stream](
            keys, rules, segments, base_d, chunks_d, buf0, bad, nonfinite
        )
        top = int(levels.max()) if levels.size else 0
        if top:
            multi = np.flatnonzero(several)
            prefixes = np.zeros((top, multi.size + 1), dtype=np.int64)
            for level in range(top):
                run = cap << level
                slots = -(-n[multi] // run) * np.minimum(keep[multi], run)
                np.cumsum(np.where(levels[multi] > level, slots, 0), out=prefixes[level, 1:])
            prefixes_d, multi_d = dev(prefixes), dev(multi)
            buffers = (buf0, buf1)
            for level in range(top):
                slots = int(prefixes[level, -1])
                src, dst = buffers[level % 2], buffers[(level + 1) % 2]
                sort.merge_level[_blocks(slots, 256), 256, stream](
                    keys, rules, segments, base_d, level, (prefixes_d[level], multi_d), src, dst
                )
        parity = dev((levels % 2).astype(np.int8))
        return segments, Sorted(buf0, buf1, base_d, parity, bad)

    def _segments(self, segments: Segments, stream: Any) -> Segments:
        """Host segments on the device (int64 columns)."""
        return Segments(*(self._device(np.asarray(a, np.int64), stream) for a in segments))

    def release(self) -> None:
        """Free the device memory of calls that returned, now.

        Numba otherwise frees it when its queue of deallocations fills up; the device is idle
        here (the results were copied back).
        """
        if not self.simulated:
            self.cuda.current_context().deallocations.clear()


def _same(a: Any, b: Any) -> bool:
    """Whether two plan arrays are one column (the same object, or views of the same memory)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return (
            a.shape == b.shape
            and a.dtype == b.dtype
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        )
    return False


def _first(rows: np.ndarray) -> int:
    found = rows[rows >= 0]
    return int(found.min()) if found.size else -1
