#!/usr/bin/env bash
# SparseCL heads over a frozen encoder on ArguAna dev, made affordable by the pooled-feature cache:
# the corpus goes through the network once (the zero-shot row fills the cache), and every head
# variant then trains on cached features and indexes the corpus with a matrix product. Rows:
# zero-shot cosine of E, then cos(E) + alpha * Hoyer(Es) for each head recipe (alpha tuned on dev,
# interval search), each with its training and evaluation CPU seconds.
#
#   benchmarks/tables/arguana_heads.sh [--data DIR] [--arguana-qrels FILE] [--model NAME]
#       [--recipes "NAME:FLAGS;NAME:FLAGS"] [--append]
#
# --append adds the given recipes' rows to the table of an earlier run (its rows under
# results/tmp), without re-running the zero-shot row or the recipes already there.
#
# Writes benchmarks/results/arguana_heads_<model>.{json,md}; heads are cached in
# benchmarks/results/tmp/models (delete one to retrain it). The feature cache is the library's
# default folder ($COUNTERPOINT_CACHE, else $XDG_CACHE_HOME/counterpoint, else ~/.cache/counterpoint).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

ARGUANA_QRELS="" MODEL=all-minilm-l6-v2 APPEND=0
# Each recipe: name, then the `train sparsecl` flags beside the shared ones below.
RECIPES="lr1e-3-e5:--lr 1e-3 --epochs 5 --temperature 0.02;lr3e-3-e20-t0.05:--lr 3e-3 --epochs 20 --temperature 0.05;lr1e-3-e20:--lr 1e-3 --epochs 20 --temperature 0.02;neg3-lr1e-3-e10:--lr 1e-3 --epochs 10 --temperature 0.02 --negatives 3;hnw1-lr1e-3-e10:--lr 1e-3 --epochs 10 --temperature 0.02 --hard-negative-weight 1"
parse_options --arguana-qrels ARGUANA_QRELS --model MODEL --recipes RECIPES --append APPEND=1 -- "$@"
FEATURES="${COUNTERPOINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/counterpoint}"

TABLE="arguana_heads_$MODEL"
resolve_set arguana
run=(/usr/bin/time -v "$CLI" run --dataset "$DATA/arguana" --qrels "$SET_QRELS" --threads "$THREADS"
     --metrics ndcg@10,recall@100 --model "$MODEL" --feature-cache "$FEATURES")
if [[ "$APPEND" == 1 ]]; then
  ROWS="$CACHE/$TABLE.rows.jsonl"
  require_file "$ROWS" "rows of an earlier run of this table"
else
  start_table "$TABLE"
  record_run "cosine (zero-shot $MODEL)" arguana eval -- "${run[@]}"
fi
IFS=';' read -r -a recipes <<< "$RECIPES"
for recipe in "${recipes[@]}"; do
  name="${recipe%%:*}" flags="${recipe#*:}"
  head="$CACHE/models/$MODEL-arguana-head-$name"
  # shellcheck disable=SC2086
  train_once "train Es: SparseCL head $name" arguana "$head" \
    /usr/bin/time -v "$CLI" train sparsecl --base "$MODEL" --head-only --sparsity hoyer --batch-size 32 --seed 42 --threads "$THREADS" $flags "${TRAIN_DATA[@]}" --feature-cache "$FEATURES" \
    --name "arguana-head-$name" --out "$head"
  record_run "cosine + SparseCL head $name (Hoyer), alpha tuned on dev" arguana eval -- "${run[@]}" \
    --sparse-model "$head" --scorer hoyer --tune-alpha interval
done

write_table "$TABLE" "SparseCL heads over frozen $MODEL, ArguAna dev nDCG@10" \
  label,ndcg@10,recall@100,alpha,steps,seconds,cpu_seconds \
  "Heads train on pooled features read from the feature cache; eval rows encode nothing the cache holds (the zero-shot row filled it). CPU seconds from /usr/bin/time (2 cores)."
