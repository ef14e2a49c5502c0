#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the browser page into build-web/: stguard.js + stguard.wasm (the library and the
# glue of web/src/, compiled with Debian's emscripten) beside web/'s index.html, style.css,
# app.js and worker.js. Serve the folder over HTTP and open index.html (see README).
#   tools/build-web.sh          the page
#   tools/build-web.sh --fuzz   also the fuzz targets' corpus replays, run under node with
#                               ctest --test-dir build-web/cmake -L fuzz
# Environment: STGUARD_WEB_BUILD (default build-web), JOBS (default: nproc).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${STGUARD_WEB_BUILD:-$root/build-web}
fuzz=OFF
[[ "${1:-}" == "--fuzz" ]] && fuzz=ON

if ! command -v em++ >/dev/null || ! command -v node >/dev/null; then
  echo "build-web: needs emscripten and node (tools/deps.sh --all installs them)" >&2
  exit 1
fi
# Debian's emscripten 3.1.6 finds its node modules (acorn...) only through NODE_PATH with
# a Node.js newer than Debian's own.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

emcmake cmake -S "$root/web" -B "$out/cmake" -DCMAKE_BUILD_TYPE=Release \
  -DSTGUARD_WEB_FUZZ_REPLAY=$fuzz "${launcher[@]}" >/dev/null
targets=(stguard_web stguard_web_node)
if [[ $fuzz == ON ]]; then
  # The targets fuzz/CMakeLists.txt lists (a fuzz_writer without FuzzedDataProvider.h is
  # a skipped test there, not a target).
  for target in $(sed -n '/^set(STGUARD_FUZZ_TARGETS/,/)/p' "$root/fuzz/CMakeLists.txt" |
                  grep -o 'fuzz_[a-z_]*'); do
    grep -q "^$target:" <(cmake --build "$out/cmake" --target help | sed 's/^\.\.\. //; s/$/:/') &&
      targets+=("$target")
  done
fi
cmake --build "$out/cmake" -j"${JOBS:-$(nproc)}" --target "${targets[@]}"

cp "$out/cmake/stguard.js" "$out/cmake/stguard.wasm" "$out/"
# stguard_web_node.{js,wasm} (the node tests' build over the real file system) stay in cmake/.
for page_file in index.html style.css app.js worker.js; do
  if [[ -f "$root/web/$page_file" ]]; then
    cp "$root/web/$page_file" "$out/"
  else
    echo "build-web: web/$page_file is missing: the page is incomplete" >&2
  fi
done

# errors.html: what each error code means, generated from the one list of codes (the
# page links each code it shows there).
python3 "$root/web/tools/make_error_page.py" "$root/include/stguard/error_codes.def" \
  "$out/errors.html"

# The page downloads the .wasm on every first visit: it must stay small.
max_wasm_bytes=$((2 * 1024 * 1024))
wasm_bytes=$(stat -c %s "$out/stguard.wasm")
if ((wasm_bytes >= max_wasm_bytes)); then
  echo "build-web: stguard.wasm is $wasm_bytes bytes, over the 2 MB budget" >&2
  exit 1
fi
echo "build-web: $out/stguard.wasm $wasm_bytes bytes (budget $max_wasm_bytes)"
