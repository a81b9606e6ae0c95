#!/usr/bin/env bash
# Creates (once) the throw-away reference venv VENV (default: models/cache/reference-venv) from
# /usr/bin/python3 with system site packages, installs requirements.txt from PyPI under
# constraints.txt (Debian's torch and numpy are kept), and prints the venv's python.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${1:-$HERE/../cache/reference-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV" >&2
fi
if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    -c "$HERE/constraints.txt" -r "$HERE/requirements.txt" >&2; then
  echo "reference venv: pip install from PyPI failed (see above); is PyPI reachable?" >&2
  exit 1
fi
"$VENV/bin/python" - <<'PY' >&2
import numpy, torch
assert torch.__version__.startswith("1.13"), f"torch {torch.__version__} is not Debian's 1.13"
assert numpy.__version__ == "1.24.2", f"numpy {numpy.__version__} is not Debian's 1.24.2"
PY
echo "$VENV/bin/python"
