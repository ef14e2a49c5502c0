#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/coverage.sh [BUILD_DIR]: line coverage of src/ from the unit tests and every
# corpus replay, with clang source-based coverage.
#
# Builds everything with -fprofile-instr-generate -fcoverage-mapping (Debug, clang) in
# BUILD_DIR (default: build-cov in the checkout), runs the whole ctest suite (GoogleTest
# and RapidCheck suites, the CLI they drive, and the replay_<target> tests, which run
# corpus/<target>/ plus corpus/valid, corpus/invalid and corpus/json), merges the
# profiles and prints llvm-cov's report for src/. Then, for the files with a coverage
# target (json_tokenizer.cc, header_parser.cc, tiling.cc: >= 95% of lines), prints the
# figure and the uncovered lines.
#
# Environment: STGUARD_COV_STRICT=1 makes a file under its target an error (exit 1).
# STGUARD_COV_JOBS sets build and test parallelism (default 2).
# Needs clang and llvm (llvm-profdata, llvm-cov; the -14 names are tried first).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-cov}
[[ $build == /* ]] || build=$(pwd)/$build
jobs=${STGUARD_COV_JOBS:-2}
target_files=(json/json_tokenizer.cc format/header_parser.cc format/tiling.cc)
target_percent=95

find_tool() {
  local name
  for name in "$@"; do
    if command -v "$name" >/dev/null; then
      command -v "$name"
      return
    fi
  done
  echo "tools/coverage.sh: none of $* found (apt-get install llvm)" >&2
  exit 2
}
profdata=$(find_tool llvm-profdata-14 llvm-profdata)
llvm_cov=$(find_tool llvm-cov-14 llvm-cov)

flags="-fprofile-instr-generate -fcoverage-mapping"
profiles=$build/profiles
mkdir -p "$profiles"
# Test discovery runs the binaries at build time: keep those profiles out of the count.
export LLVM_PROFILE_FILE=$profiles/build-%p-%m.profraw
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fprofile-instr-generate" \
  -DSTGUARD_BUILD_TESTS=ON -DSTGUARD_FUZZ=OFF >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null

rm -f "$profiles"/*.profraw
export LLVM_PROFILE_FILE=$profiles/run-%p-%m.profraw
if ! ctest --test-dir "$build" -j"$jobs" --output-on-failure >"$build/ctest.log" 2>&1; then
  echo "tools/coverage.sh: some tests failed (coverage still counts them); see $build/ctest.log" >&2
  grep -E "tests passed|Failed|\*\*\*" "$build/ctest.log" | tail -n 20 >&2 || true
fi
# Tests that kill the CLI in the middle of a write (the crash-safety trials) leave that
# process's profile truncated: llvm-profdata warns about those and merges the rest.
"$profdata" merge -sparse -failure-mode=all "$profiles"/run-*.profraw -o "$build/coverage.profdata"

# Every instrumented executable: the test suites, the CLI and the replay binaries.
objects=()
while IFS= read -r binary; do
  objects+=(-object "$binary")
done < <(find "$build" -type f -perm -u+x \
           \( -name 'stguard' -o -name 'stguard_*tests' -o -name 'fuzz_*' \) | sort)
if [[ ${#objects[@]} -eq 0 ]]; then
  echo "tools/coverage.sh: no instrumented binaries in $build" >&2
  exit 2
fi
# llvm-cov takes the first binary plainly and the rest with -object.
first=${objects[1]}
rest=("${objects[@]:2}")

echo "=== Line coverage of src/ (unit tests + corpus replays)"
"$llvm_cov" report "$first" "${rest[@]}" -instr-profile="$build/coverage.profdata" \
  "$root"/src/*/*.cc "$root"/src/*/*.h | tee "$build/coverage.txt"

status=0
echo
echo "=== Coverage targets (>= ${target_percent}% of lines)"
for file in "${target_files[@]}"; do
  line=$(grep -E "(^|/)$file " "$build/coverage.txt" || true)
  if [[ -z $line ]]; then
    echo "$file: not in the report"
    status=1
    continue
  fi
  # Columns: Filename Regions Missed Cover Functions Missed Executed Lines Missed Cover ...
  read -r -a cols <<<"$line"
  lines=${cols[7]}
  missed=${cols[8]}
  percent=${cols[9]}
  verdict=ok
  if (( (lines - missed) * 100 < target_percent * lines )); then
    verdict="BELOW TARGET"
    status=1
  fi
  echo "$file: $percent of lines ($((lines - missed))/$lines), $verdict"
  if (( missed > 0 )); then
    echo "  uncovered lines:"
    "$llvm_cov" show "$first" "${rest[@]}" -instr-profile="$build/coverage.profdata" \
      "$root/src/$file" -show-line-counts | awk -F'|' '$2 ~ /^ *0$/ { print "   " $1 "|" $3 }'
  fi
done
if [[ $status -ne 0 && ${STGUARD_COV_STRICT:-0} == 1 ]]; then
  exit 1
fi
exit 0
