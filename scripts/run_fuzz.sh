#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, torch-free layers only) in
# build-fuzz and runs each for SECONDS (default 60) from a copy of its seed corpus. Exits
# non-zero when any target crashes, leaks, trips UBSan or breaks an invariant; the input that
# did it is kept under build-fuzz/artifacts/<target>/ (replay: build-fuzz/bin/<target>_fuzzer FILE).
# Usage: scripts/run_fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
shift || true
BUILD="${COUNTERPOINT_FUZZ_BUILD:-$ROOT/build-fuzz}"
JOBS="${COUNTERPOINT_JOBS:-1}"
ALL_TARGETS=(wordpiece use_unigram inversion json_document jsonl_corpus qrels trec_run manifest index_load)
[[ $# -gt 0 ]] && TARGETS=("$@") || TARGETS=("${ALL_TARGETS[@]}")
say() { printf '\033[1m[fuzz]\033[0m %s\n' "$*"; }

say "configuring $BUILD"
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCOUNTERPOINT_FUZZ=ON -DCOUNTERPOINT_BUILD_PYTHON=OFF -DCOUNTERPOINT_BUILD_BENCHMARKS=OFF \
  -DCOUNTERPOINT_BUILD_TESTS=OFF >/dev/null
build_targets=(make_index_seed)
for t in "${TARGETS[@]}"; do build_targets+=("${t}_fuzzer"); done
say "building ${build_targets[*]}"
cmake --build "$BUILD" --target "${build_targets[@]}" -j "$JOBS"

# The file-reading targets write their inputs under the temporary directory.
export TMPDIR="$BUILD/tmp"
mkdir -p "$TMPDIR"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# COUNTERPOINT_FUZZ_RUNS=N makes every target run exactly N inputs from a fixed seed and a
# fresh copy of the seed corpus, so CI is reproducible; otherwise each target fuzzes for
# SECONDS_PER_TARGET seconds from where earlier runs left its corpus.
if [[ -n "${COUNTERPOINT_FUZZ_RUNS:-}" ]]; then
  BUDGET=(-seed=1 -runs="$COUNTERPOINT_FUZZ_RUNS")
  rm -rf "$BUILD/corpus"
else
  BUDGET=(-max_total_time="$SECONDS_PER_TARGET")
fi
failed=()
for t in "${TARGETS[@]}"; do
  work="$BUILD/corpus/$t"
  artifacts="$BUILD/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  cp -f "$ROOT/tests/fuzz/corpus/$t/"* "$work/" 2>/dev/null || true
  if [[ "$t" == index_load ]]; then
    # Fresh seeds from the current save format: as written (flags 0) and resealed (flags 1).
    "$BUILD/bin/make_index_seed" "$work/generated_raw" 0
    "$BUILD/bin/make_index_seed" "$work/generated_resealed" 1
  fi
  say "$t: ${BUDGET[*]} from $(ls "$work" | wc -l) inputs"
  log="$BUILD/artifacts/$t.log"
  if "$BUILD/bin/${t}_fuzzer" "$work" "${BUDGET[@]}" -timeout=20 \
       -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1; then
    say "$t: ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs)"
  else
    say "$t: FAILED, see $log"
    grep -m5 -E 'ERROR|runtime error|invariant broken|SUMMARY' "$log" || true
    failed+=("$t")
  fi
done
rm -rf "$TMPDIR"
if ((${#failed[@]})); then
  say "crashing targets: ${failed[*]}"
  exit 1
fi
say "all ${#TARGETS[@]} targets ran (${BUDGET[*]}) without a crash"
