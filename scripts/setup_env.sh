# Sourced by the other scripts: create .venv on first use and install fastndcg with the
# extras named in FASTNDCG_EXTRAS (default "test"). Re-installs only when pyproject.toml changes.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
extras="${FASTNDCG_EXTRAS:-test}"
python_bin="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating .venv with $($python_bin --version)"
    "$python_bin" -m venv .venv
fi
stamp=".venv/.fastndcg-installed-$(sha1sum pyproject.toml | cut -c1-12)-${extras//,/_}"
if [ ! -f "$stamp" ]; then
    echo "[setup] installing fastndcg[$extras] into .venv"
    rm -f .venv/.fastndcg-installed-*
    .venv/bin/python -m pip install --quiet --upgrade pip \
        && .venv/bin/python -m pip install --quiet -e ".[$extras]" \
        || { echo "[setup] pip install failed" >&2; return 1 2>/dev/null || exit 1; }
    touch "$stamp"
fi
export PATH="$repo_root/.venv/bin:$PATH"
