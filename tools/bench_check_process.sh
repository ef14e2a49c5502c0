#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Whole-process `stguard check` of the near-cap header (790,000 tensors, bench/generators.cc),
# this checkout against a baseline commit built once in a scratch folder, timed in turn in
# the same run (bench/check_process_bench.py). The baseline is the line to beat.
#   tools/bench_check_process.sh [BUILD_DIR]   default: build-bench beside this checkout
# Environment:
#   BASELINE              the commit to compare with (default bfa1bf3, before the front door)
#   ROUNDS                timed rounds of each command (default 15, after one warm-up each)
#   STGUARD_BENCH_TMPDIR  where the scratch build and the sparse file go (default /tmp)
#   JOBS                  parallel build jobs (default 2)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build-bench}"
baseline="${BASELINE:-bfa1bf3}"
tmp="${STGUARD_BENCH_TMPDIR:-/tmp}"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

# The baseline's tool, built once: a later run reuses it.
commit="$(git -C "$repo" rev-parse --short=12 "$baseline")"
base="$tmp/stguard-baseline-$commit"
if [ ! -x "$base/build/stguard" ]; then
  echo "=== building $commit's stguard in $base" >&2
  rm -rf "$base" && mkdir -p "$base/src"
  git -C "$repo" archive "$commit" | tar -x -C "$base/src"
  cmake -S "$base/src" -B "$base/build" -DCMAKE_BUILD_TYPE=Release -DSTGUARD_BUILD_TESTS=OFF \
    -DSTGUARD_INSTALL=OFF "${launcher[@]}" >/dev/null
  cmake --build "$base/build" -j"${JOBS:-2}" --target stguard_cli >/dev/null
fi

echo "=== building this checkout's stguard and rss_probe (Release) in $build" >&2
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTGUARD_BENCH=ON \
  -DSTGUARD_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target stguard_cli stguard_rss_probe >/dev/null

scratch="$(mktemp -d "$tmp/stguard-check-bench.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
"$build/bench/rss_probe" --write near_cap "$scratch/near_cap.safetensors"
python3 "$repo/bench/check_process_bench.py" --rounds "${ROUNDS:-15}" \
  "$commit=$base/build/stguard" "$(git -C "$repo" rev-parse --short=12 HEAD)=$build/stguard" \
  -- check "$scratch/near_cap.safetensors"
