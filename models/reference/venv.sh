#!/usr/bin/env bash
# Creates (once) the throw-away venv VENV (default: models/cache/reference-venv) from
# /usr/bin/python3 with system site packages, installs REQUIREMENTS (default: requirements.txt
# here, the reference stack) from PyPI under constraints.txt (Debian's torch, numpy and scipy are
# kept), and prints the venv's python on stdout. Every venv of the project that needs PyPI
# packages beside Debian's torch is made by this script (benchmarks/peers/venv.sh too).
#
#   models/reference/venv.sh [VENV] [REQUIREMENTS]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${1:-$HERE/../cache/reference-venv}"
REQUIREMENTS="${2:-$HERE/requirements.txt}"
if [ ! -x /usr/bin/python3 ]; then
  echo "venv: /usr/bin/python3 is missing (Debian's python3 with torch 1.13 and numpy 1.24 is needed)" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  mkdir -p "$(dirname "$VENV")"
  /usr/bin/python3 -m venv --system-site-packages "$VENV" >&2
fi
if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    -c "$HERE/constraints.txt" -r "$REQUIREMENTS" >&2; then
  echo "venv: pip install from PyPI failed (see above); is PyPI reachable?" >&2
  exit 1
fi
"$VENV/bin/python" - <<'PY' >&2
import numpy, torch
assert torch.__version__.startswith("1.13"), f"torch {torch.__version__} is not Debian's 1.13"
assert numpy.__version__ == "1.24.2", f"numpy {numpy.__version__} is not Debian's 1.24.2"
PY
echo "$VENV/bin/python"
