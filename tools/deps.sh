#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages that stguard builds and tests with, when they are missing.
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
#   tools/deps.sh          what the library, the CLI and the tests need
#   tools/deps.sh --all    also what fuzzing, coverage, the benchmarks and the browser
#                          build and tests need (emscripten, chromium, puppeteer-core)
set -euo pipefail

packages=(cmake make g++ clang libgtest-dev librapidcheck-dev pkg-config)
# URL inputs (http(s)://, hf://) of the CLI and the Python package; both build without it
# and then say "built without URL support".
packages+=(libcurl4-openssl-dev)
# The Python package (python/) and its tests: the extension, numpy and torch, pytest, and
# an offline `pip install --no-build-isolation .` into a venv.
packages+=(pybind11-dev python3-dev python3-numpy python3-pytest python3-torch python3-venv
           python3-setuptools python3-pip python3-wheel)
if [[ "${1:-}" == "--all" ]]; then
  packages+=(libclang-rt-14-dev llvm zip unzip libbenchmark-dev libsimdjson-dev
             nlohmann-json3-dev python3)
  # stguard.dask's LocalCluster test (and its to_dataframe), and the SARIF schema check.
  packages+=(python3-distributed python3-dask python3-pandas python3-jsonschema)
  # npm fetches the GGUF tests' reference; a Node.js from elsewhere (nodesource) brings
  # its own npm, which Debian's npm package would conflict with.
  command -v npm >/dev/null || packages+=(npm)
  # The WebAssembly build (tools/build-web.sh) and the page's tests in headless chromium.
  packages+=(emscripten chromium)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) -eq 0 ]]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "stguard needs these Debian packages; install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
# The GGUF tests' reference (ggml itself, test-only), pinned by checksum.
if [[ "${1:-}" == "--all" ]]; then
  "$(dirname "$0")/fetch_ggml.sh" >/dev/null
fi
# The SARIF 2.1.0 schema the `--sarif` test validates against (npm), pinned by checksum.
if [[ "${1:-}" == "--all" ]]; then
  "$(dirname "$0")/fetch_sarif_schema.sh" >/dev/null
fi
# The browser tests drive chromium with puppeteer-core (npm), installed into a cache folder
# (STGUARD_PUPPETEER_DIR, default ~/.cache/stguard-web), never into the source tree. The
# version is pinned: it speaks the DevTools protocol of Debian 12's chromium.
puppeteer_version=24.43.1
if [[ "${1:-}" == "--all" ]]; then
  puppeteer_dir=${STGUARD_PUPPETEER_DIR:-$HOME/.cache/stguard-web}
  installed=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' \
              "$puppeteer_dir/node_modules/puppeteer-core/package.json" 2>/dev/null || true)
  if [[ "$installed" != "$puppeteer_version" ]]; then
    npm install --silent --no-audit --no-fund --prefix "$puppeteer_dir" \
        "puppeteer-core@$puppeteer_version"
  fi
fi
# The conformance runner's other readers (tools/conformance.py): the GGUF parsers of the
# Hugging Face Hub and hyllama, and the Hub client's safetensors parser, pinned, installed
# into a cache folder (STGUARD_NODE_MODULES's parent, default ~/.cache/stguard-conformance).
if [[ "${1:-}" == "--all" ]]; then
  conformance_dir=${STGUARD_CONFORMANCE_NPM_DIR:-$HOME/.cache/stguard-conformance}
  if [[ ! -f "$conformance_dir/node_modules/@huggingface/hub/package.json" ]]; then
    npm install --silent --no-audit --no-fund --prefix "$conformance_dir" \
        @huggingface/gguf@0.4.6 hyllama@0.2.2 @huggingface/hub@2.17.5
  fi
fi
