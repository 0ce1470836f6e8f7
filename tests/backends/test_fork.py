"""A process forked after fastndcg ran on its thread pool scores like any other.

The pool's threads do not survive a fork: the child forgets the parent's pools and starts its
own (``os.register_at_fork`` in ``_backends/parallel.py``). Before, the child's first parallel
call waited forever for a thread that did not exist. Each case runs in a fresh process with a
timeout, so a hang fails the test instead of stopping the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = [
    pytest.mark.numba,
    pytest.mark.skipif(sys.platform == "win32", reason="no fork on Windows"),
]

PARENT = """
import concurrent.futures, multiprocessing, os, time
import numpy as np, fastndcg
n = 400_000  # above the rows that run on the pool
rng = np.random.default_rng(0)
g, s, q = rng.integers(0, 5, n), rng.random(n), np.arange(n) // 20
expected = fastndcg.ndcg(g, s, qid=q, k=10).per_query


def score(_=None):
    return fastndcg.ndcg(g, s, qid=q, k=10).per_query

"""

CASES = {
    "os.fork": """
pid = os.fork()
if pid == 0:
    os._exit(0 if np.array_equal(score(), expected, equal_nan=True) else 3)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
""",
    "multiprocessing fork pool": """
with multiprocessing.get_context("fork").Pool(2) as pool:
    for got in pool.map(score, range(2)):
        assert np.array_equal(got, expected, equal_nan=True)
""",
    "ProcessPoolExecutor (fork)": """
context = multiprocessing.get_context("fork")
with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as executor:
    for got in executor.map(score, range(2)):
        assert np.array_equal(got, expected, equal_nan=True)
""",
    "warmup() then os.fork": """
fastndcg.warmup()
pid = os.fork()
if pid == 0:
    os._exit(0 if np.array_equal(score(), expected, equal_nan=True) else 3)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
""",
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_forked_child_scores(case):
    code = PARENT + textwrap.dedent(CASES[case]) + "print('ok')"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-2000:]
