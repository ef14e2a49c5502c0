#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches ggml's reference library, a TEST-ONLY oracle for the GGUF reader: the prebuilt
# libggml-base.so inside the npm package @node-llama-cpp/linux-x64@3.21.1 (it exports
# ggml's GGUF reader and writer and its type traits). Never linked into stguard.
# The package is pinned by the sha256 of its tarball and the library by its own
# (fetch_npm_file.sh); the library lands in
#   ${STGUARD_CACHE:-$HOME/.cache/stguard}/ggml-3.21.1/libggml-base.so
# and tests find it there (or through STGUARD_GGML_LIB). Prints the library's path.
set -euo pipefail

version=3.21.1
exec "$(dirname "$0")/fetch_npm_file.sh" @node-llama-cpp/linux-x64 "$version" \
  4b5b65a8b2611d8af94349b02d815c0f424a30a0a19aef2be5db25ecfef6730f \
  package/bins/linux-x64/libggml-base.so \
  1eba024559799447e34687e12b6794e79ad3768a1b3d2cbca9fadc829f0f85c7 \
  "${STGUARD_CACHE:-$HOME/.cache/stguard}/ggml-$version"
