# SPDX-License-Identifier: Apache-2.0
# fuzz/targets.sh: sourced by fuzz/run.sh, fuzz/ci.sh, fuzz/compare_mutators.sh and
# oss-fuzz/build.sh, so that they all agree on the targets and their seeds without a list
# of their own. Run from anywhere: paths are relative to the checkout's root ($1 or the
# folder above this file).

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
