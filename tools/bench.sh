#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs every stguard benchmark, then prints the table of ratios.
#   tools/bench.sh [BUILD_DIR]     default: build-bench beside this script's checkout
# Environment:
#   STGUARD_BENCH_TMPDIR  where the sparse checkpoints go (default /tmp; needs sparse files)
#   BENCH_ARGS            extra Google Benchmark flags, e.g. --benchmark_filter=validate
#   JOBS                  parallel build jobs (default 2)
# Outputs, in BUILD_DIR: bench.json and bench_write.json (Google Benchmark JSON), rss.json
# (rss_probe) and bench_table.md (the table printed at the end). Takes about three minutes with the build.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build-bench}"
mkdir -p "$build"
build="$(cd "$build" && pwd)"

echo "=== configure and build (Release) in $build" >&2
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTGUARD_BENCH=ON \
  -DSTGUARD_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target stguard_bench stguard_rss_probe >/dev/null

echo "=== peak RSS: validating the near-cap header in a fresh process" >&2
scratch="$(mktemp -d "${STGUARD_BENCH_TMPDIR:-/tmp}/stguard-rss.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
"$build/bench/rss_probe" --write near_cap "$scratch/near_cap.safetensors"
"$build/bench/rss_probe" "$scratch/near_cap.safetensors" | tee "$build/rss.json" >&2
rm -f "$scratch/near_cap.safetensors"
echo "=== peak RSS: hostile header shapes (bound 2 N beyond the header)" >&2
: > "$build/rss_hostile.json"
for shape in meta_8m dims_49m zero_1_7m; do
  "$build/bench/rss_probe" --write-hostile "$shape" "$scratch/$shape.safetensors"
  "$build/bench/rss_probe" "$scratch/$shape.safetensors" | tee -a "$build/rss_hostile.json" >&2
  rm -f "$scratch/$shape.safetensors"
done

echo "=== benchmarks (medians of the repetitions; JSON in $build/bench*.json)" >&2
# Repetitions are interleaved at random so that a noisy spell on a shared machine spreads
# over every column instead of landing on one. The 1 GB writes run afterwards on their
# own: interleaved with the parsers' multi-GB allocations, their times swing tenfold.
# shellcheck disable=SC2086  # BENCH_ARGS is a list of flags
"$build/bench/stguard_bench" --benchmark_filter=-write/ \
  --benchmark_enable_random_interleaving=true \
  --benchmark_display_aggregates_only=true \
  --benchmark_out="$build/bench.json" --benchmark_out_format=json \
  ${BENCH_ARGS:-} >&2
# shellcheck disable=SC2086
"$build/bench/stguard_bench" --benchmark_filter=write/ \
  --benchmark_display_aggregates_only=true \
  --benchmark_out="$build/bench_write.json" --benchmark_out_format=json \
  ${BENCH_ARGS:-} >&2

echo >&2
python3 "$repo/bench/bench_table.py" --rss "$build/rss.json" "$build/bench.json" \
  "$build/bench_write.json" |
  tee "$build/bench_table.md"
