#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The WebAssembly build under node: tests/web/node_check_test.js (every corpus file through
# a JavaScript byte source, against the native CLI; throwing and short sources; a 16 GB
# sparse file from under 1 MB read), node_folder_test.js (folders over WORKERFS) and
# node_oom_test.js (running out of wasm32's 4 GB is verdict error, code OutOfMemory).
#   tests/web/run_node_tests.sh [BUILD_WEB [NATIVE_CLI]]   (default: build-web build/stguard)
# Skips, saying why, with exit status 77 when node or a build is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build_web=${1:-$root/build-web}
native_cli=${2:-$root/build/stguard}

skip() {
  echo "SKIPPED web node tests: $1" >&2
  exit 77
}
command -v node >/dev/null || skip "node is not installed (tools/deps.sh --all)"
[[ -f "$build_web/stguard.js" ]] || skip "$build_web/stguard.js is missing (run tools/build-web.sh)"
[[ -x "$native_cli" ]] || skip "$native_cli is missing (build the CLI first)"

status=0
for test in node_check_test.js node_folder_test.js node_oom_test.js; do
  [[ -f "$root/tests/web/$test" ]] || continue
  echo "--- $test"
  # emscripten 3.1.6's loader takes node >= 18's global fetch for a browser's.
  node --no-experimental-fetch "$root/tests/web/$test" "$build_web" "$native_cli" \
       "$root/corpus" || status=1
done
exit $status
