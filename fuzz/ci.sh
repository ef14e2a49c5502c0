#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz/ci.sh: the fuzzing stage of CI (.ci/run calls it after the unit and sanitizer
# stages, which already replay every corpus through the replay_* tests).
#
# 1. The OSS-Fuzz local check: runs oss-fuzz/build.sh from the project root with the
#    OSS-Fuzz variables set to clang/libFuzzer values (ASan + UBSan) and temporary SRC,
#    WORK and OUT, then checks that every target binary, seed zip, dict and options file
#    is in $OUT and that each target runs its whole seed corpus cleanly (-runs=0).
# 2. Fuzzes each of those binaries (every fuzz/fuzz_*.cc with LLVMFuzzerTestOneInput; see
#    fuzz/targets.sh) for $STGUARD_FUZZ_SECONDS seconds (default 30) with fuzz/run.sh;
#    any crash, leak, timeout, OOM or sanitizer report fails CI. New inputs stay in
#    fuzz/findings/. Targets with a structure-aware mutator must show that libFuzzer used
#    it (its "found LLVMFuzzerCustomMutator" line), and targets that count their oracle
#    (CountExecution) that some executions reached it.
# Needs clang, libclang-rt-14-dev (libFuzzer), zip and unzip: tools/deps.sh --all.
# One build serves both steps (the CMake fuzz build, build-fuzz/, is for local work).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source fuzz/targets.sh
mapfile -t targets < <(stguard_fuzz_targets "$root")
unset STGUARD_FUZZ_MUTATOR  # CI runs the structure-aware mutators
seconds=${STGUARD_FUZZ_SECONDS:-30}
start=$SECONDS

echo "=== fuzz: OSS-Fuzz build check (oss-fuzz/build.sh with clang/libFuzzer)"
failed=()
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src" "$scratch/work" "$scratch/out"
(
  export CC=clang CXX=clang++
  # OSS-Fuzz's ASan + UBSan flags; UBSan stops at its first report, as in run.sh.
  CFLAGS="-O1 -gline-tables-only -fsanitize=address,undefined -fno-sanitize-recover=all"
  export CFLAGS="$CFLAGS -fsanitize=fuzzer-no-link"
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

# The targets fuzzed are the ones OSS-Fuzz builds: one build serves both.
echo "=== fuzz: ${seconds}s per target"
for target in "${targets[@]}"; do
  STGUARD_FUZZ_BINARIES=$out STGUARD_FUZZ_FINDINGS=$root/fuzz/findings/$target \
    fuzz/run.sh "$target" "$seconds" || failed+=("$target")
  log=$root/fuzz/findings/$target/last_run.log
  if stguard_fuzz_has_custom_mutator "$target" "$root"; then
    grep -q 'INFO: found LLVMFuzzerCustomMutator' "$log" || failed+=("$target:no-custom-mutator")
  fi
  if grep -q 'CountExecution' "fuzz/$target.cc"; then  # targets that count their oracle
    grep -Eq '^stat::oracle_reached: [1-9]' "$log" || failed+=("$target:oracle-never-reached")
  fi
done

echo "=== fuzz: $((SECONDS - start)) s"
if [[ ${#failed[@]} -ne 0 ]]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all targets clean"
