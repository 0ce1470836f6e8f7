#!/usr/bin/env bash
# Benchmarks (pytest-benchmark); extra arguments go to pytest, e.g. -k fastndcg.
# FASTNDCG_BENCH_QUERIES sets the size (default 1,000,000 queries).
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
python -m pytest bench --benchmark-enable --benchmark-columns=min,median,max,rounds \
    --benchmark-sort=name -p no:randomly "$@"
