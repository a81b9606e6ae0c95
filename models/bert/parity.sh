#!/usr/bin/env bash
# The full parity gate of an installed model (outside CI; models/bert/parity.py): token ids equal
# to Hugging Face's on every one of 1,000 texts and embeddings within --min-cosine (0.99999) of
# sentence-transformers', with the encoding seconds of both.
#
#   models/bert/parity.sh [--model NAME (default all-mpnet-base-v2)] [DATA_DIR (default ../shared/data)] [parity.py options]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
MODEL=all-mpnet-base-v2
# shellcheck source=reference_env.sh
source "$HERE/reference_env.sh"
DATA="$ROOT/../shared/data"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then DATA="$1"; shift; fi
"$PY" "$HERE/parity.py" --hf-dir "$CHECKPOINT" \
  --model-dir "${COUNTERPOINT_MODELS:-$ROOT/models/installed}/$MODEL" --data-dir "$DATA" "$@"
