# Shared by the benchmark scripts in this folder (sourced, not run): locations of the CLI, the
# data and the cache, and `record_run`, which runs one CLI configuration, keeps its log and adds a
# row (with the exact command) to the table being built.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
RESULTS="$BENCH_DIR/results"
CACHE="$RESULTS/tmp"
CLI="${COUNTERPOINT_BIN:-$ROOT/build-bench/bin/counterpoint}"
export COUNTERPOINT_MODELS="${COUNTERPOINT_MODELS:-$ROOT/models/installed}"
THREADS="${THREADS:-2}"
PY=/usr/bin/python3

[[ -x "$CLI" ]] || { echo "counterpoint CLI not found at $CLI: build it with
  cmake -S $ROOT -B $ROOT/build-bench -G Ninja -DCOUNTERPOINT_BUILD_PYTHON=OFF && cmake --build $ROOT/build-bench --target counterpoint_cli
or set COUNTERPOINT_BIN" >&2; exit 2; }
mkdir -p "$CACHE/logs" "$CACHE/models" "$CACHE/indexes" "$CACHE/runs"

# For scripts taking --set, --data and --qrels: makes DATA absolute, defaults QRELS to the set's
# dev qrels (which must exist) and sets TRAIN_DATA to the `counterpoint train` flags of the set's
# train split.
resolve_set_paths() {
  DATA="$(cd "$DATA" && pwd)"
  QRELS="${QRELS:-$DATA/$SET/qrels/dev.tsv}"
  require_file "$QRELS" "qrels"
  case "$SET" in
    sick) TRAIN_DATA=(--data sick --pairs "$DATA/sick/pairs_train.tsv" --dataset "$DATA/sick") ;;
    arguana) TRAIN_DATA=(--data arguana --dataset "$DATA/arguana" --qrels "$DATA/arguana/qrels/train.tsv") ;;
    *) echo "unknown set $SET (sick or arguana)" >&2; exit 2 ;;
  esac
}

# The name (under $CACHE/models, after "<model>-<set>-") of the SparseCL head that
# contradiction_table.sh trains and transfer_table.sh reuses.
SPARSECL_HEAD_NAME="sparsecl-hoyer-head-only--lr-1e-3--5-epochs"

require_file() { [[ -e "$1" ]] || { echo "missing $2: $1" >&2; exit 2; }; }

# Rows of the table under construction, one JSON object per line (see make_table.py). With set
# names after the table name, rows of other sets from an earlier run (the cache, else the committed
# table) are kept, so a table can be completed one set at a time.
start_table() {
  ROWS="$CACHE/$1.rows.jsonl"
  local committed="$RESULTS/$1.json"; shift
  # A fresh checkout has no cache: the committed table is where the other sets' rows live.
  if [[ $# -gt 0 && ! -f "$ROWS" && -f "$committed" ]]; then
    "$PY" -c 'import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
open(sys.argv[2], "w").writelines(json.dumps(r) + "\n" for r in rows)' "$committed" "$ROWS"
  fi
  if [[ $# -gt 0 && -f "$ROWS" ]]; then
    "$PY" -c 'import json, sys
rerun = set(sys.argv[2:])
rows = [l for l in open(sys.argv[1]) if l.strip() and json.loads(l)["set"] not in rerun]
open(sys.argv[1], "w").writelines(rows)' "$ROWS" "$@"
  else
    : > "$ROWS"
  fi
}

# record_run LABEL SET KIND -- COMMAND...   runs COMMAND, parses nDCG@10 (and tuned alpha) from
# its output and appends a row. KIND: "eval" (a `counterpoint run`) or "train".
record_run() {
  local label="$1" set="$2" kind="$3"; shift 4
  local log="$CACHE/logs/$(echo "$set-$label" | tr -c 'A-Za-z0-9.\n-' '_').log"
  local start end
  start=$(date +%s.%N)
  echo ">> $set / $label" >&2
  "$@" > "$log" 2> "$log.err" || { echo "failed: $* (see $log.err)" >&2; tail -5 "$log.err" >&2; exit 1; }
  end=$(date +%s.%N)
  $PY "$BENCH_DIR/make_table.py" add-row --rows "$ROWS" --label "$label" --set "$set" --kind "$kind" \
      --log "$log" --seconds "$(echo "$end - $start" | bc)" -- "$@"
}

# Trains a model once into the cache (reused afterwards); the training wall time goes into the table.
train_once() {
  local label="$1" set="$2" out="$3"; shift 3
  if [[ -f "$out/manifest.json" ]]; then
    echo ">> $set / $label: reusing $out" >&2
    [[ -f "$out.row.json" ]] && cat "$out.row.json" >> "$ROWS"
    return 0
  fi
  record_run "$label" "$set" train -- "$@"
  # Only this training's row: other jobs of the same table may have added rows meanwhile.
  "$PY" -c 'import json, sys
rows = [l for l in open(sys.argv[1]) if l.strip()]
mine = [l for l in rows if (json.loads(l)["label"], json.loads(l)["set"]) == (sys.argv[2], sys.argv[3])]
sys.stdout.write(mine[-1])' "$ROWS" "$label" "$set" > "$out.row.json"
}
