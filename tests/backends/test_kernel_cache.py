"""The Numba cache holds kernels compiled with the current integer codes of the backends."""

from __future__ import annotations

import pytest

from fastndcg._contract import codes as C

pytestmark = pytest.mark.numba


def test_compiled_codes_match_the_source():
    from fastndcg._backends.numba.score import compiled_codes

    expected = (
        C.TIE_AVERAGE,
        C.TIE_STABLE,
        C.TIE_PESSIMISTIC,
        C.TIE_OPTIMISTIC,
        C.TIE_RANDOM,
        C.TIE_KEY,
        C.GAIN_EXP2,
        C.GAIN_LINEAR,
        C.IDEAL_GLOBAL,
        C.IDEAL_LOCAL,
        C.IDEAL_MAX,
        C.IDEAL_RECALL,
    )
    assert compiled_codes() == expected, (
        "the Numba cache was compiled with other values of fastndcg._contract.codes: delete "
        "fastndcg/_backends/numba/__pycache__/*.nbi and *.nbc"
    )


# A fresh process: warmup() on an empty cache, then the common calls. Prints what compiled
# where, fastndcg's log notes, the warnings, one NDCG value and the cache directory in use.
AFTER_WARMUP = """
import json, logging, os, tempfile, warnings
import numpy as np, pyarrow as pa, pyarrow.parquet as pq, fastndcg
from numba.core import event
from fastndcg import _runtime

notes = []  # fastndcg's log records: a first call that compiled for long says so
logging.getLogger("fastndcg").addHandler(logging.Handler())
logging.getLogger("fastndcg").handlers[-1].emit = lambda record: notes.append(record.getMessage())
logging.getLogger("fastndcg").setLevel(logging.INFO)
warned = []  # every warning, as it would be shown
warnings.simplefilter("always")
warnings.showwarning = lambda message, *args, **kwargs: warned.append(str(message))

with event.install_recorder("numba:compile") as recorder:
    fastndcg.warmup()
in_warmup = sorted({e.data["dispatcher"].py_func.__name__ for _, e in recorder.buffer})
rng = np.random.default_rng(0)
rows = 200_000  # above the size that runs on the thread pool
grades, scores = rng.integers(0, 5, rows), rng.random(rows)
judgments = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "grade": [1, 0]})
run = pa.table({"qid": ["1", "1", "2"], "docid": ["a", "c", "a"], "score": [1.0, 2.0, 0.5]})
parquet = os.path.join(tempfile.mkdtemp(), "scores.parquet")
pq.write_table(
    pa.table({
        "qid": np.arange(rows) // 100,
        "grade": grades.astype(np.int8),
        "score": scores.astype(np.float32),
    }),
    parquet,
)
trec = tempfile.mkdtemp()
with open(os.path.join(trec, "qrels"), "w") as f:
    f.write("1 0 a 1\\n1 0 b 0\\n")
with open(os.path.join(trec, "run"), "w") as f:
    f.write("1 Q0 a 1 1.0 t\\n1 Q0 c 2 2.0 t\\n2 Q0 a 1 0.5 t\\n")
calls = {
    "ndcg": lambda: fastndcg.ndcg(grades, scores, qid=np.arange(rows) // 100, k=[1, 10, None]),
    "ndcg, float32 scores": lambda: fastndcg.ndcg(grades[:50], scores[:50].astype(np.float32)),
    "ndcg_table": lambda: fastndcg.ndcg_table(
        pa.table({"qid": np.arange(rows) // 100, "grade": grades, "score": scores}), k=10
    ),
    "ndcg_parquet, int8 grades, float32 scores": lambda: fastndcg.ndcg_parquet(parquet, k=10),
    "Scorer": lambda: fastndcg.Scorer(k=10)(grades[:100], scores[:100]),
    "ndcg_run": lambda: fastndcg.ndcg_run(judgments, run, k=10),
    "ndcg_run, trec_eval ties": lambda: fastndcg.ndcg_run(judgments, run, ties="docid_desc"),
    "ndcg_run, trec_eval -M": lambda: fastndcg.ndcg_run(
        judgments, run, ties="docid_desc", max_docs=1
    ),
    "evaluate": lambda: fastndcg.evaluate(grades, scores, measures=["P@10", "map"], ties="stable"),
    "evaluate_run, trec_eval": lambda: fastndcg.evaluate_run(
        judgments, run, measures=["map"], preset="trec_eval", missing="zero"
    ),
    "ndcg_run, TREC files": lambda: fastndcg.ndcg_run(
        os.path.join(trec, "qrels"), os.path.join(trec, "run"), k=10
    ),
}
compiled = {}
for name, call in calls.items():
    with event.install_recorder("numba:compile") as recorder:
        call()
    compiled[name] = sorted(
        {e.data["dispatcher"].py_func.__name__ for _, e in recorder.buffer if e.is_start}
    )
value = float(fastndcg.ndcg(np.array([3, 2, 0]), np.array([0.3, 0.2, 0.1]), k=2))
print(json.dumps({
    "in warmup": in_warmup,
    "after warmup": compiled,
    "notes": notes,
    "warnings": warned,
    "value": value,
    "cache": _runtime.cache_dir(),
    "tmp": os.path.realpath(tempfile.gettempdir()),
}))
"""

