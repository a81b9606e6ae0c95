#!/usr/bin/env bash
# Two-stage verifiers paper, near-miss finding: MaxSim and the other fixed token-map scores do not
# reject structural near-misses (negation, swapped roles), learned map verifiers do. F3 (CNN) and
# F4 (patch Transformer) are trained on SICK train near-miss triples over the frozen default
# encoder's token maps; every scorer is then measured on SICK dev as the ROC-AUC of paraphrase
# pairs (directed entailments) against near-miss pairs (directed contradictions with word
# overlap >= 0.5): 1.0 = every near-miss scored below every paraphrase, 0.5 = no separation.
#
# With --inverted-negatives each verifier is trained twice: on the SICK triples alone, and with the
# structure-targeted negatives of `counterpoint invert` added (each anchor's role swap, negation
# or antonym edit as the negative of a copy of its triple), to test whether they buy separation.
#
#   benchmarks/tables/near_miss_verifiers.sh [--data DIR] [--seeds "42 43 44"] [--epochs 15] [--model NAME]
#       [--inverted-negatives]
#
# Writes benchmarks/results/near_miss_verifiers.md (near_miss_verifiers_<model>.md for a model other
# than use-lite-en); verifiers cached in benchmarks/results/tmp/models.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SEEDS="42" EPOCHS=15 MODEL=use-lite-en VARIANTS="plain"
parse_options --seeds SEEDS --epochs EPOCHS --model MODEL --inverted-negatives "VARIANTS=plain inverted" -- "$@"
sick_pairs

# Shapes sized for CPU training (SICK maps are under 32 x 32 tokens); the rest are the reference
# settings: AdamW, 10 % warm-up, batch 32, InfoNCE temperature 0.1 (lr raised to 1e-3 for the
# small networks trained from scratch).
declare -A SHAPE=(
  [cnn]="--architecture cnn --map-size 32 --width 32"
  [transformer]="--architecture transformer --map-size 32 --width 64 --patch 8 --feed-forward 32"
)
model_names near_miss_verifiers
OUT="$RESULTS/$TABLE.md"
verifiers=() training_rows=()
for seed in $SEEDS; do
  for arch in cnn transformer; do
   for variant in $VARIANTS; do
    extra=() suffix=""
    [[ "$variant" == inverted ]] && extra=(--inverted-negatives) suffix="-inverted"
    dir="$CACHE/models/${PREFIX}sick-verifier-$arch-s$seed-e$EPOCHS$suffix"
    # shellcheck disable=SC2206
    cmd=("$CLI" train verifier --model "$MODEL" --pairs "$TRAIN" --dev-pairs "$DEV" ${SHAPE[$arch]}
         --epochs "$EPOCHS" --batch-size 32 --lr 1e-3 --seed "$seed" --threads "$THREADS" "${extra[@]}" --out "$dir")
    train_cached "$dir/verifier.json" "training $arch seed $seed" "${cmd[@]}"
    verifiers+=(--verifier "$dir")
    triples="$(grep -o 'training on .*triples.*' "$dir.err" | head -1)"
    training_rows+=("| $arch | $variant | $seed | $triples | $(cat "$dir.seconds") | \`${cmd[*]#$ROOT/}\` |")
   done
  done
done

eval_cmd=("$CLI" near-miss --model "$MODEL" --pairs "$DEV" --threads "$THREADS" "${verifiers[@]}")
echo ">> scoring SICK dev pairs" >&2
table="$("${eval_cmd[@]}")"
{
  echo "# Near-miss rejection on SICK dev (token-map scores F0-F4)"
  echo
  echo "Encoder: $MODEL (frozen). Higher AUC = near-misses scored further below paraphrases."
  echo "Learned verifiers: the epoch with the best dev AUC is kept (the AUC below is that epoch's)."
  echo
  echo '```'
  echo "$table"
  echo '```'
  echo
  echo "Command: \`${eval_cmd[*]#$ROOT/}\`"
  echo
  echo "| verifier | negatives | seed | training data | training seconds (wall) | command |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${training_rows[@]}"
} > "$OUT"
cat "$OUT"
