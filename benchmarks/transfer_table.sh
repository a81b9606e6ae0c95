#!/usr/bin/env bash
# Paper Table 2 on real data: cross-set transfer of SparseCL. The Es trained on one set's train
# split (by contradiction_table.sh) scores the other set's dev split, with E = zero-shot
# use-lite-en, once with the alpha tuned on the source set's dev split ("fixed alpha") and once
# with alpha tuned on the target's dev split. The in-domain row and zero-shot cosine are repeated
# from the target's own models for comparison.
#
#   benchmarks/transfer_table.sh [--data DIR] [--sick-qrels FILE] [--arguana-qrels FILE]
#
# Needs benchmarks/results/tmp/models/{sick,arguana}-sparsecl-hoyer and the alphas of
# benchmarks/results/contradiction_table.json: run
#   benchmarks/contradiction_table.sh --arguana-max-steps 186
# first. Writes benchmarks/results/transfer_table.{json,md}.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

DATA="$ROOT/../shared/data" SICK_QRELS="" ARGUANA_QRELS=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data) DATA="$2"; shift 2 ;;
    --sick-qrels) SICK_QRELS="$2"; shift 2 ;;
    --arguana-qrels) ARGUANA_QRELS="$2"; shift 2 ;;
    *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
DATA="$(cd "$DATA" && pwd)"
SICK_QRELS="${SICK_QRELS:-$DATA/sick/qrels/dev.tsv}"
ARGUANA_QRELS="${ARGUANA_QRELS:-$DATA/arguana/qrels/dev.tsv}"

# The dev-tuned alpha of a set's own SparseCL model, from Table 1.
source_alpha() {
  "$PY" - "$RESULTS/contradiction_table.json" "$1" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
alphas = [r["alpha"] for r in rows if r["set"] == sys.argv[2] and r["label"].startswith("cosine + SparseCL")]
if not alphas:
    sys.exit(f"no tuned alpha for {sys.argv[2]} in {sys.argv[1]}: run benchmarks/contradiction_table.sh first")
print(alphas[0])
EOF
}

start_table transfer_table
for pair in "sick arguana" "arguana sick"; do
  read -r source target <<< "$pair"
  es="$CACHE/models/$source-sparsecl-hoyer"
  require_file "$es/manifest.json" "SparseCL model of $source (run benchmarks/contradiction_table.sh)"
  alpha="$(source_alpha "$source")"
  qrels_var="${target^^}_QRELS"
  qrels="${!qrels_var}"
  require_file "$qrels" "qrels"
  run=("$CLI" run --model use-lite-en --dataset "$DATA/$target" --qrels "$qrels" --threads "$THREADS" --metrics ndcg@10,recall@100)
  label="$source -> $target"
  record_run "$label: cosine (zero-shot use-lite-en)" "$target" eval -- "${run[@]}" \
    --index-cache "$CACHE/indexes/$target-use-lite"
  record_run "$label: cosine + SparseCL($source), fixed alpha from $source dev" "$target" eval -- "${run[@]}" \
    --sparse-model "$es" --scorer hoyer --alpha "$alpha" --index-cache "$CACHE/indexes/$target-use-lite+$source-sparsecl-hoyer"
  record_run "$label: cosine + SparseCL($source), alpha tuned on $target dev" "$target" eval -- "${run[@]}" \
    --sparse-model "$es" --scorer hoyer --tune-alpha interval \
    --index-cache "$CACHE/indexes/$target-use-lite+$source-sparsecl-hoyer"
  in_domain="$CACHE/models/$target-sparsecl-hoyer"
  require_file "$in_domain/manifest.json" "SparseCL model of $target (run benchmarks/contradiction_table.sh)"
  record_run "$label: in-domain cosine + SparseCL($target), alpha from $target dev" "$target" eval -- "${run[@]}" \
    --sparse-model "$in_domain" --scorer hoyer --alpha "$(source_alpha "$target")" \
    --index-cache "$CACHE/indexes/$target-use-lite+sparsecl-hoyer"
done

"$PY" "$BENCH_DIR/make_table.py" write --rows "$ROWS" --name transfer_table \
  --title "Cross-set transfer of SparseCL, dev nDCG@10 (paper Table 2 setting)" \
  --columns set,label,ndcg@10,recall@100,alpha,seconds \
  --note "E = zero-shot use-lite-en in every row; Es = use-lite-en fine-tuned by SparseCL (Hoyer) on the source set's train split (benchmarks/contradiction_table.sh). 'fixed alpha' is the alpha tuned on the source set's dev split; 'tuned' re-tunes it on the target's dev split (an upper bound, not a transfer result)."