# What a read-only file system does to every directory but the temporary one: Numba finds no
# cache directory beside the package nor in the home directory.
READ_ONLY = """
import os, tempfile
from numba.core import caching

def read_only(self):
    path = self.get_cache_path()
    if not os.path.realpath(path).startswith(os.path.realpath(tempfile.gettempdir())):
        raise OSError(30, "Read-only file system", path)
    return original(self)

original = caching._CacheLocator.ensure_cache_path
caching._CacheLocator.ensure_cache_path = read_only
"""


def _compiled_around_warmup(tmp_path, before: str = "", env=None, cwd=None) -> dict:
    """Which kernels a fresh process compiles in ``warmup()`` and in common calls after it.

    The cache must start empty: a kernel loaded from a filled cache sends no compile event.
    Each cold compile takes tens of seconds, so each of the two runs below checks several
    things at once. The script runs from a file in its own directory, so that the current
    directory (``cwd``) is not on the parent's import path, as for the ``fastndcg`` command.
    """
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "script" / "after_warmup.py"
    script.parent.mkdir()
    script.write_text(before + AFTER_WARMUP)
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.cold
def test_warmup_compiles_every_kernel_of_the_common_calls(tmp_path):
    """After ``warmup()`` on an empty cache none of the common calls compiles, and the helper
    process compiled the scoring kernel's short-cutoff path and the measure kernel (through the
    cache) while this one compiled the general path and then the driver linking both.

    The current directory holds a ``numpy.py``: it does not run in the helper that compiles
    the scoring kernel (it ran there before: the helper was a plain ``python -c``).
    """
    workdir = tmp_path / "workdir"
    workdir.mkdir()
    marker = tmp_path / "ran"
    (workdir / "numpy.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit(7)\n")
    compiled = _compiled_around_warmup(
        tmp_path, env={"NUMBA_CACHE_DIR": str(tmp_path / "cache")}, cwd=workdir
    )
    assert not marker.exists()
    after = compiled["after warmup"]
    assert after == {name: [] for name in after}
    assert len(after) == 11
    in_warmup = set(compiled["in warmup"])
    assert not {"_top_queries", "measure_queries"} & in_warmup  # the helper compiled them
    assert {"_general_queries", "score_queries"} <= in_warmup
    assert {"scan_floats", "scan_integers", "run_starts", "stray_whitespace"} <= set(
        compiled["in warmup"]
    )
    assert compiled["notes"] == []  # loaded from the cache the helper filled: nothing to say
    assert compiled["warnings"] == []  # no helper failed
    assert compiled["cache"].startswith(str(tmp_path / "cache"))


@pytest.mark.cold
def test_warmup_compiles_everything_itself_where_no_helper_can_start(tmp_path):
    """A frozen application cannot start a Python helper: warmup compiles every kernel alone.

    Here no cache directory is writable either (a read-only install run by a user without a
    writable home): fastndcg still runs, with the kernels in a temporary directory and one
    warning.
    """
    (tmp_path / "tmp").mkdir()
    env = {"HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp"), "NUMBA_CACHE_DIR": ""}
    compiled = _compiled_around_warmup(
        tmp_path, before="import sys; sys.frozen = True\n" + READ_ONLY, env=env
    )
    after = compiled["after warmup"]
    assert after == {name: [] for name in after}
    assert "score_queries" in compiled["in warmup"]
    assert compiled["value"] == pytest.approx(1.0)
    (warning,) = compiled["warnings"]
    assert "NUMBA_CACHE_DIR" in warning
    # the temporary directory in use: fastndcg info names it
    assert compiled["cache"].startswith(compiled["tmp"])
    tmp_parts = compiled["tmp"].split("/")
    assert compiled["cache"].split("/")[len(tmp_parts)].startswith("fastndcg-numba-cache-")
    # compiled here, for seconds: said once, with the time and the cache
    (note,) = compiled["notes"]
    assert note.startswith("compiled the Numba scoring kernel in ") and compiled["cache"] in note


def test_a_stuck_helper_is_stopped(monkeypatch):
    import subprocess
    import sys
    import time

    from fastndcg import _runtime

    monkeypatch.setattr(_runtime, "_HELPER_TIMEOUT_S", 0.2)
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    start = time.perf_counter()
    _runtime._wait_or_stop(helper)
    assert helper.returncode is not None
    assert time.perf_counter() - start < 30


def test_a_helper_silent_about_the_short_path_is_stopped(monkeypatch):
    import subprocess
    import sys
    import time

    from fastndcg import _runtime

    monkeypatch.setattr(_runtime, "_HELPER_TIMEOUT_S", 0.2)
    helper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], stdout=subprocess.PIPE
    )
    start = time.perf_counter()
    _runtime._wait_for_short_path(helper)
    assert helper.wait(timeout=30) != 0  # killed
    assert time.perf_counter() - start < 30


def test_a_failing_helper_is_reported_and_the_kernel_compiled_here(monkeypatch):
    import subprocess
    import sys

    from fastndcg import _runtime

    helper = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.exit('no compiler here')"],
        stderr=subprocess.PIPE,
    )
    with pytest.warns(RuntimeWarning, match=r"exit status 1: no compiler here\); compiling"):
        _runtime._wait_or_stop(helper)
