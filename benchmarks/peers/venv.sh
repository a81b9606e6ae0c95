#!/usr/bin/env bash
# Creates (once) the peers benchmark venv VENV (default: models/cache/peers-venv, git-ignored) with
# models/reference/venv.sh and this folder's requirements.txt, checks that the peers import and run
# against Debian's NumPy, and prints the venv's python on stdout (everything else goes to stderr).
# Safe to rerun.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${1:-$HERE/../../models/cache/peers-venv}"
PY="$("$HERE/../../models/reference/venv.sh" "$VENV" "$HERE/requirements.txt")"
# faiss' compiled code must actually run on this NumPy (a wheel built for NumPy 2 fails at import
# or at the first call).
"$PY" - <<'PY' >&2
import numpy
import faiss, pytrec_eval, bm25s, sentence_transformers
x = numpy.random.default_rng(0).standard_normal((64, 8)).astype("float32")
x /= numpy.linalg.norm(x, axis=1, keepdims=True)
index = faiss.IndexFlatIP(8)
index.add(x)
_, ids = index.search(x[:2], 1)  # unit rows: each row's best inner product is itself
assert ids[:, 0].tolist() == [0, 1], f"faiss {faiss.__version__} returned {ids.tolist()} on NumPy {numpy.__version__}"
PY
echo "$PY"
