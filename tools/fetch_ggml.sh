#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches ggml's reference library, a TEST-ONLY oracle for the GGUF reader: the prebuilt
# libggml-base.so inside the npm package @node-llama-cpp/linux-x64@3.21.1 (it exports
# ggml's GGUF reader and writer and its type traits). Never linked into stguard.
# The package is pinned by the sha256 of its tarball; the library lands in
#   ${STGUARD_CACHE:-$HOME/.cache/stguard}/ggml-3.21.1/libggml-base.so
# and tests find it there (or through STGUARD_GGML_LIB). Prints the library's path.
set -euo pipefail

version=3.21.1
tarball_sha256=4b5b65a8b2611d8af94349b02d815c0f424a30a0a19aef2be5db25ecfef6730f
library_sha256=1eba024559799447e34687e12b6794e79ad3768a1b3d2cbca9fadc829f0f85c7
cache="${STGUARD_CACHE:-$HOME/.cache/stguard}/ggml-$version"
library="$cache/libggml-base.so"

if [[ -f "$library" ]] && echo "$library_sha256  $library" | sha256sum -c --status; then
  echo "$library"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "fetch_ggml.sh: npm is not installed (Debian package npm)" >&2
  exit 1
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@node-llama-cpp/linux-x64@$version" >/dev/null)
tarball="$work/node-llama-cpp-linux-x64-$version.tgz"
if ! echo "$tarball_sha256  $tarball" | sha256sum -c --status; then
  echo "fetch_ggml.sh: the package's checksum is not the pinned one; refusing it" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$work" package/bins/linux-x64/libggml-base.so
echo "$library_sha256  $work/package/bins/linux-x64/libggml-base.so" | sha256sum -c --status
mv "$work/package/bins/linux-x64/libggml-base.so" "$library"
echo "$library"
