#!/usr/bin/env bash
# Paper Table 2 on real data: cross-set transfer of SparseCL. The Es trained on one set's train
# split (by contradiction_table.sh) scores the other set's dev split, with E = zero-shot
# use-lite-en, once with the alpha tuned on the source set's dev split ("fixed alpha") and once
# with alpha tuned on the target's dev split. The in-domain row and zero-shot cosine are repeated
# from the target's own models for comparison.
#
#   benchmarks/tables/transfer_table.sh [--data DIR] [--sick-qrels FILE] [--arguana-qrels FILE]
#       [--model NAME] [--head-only] [--directions "sick:arguana arguana:sick"]
#
# --model runs it on another base model (E and the network of Es; rows from
# contradiction_table_<model>.json, written to transfer_table_<model>.*); --head-only uses the
# SparseCL heads of that table instead of the whole-network models (written to *_head.*).
#
# Needs benchmarks/results/tmp/models/{sick,arguana}-sparsecl-hoyer and the alphas of
# benchmarks/results/contradiction_table.json: run
#   benchmarks/tables/contradiction_table.sh --arguana-max-steps 186
# first. Writes benchmarks/results/transfer_table.{json,md}.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SICK_QRELS="" ARGUANA_QRELS="" MODEL=use-lite-en HEAD_ONLY=0 DIRECTIONS="sick:arguana arguana:sick"
parse_options --sick-qrels SICK_QRELS --arguana-qrels ARGUANA_QRELS --model MODEL --head-only HEAD_ONLY=1 \
  --directions DIRECTIONS -- "$@"

model_names contradiction_table
TABLE1="$TABLE" ES_NAME=sparsecl-hoyer ES_LABEL="cosine + SparseCL (Hoyer)"
model_names transfer_table
if [[ "$HEAD_ONLY" == 1 ]]; then
  TABLE="${TABLE}_head" ES_NAME="$SPARSECL_HEAD_NAME" ES_LABEL="cosine + SparseCL head"
fi

# The dev-tuned alpha of a set's own SparseCL model, from Table 1.
source_alpha() {
  "$PY" - "$RESULTS/$TABLE1.json" "$1" "$ES_LABEL" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
alphas = [r["alpha"] for r in rows if r["set"] == sys.argv[2] and r["label"].startswith(sys.argv[3])]
if not alphas:
    sys.exit(f"no tuned alpha for {sys.argv[2]} in {sys.argv[1]}: run benchmarks/tables/contradiction_table.sh first")
print(alphas[0])
EOF
}

start_table "$TABLE"
for pair in $DIRECTIONS; do
  source="${pair%%:*}" target="${pair#*:}"
  es="$CACHE/models/$PREFIX$source-$ES_NAME"
  require_file "$es/manifest.json" "SparseCL model of $source (run benchmarks/tables/contradiction_table.sh)"
  alpha="$(source_alpha "$source")"
  resolve_set "$target"
  qrels="$SET_QRELS"
  run=("$CLI" run --model "$MODEL" --dataset "$DATA/$target" --qrels "$qrels" --threads "$THREADS" --metrics ndcg@10,recall@100)
  label="$source -> $target"
  record_run "$label: cosine (zero-shot $MODEL)" "$target" eval -- "${run[@]}" \
    --index-cache "$CACHE/indexes/$target-$TAG"
  record_run "$label: cosine + SparseCL($source), fixed alpha from $source dev" "$target" eval -- "${run[@]}" \
    --sparse-model "$es" --scorer hoyer --alpha "$alpha" --index-cache "$CACHE/indexes/$target-$TAG+$source-$ES_NAME"
  record_run "$label: cosine + SparseCL($source), alpha tuned on $target dev" "$target" eval -- "${run[@]}" \
    --sparse-model "$es" --scorer hoyer --tune-alpha interval \
    --index-cache "$CACHE/indexes/$target-$TAG+$source-$ES_NAME"
  in_domain="$CACHE/models/$PREFIX$target-$ES_NAME"
  require_file "$in_domain/manifest.json" "SparseCL model of $target (run benchmarks/tables/contradiction_table.sh)"
  record_run "$label: in-domain cosine + SparseCL($target), alpha from $target dev" "$target" eval -- "${run[@]}" \
    --sparse-model "$in_domain" --scorer hoyer --alpha "$(source_alpha "$target")" \
    --index-cache "$CACHE/indexes/$target-$TAG+$ES_NAME"
done

write_table "$TABLE" "Cross-set transfer of SparseCL, dev nDCG@10 (paper Table 2 setting)" \
  set,label,ndcg@10,recall@100,alpha,seconds \
  "E = zero-shot $MODEL in every row; Es = $MODEL $([[ $HEAD_ONLY == 1 ]] && echo 'with a SparseCL (Hoyer) head trained' || echo 'fine-tuned by SparseCL (Hoyer)') on the source set's train split (benchmarks/tables/contradiction_table.sh). 'fixed alpha' is the alpha tuned on the source set's dev split; 'tuned' re-tunes it on the target's dev split (an upper bound, not a transfer result)."
