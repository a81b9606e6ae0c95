#!/usr/bin/env bash
# Stance-aware argument retrieval (IBM Debater Claim Stance): a zero-shot encoder against the same
# encoder fine-tuned with the contrastive loss on instruction + topic queries under three curricula
# (homogeneous: every negative a same-topic claim of the other stance; mixed: thirds of hard,
# semi-hard and easy negatives, the same triple count; inverted: the mixed triples plus, for each
# positive `counterpoint invert` can edit, its synthetic stance inversion as the negative), each
# searched dense-only and as a hybrid with BM25 by Relative Score Fusion (BM25 sees the topic only).
#
# The set has no dev split: --dev-topics N of the training topics (the last N by topic id) are held
# out of training and used to choose the configuration; the test topics are reported once per
# configuration. Evaluation uses the held-out instruction templates (never seen in training); word
# ablation (RIS / RCS / DI) shows how much each model's similarity depends on the instruction.
#
#   benchmarks/tables/stance_table.sh [--model NAME] [--data DIR] [--train-qrels FILE] [--eval-qrels FILE]
#       [--dev-topics 5] [--count 2000] [--lambdas "0.1 0.15 0.2"] [--curricula "homogeneous mixed inverted"]
#
# Writes benchmarks/results/stance_table.md (stance_table_<model>.{md,json} for a model other than
# use-lite-en) and stance_inversions.{md,json} (how many training claims the inverter edits, by
# kind, and 50 random before/after pairs); models and indexes are cached in benchmarks/results/tmp/.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

TRAIN_QRELS="" EVAL_QRELS="" COUNT=2000 LAMBDAS="0.1 0.15 0.2" MODEL=use-lite-en
DEV_TOPICS=5 CURRICULA="homogeneous mixed inverted"
parse_options --model MODEL --train-qrels TRAIN_QRELS --eval-qrels EVAL_QRELS --dev-topics DEV_TOPICS --count COUNT \
  --lambdas LAMBDAS --curricula CURRICULA -- "$@"
SET="$DATA/ibm-claim-stance"
TRAIN_QRELS="${TRAIN_QRELS:-$SET/qrels/train.tsv}"
EVAL_QRELS="${EVAL_QRELS:-$SET/qrels/test.tsv}"
require_file "$TRAIN_QRELS" "training qrels"
require_file "$EVAL_QRELS" "evaluation qrels"

model_names stance_table
NAME="$TABLE"
WORK="$CACHE/stance-$MODEL"
mkdir -p "$WORK"

# Training topics minus the dev topics, and the dev topics, as two qrels files.
FIT_QRELS="$WORK/train-fit.tsv" DEV_QRELS="$WORK/dev.tsv"
DEV_NOTE="$("$PY" "$LIB_DIR/stance_dev_split.py" "$TRAIN_QRELS" "$DEV_TOPICS" "$FIT_QRELS" "$DEV_QRELS")"
echo "$DEV_NOTE" >&2

report="$WORK/body.md" rows="$WORK/rows.jsonl"
: > "$report"; : > "$rows"
# evaluate LABEL SPLIT QRELS MODEL INDEX [extra stance options...]: appends the command, its table
# (test split) and a row with the mean-over-templates figures.
evaluate() {
  local label="$1" split="$2" qrels="$3" model="$4" index="$5"; shift 5
  local cmd=("$CLI" stance --dataset "$SET" --qrels "$qrels" --model "$model" --threads "$THREADS"
             --index-cache "$index" "$@")
  echo ">> $label ($split)" >&2
  local start; start=$(date +%s)
  local table; table="$("${cmd[@]}" 2> "$CACHE/logs/stance-$split-$(echo "$label" | tr -c 'A-Za-z0-9\n' '_').err")" \
    || { echo "failed: ${cmd[*]}" >&2; exit 1; }
  local seconds=$(( $(date +%s) - start ))
  "$PY" "$LIB_DIR/stance_row.py" "$label" "$split" "${cmd[*]#$ROOT/}" "$seconds" "$table" >> "$rows"
  if [[ "$split" == test ]]; then
    {
      echo "### $label"
      echo
      echo '```'
      echo "$table"
      echo '```'
      echo "Command ($seconds s): \`${cmd[*]#$ROOT/}\`"
      echo
    } >> "$report"
  fi
}

# Batch 16: a batch holds each topic once (in-batch negatives of one topic would be false
# negatives for the other stance's query).
models=("zero-shot $MODEL|$MODEL") training=()
for curriculum in $CURRICULA; do
  dir="$CACHE/models/${PREFIX}stance-cl-$curriculum-n$COUNT-dev$DEV_TOPICS"
  cmd=("$CLI" train contrastive --base "$MODEL" --data stance --dataset "$SET" --qrels "$FIT_QRELS"
       --curriculum "$curriculum" --stance-count "$COUNT" --epochs 1 --batch-size 16 --lr 1e-4 --temperature 0.05
       --seed 42 --threads "$THREADS" --name "stance-cl-$curriculum" --out "$dir")
  train_cached "$dir/manifest.json" "training $curriculum" "${cmd[@]}"
  steps="$(grep -o 'trained [0-9]* steps' "$dir.log" | head -1)"
  training+=("Training ($curriculum, $steps, $(cat "$dir.seconds") s wall): \`${cmd[*]#$ROOT/}\`")
  models+=("contrastive, $curriculum curriculum|$dir")
done

