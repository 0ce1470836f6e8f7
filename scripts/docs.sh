#!/usr/bin/env bash
# The documentation: sets up .venv if needed (with the docs extra), then builds docs/ with Sphinx
# into docs/_build/html, every warning an error. Extra arguments go to sphinx-build.
# The same extras as scripts/test.sh, so that running one after the other installs nothing.
set -euo pipefail
export FASTNDCG_EXTRAS="${FASTNDCG_EXTRAS:-test,parity,dask,spark,docs}"
source "$(dirname "$0")/setup_env.sh"
rm -rf docs/api/generated  # autosummary writes it again; stale pages of removed names would fail
python -m sphinx -b html -W --keep-going -q docs docs/_build/html "$@"
echo "[docs] built docs/_build/html/index.html"
