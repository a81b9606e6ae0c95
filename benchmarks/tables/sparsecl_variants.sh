#!/usr/bin/env bash
# SparseCL training settings compared on one set: for each variant, Es is trained on the train
# split from use-lite-en with the shared settings of Table 1 (batch 32, lr 1e-4, temperature 0.02,
# seed 42, 3 epochs) plus the variant's own flags, and scored as zero-shot cos(E) + alpha *
# Hoyer(Es(q) - Es(p)) on dev with alpha tuned there (interval search).
#
#   benchmarks/tables/sparsecl_variants.sh [--set arguana|sick] [--data DIR] [--qrels FILE] [--jobs N]
#       [--variants "NAME=FLAGS;NAME=FLAGS;..."]
#
# Default variants: lr 3e-5, 3 hard negatives per anchor, batch 64, temperature 0.05, 5 epochs, and a head
# alone (a linear map on the pooled embedding, network frozen, lr 1e-3, 5 epochs; seeds 42, 43
# and 44: the seed fixes the data order). With --jobs N the
# variants run N at a time, each with THREADS / N threads (at least 1); on 2 cores two
# single-threaded trainings use the machine better than one with two threads.
# Writes benchmarks/results/sparsecl_variants_<set>.{json,md}; models cached in benchmarks/results/tmp/.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SET=arguana QRELS="" JOBS=1
VARIANTS="lr 3e-5=--lr 3e-5;negatives 3=--negatives 3;batch 64=--batch-size 64;temperature 0.05=--temperature 0.05"
VARIANTS+=";epochs 5=--epochs 5"
VARIANTS+=";head only, lr 1e-3, 5 epochs=--head-only --lr 1e-3 --epochs 5"
VARIANTS+=";head only, lr 1e-3, 5 epochs, seed 43=--head-only --lr 1e-3 --epochs 5 --seed 43"
VARIANTS+=";head only, lr 1e-3, 5 epochs, seed 44=--head-only --lr 1e-3 --epochs 5 --seed 44"
parse_options --set SET --qrels QRELS --jobs JOBS --variants VARIANTS -- "$@"
resolve_set "$SET" "$QRELS"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "--jobs must be a positive integer" >&2; exit 2; }
JOB_THREADS=$(( THREADS / JOBS )); (( JOB_THREADS >= 1 )) || JOB_THREADS=1

TABLE="sparsecl_variants_$SET"
start_table "$TABLE"
run=("$CLI" run --model use-lite-en --dataset "$DATA/$SET" --qrels "$SET_QRELS" --threads "$JOB_THREADS" --metrics ndcg@10,recall@100)

one_variant() {
  local name="$1" flags="$2" slug
  slug="$(echo "$name" | tr -c 'A-Za-z0-9.\n-' '-')"
  local es="$CACHE/models/$SET-sparsecl-hoyer-$slug"
  # A shared setting the variant names itself is left out (the CLI takes each option once).
  local settings=() flag
  # shellcheck disable=SC2206  # the variant's flags are split on purpose
  local own=($flags)
  for flag in --batch-size=32 --lr=1e-4 --temperature=0.02 --seed=42 --epochs=3; do
    [[ " ${own[*]} " == *" ${flag%%=*} "* ]] || settings+=("${flag%%=*}" "${flag#*=}")
  done
  train_once "train Es: SparseCL (Hoyer), $name" "$SET" "$es" \
    /usr/bin/time -v "$CLI" train sparsecl --base use-lite-en "${settings[@]}" --threads "$JOB_THREADS" \
    "${TRAIN_DATA[@]}" --sparsity hoyer "${own[@]}" --name "$SET-sparsecl-hoyer-$slug" --out "$es"
  record_run "cosine + SparseCL (Hoyer, $name), alpha tuned on dev" "$SET" eval -- "${run[@]}" \
    --sparse-model "$es" --scorer hoyer --tune-alpha interval --index-cache "$CACHE/indexes/$SET-use-lite+sparsecl-hoyer-$slug"
}

record_run "cosine (zero-shot use-lite-en)" "$SET" eval -- "${run[@]}" --index-cache "$CACHE/indexes/$SET-use-lite"
IFS=';' read -r -a entries <<< "$VARIANTS"
for entry in "${entries[@]}"; do
  [[ "$entry" == *=* ]] || { echo "variant '$entry' is not NAME=FLAGS" >&2; exit 2; }
done
# Runs the variants in rounds of JOBS; record_run appends whole lines, so concurrent rows do not mix.
failed=0
for ((first = 0; first < ${#entries[@]}; first += JOBS)); do
  pids=()
  for entry in "${entries[@]:first:JOBS}"; do
    one_variant "${entry%%=*}" "${entry#*=}" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
done
(( failed == 0 )) || { echo "a variant failed (see $CACHE/logs)" >&2; exit 1; }

write_table "$TABLE" "SparseCL training variants, $SET dev nDCG@10 of zero-shot cos + alpha * Hoyer(Es)" \
  label,ndcg@10,recall@100,alpha,steps,final_loss,seconds,cpu_seconds \
  "Each Es: use-lite-en fine-tuned on $SET train with batch 32, lr 1e-4, temperature 0.02, seed 42, 3 epochs, except where the label says otherwise. A training row reused from the cache gives the command (and thread count) it ran with; the evaluations of this run used $JOB_THREADS thread(s)."
