#!/usr/bin/env bash
# Encoder throughput (docs/s) and peak RSS on the first N ArguAna corpus texts, 2 threads:
# the library's C++ encoder (through the Python binding, and end to end as `counterpoint index
# build`), the same TorchScript module driven from Python in a plain loop with unsorted batches, and
# the original TF.js model in Node (models/use_lite/bench_reference.mjs, where its runtime exists).
#
#   benchmarks/speed/encoder_speed.sh [--model all-minilm-l6-v2] [--data DIR] [--count 1000] [--node-count 128]
#                               [--ref-dir models/cache/reference-runtime]
#
# Writes benchmarks/results/encoder_speed.{json,md} (encoder_speed_<model>.* for a model other than
# use-lite-en, whose table also has the TF.js row).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

COUNT=1000 NODE_COUNT=128 REF_DIR=models/cache/reference-runtime MODEL=all-minilm-l6-v2
parse_options --model MODEL --count COUNT --node-count NODE_COUNT --ref-dir REF_DIR -- "$@"

CORPUS="$DATA/arguana/corpus.jsonl"
require_file "$CORPUS" "ArguAna corpus"
MODEL_DIR="$COUNTERPOINT_MODELS/$MODEL"
model_names encoder_speed
EXCERPT="$CACHE/arguana-first-$COUNT.jsonl"
head -n "$COUNT" "$CORPUS" > "$EXCERPT"

start_table "$TABLE"
# Each measurement: one JSON line on stdout, /usr/bin/time -v on stderr.
measure() {
  local label="$1"; shift
  local log="$CACHE/logs/speed-$(echo "$label" | tr -c 'A-Za-z0-9.\n-' '_').log"
  echo ">> $label" >&2
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -v "$@" > "$log" 2> "$log.err" || { echo "failed: $* (see $log.err)" >&2; tail -3 "$log.err" >&2; return 1; }
  end=$(date +%s.%N)
  LIB_DIR="$LIB_DIR" "$PY" - "$log" "$label" "$(echo "$end - $start" | bc)" "$ROWS" "$@" <<'PYEOF'
import json, os, re, shlex, sys
sys.path.insert(0, os.environ["LIB_DIR"])
from bench import shorten
log, label, wall, rows, command = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5:]
from pathlib import Path
text, err = Path(log).read_text(), Path(log + ".err").read_text()
row = {"label": label, "process_seconds": round(wall, 1)}
for line in text.splitlines():
    if line.startswith("{"):
        row.update(json.loads(line))
m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
row["peak_rss_mib"] = round(int(m.group(1)) / 1024, 1) if m else None
m = re.search(r"User time \(seconds\): ([0-9.]+)\n\s*System time \(seconds\): ([0-9.]+)", err)
if m:
    # CPU seconds of the whole process (model load included): robust to other jobs sharing the cores.
    row["process_cpu_seconds"] = round(float(m.group(1)) + float(m.group(2)), 1)
    if "documents" in row:
        row["docs_per_cpu_second"] = round(row["documents"] / max(row["process_cpu_seconds"], 1e-9), 1)
if "docs_per_second" not in row and "documents" in row:
    row["docs_per_second"] = round(row["documents"] / wall, 1)
row["command"] = " ".join(shlex.quote(shorten(a)) for a in command)
open(rows, "a").write(json.dumps(row) + "\n")
PYEOF
}

measure "C++ encoder (Python binding, encode only)" \
  env PYTHONPATH="$ROOT/python" "$PY" "$BENCH_DIR/speed/encoder_speed.py" --impl cpp --corpus "$CORPUS" --model "$MODEL_DIR" --count "$COUNT" --threads "$THREADS"
rm -rf "$CACHE/indexes/speed-$COUNT"
measure "C++ CLI index build (load + encode + index, end to end)" \
  sh -c "\"$CLI\" index build --model \"$MODEL\" --corpus \"$EXCERPT\" --out \"$CACHE/indexes/speed-$COUNT\" --threads $THREADS >/dev/null && echo '{\"documents\": $COUNT}'"
measure "TorchScript from Python, plain loop, unsorted batches" \
  "$PY" "$BENCH_DIR/speed/encoder_speed.py" --impl torch --corpus "$CORPUS" --model "$MODEL_DIR" --count "$COUNT" --threads "$THREADS"
if [[ "$MODEL" != use-lite-en ]]; then
  :  # the TF.js original exists for USE-lite only
elif [[ -d "$REF_DIR/node_modules/@energetic-ai" && -d "$ROOT/models/cache/use-lite/package" ]]; then
  measure "TF.js original in Node (bench_reference.mjs)" \
    node "$ROOT/models/use_lite/bench_reference.mjs" --ref-dir "$REF_DIR" --package-dir "$ROOT/models/cache/use-lite/package" \
    --corpus "$CORPUS" --count "$NODE_COUNT" --batch 32 || echo "TF.js reference failed; row left out" >&2
else
  echo "TF.js reference runtime not found under $REF_DIR; row left out" >&2
fi

write_table "$TABLE" "Encoder throughput ($MODEL), first $COUNT ArguAna corpus texts, $THREADS threads, batch 32" \
  label,documents,docs_per_second,seconds,process_seconds,process_cpu_seconds,docs_per_cpu_second,peak_rss_mib \
  "seconds = encoding only (after one warm-up batch); process_seconds = the whole process incl. model load; peak RSS and CPU seconds (user + sys, whole process) from /usr/bin/time -v. The machine's 2 cores were shared with other jobs (load 10-17), so wall-clock docs/s are far below what 2 free cores give; docs per CPU second is the fairer comparison."
