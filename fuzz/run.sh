#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz/run.sh TARGET SECONDS [LIBFUZZER_FLAG...]: fuzz one target for SECONDS seconds.
#
# Builds the libFuzzer binaries first if needed (clang, -DSTGUARD_FUZZ=ON, ASan + UBSan)
# in $STGUARD_FUZZ_BUILD (default: build-fuzz in the checkout), then runs TARGET in one
# process with fuzz/TARGET.dict (else fuzz/safetensors.dict), the max_len of
# fuzz/TARGET.options, and the seeds of corpus/TARGET/ plus those fuzz/TARGET.seeds lists,
# read-only. TARGET is any
# fuzz/fuzz_*.cc that defines LLVMFuzzerTestOneInput (fuzz/targets.sh).
#
# New inputs go to fuzz/findings/TARGET/corpus/, and crashes, leaks, timeouts and
# out-of-memory inputs to fuzz/findings/TARGET/ (crash-<sha1> ...); that folder is
# git-ignored. At the end it prints the edges (cov) and features (ft) reached and the
# fraction of executions that reached the target's oracle (fuzz_support.h,
# CountExecution). Exit status: 0 when the run ended with no finding; nonzero on any crash,
# leak, timeout, OOM or sanitizer report (which aborts: -fno-sanitize-recover=all), or
# when a finding file appeared.
#
# Environment: STGUARD_FUZZ_BUILD (build folder), STGUARD_FUZZ_BINARIES (a folder of
# built target binaries to use instead of building), STGUARD_FUZZ_JOBS (build parallelism,
# default 2), STGUARD_FUZZ_FINDINGS (instead of fuzz/findings/TARGET), STGUARD_FUZZ_IGNORE
# (known issues the checks look past; see fuzz_support.h), STGUARD_FUZZ_MUTATOR=bytes
# (byte-level mutation only, for comparisons; see safetensors_mutator.h).
# Triage a finding:  build-fuzz/fuzz/TARGET fuzz/findings/TARGET/crash-...   (reproduces)
#                    build-fuzz/fuzz/TARGET -minimize_crash=1 -runs=100000 crash-...
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/fuzz/targets.sh"
mapfile -t targets < <(stguard_fuzz_targets "$root")
if [[ $# -lt 2 || ! " ${targets[*]} " =~ " $1 " || ! $2 =~ ^[0-9]+$ ]]; then
  echo "usage: fuzz/run.sh TARGET SECONDS [LIBFUZZER_FLAG...]" >&2
  echo "targets: ${targets[*]}" >&2
  exit 2
fi
target=$1
seconds=$2
shift 2

if [[ -n ${STGUARD_FUZZ_BINARIES:-} ]]; then  # built already (fuzz/ci.sh: OSS-Fuzz's $OUT)
  binary=$STGUARD_FUZZ_BINARIES/$target
else
  build=${STGUARD_FUZZ_BUILD:-$root/build-fuzz}
  [[ $build == /* ]] || build=$root/$build
  if [[ ! -f $build/CMakeCache.txt ]]; then
    CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DSTGUARD_FUZZ=ON \
      -DSTGUARD_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  cmake --build "$build" -j"${STGUARD_FUZZ_JOBS:-2}" --target "$target" >/dev/null
  binary=$build/fuzz/$target
fi

findings=${STGUARD_FUZZ_FINDINGS:-$root/fuzz/findings/$target}
mkdir -p "$findings/corpus"
# libFuzzer reads folders only: seed files (corpus/sample.safetensors) go in a folder.
seeds=()
rm -rf "$findings/seed_files"
while IFS= read -r path; do
  if [[ -f $path ]]; then
    mkdir -p "$findings/seed_files"
    cp "$path" "$findings/seed_files/"
    [[ " ${seeds[*]} " == *" $findings/seed_files "* ]] || seeds+=("$findings/seed_files")
  else
    seeds+=("$path")
  fi
done < <(stguard_fuzz_seed_paths "$target" "$root")
max_len=$(sed -n 's/^max_len *= *//p' "$root/fuzz/$target.options")

# Findings already in the folder are old ones; only new files count against this run.
count_findings() {
  find "$findings" -maxdepth 1 -type f \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l
}
before=$(count_findings)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "=== $target: ${seconds}s, seeds: ${seeds[*]#"$root/"}"
set +e
dict=$root/fuzz/safetensors.dict
[[ -f $root/fuzz/$target.dict ]] && dict=$root/fuzz/$target.dict  # a target's own dictionary
# The torch targets share one dictionary (pickle opcodes, allowlisted names, ZIP records).
case $target in fuzz_pickle | fuzz_zip | fuzz_torch_checkpoint) dict=$root/fuzz/torch.dict ;; esac
"$binary" -max_total_time="$seconds" -dict="$dict" \
  -max_len="${max_len:-4096}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$findings/" "$@" "$findings/corpus" "${seeds[@]}" \
  2>&1 | tee "$findings/last_run.log" |
  grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|Done |stat::|==[0-9]+==|SUMMARY|fuzz check failed|Test unit written|INFO: found LLVMFuzzerCustom)'
status=${PIPESTATUS[0]}
set -e
# The summary: edges and features at the end, and how many executions reached the oracle.
done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$findings/last_run.log" | tail -n 1 || true)
oracle_line=$(grep '^stat::oracle_reached:' "$findings/last_run.log" | tail -n 1 || true)
mutator=structure-aware
if [[ ${STGUARD_FUZZ_MUTATOR:-} == bytes ]] || ! stguard_fuzz_has_custom_mutator "$target" "$root"; then
  mutator=byte-level
fi
echo "=== $target ($mutator mutation, ${seconds}s): $(sed -E 's/.*(cov: [0-9]+ ft: [0-9]+ corp: [0-9]+).*/\1/' <<<"$done_line");" \
  "oracle reached in ${oracle_line#stat::oracle_reached: }"
[[ -n $oracle_line ]] || echo "=== $target: the target does not count its oracle (CountExecution, fuzz_support.h)"
after=$(count_findings)
if [[ $status -ne 0 || $after -gt $before ]]; then
  echo "=== $target: FAILED (exit $status); see $findings/last_run.log and the files in $findings/" >&2
  exit 1
fi
echo "=== $target: no findings"
