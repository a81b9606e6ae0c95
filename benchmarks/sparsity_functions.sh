#!/usr/bin/env bash
# Paper Table 4: the sparsity function inside SparseCL. For each of Hoyer, l2/l1 and kappa4, Es is
# trained on the set's train split with that function in the loss and the same function scores
# cos(E) + alpha * sparsity(Es(q) - Es(p)) on dev (alpha tuned on dev, interval search).
#
#   benchmarks/sparsity_functions.sh [--set sick|arguana] [--data DIR] [--qrels FILE] [--epochs 1]
#       [--functions "hoyer l2l1 kappa4"]
#
# Writes benchmarks/results/sparsity_functions.{json,md} (SICK) or sparsity_functions_arguana.{json,md};
# models cached in benchmarks/results/tmp/.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SET=sick DATA="$ROOT/../shared/data" QRELS="" EPOCHS=1 FUNCTIONS="hoyer l2l1 kappa4"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --set) SET="$2"; shift 2 ;;
    --data) DATA="$2"; shift 2 ;;
    --qrels) QRELS="$2"; shift 2 ;;
    --epochs) EPOCHS="$2"; shift 2 ;;
    --functions) FUNCTIONS="$2"; shift 2 ;;
    *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
resolve_set_paths
TABLE=sparsity_functions
if [[ "$SET" == arguana ]]; then TABLE=sparsity_functions_arguana; fi

start_table "$TABLE"
run=("$CLI" run --model use-lite-en --dataset "$DATA/$SET" --qrels "$QRELS" --threads "$THREADS" --metrics ndcg@10,recall@100)
record_run "cosine (zero-shot use-lite-en)" "$SET" eval -- "${run[@]}" --index-cache "$CACHE/indexes/$SET-use-lite"
for fn in $FUNCTIONS; do
  es="$CACHE/models/$SET-sparsecl-$fn-e$EPOCHS"
  train_once "train Es: SparseCL ($fn), $EPOCHS epoch(s)" "$SET" "$es" \
    /usr/bin/time -v "$CLI" train sparsecl --base use-lite-en --batch-size 32 --lr 1e-4 --temperature 0.02 --seed 42 \
    --threads "$THREADS" "${TRAIN_DATA[@]}" --epochs "$EPOCHS" --sparsity "$fn" --name "$SET-sparsecl-$fn" --out "$es"
  record_run "cosine + $fn (Es trained with $fn), alpha tuned on dev" "$SET" eval -- "${run[@]}" \
    --sparse-model "$es" --scorer "$fn" --tune-alpha interval --index-cache "$CACHE/indexes/$SET-use-lite+sparsecl-$fn-e$EPOCHS"
done

"$PY" "$BENCH_DIR/make_table.py" write --rows "$ROWS" --name "$TABLE" \
  --title "Sparsity function in SparseCL, $SET dev nDCG@10 (paper Table 4 setting)" \
  --columns label,ndcg@10,recall@100,alpha,steps,final_loss,seconds,cpu_seconds \
  --note "Each Es: use-lite-en fine-tuned on $SET train, batch 32, lr 1e-4, temperature 0.02, seed 42, $EPOCHS epoch(s); the same function is used in the loss and in the score."
