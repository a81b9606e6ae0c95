#!/usr/bin/env bash
# Two-stage verifiers paper: structure-targeted negatives trade zero-shot retrieval for near-miss
# separation. An F3 (CNN) verifier is trained end to end with the encoder (`--encoder-lr`) on SICK
# train near-miss triples, once as they are and once with the inverter's structure-targeted
# negatives added (`--inverted-negatives`: each anchor's role swap, negation or antonym edit as the
# negative of a copy of its triple). Reported: the best dev near-miss AUC of each, the token-map
# scores over each tuned encoder, and the retrieval cost: dev nDCG@10 (cosine) of the tuned
# encoders against the base on SICK (and ArguAna with --sets "sick arguana").
#
#   benchmarks/tables/inverted_negatives_cost.sh [--model NAME] [--data DIR] [--epochs 5] [--seed 42]
#       [--sets "sick"] [--sick-qrels FILE] [--arguana-qrels FILE]
#
# Writes benchmarks/results/inverted_negatives_<model>.{md,json}; models cached in
# benchmarks/results/tmp/models.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

MODEL=all-minilm-l6-v2 EPOCHS=5 SEED=42 SETS="sick" SICK_QRELS="" ARGUANA_QRELS=""
parse_options --model MODEL --epochs EPOCHS --seed SEED --sets SETS --sick-qrels SICK_QRELS \
  --arguana-qrels ARGUANA_QRELS -- "$@"
sick_pairs

NAME="inverted_negatives_$MODEL"
start_table "$NAME"
near_miss_tables=()
encoders=("$MODEL|base ($MODEL)")
for variant in plain inverted; do
  extra=() suffix=""
  [[ "$variant" == inverted ]] && extra=(--inverted-negatives) suffix="-inverted"
  dir="$CACHE/models/$MODEL-sick-verifier-cnn-e2e-s$SEED-e$EPOCHS$suffix"
  train_once "train F3 end to end ($variant negatives)" sick "$dir" \
    "$CLI" train verifier --model "$MODEL" --pairs "$TRAIN" --dev-pairs "$DEV" --architecture cnn --map-size 32 \
    --width 32 --epochs "$EPOCHS" --batch-size 32 --lr 1e-3 --encoder-lr 1.5e-5 --seed "$SEED" \
    --threads "$THREADS" "${extra[@]}" --out "$dir"
  encoders+=("$dir/encoder|tuned end to end with F3, $variant negatives")
  cmd=("$CLI" near-miss --model "$dir/encoder" --pairs "$DEV" --threads "$THREADS" --verifier "$dir")
  near_miss_tables+=("### $variant negatives" "" '```' "$("${cmd[@]}")" '```' "Command: \`${cmd[*]#$ROOT/}\`" "")
done

for set in $SETS; do
  resolve_set "$set"
  qrels="$SET_QRELS"
  for entry in "${encoders[@]}"; do
    encoder="${entry%%|*}" label="${entry#*|}"
    cache="$CACHE/indexes/$set-$(basename "$(dirname "$encoder")")-$(basename "$encoder")"
    [[ "$encoder" == "$MODEL" ]] && cache="$CACHE/indexes/$set-$MODEL"
    record_run "cosine, $label" "$set" eval -- "$CLI" run --dataset "$DATA/$set" --qrels "$qrels" \
      --threads "$THREADS" --metrics ndcg@10,recall@100 --model "$encoder" --index-cache "$cache"
  done
done

write_table "$NAME" "Structure-targeted negatives: near-miss separation against zero-shot retrieval ($MODEL)" \
  set,label,ndcg@10,recall@100,seconds \
  "F3 (CNN, map 32, width 32, batch 32, lr 1e-3, encoder lr 1.5e-5, $EPOCHS epochs, seed $SEED) trained end to end on SICK train near-miss triples, without and with the inverter's negatives. Train rows: the best dev near-miss AUC is in the command's log (below). Eval rows: dev nDCG@10 of cosine retrieval with each encoder." \
  > /dev/null
{
  echo
  echo "Best dev near-miss AUC while training (the epoch kept):"
  echo
  for variant in plain inverted; do
    suffix=""; [[ "$variant" == inverted ]] && suffix="-inverted"
    log="$CACHE/logs/sick-train_F3_end_to_end__${variant}_negatives_.log"
    echo "- $variant: $(grep -o 'best dev near-miss AUC [0-9.]*' "$log" 2>/dev/null || echo 'see the training log')"
  done
  echo
  printf '%s\n' "${near_miss_tables[@]}"
} >> "$RESULTS/$NAME.md"
cat "$RESULTS/$NAME.md"
