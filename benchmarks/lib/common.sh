# Shared by the benchmark shell scripts (sourced, not run): locations of the CLI, the data and the
# cache; `parse_options`, the one command-line parser; the per-set and per-model names; and
# `record_run`, which runs one CLI configuration, keeps its log and adds a row (with the exact
# command) to the table being built, which `write_table` writes.
set -euo pipefail
LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(cd "$LIB_DIR/.." && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
RESULTS="$BENCH_DIR/results"
CACHE="$RESULTS/tmp"
CLI="${COUNTERPOINT_BIN:-$ROOT/build-bench/bin/counterpoint}"
export COUNTERPOINT_MODELS="${COUNTERPOINT_MODELS:-$ROOT/models/installed}"
THREADS="${THREADS:-2}"
PY=/usr/bin/python3
DATA="$ROOT/../shared/data"

[[ -x "$CLI" ]] || { echo "counterpoint CLI not found at $CLI: build it with
  cmake -S $ROOT -B $ROOT/build-bench -G Ninja -DCOUNTERPOINT_BUILD_PYTHON=OFF && cmake --build $ROOT/build-bench --target counterpoint_cli
or set COUNTERPOINT_BIN" >&2; exit 2; }
mkdir -p "$CACHE/logs" "$CACHE/models" "$CACHE/indexes" "$CACHE/runs"

require_file() { [[ -e "$1" ]] || { echo "missing $2: $1" >&2; exit 2; }; }

# parse_options [FLAG VAR | FLAG VAR=VALUE]... -- "$@"
# Every script takes --data DIR (DATA: the data sets, default ../shared/data beside the checkout;
# made absolute). Each FLAG VAR names another option taking a value, which goes into VAR; each
# FLAG VAR=VALUE a switch, which sets VAR to VALUE. A variable's value before the call is its default.
parse_options() {
  local -A takes_value=([--data]=DATA) switch=()
  while [[ $# -gt 0 && "$1" != -- ]]; do
    if [[ "$2" == *=* ]]; then switch[$1]="$2"; else takes_value[$1]="$2"; fi
    shift 2
  done
  shift
  while [[ $# -gt 0 ]]; do
    if [[ -n "$1" && -n "${switch[$1]+set}" ]]; then
      printf -v "${switch[$1]%%=*}" '%s' "${switch[$1]#*=}"
      shift
    elif [[ -n "$1" && -n "${takes_value[$1]+set}" ]]; then
      [[ $# -ge 2 ]] || { echo "$1 needs a value (see the header of $0)" >&2; exit 2; }
      printf -v "${takes_value[$1]}" '%s' "$2"
      shift 2
    else
      echo "unknown argument $1 (see the header of $0)" >&2; exit 2
    fi
  done
  DATA="$(cd "$DATA" && pwd)"
}

# resolve_set SET [QRELS]: SET_QRELS = QRELS (without the argument: the script's --<set>-qrels,
# e.g. SICK_QRELS), else the set's dev qrels, which must exist; TRAIN_DATA = the `counterpoint
# train` flags of the set's train split. SET is sick or arguana.
resolve_set() {
  local set="$1" given
  case "$set" in
    sick) TRAIN_DATA=(--data sick --pairs "$DATA/sick/pairs_train.tsv" --dataset "$DATA/sick") ;;
    arguana) TRAIN_DATA=(--data arguana --dataset "$DATA/arguana" --qrels "$DATA/arguana/qrels/train.tsv") ;;
    *) echo "unknown set $set (sick or arguana)" >&2; exit 2 ;;
  esac
  if [[ $# -ge 2 ]]; then given="$2"; else given="${set^^}_QRELS"; given="${!given:-}"; fi
  SET_QRELS="${given:-$DATA/$set/qrels/dev.tsv}"
  require_file "$SET_QRELS" "qrels"
}

# sick_pairs: TRAIN and DEV = the labelled SICK pairs of the train and dev splits (must exist).
sick_pairs() {
  TRAIN="$DATA/sick/pairs_train.tsv" DEV="$DATA/sick/pairs_dev.tsv"
  require_file "$TRAIN" "SICK train pairs"
  require_file "$DEV" "SICK dev pairs"
}

# model_names NAME: the names that keep each base MODEL's results and caches apart. For the default
# use-lite-en: TABLE=NAME, TAG=use-lite (index caches), PREFIX="" (model caches); for another
# model: TABLE=NAME_<model>, TAG=<model>, PREFIX="<model>-".
model_names() {
  TABLE="$1" TAG="$MODEL" PREFIX=""
  if [[ "$MODEL" == use-lite-en ]]; then TAG=use-lite; else TABLE="$1_$MODEL" PREFIX="$MODEL-"; fi
}

# The name (under $CACHE/models, after "<model>-<set>-") of the SparseCL head that
# contradiction_table.sh trains and transfer_table.sh reuses.
SPARSECL_HEAD_NAME="sparsecl-hoyer-head-only--lr-1e-3--5-epochs"

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
  $PY "$LIB_DIR/make_table.py" add-row --rows "$ROWS" --label "$label" --set "$set" --kind "$kind" \
      --log "$log" --seconds "$(echo "$end - $start" | bc)" -- "$@"
}

# write_table NAME TITLE COLUMNS NOTE: results/NAME.{json,md} from the rows (see make_table.py);
# prints the markdown table.
write_table() {
  "$PY" "$LIB_DIR/make_table.py" write --rows "$ROWS" --name "$1" --title "$2" --columns "$3" --note "$4"
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

# train_cached MARKER MESSAGE COMMAND...: trains a model once into the cache for the scripts that
# keep no table rows of their training: unless MARKER (a file of the trained model in DIR) exists,
# runs COMMAND, whose last two arguments are `--out DIR`, with stdout in DIR.log, stderr in DIR.err,
# its wall seconds in DIR.seconds and its user and system CPU seconds in DIR.cpu.
train_cached() {
  local marker="$1" message="$2"; shift 2
  local dir="${*: -1}" start
  [[ ! -f "$marker" ]] || return 0
  echo ">> $message" >&2
  start=$(date +%s)
  /usr/bin/time -f "%U %S" -o "$dir.cpu" "$@" > "$dir.log" 2> "$dir.err" \
    || { tail -c 2000 "$dir.err" | tr '\r' '\n' | tail -5 >&2; exit 1; }
  echo "$(( $(date +%s) - start ))" > "$dir.seconds"
}
