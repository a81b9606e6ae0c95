#!/usr/bin/env bash
# Trains the default sparse-aware encoder `sparse-default` into DEST/sparse-default:
# SparseCL (Hoyer) fine-tuning of use-lite-en on the triples in data/ (written for this
# project, Apache-2.0), seeded, then alpha tuned on the held-out dev triples and recorded in
# the manifest. A few minutes on 2 cores; models/install.sh keeps the result.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DEST="$(cd "${1:?usage: train.sh MODELS_DIR}" && pwd)"
BUILD="${COUNTERPOINT_BUILD_DIR:-$ROOT/build}"
echo "[counterpoint] model sparse-default: training with SparseCL from use-lite-en (seeded; kept afterwards)"
cd "$HERE"  # relative data paths, so the manifest records no machine-specific directory
COUNTERPOINT_MODELS="$DEST" "$BUILD/bin/counterpoint" train sparsecl \
  --base use-lite-en --name sparse-default \
  --data tsv --triples data/triples.tsv --dev-triples data/dev_triples.tsv \
  --epochs 3 --batch-size 32 --lr 1e-4 --temperature 0.02 --seed 42 \
  --out "$DEST/sparse-default"
