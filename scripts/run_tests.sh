#!/usr/bin/env bash
# Runs every test of the project: C++ (CTest), Python (pytest), the installed-package example
# app, the pip-installed package and the example notebook. Exits non-zero on the first failing suite.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:?usage: run_tests.sh BUILD_DIR PYTHON}"
PYTHON="${2:?usage: run_tests.sh BUILD_DIR PYTHON}"
JOBS="${COUNTERPOINT_JOBS:-$(nproc)}"
say() { printf '\033[1m[counterpoint]\033[0m %s\n' "$*"; }

export COUNTERPOINT_REQUIRE_MODELS=1 COUNTERPOINT_USE_LITE_DIR="$COUNTERPOINT_MODELS/use-lite-en"
export COUNTERPOINT_BERT_VOCAB="$COUNTERPOINT_MODELS/bert-base-uncased/vocab.txt"
# The pooled-feature cache of `run` and `stance` goes to the build folder, not the user's.
export COUNTERPOINT_CACHE="$BUILD/test-cache"
say "C++ unit tests (ctest)"
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS" --timeout 900)

say "installed package: cmake --install, then build examples/app with find_package(counterpoint)"
PREFIX="$BUILD/test-install"
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
cmake -S "$ROOT/examples/app" -B "$BUILD/test-app" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$BUILD/test-app" >/dev/null
# By name, without $COUNTERPOINT_MODELS: the package's own copy, found before the checkout's set-up folder.
app_output=$(cd "$BUILD" && env -u COUNTERPOINT_MODELS LD_LIBRARY_PATH="$PREFIX/lib" \
  "$BUILD/test-app/counterpoint_example_app" use-lite-en)
printf '%s\n' "$app_output"
grep -qF "model use-lite-en from $PREFIX/share/counterpoint/models/use-lite-en" <<<"$app_output" \
  || { echo "the installed example app did not load the package's own model" >&2; exit 1; }

say "pip install . into a fresh venv, on the same build"
"$ROOT/scripts/pip_install_test_venv.sh" "$BUILD" "$BUILD/test-venv"
export COUNTERPOINT_PIP_VENV="$BUILD/test-venv"

say "Python tests (pytest)"
(cd "$ROOT" && COUNTERPOINT_BUILD_DIR="$BUILD" "$PYTHON" -m pytest -q tests/python)
