#!/usr/bin/env bash
# The tokenizer sweep (outside CI): the library's WordPiece against Hugging Face `tokenizers` on
# every text of the shared data, for the installed all-minilm-l6-v2. Needs ./setup.sh build first.
#
#   models/bert/tokenizer_sweep.sh [DATA_DIR (default ../shared/data)]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DATA="${1:-$ROOT/../shared/data}"
# shellcheck source=reference_env.sh
source "$HERE/reference_env.sh"
"$PY" "$HERE/tokenizer_sweep.py" --hf-dir "$CHECKPOINT" \
  --model-dir "${COUNTERPOINT_MODELS:-$ROOT/models/installed}/all-minilm-l6-v2" --data-dir "$DATA"
