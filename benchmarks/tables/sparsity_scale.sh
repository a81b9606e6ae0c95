#!/usr/bin/env bash
# The magnitude gate of the sparsity term: cos(E) + alpha * Hoyer(d) * min(1, |d|_2 / tau) with
# d = Es(q) - Es(p), against tau = 0 (the plain, scale-free Hoyer), on SICK dev and ArguAna dev.
# Each Es is scored at every tau of --scales with alpha tuned on dev (interval search), so the
# table shows whether a gate helps each set and which tau the dev split picks. Es: the default
# sparse-default, and per set the SparseCL head the other tables train (trained here when absent).
#
#   benchmarks/tables/sparsity_scale.sh [--data DIR] [--sick-qrels FILE] [--arguana-qrels FILE]
#       [--model NAME] [--scales "0 0.05 0.1 ..."] [--sets "sick arguana"]
#
# Writes benchmarks/results/sparsity_scale_<model>.{json,md}. Pooled features come from the
# library's feature cache, so only the first run over a corpus encodes it.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SICK_QRELS="" ARGUANA_QRELS="" MODEL=all-minilm-l6-v2 SCALES="0 0.05 0.1 0.15 0.2 0.3" SETS="sick arguana"
parse_options --sick-qrels SICK_QRELS --arguana-qrels ARGUANA_QRELS --model MODEL --scales SCALES --sets SETS -- "$@"
FEATURES="${COUNTERPOINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/counterpoint}"

TABLE="sparsity_scale_$MODEL"
# shellcheck disable=SC2086
start_table "$TABLE" $SETS
for set in $SETS; do
  resolve_set "$set"
  head="$CACHE/models/$MODEL-$set-head-lr1e-3-e5"
  train_once "train Es: SparseCL head lr1e-3-e5" "$set" "$head" \
    /usr/bin/time -v "$CLI" train sparsecl --base "$MODEL" --head-only --sparsity hoyer --batch-size 32 --seed 42 \
    --threads "$THREADS" --lr 1e-3 --epochs 5 --temperature 0.02 "${TRAIN_DATA[@]}" --feature-cache "$FEATURES" \
    --name "$set-head-lr1e-3-e5" --out "$head"
  for es in sparse-default "$head"; do
    name="$(basename "$es")"
    for tau in $SCALES; do
      record_run "$name, scale $tau, alpha tuned on dev" "$set" eval -- \
        /usr/bin/time -v "$CLI" run --dataset "$DATA/$set" --qrels "$SET_QRELS" --threads "$THREADS" \
        --metrics ndcg@10,recall@100 --model "$MODEL" --feature-cache "$FEATURES" --sparse-model "$es" \
        --scorer hoyer --sparsity-scale "$tau" --tune-alpha interval
    done
  done
done

write_table "$TABLE" "Magnitude-gated Hoyer, nDCG@10 on dev (alpha tuned on dev at each scale tau; tau 0 = no gate)" \
  label,ndcg@10,recall@100,alpha,seconds,cpu_seconds \
  "Hoyer(d) * min(1, |d|_2 / tau), d = Es(q) - Es(p), Es L2-normalised. CPU seconds from /usr/bin/time (2 cores)."
