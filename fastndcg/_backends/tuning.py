"""Every size threshold of the backends, in one place, so that benchmarks tune one file.

The kernels' own compile-time constants (selection sizes, lane counts) live beside the code
they shape, in ``numba/score.py``; these are the Python-side choices of how work is split.
"""

# Below this many rows one thread scores: waking threads would cost more than it saves. (On the
# project's 2-core benchmark machine the two break even at about 150,000 rows of NDCG@10 lists of
# 100.)
PARALLEL_MIN_ROWS = 1 << 17
# From this many rows on, CHUNKS_PER_THREAD chunks per thread, so that a slow chunk does not
# hold the others.
MANY_ROWS = 1 << 20
CHUNKS_PER_THREAD = 4
# Fixed per-query work, in row equivalents, when chunks are balanced by rows.
QUERY_COST_IN_ROWS = 8

# Column scans: shorter columns are scanned by NumPy (no kernel signature per dtype to compile
# or load); columns shorter than SCAN_PARALLEL_ROWS are scanned in one call.
SCAN_KERNEL_ROWS = 1 << 15
SCAN_PARALLEL_ROWS = 1 << 20
# Rows per block where NumPy needs a temporary per row (bounds temporary memory).
NUMPY_BLOCK_ROWS = 1 << 20

# NumPy scoring: padded cells per block (each block holds a few arrays of this size), and a
# partial selection of the top columns when at most 1/NUMPY_PARTIAL_RATIO of them are needed.
NUMPY_CELLS = 1 << 19
NUMPY_PARTIAL_RATIO = 4
