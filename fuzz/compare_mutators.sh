#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz/compare_mutators.sh SECONDS [TARGET...]: structure-aware against byte-level
# mutation, in the same time, for each TARGET (default: every target with a custom
# mutator, fuzz/targets.sh).
#
# For each target, runs fuzz/run.sh twice at once, from the same seeds with the same
# libFuzzer -seed, one process with the structure-aware mutator and one with
# STGUARD_FUZZ_MUTATOR=bytes (the hooks then call libFuzzer's own mutators only), so both
# see the same machine load. Each gets a fresh corpus folder under
# $STGUARD_COMPARE_OUT (default build-fuzz/compare). Prints a Markdown table: executions,
# edges (cov), features (ft), corpus size and the fraction of executions that reached
# the oracle at the end of each run, with the commit it ran on.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/fuzz/targets.sh"
if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
  echo "usage: fuzz/compare_mutators.sh SECONDS [TARGET...]" >&2
  exit 2
fi
seconds=$1
shift
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  while IFS= read -r target; do
    if stguard_fuzz_has_custom_mutator "$target" "$root"; then targets+=("$target"); fi
  done < <(stguard_fuzz_targets "$root")
fi
out=${STGUARD_COMPARE_OUT:-$root/build-fuzz/compare}
commit=$(stguard_fuzz_commit "$root")

# Build first, once, so that the two runs start together.
for target in "${targets[@]}"; do fuzz/run.sh "$target" 0 -runs=0 >/dev/null 2>&1 || true; done

rows=()
for target in "${targets[@]}"; do
  for mode in structure bytes; do
    rm -rf "${out:?}/$target/$mode"
    mkdir -p "$out/$target/$mode"
  done
  STGUARD_FUZZ_FINDINGS=$out/$target/structure \
    "$root/fuzz/run.sh" "$target" "$seconds" -seed=1 >"$out/$target/structure.txt" 2>&1 &
  structure_pid=$!
  STGUARD_FUZZ_FINDINGS=$out/$target/bytes STGUARD_FUZZ_MUTATOR=bytes \
    "$root/fuzz/run.sh" "$target" "$seconds" -seed=1 >"$out/$target/bytes.txt" 2>&1 &
  bytes_pid=$!
  wait "$structure_pid" || echo "$target (structure-aware): run failed, see $out/$target/structure" >&2
  wait "$bytes_pid" || echo "$target (byte-level): run failed, see $out/$target/bytes" >&2
  for mode in structure bytes; do
    log=$out/$target/$mode/last_run.log
    execs=$(stguard_fuzz_final_stat "$log" execs)
    cov=$(stguard_fuzz_final_stat "$log" cov)
    ft=$(stguard_fuzz_final_stat "$log" ft)
    corp=$(stguard_fuzz_final_stat "$log" corp)
    oracle=$(sed -nE 's/^stat::oracle_reached: .*\((.*)\)$/\1/p' "$log" | tail -n 1)
    name=structure-aware
    [[ $mode == bytes ]] && name=byte-level
    rows+=("| \`$target\` | $name | $seconds s | $execs | $cov | $ft | $corp | $oracle |")
  done
done

echo "Commit $commit, $(date -u +%Y-%m-%d), each pair run at once, niced, on a shared 2-core machine:"
echo
echo "| target | mutation | time | executions | edges | features | corpus | reached the oracle |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
printf '%s\n' "${rows[@]}"
