#!/usr/bin/env bash
# Paper Table 1 on real data: nDCG@10 on the dev split of SICK and ArguAna for BM25, zero-shot
# cosine of use-lite-en, zero-shot cosine + alpha * Hoyer(Es) with Es trained by SparseCL on the
# train split of the same set (alpha tuned on dev, interval search), the whole network or a head
# alone on its pooled output, and optionally the cosine of a contrastively fine-tuned E (CL) with
# and without the SparseCL terms, and Prompt+CL (CL with the prefix "Not true: " on anchors in
# training and on queries in search).
#
#   benchmarks/tables/contradiction_table.sh [--data DIR] [--sick-qrels FILE] [--arguana-qrels FILE]
#       [--sets "sick arguana"] [--arguana-max-steps N] [--with-cl] [--baselines-only] [--head-only]
#       [--model NAME]
#
# --head-only keeps the baselines and the head-only SparseCL row (no whole-network training);
# --model (default use-lite-en) is the base model of every row: E zero-shot, and the network the
# CL models and Es are trained from. Writes benchmarks/results/contradiction_table.{json,md}
# (contradiction_table_<model>.* for another model); indexes and trained models are cached in
# benchmarks/results/tmp/ (delete a model there to retrain it).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SICK_QRELS="" ARGUANA_QRELS="" SETS="sick arguana" ARGUANA_MAX_STEPS=10 WITH_CL=0 BASELINES_ONLY=0 HEAD_ONLY=0
MODEL=use-lite-en
parse_options --sick-qrels SICK_QRELS --arguana-qrels ARGUANA_QRELS --sets SETS --arguana-max-steps ARGUANA_MAX_STEPS \
  --with-cl WITH_CL=1 --baselines-only BASELINES_ONLY=1 --head-only HEAD_ONLY=1 --model MODEL -- "$@"

# Training settings shared by every fine-tuned model (reference: lr 2e-5, batch 64, SparseCL 3
# epochs; the small USE-lite model learns too slowly at 2e-5 within the 2-core budget, so lr 1e-4).
TRAIN_COMMON=(--base "$MODEL" --batch-size 32 --lr 1e-4 --temperature 0.02 --seed 42 --threads "$THREADS")
# SparseCL on a head alone (a linear map on the pooled embedding, the network frozen): every text
# is encoded once, so it trains in seconds; the same model as in sparsecl_variants.sh.
HEAD_NAME="$SPARSECL_HEAD_NAME"
HEAD_TRAIN=(--base "$MODEL" --batch-size 32 --lr 1e-3 --temperature 0.02 --seed 42 --epochs 5 --threads "$THREADS"
            --sparsity hoyer --head-only)

