#!/usr/bin/env bash
# CPU seconds per whole-network SparseCL step on ArguAna train (batch 32, all-minilm-l6-v2, 6 layers)
# with the embeddings and the bottom N layers frozen (train --frozen-layers N), against N = 0.
# A step's cost is the difference of a 3-step and a 1-step run (loading and triple building cancel).
# Usage: benchmarks/speed/frozen_layers.sh [N...]   (default: 0 4 5; needs the CLI and ../shared/data)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CLI="${COUNTERPOINT_BIN:-$ROOT/build/bin/counterpoint}"
DATA="${DATA:-$ROOT/../shared/data/arguana}"
export COUNTERPOINT_MODELS="${COUNTERPOINT_MODELS:-$ROOT/models/installed}"
LAYERS=("$@"); [[ ${#LAYERS[@]} -gt 0 ]] || LAYERS=(0 4 5)
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT

cpu_seconds() {  # cpu_seconds FROZEN STEPS: user + system CPU seconds of one run
  local out="$scratch/run-$1-$2"
  /usr/bin/time -f "%U %S %M" -o "$out.time" "$CLI" train sparsecl --base all-minilm-l6-v2 --data arguana \
    --dataset "$DATA" --qrels "$DATA/qrels/train.tsv" --batch-size 32 --lr 2e-5 --temperature 0.02 --seed 42 \
    --threads 2 --sparsity hoyer --frozen-layers "$1" --max-steps "$2" --out "$out" > "$out.log" 2>&1 \
    || { cat "$out.log" >&2; exit 1; }
  awk '{printf "%.1f %d\n", $1 + $2, $3 / 1024}' "$out.time"
}

baseline=""
printf '%-14s %10s %10s %14s %12s\n' frozen_layers "1 step" "3 steps" "CPU-s/step" "vs N=0"
for n in "${LAYERS[@]}"; do
  read -r one rss1 < <(cpu_seconds "$n" 1)
  read -r three rss3 < <(cpu_seconds "$n" 3)
  per_step=$(echo "($three - $one) / 2" | bc -l)
  [[ -n "$baseline" || "$n" != 0 ]] || baseline=$per_step
  ratio="-"; [[ -z "$baseline" ]] || ratio=$(printf '%.2fx' "$(echo "$per_step / $baseline" | bc -l)")
  printf '%-14s %10.1f %10.1f %14.1f %12s   (peak RSS %d MB at 3 steps)\n' "$n" "$one" "$three" "$per_step" "$ratio" "$rss3"
done
