#!/usr/bin/env bash
# The main job: set up .venv if needed, generate 1,000,000 queries and print NDCG@1,3,5,10.
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
python scripts/demo.py "$@"
