#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz/ci.sh: the fuzzing stage of CI (.ci/run calls it after the unit and sanitizer
# stages, which already replay every corpus through the replay_* tests).
#
# 1. Builds the libFuzzer targets (clang, ASan + UBSan) and fuzzes each for
#    $STGUARD_FUZZ_SECONDS seconds (default 30) with fuzz/run.sh; any crash, leak,
#    timeout, OOM or sanitizer report fails CI. New inputs stay in fuzz/findings/.
# 2. The OSS-Fuzz local check: runs oss-fuzz/build.sh from the project root with the
#    OSS-Fuzz variables set to clang/libFuzzer values and temporary SRC, WORK and OUT, then
#    checks that every target binary, seed zip, dict and options file is in $OUT and that
#    each target runs its whole seed corpus cleanly (-runs=0).
# Needs clang, libclang-rt-14-dev (libFuzzer), zip and unzip: tools/deps.sh --all.
# Takes about 4 minutes on 2 cores (234 s measured, fresh build included).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
targets=(fuzz_json_tokenizer fuzz_header fuzz_roundtrip fuzz_writer fuzz_index fuzz_config
         fuzz_pickle fuzz_zip fuzz_torch_checkpoint)
seconds=${STGUARD_FUZZ_SECONDS:-30}
jobs=${STGUARD_FUZZ_JOBS:-2}
export STGUARD_FUZZ_BUILD=${STGUARD_FUZZ_BUILD:-$root/build-fuzz}
start=$SECONDS

echo "=== fuzz: building the libFuzzer targets in $STGUARD_FUZZ_BUILD"
if [[ ! -f $STGUARD_FUZZ_BUILD/CMakeCache.txt ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$STGUARD_FUZZ_BUILD" -DSTGUARD_FUZZ=ON \
    -DSTGUARD_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$STGUARD_FUZZ_BUILD" -j"$jobs" --target "${targets[@]}" >/dev/null

failed=()
for target in "${targets[@]}"; do
  fuzz/run.sh "$target" "$seconds" || failed+=("$target")
done

echo "=== fuzz: OSS-Fuzz build check (oss-fuzz/build.sh with clang/libFuzzer)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src" "$scratch/work" "$scratch/out"
(
  export CC=clang CXX=clang++
  export CFLAGS="-O1 -gline-tables-only -fsanitize=address,undefined -fsanitize=fuzzer-no-link"
  export CXXFLAGS="$CFLAGS"
  export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
  export SRC=$scratch/src WORK=$scratch/work OUT=$scratch/out
  oss-fuzz/build.sh
)
out=$scratch/out
for target in "${targets[@]}"; do
  for file in "$target" "${target}_seed_corpus.zip" "$target.dict" "$target.options"; do
    if [[ ! -s $out/$file ]]; then
      echo "oss-fuzz/build.sh did not produce $file" >&2
      failed+=("oss-fuzz:$file")
    fi
  done
  [[ -x $out/$target ]] || failed+=("oss-fuzz:$target-not-executable")
  seeds=$scratch/seeds/$target
  mkdir -p "$seeds"
  unzip -q "$out/${target}_seed_corpus.zip" -d "$seeds"
  if ! "$out/$target" -runs=0 -dict="$out/$target.dict" -artifact_prefix="$scratch/" "$seeds" \
       >"$scratch/$target.log" 2>&1; then
    tail -n 30 "$scratch/$target.log" >&2
    failed+=("oss-fuzz:$target-seeds")
  else
    echo "$target: $(find "$seeds" -type f | wc -l) seeds ran cleanly"
  fi
done

echo "=== fuzz: $((SECONDS - start)) s"
if [[ ${#failed[@]} -ne 0 ]]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all targets clean"
