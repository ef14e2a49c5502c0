#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_exports.sh: proves that a shared libstguard exports its public API and nothing else.
#
#   check_exports.sh LIBRARY HEADER_DIR...          check `nm -D --defined-only LIBRARY`
#   check_exports.sh --prefix PREFIX                the same for an install prefix
#   check_exports.sh --symbols LIST HEADER_DIR...   check a list (nm lines or bare names)
#
# A defined dynamic symbol passes when, demangled, it is
#   - a C function stguard_<name> whose name is declared in the public headers, or
#   - a C++ name in namespace stguard (or its vtable/typeinfo) of which every component
#     (namespace, class, function) is an identifier in the public headers' code,
#     comments excluded: stguard::Checkpoint::Open passes, stguard::ParseHeader (declared
#     only in src/) or stguard::(anonymous namespace)::X do not, and
#   - none of its components is *ForTesting.
# Anything else (an internal stage, a testing hook, a standard-library instantiation)
# fails the check, which prints each offender. Exit status: 0 pass, 1 offenders, 2 usage.
set -euo pipefail

usage() {
  echo "usage: $0 LIBRARY HEADER_DIR... | --prefix PREFIX | --symbols LIST HEADER_DIR..." >&2
  exit 2
}

symbols_source=""
header_dirs=()
case "${1:-}" in
  --prefix)
    [[ $# -eq 2 ]] || usage
    library=$(ls "$2"/lib*/libstguard.so 2>/dev/null | head -n 1)
    [[ -n "$library" ]] || { echo "no lib*/libstguard.so under $2" >&2; exit 1; }
    symbols_source=$(nm -D --defined-only "$library")
    header_dirs=("$2/include/stguard")
    ;;
  --symbols)
    [[ $# -ge 3 ]] || usage
    symbols_source=$(cat "$2")
    header_dirs=("${@:3}")
    ;;
  ""|-*) usage ;;
  *)
    [[ $# -ge 2 ]] || usage
    symbols_source=$(nm -D --defined-only "$1")
    header_dirs=("${@:2}")
    ;;
esac
for dir in "${header_dirs[@]}"; do
  [[ -d "$dir" ]] || { echo "not a folder: $dir" >&2; exit 2; }
done

# Every identifier in the public headers' code: comments removed first, so a header that
# merely mentions an internal name ("see src/index_file.h") does not make it public. One
# pass over both kinds, so that "/*" inside a // comment ("*.h5/*.keras") starts nothing.
declare -A public_words=()
while read -r word; do
  public_words[$word]=1
done < <(for dir in "${header_dirs[@]}"; do cat "$dir"/*.h; done | perl -0777 -pe 's{/\*.*?\*/|//[^\n]*}{ }gs' |
         grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sort -u)
is_public_word() { [[ -n "${public_words[$1]:-}" ]]; }

# The names alone: nm prints "ADDRESS TYPE NAME"; a list may hold bare names.
names=$(awk 'NF >= 3 { print $3; next } NF == 1 { print $1 }' <<< "$symbols_source" |
  grep -v '^$' || true)
[[ -n "$names" ]] || { echo "no symbols to check" >&2; exit 1; }

# Linker-defined symbols, which every shared object may carry.
linker_symbols=" _init _fini _edata _end __bss_start "

offenders=0
checked=0
while IFS=$'\t' read -r mangled demangled; do
  checked=$((checked + 1))
  reason=""
  if [[ "$linker_symbols" == *" $mangled "* ]]; then
    continue
  elif [[ "$mangled" != _Z* ]]; then  # a C symbol
    if [[ "$mangled" != stguard_* ]]; then
      reason="a C symbol without the stguard_ prefix"
    elif ! is_public_word "$mangled"; then
      reason="not declared in the public headers"
    fi
  else
    name=$demangled
    for prefix in "vtable for " "typeinfo for " "typeinfo name for " "VTT for " \
                  "non-virtual thunk to " "virtual thunk to "; do
      name=${name#"$prefix"}
    done
    name=${name//\[abi:cxx11\]/}
    if [[ "$name" != stguard::* ]]; then
      reason="outside namespace stguard"
    elif [[ "$name" == *"(anonymous namespace)"* ]]; then
      reason="in an anonymous namespace"
    else
      # The qualified name: what precedes the parameter list, template arguments removed.
      qualified=$name
      while [[ "$qualified" =~ \<[^\<\>]*\> ]]; do
        qualified=${qualified/"${BASH_REMATCH[0]}"/}
      done
      qualified=${qualified%%\(*}
      IFS=: read -r -a parts <<< "${qualified//::/:}"
      for part in "${parts[@]}"; do
        part=${part#\~}
        if [[ -z "$part" ]]; then
          reason="an unnamed (anonymous) scope"
        elif [[ "$part" == operator* ]]; then
          continue
        elif [[ "$part" == *ForTesting ]]; then
          reason="a testing hook ($part)"
        elif ! is_public_word "$part"; then
          reason="'$part' is not declared in the public headers"
        fi
        [[ -n "$reason" ]] && break
      done
    fi
  fi
  if [[ -n "$reason" ]]; then
    echo "not public: $demangled -- $reason"
    offenders=$((offenders + 1))
  fi
done < <(paste <(echo "$names") <(echo "$names" | c++filt))

if [[ $offenders -gt 0 ]]; then
  echo "FAIL: $offenders of $checked exported symbols are not stguard's public API"
  exit 1
fi
echo "ok: all $checked exported symbols are stguard's public API"
