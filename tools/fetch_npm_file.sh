#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches one file out of a pinned npm package, for the test-only oracles (fetch_ggml.sh,
# fetch_sarif_schema.sh): `npm pack` downloads the package's tarball, which must have the
# pinned sha256; the file is taken out of it, must have its own pinned sha256, and lands in
# CACHE_DIR under its base name. A file already there with that sha256 is not fetched again.
# Prints the file's path.
#   fetch_npm_file.sh PACKAGE VERSION TARBALL_SHA256 MEMBER MEMBER_SHA256 CACHE_DIR
# (MEMBER: the file's path inside the tarball, "package/...").
set -euo pipefail

if [[ $# -ne 6 ]]; then
  echo "usage: $0 PACKAGE VERSION TARBALL_SHA256 MEMBER MEMBER_SHA256 CACHE_DIR" >&2
  exit 2
fi
package=$1 version=$2 tarball_sha256=$3 member=$4 member_sha256=$5 cache=$6
name="$(basename "$0") ($package@$version)"
target="$cache/$(basename "$member")"

if [[ -f "$target" ]] && echo "$member_sha256  $target" | sha256sum -c --status; then
  echo "$target"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "$name: npm is not installed (Debian package npm)" >&2
  exit 1
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$package@$version" >/dev/null)
# npm names the tarball after the package: "@scope/name" packs as scope-name-VERSION.tgz.
tarball="$work/$(echo "${package#@}" | tr / -)-$version.tgz"
if ! echo "$tarball_sha256  $tarball" | sha256sum -c --status; then
  echo "$name: the package's checksum is not the pinned one; refusing it" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$work" "$member"
if ! echo "$member_sha256  $work/$member" | sha256sum -c --status; then
  echo "$name: $member's checksum is not the pinned one; refusing it" >&2
  exit 1
fi
mv "$work/$member" "$target"
echo "$target"
