#!/usr/bin/env bash
# Benchmarks (pytest-benchmark); extra arguments go to pytest, e.g. -k fastndcg.
# FASTNDCG_BENCH_QUERIES sets the size (default 1,000,000 queries); --json PATH also writes the
# timings as one table for the documentation (docs/benchmarks/kernels.json).
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
FASTNDCG_BENCH_COMMAND="FASTNDCG_BENCH_QUERIES=${FASTNDCG_BENCH_QUERIES:-1000000} bash scripts/bench.sh $*"
export FASTNDCG_BENCH_COMMAND
python -m pytest bench --benchmark-enable --benchmark-columns=min,median,max,rounds \
    --benchmark-sort=name -p no:randomly "$@"
