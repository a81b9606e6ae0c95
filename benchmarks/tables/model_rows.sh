#!/usr/bin/env bash
# What a base model buys: the rows a user compares when choosing an encoder, on the dev splits of
# SICK and ArguAna, every one affordable on 2 cores because the network stays frozen and each text
# goes through it once (the pooled-feature cache; the zero-shot row fills it). Per set:
#   cosine (zero-shot MODEL)
#   cosine + SparseCL head (Hoyer), alpha tuned on dev          -- Es = a linear head on E's features
#   CL head cosine                                              -- E' = a contrastive head on E's features
#   CL head cosine + SparseCL head (Hoyer), alpha tuned on dev
# with the training and evaluation wall and CPU seconds of each.
#
#   benchmarks/tables/model_rows.sh [--model NAME] [--data DIR] [--sets "sick arguana"]
#       [--sick-qrels FILE] [--arguana-qrels FILE]
#
# Writes benchmarks/results/model_rows_<model>.{json,md}; heads are cached in
# benchmarks/results/tmp/models (delete one to retrain it). The feature cache is the library's
# default folder ($COUNTERPOINT_CACHE, else $XDG_CACHE_HOME/counterpoint, else ~/.cache/counterpoint).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

MODEL=all-minilm-l6-v2 SETS="sick arguana" SICK_QRELS="" ARGUANA_QRELS=""
parse_options --model MODEL --sets SETS --sick-qrels SICK_QRELS --arguana-qrels ARGUANA_QRELS -- "$@"
FEATURES="${COUNTERPOINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/counterpoint}"

# One recipe per head, the ones the MiniLM tables settled on (lr 1e-3, 5 epochs, temperature 0.02).
HEAD=(--base "$MODEL" --head-only --batch-size 32 --lr 1e-3 --epochs 5 --temperature 0.02 --seed 42
      --threads "$THREADS" --feature-cache "$FEATURES")

TABLE="model_rows_$MODEL"
start_table "$TABLE" $SETS
for set in $SETS; do
  resolve_set "$set"
  run=(/usr/bin/time -v "$CLI" run --dataset "$DATA/$set" --qrels "$SET_QRELS" --threads "$THREADS"
       --metrics ndcg@10,recall@100 --feature-cache "$FEATURES")
  es="$CACHE/models/$MODEL-$set-sparsecl-head"
  cl="$CACHE/models/$MODEL-$set-cl-head"

  record_run "cosine (zero-shot $MODEL)" "$set" eval -- "${run[@]}" --model "$MODEL"
  train_once "train Es: SparseCL head (Hoyer)" "$set" "$es" \
    /usr/bin/time -v "$CLI" train sparsecl "${HEAD[@]}" --sparsity hoyer "${TRAIN_DATA[@]}" \
    --name "$set-sparsecl-head" --out "$es"
  record_run "cosine + SparseCL head (Hoyer), alpha tuned on dev" "$set" eval -- "${run[@]}" --model "$MODEL" \
    --sparse-model "$es" --scorer hoyer --tune-alpha interval
  train_once "train E: CL head (cosine InfoNCE)" "$set" "$cl" \
    /usr/bin/time -v "$CLI" train contrastive "${HEAD[@]}" "${TRAIN_DATA[@]}" --name "$set-cl-head" --out "$cl"
  record_run "CL head cosine" "$set" eval -- "${run[@]}" --model "$cl"
  record_run "CL head cosine + SparseCL head (Hoyer), alpha tuned on dev" "$set" eval -- "${run[@]}" --model "$cl" \
    --sparse-model "$es" --scorer hoyer --tune-alpha interval
done

write_table "$TABLE" "Frozen $MODEL with trained heads, dev nDCG@10" \
  set,label,ndcg@10,recall@100,alpha,steps,seconds,cpu_seconds \
  "The network is frozen in every row: heads train on pooled features read from the feature cache, which the zero-shot row fills. Wall and CPU seconds from /usr/bin/time on 2 cores."
