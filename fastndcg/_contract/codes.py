"""Integer codes and constants shared by the option parser and every backend.

Kernels take plain integers (no strings, no Python objects), so every option value that reaches
a kernel is translated to one of these codes first.

Numba freezes these values into the compiled kernels, and its cache only notices changes to the
kernel file itself (``numba/score.py``): after changing a value here, delete the
``*.nbi``/``*.nbc`` files of the cache (``tests/backends/test_kernel_cache.py`` fails until
then).
"""

# How tied scores are ordered.
TIE_AVERAGE = 0  # expected DCG over every order of the tied items
TIE_STABLE = 1  # input order
TIE_PESSIMISTIC = 2  # lower gain first
TIE_OPTIMISTIC = 3  # higher gain first
TIE_RANDOM = 4  # uniformly random order drawn from a seed
TIE_KEY = 5  # ascending order of a caller-supplied integer key (e.g. docid rank)

# How a grade becomes a gain.
GAIN_EXP2 = 0  # 2**g - 1
GAIN_LINEAR = 1  # g (also used for gains precomputed in Python)
GAIN_TABLE = 2  # table[int(g)]

# Which ideal DCG normalises a query.
IDEAL_LOCAL = 0
IDEAL_RECALL = 1
IDEAL_GLOBAL = 2
IDEAL_MAX = 3

# Cutoff code for "the whole list".
WHOLE_LIST = -1

# Integer grade levels at or below this count use histogram (counting) IDCG.
MAX_HISTOGRAM_LEVELS = 256

# The deepest cutoff a backend's short-cutoff path serves (``Plan.top_path``): deeper, the rows
# reaching the Numba path's lane bound are too many (k=32: a third of the lists had over 64).
TOP_PATH_DEPTH = 28

# SplitMix64 (Steele, Lea and Flood 2014): the random tie keys and the resampling streams hash
# (seed, counter) with these constants.
SPLITMIX_GOLDEN = 0x9E3779B97F4A7C15
SPLITMIX_MIX1 = 0xBF58476D1CE4E5B9
SPLITMIX_MIX2 = 0x94D049BB133111EB

# Domains of the resampling streams of fastndcg.compare (see fastndcg/_compare/rng.py): each
# kind of draw hashes the seed with its own constant, so the streams never coincide.
SIGN_DOMAIN = 0x5349474E464C4950  # "SIGNFLIP"
BOOTSTRAP_DOMAIN = 0x424F4F5453545250  # "BOOTSTRP"
POISSON_DOMAIN = 0x504F4953534F4E00  # "POISSON" + attempt
TOPUP_DOMAIN = 0x544F505550445257  # "TOPUPDRW"
# Entries of a Poisson threshold table of the bootstrap kernels (enough for any rate below 1).
POISSON_WIDTH = 12
# Resamples the resampling kernels advance together (a chunk of resamples starts at a multiple).
RESAMPLE_LANES = 64

# The measures beside NDCG that the measure kernels compute (nDCG and DCG go through the
# scoring kernels), and the columns of a measure's row in ``MeasurePlan.measures``.
M_NUM_Q = 0
M_NUM_RET = 1
M_NUM_REL = 2
M_NUM_REL_RET = 3
M_AP = 4  # also GMAP's per-query AP
M_RPREC = 5
M_BPREF = 6
M_RR = 7
M_IPREC = 8
M_P = 9
M_R = 10
M_SUCCESS = 11
M_F1 = 12
M_RBP = 13
M_RBP_RESID = 14
M_UNJUDGED = 15
M_JUDGED = 16
M_ERR = 17
# columns of a measure's row: its kind, its cutoff (WHOLE_LIST: none), the column of the
# per-query counts it reads (its relevance level and bpref's rule), and one choice code (the
# denominator of P, R, AP, Judged: 0 the first of the definitions' values, 1 the second; bpref's
# N = 0 rule; RBP's gain; IPrec's rounding; Judged's labels in the next column)
M_KIND, M_CUTOFF, M_COUNTS, M_CHOICE, M_CHOICE2 = range(5)
M_FIELDS = 5
