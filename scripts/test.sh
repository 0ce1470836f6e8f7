#!/usr/bin/env bash
# The whole test suite, from a fresh clone: sets up .venv, lints, then runs pytest twice:
# once with every backend available and once with numba blocked, so the NumPy fallback and the
# import guard are exercised for real.
set -euo pipefail
# the test extra plus the reference tools (parity), the distributed engines and the docs tools
# (the same extras as scripts/docs.sh, so one install serves both)
export FASTNDCG_EXTRAS="${FASTNDCG_EXTRAS:-test,parity,dask,spark,docs}"
# with the parity extra installed, a reference tool that cannot be imported fails the parity
# tests instead of skipping them (tests/parity_data.py)
case ",$FASTNDCG_EXTRAS," in
    *,parity,*) export FASTNDCG_REQUIRE_PARITY="${FASTNDCG_REQUIRE_PARITY:-1}" ;;
esac
source "$(dirname "$0")/setup_env.sh"

# backend="cuda": numba-cuda (the extra "cuda") runs its kernels in its simulator here. Installed
# on its own, so that a machine where it cannot be installed still runs everything else (the
# simulator tests then skip, saying why).
if ! python -c "import numba_cuda" 2>/dev/null; then
    echo "[test] installing fastndcg[cuda] (numba-cuda)"
    python -m pip install --quiet -e ".[cuda]" \
        || echo "[test] numba-cuda cannot be installed here: the CUDA simulator tests will skip" >&2
fi

run_pytest() {
    # pytest exits 5 when it collected nothing; for us that is a broken suite, not a pass.
    local rc=0
    python -m pytest "$@" || rc=$?
    if [ "$rc" -eq 5 ]; then
        echo "[test] pytest collected no tests for: $*" >&2
        return 1
    fi
    return "$rc"
}

echo "[test] ruff"
python -m ruff check fastndcg tests bench scripts docs
python -m ruff format --check fastndcg tests bench scripts docs

# The pass with every backend runs here; beside it, in the background (their output kept and
# shown after it), run the numba-blocked pass then the CUDA simulator, the tests marked `cold`,
# and the CUDA compile. They wait on child processes (the command, Dask's workers, compiler
# helpers) often enough that three jobs keep two cores busier than two. (The Spark tests stay in
# the main pass: beside it, their JVM slowed every job.)
# The numba-blocked pass leaves out the tests marked `numba` (they need it) and those marked
# `subprocess` (checks of a child process, where numba is not blocked: the command's signals,
# pipes and warmup, a reader's memory), which run in the pass with every backend. The other
# tests of the command run it without numba too (conftest.COMMAND). The tests of
# backend="numpy" run in that pass only (FASTNDCG_NUMPY_BESIDE leaves them out of the main pass,
# conftest.py), where numba cannot be imported at all. The documentation's bash examples after a
# page's last Python example do not run there (tests/docs/doc_blocks.py): they call the
# installed command, where numba is not blocked. The simulator runs CUDA threads one after
# another in Python, in its own process (NUMBA_ENABLE_CUDASIM must be set before numba is
# imported). The tests marked `cold` (warmup on an empty cache: a whole compile each, 1-2
# minutes) run beside the main pass unless tests are named on the command line (then they run
# in it).
blocked_then_simulator() {
    echo "[test] pytest, numba blocked (NumPy backend and import guard)"
    local blocked_rc=0 simulator_rc=0
    if [ "$#" -eq 0 ]; then
        FASTNDCG_BLOCK_NUMBA=1 run_pytest -m "not numba and not subprocess" || blocked_rc=$?
    else  # tests named: they may all need numba, and then none is left to run here
        FASTNDCG_BLOCK_NUMBA=1 python -m pytest -m "not numba and not subprocess" "$@" \
            || blocked_rc=$?
        [ "$blocked_rc" -ne 5 ] || blocked_rc=0
    fi
    echo "[test] pytest, CUDA backend in numba-cuda's simulator"
    NUMBA_ENABLE_CUDASIM=1 run_pytest -m cuda tests/backends/test_cuda.py || simulator_rc=$?
    [ "$blocked_rc" -eq 0 ] || return "$blocked_rc"
    return "$simulator_rc"
}

cold_compiles() {
    echo "[test] pytest, the cold-compile tests"
    run_pytest -m cold
}

# the simulator runs kernels as Python and never type-checks them: compile every kernel for a
# real GPU (sm_90) too, which needs NVVM and NVRTC (pip packages, no GPU). Where they cannot be
# installed the step says so and is skipped; a kernel that does not compile fails the suite.
cuda_compile() {
    echo "[test] CUDA kernels compiled for sm_90 (scripts/compile_cuda.py)"
    local rc=0
    python scripts/compile_cuda.py --install || rc=$?
    if [ "$rc" -eq 2 ]; then
        echo "[test] the CUDA compiler cannot be installed here: kernels not compiled" >&2
        rc=0
    fi
    return "$rc"
}

beside_pids=()
beside_logs=()
beside() {  # beside <command> [args]: run it in the background, its output to a log
    local log
    log="$(mktemp)"
    ("$@") >"$log" 2>&1 &
    beside_pids+=("$!")
    beside_logs+=("$log")
}

echo "[test] beside the main pass: pytest with numba blocked, then the CUDA simulator"
beside blocked_then_simulator "$@"
main_marks=""
if [ "$#" -eq 0 ]; then
    main_marks="not cold"
    echo "[test] beside the main pass: the cold-compile tests"
    beside cold_compiles
fi
if python -c "import numba_cuda" 2>/dev/null; then
    echo "[test] beside the main pass: the CUDA compile for sm_90"
    beside cuda_compile
fi

echo "[test] pytest, all backends (the jobs above run beside it; their output follows)"
main_rc=0
FASTNDCG_NUMPY_BESIDE=1 run_pytest -m "$main_marks" "$@" || main_rc=$?

beside_rc=0
for i in "${!beside_pids[@]}"; do
    rc=0
    wait "${beside_pids[$i]}" || rc=$?
    cat "${beside_logs[$i]}"
    rm -f "${beside_logs[$i]}"
    [ "$beside_rc" -ne 0 ] || beside_rc="$rc"
done
[ "$main_rc" -eq 0 ] || exit "$main_rc"
exit "$beside_rc"
