#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches the SARIF 2.1.0 JSON schema, a TEST-ONLY oracle for `--sarif` logs: the file
# lib/schemas/sarif-2.1.0-rtm.5.json inside the npm package @microsoft/jest-sarif@1.0.0-beta.0.
# The package is pinned by the sha256 of its tarball and the schema by its own; the schema
# lands in
#   ${STGUARD_CACHE:-$HOME/.cache/stguard}/sarif-schema/sarif-2.1.0-rtm.5.json
# and tests find it there (or through STGUARD_SARIF_SCHEMA). Prints the schema's path.
set -euo pipefail

version=1.0.0-beta.0
tarball_sha256=748e2c3d1a842e7bb258416685c7ea3a0da40005b72267b2052c2856d48ad102
schema_sha256=2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8
cache="${STGUARD_CACHE:-$HOME/.cache/stguard}/sarif-schema"
schema="$cache/sarif-2.1.0-rtm.5.json"

if [[ -f "$schema" ]] && echo "$schema_sha256  $schema" | sha256sum -c --status; then
  echo "$schema"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "fetch_sarif_schema.sh: npm is not installed (Debian package npm)" >&2
  exit 1
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@microsoft/jest-sarif@$version" >/dev/null)
tarball="$work/microsoft-jest-sarif-$version.tgz"
if ! echo "$tarball_sha256  $tarball" | sha256sum -c --status; then
  echo "fetch_sarif_schema.sh: the package's checksum is not the pinned one; refusing it" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$work" package/lib/schemas/sarif-2.1.0-rtm.5.json
echo "$schema_sha256  $work/package/lib/schemas/sarif-2.1.0-rtm.5.json" | sha256sum -c --status
mv "$work/package/lib/schemas/sarif-2.1.0-rtm.5.json" "$schema"
echo "$schema"
