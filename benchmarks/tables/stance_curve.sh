#!/usr/bin/env bash
# The learning curve of the stance curricula (IBM Debater Claim Stance) on the dev topics alone:
# the contrastive fine-tuning of stance_table.sh (instruction + topic queries, batch 16, lr 1e-4,
# temperature 0.05, seed 42) at growing triple counts and epochs, each point's training CPU time
# beside its dev P@R, Hard@R, Semi@R and nDCG@10 (held-out instruction templates, dense stage 1).
# The test topics are not read: a point worth keeping becomes a row of stance_table.sh, which reports
# test once for the configuration dev chooses.
#
#   benchmarks/tables/stance_curve.sh [--model NAME] [--data DIR] [--train-qrels FILE] [--dev-topics 5]
#       [--points "1000x1 2000x1 4000x1 1000x2 2000x2"]
#       [--curricula "mixed homogeneous inverted@2000x1,1000x2 inverted-both@2000x1,1000x2"]
#
# Each point is TRIPLESxEPOCHS, trained under each curriculum; CURRICULUM@P1,P2 trains that curriculum
# at those points only (the inverted curricula cost 1.5-2x the triples: every drawn positive with an
# inversion adds one, and inverted-both every hard negative with one as well).
#
# Writes benchmarks/results/stance_curve.md / .json (stance_curve_<model>.* for a model other than
# use-lite-en); models and indexes are cached in benchmarks/results/tmp/, so a longer curve reuses
# the points already trained.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

TRAIN_QRELS="" MODEL=use-lite-en DEV_TOPICS=5 POINTS="1000x1 2000x1 4000x1 1000x2 2000x2"
CURRICULA="mixed homogeneous inverted@2000x1,1000x2 inverted-both@2000x1,1000x2"
parse_options --model MODEL --train-qrels TRAIN_QRELS --dev-topics DEV_TOPICS --points POINTS --curricula CURRICULA \
  -- "$@"
SET="$DATA/ibm-claim-stance"
TRAIN_QRELS="${TRAIN_QRELS:-$SET/qrels/train.tsv}"
require_file "$TRAIN_QRELS" "training qrels"
# points_of SPEC: the points a --curricula entry trains at (its own after '@', else --points).
points_of() { if [[ "$1" == *@* ]]; then local p="${1#*@}"; echo "${p//,/ }"; else echo "$POINTS"; fi; }
for spec in $CURRICULA; do
  for p in $(points_of "$spec"); do
    [[ "$p" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "points are TRIPLESxEPOCHS, e.g. 2000x1, got '$p'" >&2; exit 2; }
  done
done

model_names stance_curve
WORK="$CACHE/stance-$MODEL"
mkdir -p "$WORK"
FIT_QRELS="$WORK/train-fit.tsv" DEV_QRELS="$WORK/dev.tsv"
DEV_NOTE="$("$PY" "$LIB_DIR/stance_dev_split.py" "$TRAIN_QRELS" "$DEV_TOPICS" "$FIT_QRELS" "$DEV_QRELS")"
echo "$DEV_NOTE" >&2

rows="$WORK/curve_rows.jsonl"
: > "$rows"
# point LABEL MODEL TRAIN_CPU STEPS: the dev row of MODEL, with its training cost.
point() {
  local label="$1" model="$2" cpu="$3" steps="$4"
  local cmd=("$CLI" stance --dataset "$SET" --qrels "$DEV_QRELS" --model "$model" --threads "$THREADS"
             --index-cache "$CACHE/indexes/stance-$(basename "$model")")
  echo ">> $label" >&2
  local start table; start=$(date +%s)
  table="$("${cmd[@]}" 2> "$CACHE/logs/stance-curve-$(basename "$model").err")" || { echo "failed: ${cmd[*]}" >&2; exit 1; }
  "$PY" "$LIB_DIR/stance_row.py" "$label" dev "${cmd[*]#$ROOT/}" "$(( $(date +%s) - start ))" "$table" \
    | "$PY" -c 'import json, sys; r = json.load(sys.stdin); r.update(train_cpu_seconds=float(sys.argv[1]), steps=int(sys.argv[2])); print(json.dumps(r))' \
      "$cpu" "$steps" >> "$rows"
}

point "zero-shot $MODEL" "$MODEL" 0 0
training=()
for spec in $CURRICULA; do
  curriculum="${spec%%@*}"
  for p in $(points_of "$spec"); do
    count="${p%x*}" epochs="${p#*x}"
    dir="$CACHE/models/${PREFIX}stance-cl-$curriculum-n$count-e$epochs-dev$DEV_TOPICS"
    # The 1-epoch models are stance_table.sh's own (same name, same command).
    [[ "$epochs" == 1 ]] && dir="$CACHE/models/${PREFIX}stance-cl-$curriculum-n$count-dev$DEV_TOPICS"
    cmd=("$CLI" train contrastive --base "$MODEL" --data stance --dataset "$SET" --qrels "$FIT_QRELS"
         --curriculum "$curriculum" --stance-count "$count" --epochs "$epochs" --batch-size 16 --lr 1e-4
         --temperature 0.05 --seed 42 --threads "$THREADS" --name "stance-cl-$curriculum" --out "$dir")
    train_cached "$dir/manifest.json" "training $curriculum, $count triples, $epochs epoch(s)" "${cmd[@]}"
    cpu="$(awk '{printf "%.1f", $1 + $2}' "$dir.cpu" 2>/dev/null || echo nan)"
    steps="$(grep -o 'trained [0-9]* steps' "$dir.log" | head -1 | grep -o '[0-9]*')"
    training+=("- $curriculum, $count triples, $epochs epoch(s) ($steps steps, $(cat "$dir.seconds") s wall, $cpu CPU-s): \`${cmd[*]#$ROOT/}\`")
    point "$curriculum, $count triples, $epochs epoch(s)" "$dir" "$cpu" "$steps"
  done
done

OUT="$RESULTS/$TABLE"
"$PY" - "$rows" "$OUT" "$MODEL" "$DEV_NOTE" <<'EOF' > "$WORK/curve.md"
import json, sys
rows_path, out, model, dev_note = sys.argv[1:5]
rows = [json.loads(l) for l in open(rows_path)]
json.dump({"benchmark": out.rsplit("/", 1)[-1], "model": model, "dev": dev_note, "rows": rows},
          open(out + ".json", "w"), indent=2)
best = max(rows, key=lambda r: (r["P@R"], -r["Hard@R"]))
print("| configuration | steps | training CPU-s | dev P@R | dev Hard@R | dev Semi@R | dev nDCG@10 |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    mark = " **(best on dev)**" if r is best else ""
    print(f"| {r['label']}{mark} | {r['steps']} | {r['train_cpu_seconds']:.0f} | {r['P@R']:.4f} | "
          f"{r['Hard@R']:.4f} | {r['Semi@R']:.4f} | {r['ndcg@10']:.4f} |")
EOF
{
  echo "# Stance curricula, learning curve on the dev topics, $MODEL (IBM Debater Claim Stance)"
  echo
  echo "Contrastive fine-tuning on the training topics less the dev topics ($DEV_NOTE); batch 16,"
  echo "lr 1e-4, temperature 0.05, seed 42, training instruction templates. Dev figures: mean over the held-out"
  echo "templates, dense stage 1. Training CPU-s: user + system of the training run on 2 threads."
  echo
  cat "$WORK/curve.md"
  echo
  echo "Training commands:"
  echo
  printf '%s\n' "${training[@]}"
} > "$OUT.md"
cat "$WORK/curve.md"
