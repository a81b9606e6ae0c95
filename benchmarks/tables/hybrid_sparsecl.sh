#!/usr/bin/env bash
# Hybrid stage 1 under the SparseCL scorer: Relative Score Fusion of E's cosine and BM25, fused =
# n(cos) + lambda * n(bm25) over each query's candidates (n: min-max), with and without the sparsity
# term: fused + alpha * Hoyer(Es(q) - Es(p)), alpha tuned on dev at each lambda (interval search).
# Contradictions keep most of their query's words, so BM25 is evidence a dense stage misses; the
# table shows, per E, which lambda dev picks and what the sparsity term adds on top of the fusion.
# --scales adds the magnitude gate: alpha * Hoyer(d) * min(1, |d|_2 / tau), d = Es(q) - Es(p), at each
# tau (default "0" alone). Tau 0 passes no --sparsity-scale, so an Es that records a gate keeps it
# there (the table's heads record none).
#
#   benchmarks/tables/hybrid_sparsecl.sh [--set sick|arguana] [--data DIR] [--qrels FILE]
#       [--models "E ..."] [--sparse-models "ES ..."] [--lambdas "0.1 0.2 ..."] [--scales "0 0.2 ..."]
#
# Every E is paired with every Es. Both are models of results/contradiction_table_all-minilm-l6-v2
# (default, SICK: zero-shot all-minilm-l6-v2 and the 3-epoch CL E; the linear and the MLP SparseCL
# heads over the frozen network); an absent one is trained first by the command that table records. Writes
# benchmarks/results/hybrid_sparsecl_<set>.{json,md}.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SET=sick QRELS="" LAMBDAS="0.05 0.1 0.2 0.3 0.5 1 2" MODELS="" SPARSE="" SCALES="0"
parse_options --set SET --qrels QRELS --models MODELS --sparse-models SPARSE --lambdas LAMBDAS --scales SCALES -- "$@"
resolve_set "$SET" "$QRELS"
if [[ "$SET" == sick ]]; then
  MODELS="${MODELS:-all-minilm-l6-v2 benchmarks/results/tmp/models/all-minilm-l6-v2-sick-cl-3ep}"
  SPARSE="${SPARSE:-benchmarks/results/tmp/models/all-minilm-l6-v2-sick-sparsecl-hoyer-head-only--lr-1e-3--5-epochs
          benchmarks/results/tmp/models/all-minilm-l6-v2-sick-sparsecl-hoyer-mlp-head}"
fi
[[ -n "$MODELS" && -n "$SPARSE" ]] || { echo "--set $SET: give --models and --sparse-models (SICK has defaults)" >&2; exit 2; }
for lambda in $LAMBDAS; do
  [[ "$lambda" =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]] ||
    { echo "--lambdas: '$lambda' is not a non-negative number" >&2; exit 2; }
done
for tau in $SCALES; do
  [[ "$tau" =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]] ||
    { echo "--scales: '$tau' is not a non-negative number" >&2; exit 2; }
done

# Models are named relative to the checkout, as the contradiction table records them.
SET_QRELS="$(realpath "$SET_QRELS")"
cd "$ROOT"
# shellcheck disable=SC2086
"$PY" - $MODELS $SPARSE <<'PY'
import sys
sys.path.insert(0, "benchmarks/lib")
from rerun_row import ensure_models, rows
recorded = list(rows("contradiction_table_all-minilm-l6-v2"))
for model in sys.argv[1:]:  # one at a time: ensure_models reads one --model per command
    ensure_models(["--model", model], recorded)
PY

TABLE="hybrid_sparsecl_$SET"
start_table "$TABLE"
for model in $MODELS; do
  tag="$(basename "$model")"
  run=(/usr/bin/time -v "$CLI" run --dataset "$DATA/$SET" --qrels "$SET_QRELS" --threads "$THREADS"
       --metrics ndcg@10,recall@100 --model "$model")
  for lambda in $LAMBDAS; do
    record_run "$tag, hybrid lambda $lambda, cosine" "$SET" eval -- "${run[@]}" --stage1 hybrid --lambda "$lambda" \
      --index-cache "$CACHE/indexes/$SET-$tag"
    for sparse in $SPARSE; do
      sparse_tag="$(basename "$sparse")"
      for tau in $SCALES; do
        if [[ "$(awk -v t="$tau" 'BEGIN { print (t == 0) }')" == 1 ]]; then
          gate=() gate_label=""
        else
          gate=(--sparsity-scale "$tau") gate_label=", gate tau $tau"
        fi
        record_run "$tag, hybrid lambda $lambda + $sparse_tag$gate_label, alpha tuned on dev" "$SET" eval -- \
          "${run[@]}" --stage1 hybrid --lambda "$lambda" --sparse-model "$sparse" --scorer hoyer "${gate[@]}" \
          --tune-alpha interval --index-cache "$CACHE/indexes/$SET-$tag+$sparse_tag"
      done
    done
  done
done

write_table "$TABLE" "Hybrid stage 1 (RSF of cosine and BM25) with and without the SparseCL term, $SET dev nDCG@10" \
  label,ndcg@10,recall@100,alpha,seconds,cpu_seconds \
  "fused = n(cos) + lambda * n(bm25) over the candidates (min-max n); '+ Es' adds alpha * Hoyer(Es(q) - Es(p)), alpha tuned on dev; 'gate tau T' multiplies the Hoyer term by min(1, |Es(q) - Es(p)|_2 / T). CPU seconds from /usr/bin/time (2 cores)."