# The model's own cache names, so that models of another base are never reused.
model_names contradiction_table
start_table "$TABLE" $SETS
for set in $SETS; do
  resolve_set "$set"
  qrels="$SET_QRELS" train_data=("${TRAIN_DATA[@]}") steps=(--epochs 3)
  [[ "$set" == sick ]] || steps+=(--max-steps "$ARGUANA_MAX_STEPS")
  dataset="$DATA/$set"
  run=("$CLI" run --dataset "$dataset" --qrels "$qrels" --threads "$THREADS" --metrics ndcg@10,recall@100)

  # The baselines need no trained model, so they run alongside the training (2 cores).
  (
    record_run "BM25" "$set" eval -- "${run[@]}" --model "$MODEL" --stage1 bm25 --index-cache "$CACHE/indexes/$set-$TAG"
    record_run "cosine (zero-shot $MODEL)" "$set" eval -- "${run[@]}" --model "$MODEL" --index-cache "$CACHE/indexes/$set-$TAG"
  ) &
  baselines=$!
  if [[ "$BASELINES_ONLY" == 1 ]]; then wait "$baselines"; continue; fi
  es="$CACHE/models/$PREFIX$set-sparsecl-hoyer"
  if [[ "$HEAD_ONLY" == 0 ]]; then
    train_once "train Es: SparseCL (Hoyer)" "$set" "$es" \
      /usr/bin/time -v "$CLI" train sparsecl "${TRAIN_COMMON[@]}" "${train_data[@]}" "${steps[@]}" \
      --sparsity hoyer --name "$set-sparsecl-hoyer" --out "$es"
    wait "$baselines"; baselines=""
    record_run "cosine + SparseCL (Hoyer), alpha tuned on dev" "$set" eval -- "${run[@]}" --model "$MODEL" \
      --sparse-model "$es" --scorer hoyer --tune-alpha interval --index-cache "$CACHE/indexes/$set-$TAG+sparsecl-hoyer"
  fi
  es_head="$CACHE/models/$PREFIX$set-$HEAD_NAME"
  train_once "train Es: SparseCL (Hoyer), head only, lr 1e-3, 5 epochs" "$set" "$es_head" \
    /usr/bin/time -v "$CLI" train sparsecl "${HEAD_TRAIN[@]}" "${train_data[@]}" --name "$set-$HEAD_NAME" --out "$es_head"
  [[ -z "$baselines" ]] || wait "$baselines"
  record_run "cosine + SparseCL head (Hoyer, network frozen), alpha tuned on dev" "$set" eval -- "${run[@]}" \
    --model "$MODEL" --sparse-model "$es_head" --scorer hoyer --tune-alpha interval \
    --index-cache "$CACHE/indexes/$set-$TAG+$HEAD_NAME"

  if [[ "$WITH_CL" == 1 ]]; then
    cl="$CACHE/models/$PREFIX$set-cl"
    train_once "train E: CL (cosine InfoNCE)" "$set" "$cl" \
      /usr/bin/time -v "$CLI" train contrastive "${TRAIN_COMMON[@]}" "${train_data[@]}" --epochs 1 \
      $([[ "$set" == arguana ]] && echo --max-steps "$ARGUANA_MAX_STEPS") --name "$set-cl" --out "$cl"
    record_run "CL cosine" "$set" eval -- "${run[@]}" --model "$cl" --index-cache "$CACHE/indexes/$PREFIX$set-cl"
    record_run "CL cosine + SparseCL (Hoyer), alpha tuned on dev" "$set" eval -- "${run[@]}" --model "$cl" \
      --sparse-model "$es" --scorer hoyer --tune-alpha interval --index-cache "$CACHE/indexes/$PREFIX$set-cl+sparsecl-hoyer"
    record_run "CL cosine + SparseCL head (Hoyer), alpha tuned on dev" "$set" eval -- "${run[@]}" --model "$cl" \
      --sparse-model "$es_head" --scorer hoyer --tune-alpha interval --index-cache "$CACHE/indexes/$PREFIX$set-cl+sparsecl-head"

    # Prompt+CL: the same contrastive training with "Not true: " before every anchor; the model
    # records the prefix, so `run` puts it before every query too.
    prompt_cl="$CACHE/models/$PREFIX$set-prompt-cl"
    train_once "train E: Prompt+CL (\"Not true: \" + cosine InfoNCE)" "$set" "$prompt_cl" \
      /usr/bin/time -v "$CLI" train contrastive "${TRAIN_COMMON[@]}" "${train_data[@]}" --epochs 1 \
      $([[ "$set" == arguana ]] && echo --max-steps "$ARGUANA_MAX_STEPS") --prefix "Not true: " \
      --name "$set-prompt-cl" --out "$prompt_cl"
    record_run "Prompt+CL cosine" "$set" eval -- "${run[@]}" --model "$prompt_cl" \
      --index-cache "$CACHE/indexes/$PREFIX$set-prompt-cl"
  fi
done

write_table "$TABLE" "Contradiction retrieval ($MODEL), dev nDCG@10 (paper Table 1 setting)" \
  set,label,ndcg@10,recall@100,alpha,steps,seconds,cpu_seconds \
  "Rows 'train ...' give the training run (steps, wall and CPU seconds on 2 shared cores); eval rows give wall seconds including encoding when the index was not cached. Reference zero-shot cosine (TF.js original): arguana dev 0.409, sick dev 0.556; BM25 arguana dev 0.320."
