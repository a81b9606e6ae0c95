#!/usr/bin/env bash
# Makes a fresh venv (Debian's interpreter, system site packages: Debian's torch and numpy) and
# `pip install`s the checkout into it, the way a user would, but on the existing build directory:
# scikit-build-core reconfigures and relinks it instead of compiling the library a second time.
# scikit-build-core writes its own values into the build's CMake cache (the venv's interpreter, a
# temporary install prefix, ...); they are put back afterwards, so the build stays usable after
# the venv is gone.
#
#   scripts/pip_install_test_venv.sh BUILD_DIR VENV_DIR
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:?usage: pip_install_test_venv.sh BUILD_DIR VENV_DIR}"
VENV="${2:?usage: pip_install_test_venv.sh BUILD_DIR VENV_DIR}"
CACHE="$BUILD/CMakeCache.txt"
[ -f "$CACHE" ] || { echo "pip_install_test_venv.sh: $BUILD is not a configured build directory" >&2; exit 2; }

# The cache entries scikit-build-core sets with FORCE, as they are now.
KEYS=(Python_EXECUTABLE Python3_EXECUTABLE Python_ROOT_DIR Python3_ROOT_DIR Python_FIND_REGISTRY
      Python3_FIND_REGISTRY CMAKE_INSTALL_PREFIX CMAKE_MODULE_PATH CMAKE_PREFIX_PATH)
restore=()
for key in "${KEYS[@]}"; do
  line="$(grep -m1 "^$key:" "$CACHE" || true)"
  if [ -n "$line" ]; then restore+=("-D$line"); else restore+=("-U$key"); fi
done
put_back() { cmake -S "$ROOT" -B "$BUILD" "${restore[@]}" -U 'SKBUILD*' >/dev/null; }
trap put_back EXIT

rm -rf "$VENV"
/usr/bin/python3 -m venv --system-site-packages "$VENV"
# The build backend and what it pulls, pinned; the constraints keep Debian's torch, numpy and scipy.
"$VENV/bin/pip" install -q --disable-pip-version-check -c "$ROOT/models/reference/constraints.txt" \
  scikit-build-core==1.1.2 packaging==26.4 pathspec==1.1.1
"$VENV/bin/pip" install -q --disable-pip-version-check --no-build-isolation \
  --config-settings=build-dir="$BUILD" "$ROOT"