for entry in "${models[@]}"; do
  label="${entry%%|*}" model="${entry#*|}"
  index="$CACHE/indexes/stance-$(basename "$model")"
  evaluate "$label, dense" dev "$DEV_QRELS" "$model" "$index"
  evaluate "$label, dense" test "$EVAL_QRELS" "$model" "$index" --ablation 2
  for lambda in $LAMBDAS; do
    for split in dev test; do
      qrels="$DEV_QRELS"; [[ "$split" == test ]] && qrels="$EVAL_QRELS"
      evaluate "$label, hybrid RSF lambda $lambda" "$split" "$qrels" "$model" "$index" \
        --stage1 hybrid --fusion rsf --lambda "$lambda"
    done
  done
done

# The inversions the inverted curriculum draws on: every claim of the training topics.
inversions="$WORK/inversions.jsonl"
"$CLI" invert --corpus "$SET" --out "$inversions" 2> "$WORK/inversions.err"
"$PY" - "$inversions" "$SET/metadata.jsonl" "$FIT_QRELS" "$RESULTS/stance_inversions" <<'EOF'
import collections, json, random, sys
inversions_path, metadata_path, fit_qrels, out = sys.argv[1:5]
topics = {l.split("\t")[0].rsplit("-", 1)[0].lstrip("t") for l in open(fit_qrels).read().splitlines()[1:] if l}
topic_of = {}
for line in open(metadata_path):
    m = json.loads(line)
    topic_of[m["_id"]] = str(m["topic_id"]).lstrip("t")
rows = [json.loads(l) for l in open(inversions_path)]
train = [r for r in rows if topic_of.get(r["id"]) in topics]
edited = [r for r in train if r["inverted"] is not None]
kinds = collections.Counter(r["edit"] for r in edited)
pairs = random.Random(42).sample(edited, min(50, len(edited)))
summary = {"benchmark": "stance_inversions", "claims": len(train), "inverted": len(edited),
           "by_edit": dict(sorted(kinds.items())), "sample_seed": 42,
           "command": "counterpoint invert --corpus ../shared/data/ibm-claim-stance (claims of the training topics)",
           "pairs": [{k: r[k] for k in ("id", "edit", "text", "inverted")} for r in pairs]}
open(out + ".json", "w").write(json.dumps(summary, indent=2) + "\n")
lines = ["# Synthetic stance inversions of the training claims (IBM Debater Claim Stance)", "",
         f"`counterpoint invert` edits {len(edited)} of {len(train)} claims of the training topics "
         f"({100 * len(edited) / len(train):.1f}%): " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ".",
         "The inverted curriculum adds one triple per drawn positive that has an inversion (the inversion as its negative).",
         "Below, 50 random edited claims (seed 42) for a reader to judge.", "",
         "| id | edit | claim | inversion |", "|---|---|---|---|"]
esc = lambda s: s.replace("|", "\\|")
lines += [f"| {r['id']} | {r['edit']} | {esc(r['text'])} | {esc(r['inverted'])} |" for r in pairs]
open(out + ".md", "w").write("\n".join(lines) + "\n")
EOF

# The configuration chosen on dev (highest P@R, then lowest Hard@R), and every test row.
"$PY" - "$rows" "$RESULTS/$NAME" "$MODEL" "$DEV_TOPICS" <<'EOF' > "$WORK/summary.md"
import json, sys
rows_path, out, model, dev_topics = sys.argv[1:5]
rows = [json.loads(l) for l in open(rows_path)]
dev = {r["label"]: r for r in rows if r["split"] == "dev"}
test = {r["label"]: r for r in rows if r["split"] == "test"}
chosen = max(dev, key=lambda label: (dev[label]["P@R"], -dev[label]["Hard@R"]))
json.dump({"benchmark": out.rsplit("/", 1)[-1], "model": model, "dev_topics": int(dev_topics),
           "chosen_on_dev": chosen, "rows": rows}, open(out + ".json", "w"), indent=2)
print("| configuration | dev P@R | dev Hard@R | test P@R | Hard@R | Semi@R | nDCG@10 | RIS hard | RCS hard |")
print("|---|---|---|---|---|---|---|---|---|")
for label, t in test.items():
    d = dev[label]
    mark = " (chosen on dev)" if label == chosen else ""
    ris = f"{t['RIS hard']:.4f}" if "RIS hard" in t else ""
    rcs = f"{t['RCS hard']:.4f}" if "RCS hard" in t else ""
    print(f"| {label}{mark} | {d['P@R']:.4f} | {d['Hard@R']:.4f} | {t['P@R']:.4f} | {t['Hard@R']:.4f} | "
          f"{t['Semi@R']:.4f} | {t['ndcg@10']:.4f} | {ris} | {rcs} |")
EOF

OUT="$RESULTS/$NAME.md"
{
  echo "# Stance-aware retrieval, IBM Debater Claim Stance, $MODEL ($(basename "$EVAL_QRELS" .tsv) topics, held-out instructions)"
  echo
  echo "P@R: share of the top R (R = claims with the requested stance on the topic) that are such claims; Hard@R:"
  echo "same topic, other stance (stance errors); Semi@R: other topic, same stance; Easy@R: neither. Fine-tuned"
  echo "models: $COUNT triples from the training topics less the dev topics ($DEV_NOTE),"
  echo "1 epoch, batch 16, lr 1e-4, temperature 0.05, seed 42, training instruction templates only. The"
  echo "configuration is chosen on the dev topics (highest P@R, then lowest Hard@R); test figures are"
  echo "the mean over the held-out templates; RIS / RCS: word ablation on hard negatives (dense rows)."
  echo "Inversions: see stance_inversions.md."
  echo
  cat "$WORK/summary.md"
  echo
  printf '%s\n\n' "${training[@]}"
  cat "$report"
} > "$OUT"
cat "$WORK/summary.md"
