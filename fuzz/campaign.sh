#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz/campaign.sh TARGET CPU_SECONDS [LIBFUZZER_FLAG...]: fuzz TARGET until its processes
# have used CPU_SECONDS of CPU time (user + system), on one corpus folder.
#
# A shared machine gives a fuzzer less than a core, so a campaign is counted in CPU time,
# not wall time. Each round is one fuzz/run.sh run (the same build, seeds, dictionary and
# max_len) timed by /usr/bin/time, lasting as many wall seconds as CPU seconds remain (a
# single process cannot use more CPU than wall time, so the total never overshoots by more
# than libFuzzer's exit); rounds repeat on the same corpus folder until the budget is spent.
# The corpus is $STGUARD_FUZZ_FINDINGS/corpus (default build-fuzz/campaign/TARGET), kept
# between invocations, so a campaign can also be resumed.
#
# At the end it prints one Markdown row: the commit (with "+local" when src/, include/ or
# fuzz/ differ from it), the rounds, CPU seconds, executions summed over the rounds, edges
# (cov), features (ft) and corpus at the end of the last round, and the fraction of all
# executions that reached the oracle. Exit status: nonzero as soon as a round fails
# (a crash, leak, timeout, OOM or sanitizer report; see fuzz/run.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/fuzz/targets.sh"
if [[ $# -lt 2 || ! $2 =~ ^[0-9]+$ ]]; then
  echo "usage: fuzz/campaign.sh TARGET CPU_SECONDS [LIBFUZZER_FLAG...]" >&2
  exit 2
fi
target=$1
budget=$2
shift 2
export STGUARD_FUZZ_FINDINGS=${STGUARD_FUZZ_FINDINGS:-$root/build-fuzz/campaign/$target}
mkdir -p "$STGUARD_FUZZ_FINDINGS"
commit=$(stguard_fuzz_commit "$root")

cpu=0 executions=0 reached=0 rounds=0
log=$STGUARD_FUZZ_FINDINGS/last_run.log
while ((cpu < budget)); do
  rounds=$((rounds + 1))
  timing=$STGUARD_FUZZ_FINDINGS/round_$rounds.time
  /usr/bin/time -f '%U %S' -o "$timing" "$root/fuzz/run.sh" "$target" $((budget - cpu)) "$@"
  used=$(awk '{ printf "%d", $1 + $2 + 0.5 }' "$timing")
  # A round too short to count (libFuzzer exits before its first second) ends the loop.
  ((used > 0)) || used=$((budget - cpu))
  cpu=$((cpu + used))
  round_execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  round_reached=$(sed -nE 's/^stat::oracle_reached: ([0-9]+) of.*/\1/p' "$log" | tail -n 1)
  executions=$((executions + ${round_execs:-0}))
  reached=$((reached + ${round_reached:-0}))
  echo "=== $target campaign: round $rounds used $used CPU s, $cpu of $budget"
done

field() { stguard_fuzz_final_stat "$log" "$1"; }
share=$(awk -v r="$reached" -v e="$executions" 'BEGIN { printf "%.1f%%", e ? 100 * r / e : 0 }')
echo "| \`$target\` | \`$commit\` | $rounds | $cpu | $executions | $(field cov) | $(field ft) |" \
  "$(field corp) | $share |"
