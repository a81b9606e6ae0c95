#!/usr/bin/env bash
# The tokenizer sweep (outside CI): the library's WordPiece against Hugging Face `tokenizers` on
# every text of the shared data, for an installed model (default all-minilm-l6-v2; also
# all-mpnet-base-v2 after `counterpoint models install all-mpnet-base-v2`). Needs ./setup.sh build first.
#
#   models/bert/tokenizer_sweep.sh [--model NAME] [DATA_DIR (default ../shared/data)]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
MODEL=all-minilm-l6-v2
# shellcheck source=reference_env.sh
source "$HERE/reference_env.sh"
DATA="${1:-$ROOT/../shared/data}"
"$PY" "$HERE/tokenizer_sweep.py" --hf-dir "$CHECKPOINT" \
  --model-dir "${COUNTERPOINT_MODELS:-$ROOT/models/installed}/$MODEL" --data-dir "$DATA"
