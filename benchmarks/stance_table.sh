#!/usr/bin/env bash
# Stance-aware argument retrieval (IBM Debater Claim Stance): zero-shot use-lite-en against the
# same encoder fine-tuned with the contrastive loss on instruction + topic queries under the two
# curricula (homogeneous: every negative a same-topic claim of the other stance; mixed: thirds of
# hard, semi-hard and easy negatives; the same triple count for both), each searched dense-only
# and as a hybrid with BM25 by Relative Score Fusion. Evaluation uses the held-out instruction
# templates (never seen in training) and the test topics; word ablation (RIS / RCS / DI) shows
# how much each model's similarity depends on the instruction at all.
#
#   benchmarks/stance_table.sh [--data DIR] [--train-qrels FILE] [--eval-qrels FILE] [--count 2000]
#       [--lambdas "0.1 0.15 0.2"]
#
# Writes benchmarks/results/stance_table.md; models and indexes cached in benchmarks/results/tmp/.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

DATA="$ROOT/../shared/data" TRAIN_QRELS="" EVAL_QRELS="" COUNT=2000 LAMBDAS="0.1 0.15 0.2"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data) DATA="$2"; shift 2 ;;
    --train-qrels) TRAIN_QRELS="$2"; shift 2 ;;
    --eval-qrels) EVAL_QRELS="$2"; shift 2 ;;
    --count) COUNT="$2"; shift 2 ;;
    --lambdas) LAMBDAS="$2"; shift 2 ;;
    *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
DATA="$(cd "$DATA" && pwd)"
SET="$DATA/ibm-claim-stance"
TRAIN_QRELS="${TRAIN_QRELS:-$SET/qrels/train.tsv}"
EVAL_QRELS="${EVAL_QRELS:-$SET/qrels/test.tsv}"
require_file "$TRAIN_QRELS" "training qrels"
require_file "$EVAL_QRELS" "evaluation qrels"

OUT="$RESULTS/stance_table.md"
report="$CACHE/stance_table.body.md"
: > "$report"
# evaluate LABEL MODEL INDEX [extra stance options...]: appends the command and its table.
evaluate() {
  local label="$1" model="$2" index="$3"; shift 3
  local cmd=("$CLI" stance --dataset "$SET" --qrels "$EVAL_QRELS" --model "$model" --threads "$THREADS"
             --index-cache "$index" "$@")
  echo ">> $label" >&2
  local start; start=$(date +%s)
  local table; table="$("${cmd[@]}" 2> "$CACHE/logs/stance-$(echo "$label" | tr -c 'A-Za-z0-9\n' '_').err")" \
    || { echo "failed: ${cmd[*]}" >&2; exit 1; }
  {
    echo "### $label"
    echo
    echo '```'
    echo "$table"
    echo '```'
    echo "Command ($(( $(date +%s) - start )) s): \`${cmd[*]#$ROOT/}\`"
    echo
  } >> "$report"
}

# Batch 16: the training split has 25 topics and a batch holds each topic once (in-batch
# negatives of one topic would be false negatives for the other stance's query).
models=("zero-shot use-lite-en|use-lite-en") training=()
for curriculum in homogeneous mixed; do
  dir="$CACHE/models/stance-cl-$curriculum-n$COUNT"
  cmd=("$CLI" train contrastive --base use-lite-en --data stance --dataset "$SET" --qrels "$TRAIN_QRELS"
       --curriculum "$curriculum" --stance-count "$COUNT" --epochs 1 --batch-size 16 --lr 1e-4 --temperature 0.05
       --seed 42 --threads "$THREADS" --name "stance-cl-$curriculum" --out "$dir")
  if [[ ! -f "$dir/manifest.json" ]]; then
    echo ">> training $curriculum" >&2
    start=$(date +%s)
    "${cmd[@]}" > "$dir.log" 2> "$dir.err" || { tail -5 "$dir.err" >&2; exit 1; }
    echo "$(( $(date +%s) - start ))" > "$dir.seconds"
  fi
  training+=("Training ($curriculum, $(cat "$dir.seconds") s wall): \`${cmd[*]#$ROOT/}\`")
  models+=("contrastive, $curriculum curriculum|$dir")
done

for entry in "${models[@]}"; do
  label="${entry%%|*}" model="${entry#*|}"
  index="$CACHE/indexes/stance-$(basename "$model")"
  evaluate "$label, dense" "$model" "$index" --ablation 2
  for lambda in $LAMBDAS; do
    evaluate "$label, hybrid RSF lambda $lambda" "$model" "$index" --stage1 hybrid --fusion rsf --lambda "$lambda"
  done
done

{
  echo "# Stance-aware retrieval, IBM Debater Claim Stance ($(basename "$EVAL_QRELS" .tsv) topics, held-out instructions)"
  echo
  echo "P@R: share of the top R (R = claims with the requested stance on the topic) that are such claims; Hard@R:"
  echo "same topic, other stance (stance errors); Semi@R: other topic, same stance; Easy@R: neither. Fine-tuned"
  echo "models: $COUNT triples from the training topics, 1 epoch, batch 16, lr 1e-4, temperature 0.05, seed 42,"
  echo "training instruction templates only."
  echo
  printf '%s\n\n' "${training[@]}"
  cat "$report"
} > "$OUT"
cat "$OUT"
