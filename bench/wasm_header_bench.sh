#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# wasm_header_bench.sh BENCH_BUILD [SECONDS] [PAIRS]: header validation natively and in
# WebAssembly under node (web/bench/header_bench.cc, the same source), on the bench files
# gpt2, llama3_8b and moe_24k; prints bench/README.md's table row per file. Native and
# wasm runs alternate, PAIRS times (so that the load of a shared machine falls on both);
# each run prints the median time of one validation, and the table shows the fastest run
# of each side (other processes only ever add time) with their ratio, and the range of the
# per-pair ratios.
#   BENCH_BUILD  a native build with -DSTGUARD_BENCH=ON (its libstguard.a and rss_probe:
#                cmake --build BENCH_BUILD --target stguard stguard_rss_probe)
#   the WebAssembly build: tools/build-web.sh first (STGUARD_WEB_BUILD, default build-web);
#   this script builds its stguard_web_header_bench target, or, to compare another build
#   (say, one made before a change), runs STGUARD_WASM_BENCH_JS when set.
# The bench files (sparse: their data is a hole) are written into $TMPDIR (default /tmp)
# and kept for the next run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: wasm_header_bench.sh BENCH_BUILD [SECONDS] [PAIRS]}" && pwd)
seconds=${2:-3}
pairs=${3:-5}
web=${STGUARD_WEB_BUILD:-$root/build-web}
dir=${TMPDIR:-/tmp}/stguard-wasm-bench
mkdir -p "$dir"

export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
bench_js=${STGUARD_WASM_BENCH_JS:-}
if [[ -z "$bench_js" ]]; then
  cmake --build "$web/cmake" --target stguard_web_header_bench >/dev/null
  bench_js=$web/cmake/stguard_web_header_bench.js
fi
g++ -O2 -std=c++20 -I"$root/include" -I"$build/include" "$root/web/bench/header_bench.cc" \
    "$build/libstguard.a" -o "$dir/header_bench"

median() { sed -n 's/.*"median_us":\([0-9.]*\).*/\1/p'; }
show() { awk -v us="$1" 'BEGIN { if (us >= 1000) printf "%.1f ms", us / 1000; else printf "%.1f µs", us }'; }

echo "| input | header N | native | wasm (node $(node --version)) | wasm / native | per pair |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for name in gpt2 llama3_8b moe_24k; do
  file="$dir/$name.safetensors"
  [[ -f "$file" ]] || "$build/bench/rss_probe" --write "$name" "$file" >/dev/null
  header=$(( $(od -An -t u8 -N 8 "$file") ))
  best_native='' best_wasm='' ratios=()
  for ((i = 0; i < pairs; i++)); do
    native=$("$dir/header_bench" "$file" "$seconds" | median)
    wasm=$(node --no-experimental-fetch "$bench_js" "$file" "$seconds" | median)
    best_native=$(awk -v a="$native" -v b="${best_native:-$native}" 'BEGIN { print (a < b ? a : b) }')
    best_wasm=$(awk -v a="$wasm" -v b="${best_wasm:-$wasm}" 'BEGIN { print (a < b ? a : b) }')
    ratios+=("$(awk -v a="$wasm" -v b="$native" 'BEGIN { printf "%.2f", a / b }')")
  done
  range=$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n '1p;$p' | paste -sd '-')
  header_text=$(awk -v n="$header" 'BEGIN { if (n >= 1e6) printf "%.1f MB", n / 1e6; else printf "%.1f KB", n / 1e3 }')
  ratio=$(awk -v a="$best_wasm" -v b="$best_native" 'BEGIN { printf "%.2fx", a / b }')
  echo "| \`$name\` | $header_text | $(show "$best_native") | $(show "$best_wasm") | $ratio | ${range}x |"
done
