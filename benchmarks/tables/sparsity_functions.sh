#!/usr/bin/env bash
# Paper Table 4: the sparsity function inside SparseCL. For each of Hoyer, l2/l1 and kappa4, Es is
# trained on the set's train split with that function in the loss and the same function scores
# cos(E) + alpha * sparsity(Es(q) - Es(p)) on dev (alpha tuned on dev, interval search).
#
#   benchmarks/tables/sparsity_functions.sh [--set sick|arguana] [--data DIR] [--qrels FILE] [--epochs 1]
#       [--functions "hoyer l2l1 kappa4"] [--model use-lite-en] [--head-only]
#
# --head-only trains a linear head over the frozen network instead (lr 1e-3, 5 epochs unless
# --epochs is given: the head recipe of contradiction_table.sh).
# Writes benchmarks/results/sparsity_functions.{json,md} (SICK) or sparsity_functions_arguana.{json,md},
# with _<model> appended for another model and _head for heads; models cached in benchmarks/results/tmp/.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SET=sick QRELS="" EPOCHS="" FUNCTIONS="hoyer l2l1 kappa4" MODEL=use-lite-en HEAD_ONLY=0
parse_options --set SET --qrels QRELS --epochs EPOCHS --functions FUNCTIONS --model MODEL --head-only HEAD_ONLY=1 -- "$@"
resolve_set "$SET" "$QRELS"
# Model tags as contradiction_table.sh has them, so both share index caches.
if [[ "$SET" == arguana ]]; then model_names sparsity_functions_arguana; else model_names sparsity_functions; fi
LR=1e-4 KIND="" HEAD_FLAG=()
if [[ "$HEAD_ONLY" == 1 ]]; then
  LR=1e-3 KIND="-head" HEAD_FLAG=(--head-only) TABLE="${TABLE}_head"
  EPOCHS="${EPOCHS:-5}"
fi
EPOCHS="${EPOCHS:-1}"

start_table "$TABLE"
run=("$CLI" run --model "$MODEL" --dataset "$DATA/$SET" --qrels "$SET_QRELS" --threads "$THREADS" --metrics ndcg@10,recall@100)
record_run "cosine (zero-shot $MODEL)" "$SET" eval -- "${run[@]}" --index-cache "$CACHE/indexes/$SET-$TAG"
for fn in $FUNCTIONS; do
  es="$CACHE/models/$PREFIX$SET-sparsecl-$fn$KIND-e$EPOCHS"
  train_once "train Es: SparseCL ($fn)${HEAD_FLAG:+, head only}, $EPOCHS epoch(s)" "$SET" "$es" \
    /usr/bin/time -v "$CLI" train sparsecl --base "$MODEL" --batch-size 32 --lr "$LR" --temperature 0.02 --seed 42 \
    --threads "$THREADS" "${TRAIN_DATA[@]}" --epochs "$EPOCHS" --sparsity "$fn" "${HEAD_FLAG[@]}" \
    --name "$PREFIX$SET-sparsecl-$fn$KIND" --out "$es"
  record_run "cosine + $fn (Es${HEAD_FLAG:+ head} trained with $fn), alpha tuned on dev" "$SET" eval -- "${run[@]}" \
    --sparse-model "$es" --scorer "$fn" --tune-alpha interval \
    --index-cache "$CACHE/indexes/$SET-$TAG+sparsecl-$fn$KIND-e$EPOCHS"
done

write_table "$TABLE" "Sparsity function in SparseCL ($MODEL${HEAD_FLAG:+, head only}), $SET dev nDCG@10 (paper Table 4 setting)" \
  label,ndcg@10,recall@100,alpha,steps,final_loss,seconds,cpu_seconds \
  "Each Es: $MODEL ${HEAD_FLAG:+(a linear head over the frozen network) }fine-tuned on $SET train, batch 32, lr $LR, temperature 0.02, seed 42, $EPOCHS epoch(s); the same function is used in the loss and in the score."
