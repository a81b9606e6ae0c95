#!/usr/bin/env bash
# Paper Table 11: the cost of stage 2. Per query, scoring 100 candidates by cos + Hoyer on stored
# embeddings (plus the query encodings it needs) against a cross-encoder of the same size over the
# 100 (query, candidate) pairs, on ArguAna (long texts, pairs cut to 128 tokens) and SICK
# (sentences). See benchmarks/cpp/scoring_cost_bench.cpp for what each figure includes.
#
#   benchmarks/speed/scoring_cost.sh [--data DIR] [--queries 10] [--sparse-model DIR]
#
# Writes benchmarks/results/scoring_cost.md. The sparse-aware model only sets the cost of the
# Es encoding (every Es here has the size of use-lite-en); default models/installed/sparse-default.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

QUERIES=10 ES="$COUNTERPOINT_MODELS/sparse-default"
parse_options --queries QUERIES --sparse-model ES -- "$@"
BENCH="${SCORING_COST_BENCH:-$(dirname "$CLI")/scoring_cost_bench}"
[[ -x "$BENCH" ]] || { echo "scoring_cost_bench not found at $BENCH (build the target scoring_cost_bench)" >&2; exit 2; }
OUT="$RESULTS/scoring_cost.md"
{
  echo "# Cost of stage 2: cos + Hoyer on stored embeddings vs a cross-encoder of the same size"
  echo
  echo "Per query, median over $QUERIES queries, 100 candidates each, 1 thread. Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
  for set in arguana sick; do
    cmd=("$BENCH" --dataset "$DATA/$set" --sparse-model "$ES" --queries "$QUERIES" --threads 1)
    echo
    echo "## $set"
    echo
    echo "Command: \`$(printf '%s ' "${cmd[@]}" | "$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); from bench import shorten; print(" ".join(shorten(a) for a in sys.stdin.read().split()))' "$LIB_DIR")\`"
    echo
    echo '```'
    "${cmd[@]}" 2>/dev/null
    echo '```'
  done
} > "$OUT"
cat "$OUT"
