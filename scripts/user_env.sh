#!/usr/bin/env bash
# A notebook user's own Python, as the README's "Install into your own environment" describes it:
# a venv from /usr/bin/python3 without system site packages, PyPI's torch 2.x and numpy, pandas (pinned in
# python/torch2-constraints.txt, with everything they pull), and counterpoint installed with a plain
# `pip install <checkout>`, which builds it against that torch. Then the Python tests run there,
# from outside the checkout's python/ folder, on the installed package.
#
#   scripts/user_env.sh VENV smoke   torch and counterpoint in one process (tests/python/test_own_environment.py)
#   scripts/user_env.sh VENV full    the whole Python test suite
#
# $COUNTERPOINT_MODELS must name the set-up's models (./setup.sh build installs them).
# $COUNTERPOINT_WHEEL_BUILD_DIR, when set, keeps pip's build folder there to rebuild incrementally.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$(realpath -m "${1:?usage: user_env.sh VENV smoke|full}")"
MODE="${2:?usage: user_env.sh VENV smoke|full}"
case "$MODE" in smoke|full) ;; *) echo "user_env.sh: MODE is smoke or full, not '$MODE'" >&2; exit 2 ;; esac
: "${COUNTERPOINT_MODELS:?set COUNTERPOINT_MODELS to the models folder (./setup.sh build fills models/installed)}"
CONSTRAINTS="$ROOT/python/torch2-constraints.txt"
say() { printf '\033[1m[user-env]\033[0m %s\n' "$*"; }
seconds() { echo $(( $(date +%s) - $1 )); }

start=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv "$VENV"
fi
say "pip install torch numpy pandas pytest (pinned: $CONSTRAINTS)"
"$VENV/bin/pip" install -q --disable-pip-version-check -c "$CONSTRAINTS" torch numpy pandas pytest
"$VENV/bin/python" -c 'import torch; print("[user-env] torch", torch.__version__, "from", torch.__file__)'
say "torch installed after $(seconds "$start") s"

build_start=$(date +%s)
build_dir=()
if [ -n "${COUNTERPOINT_WHEEL_BUILD_DIR:-}" ]; then
  build_dir=(--config-settings=build-dir="$COUNTERPOINT_WHEEL_BUILD_DIR")
fi
say "pip install $ROOT (builds counterpoint against the venv's torch)"
PIP_CONSTRAINT="$CONSTRAINTS" "$VENV/bin/pip" install -q --disable-pip-version-check "${build_dir[@]}" "$ROOT"
say "counterpoint built and installed in $(seconds "$build_start") s"

case "$MODE" in
  smoke) tests=("$ROOT/tests/python/test_own_environment.py") ;;
  full) tests=("$ROOT/tests/python") ;;
esac
# Set-up's environment (Debian's torch, the checkout's module), when there is one, is the other torch
# that models made here must load under, and whose models must load here.
other_torch=()
if [ -x "$ROOT/.venv/bin/python" ]; then other_torch=(COUNTERPOINT_OTHER_TORCH_PYTHON="$ROOT/.venv/bin/python"); fi
# From the venv's own folder, so that nothing but the installed package can be imported.
(cd "$VENV" && env -u COUNTERPOINT_BUILD_DIR -u PYTHONPATH "${other_torch[@]}" "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
  --rootdir "$ROOT" "${tests[@]}")
say "done after $(seconds "$start") s"
