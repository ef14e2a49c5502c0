# SPDX-License-Identifier: Apache-2.0
# fuzz/targets.sh: sourced by fuzz/run.sh, fuzz/ci.sh, fuzz/compare_mutators.sh,
# fuzz/campaign.sh and oss-fuzz/build.sh, so that they all agree on the targets and their
# seeds without a list of their own. Run from anywhere: paths are relative to the
# checkout's root ($1 or the folder above this file).

# stguard_fuzz_targets prints every fuzz target, one a line: fuzz/fuzz_*.cc files that
# define LLVMFuzzerTestOneInput (fuzz_support.cc does not).
stguard_fuzz_targets() {
  local root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
  local source
  for source in "$root"/fuzz/fuzz_*.cc; do
    if grep -q 'LLVMFuzzerTestOneInput' "$source"; then basename "$source" .cc; fi
  done
}

# stguard_fuzz_seed_paths TARGET [ROOT] prints the seed folders and files of TARGET, one a
# line: corpus/TARGET, then the paths fuzz/TARGET.seeds lists (relative to corpus/).
stguard_fuzz_seed_paths() {
  local target=$1
  local root=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
  echo "$root/corpus/$target"
  if [[ -f $root/fuzz/$target.seeds ]]; then
    local line
    while IFS= read -r line; do
      [[ -z $line || $line == \#* ]] || echo "$root/corpus/$line"
    done <"$root/fuzz/$target.seeds"
  fi
}

# stguard_fuzz_has_custom_mutator TARGET [ROOT]: true when TARGET defines
# LLVMFuzzerCustomMutator (structure-aware mutation; see fuzz/safetensors_mutator.h).
stguard_fuzz_has_custom_mutator() {
  local root=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
  grep -q 'LLVMFuzzerCustomMutator' "$root/fuzz/$1.cc"
}

# stguard_fuzz_final_stat LOG FIELD prints one figure of the last libFuzzer status line in
# LOG that says DONE (the end of a run): FIELD is cov (edges), ft (features), corp (corpus
# entries) or execs (the "#N" that begins the line). Empty when the run never got there.
stguard_fuzz_final_stat() {
  local done_line
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$1" | tail -n 1 || true)
  case $2 in
    execs) sed -nE 's/^#([0-9]+).*/\1/p' <<<"$done_line" ;;
    *) sed -nE "s/.* $2: ([0-9]+).*/\\1/p" <<<"$done_line" ;;
  esac
}

# stguard_fuzz_commit [ROOT] prints the short commit the fuzzers are built from, followed by
# "+local" when src/, include/ or fuzz/ differ from it, so a reported figure names the
# sources it came from.
stguard_fuzz_commit() {
  local root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
  local commit
  commit=$(git -C "$root" rev-parse --short=12 HEAD)
  git -C "$root" diff --quiet HEAD -- src include fuzz || commit="$commit+local"
  echo "$commit"
}
