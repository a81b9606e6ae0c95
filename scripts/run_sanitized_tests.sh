#!/usr/bin/env bash
# Builds the unit tests in build-asan with AddressSanitizer + UndefinedBehaviorSanitizer
# (Debug, no Python, no benchmarks) and runs them with leak detection. By default it runs every
# layer except training: the torch-free ones (core, text, index, data, eval) and the ones that
# link libtorch (scoring, encoder, retrieval), which runs fine under ASan though libtorch
# itself is not instrumented. Pass layer names to choose others. Exits non-zero on any test
# failure or sanitizer report.
# Usage: scripts/run_sanitized_tests.sh [LAYER...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${COUNTERPOINT_ASAN_BUILD:-$ROOT/build-asan}"
JOBS="${COUNTERPOINT_JOBS:-1}"
if [[ $# -gt 0 ]]; then LAYERS=("$@"); else LAYERS=(core text index data eval scoring encoder retrieval); fi
say() { printf '\033[1m[asan]\033[0m %s\n' "$*"; }
start=$(date +%s)

say "configuring $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCOUNTERPOINT_SANITIZE=ON \
  -DCOUNTERPOINT_BUILD_PYTHON=OFF -DCOUNTERPOINT_BUILD_BENCHMARKS=OFF >/dev/null
targets=()
for layer in "${LAYERS[@]}"; do targets+=("test_$layer"); done
say "building ${targets[*]}"
cmake --build "$BUILD" --target "${targets[@]}" -j "$JOBS"

export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export COUNTERPOINT_PLUGIN_DIR="$BUILD/lib"
failed=()
for layer in "${LAYERS[@]}"; do
  log="$BUILD/asan_test_$layer.log"
  t0=$(date +%s)
  if "$BUILD/bin/test_$layer" --gtest_brief=1 >"$log" 2>&1; then
    say "test_$layer: passed ($(($(date +%s) - t0)) s)"
  else
    say "test_$layer: FAILED ($(($(date +%s) - t0)) s), see $log"
    grep -m8 -E 'ERROR: |runtime error|SUMMARY|FAILED' "$log" || true
    failed+=("$layer")
  fi
done
say "total $(($(date +%s) - start)) s"
if ((${#failed[@]})); then
  say "failing: ${failed[*]}"
  exit 1
fi
