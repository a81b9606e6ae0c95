#!/usr/bin/env bash
# Two-stage verifiers paper, reranking side: stage 1 = pooled cosine top-K (K = 100) of the
# frozen use-lite-en on ArguAna, stage 2 = each token-map score (F0 mean, F1 MaxSim, F2 alignment)
# and the learned verifiers F3 (CNN) and F4 (patch Transformer) trained on SICK near-misses by
# near_miss_verifiers.sh. Reports dev nDCG@10 and Acc@1 beside pooled cosine alone; with the
# near-miss table this tests the paper's finding that MaxSim reranks well but does not reject
# near-misses, while learned verifiers do.
#
#   benchmarks/tables/verifier_rerank.sh [--data DIR] [--qrels FILE] [--seed 42] [--epochs 15] [--candidates 100]
#
# Needs the seed's verifiers in benchmarks/results/tmp/models (run near_miss_verifiers.sh first).
# Writes benchmarks/results/verifier_rerank.{json,md}; the token index is cached in
# benchmarks/results/tmp/indexes/arguana-use-lite-tokens (about 2 GB).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

QRELS="" SEED=42 EPOCHS=15 CANDIDATES=100
parse_options --qrels QRELS --seed SEED --epochs EPOCHS --candidates CANDIDATES -- "$@"
resolve_set arguana "$QRELS"
VERIFIERS=()
for arch in cnn transformer; do
  dir="$CACHE/models/sick-verifier-$arch-s$SEED-e$EPOCHS"
  require_file "$dir/verifier.json" "$arch verifier (run benchmarks/tables/near_miss_verifiers.sh --seeds $SEED --epochs $EPOCHS)"
  VERIFIERS+=("$dir")
done

INDEX="$CACHE/indexes/arguana-use-lite-tokens"
if [[ ! -f "$INDEX/header.json" ]]; then
  echo ">> arguana: encoding the corpus with token embeddings" >&2
  "$CLI" index build --model use-lite-en --corpus "$DATA/arguana" --out "$INDEX" --tokens --threads "$THREADS" > "$CACHE/logs/arguana-token-index.log"
fi

start_table verifier_rerank
run=("$CLI" run --model use-lite-en --dataset "$DATA/arguana" --qrels "$SET_QRELS" --threads "$THREADS" --metrics ndcg@10,acc@1
     --candidates "$CANDIDATES" --index-cache "$INDEX")
record_run "pooled cosine (stage 1 alone)" arguana eval -- "${run[@]}"
record_run "F0 mean of the token map" arguana eval -- "${run[@]}" --scorer mean
record_run "F1 MaxSim" arguana eval -- "${run[@]}" --scorer maxsim
record_run "F2 alignment (lambda 0.1, tau 0.1)" arguana eval -- "${run[@]}" --scorer alignment
record_run "F3 CNN verifier (SICK near-misses, seed $SEED)" arguana eval -- "${run[@]}" --scorer verifier \
  --verifier "${VERIFIERS[0]}"
record_run "F4 patch Transformer verifier (SICK near-misses, seed $SEED)" arguana eval -- "${run[@]}" \
  --scorer verifier --verifier "${VERIFIERS[1]}"

write_table verifier_rerank "Token-level rerankers on ArguAna dev (two-stage verifiers paper)" label,ndcg@10,acc@1,seconds \
  "Stage 1: pooled cosine of the frozen use-lite-en, top $CANDIDATES; stage 2 reranks those candidates by the row's score over the token-token cosine map (query and candidate cut to 128 tokens). F3/F4 were trained on SICK train near-miss triples (benchmarks/tables/near_miss_verifiers.sh) with maps of 32 x 32, so here they see only the first 32 tokens of query and candidate; they are applied out of domain."
