#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_no_test_hooks.sh FILE_OR_PREFIX...: proves that binaries users install carry no
# test hook. A prefix is searched for lib*/libstguard*, bin/stguard and stguard/_core*.so.
# A binary fails when its strings name a test variable (STGUARD_TEST_...) or its symbol
# table (static and dynamic) names a *ForTesting function. Exit status: 0 none found,
# 1 a hook found (each is printed), 2 usage or nothing to check.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 FILE_OR_PREFIX..." >&2; exit 2; }

binaries=()
for argument in "$@"; do
  if [[ -d $argument ]]; then
    while IFS= read -r found; do binaries+=("$found"); done < <(
      find "$argument" \( -path '*/lib*/libstguard*' -o -path '*/bin/stguard' \
                          -o -name '_core*.so' \) -type f | sort)
  else
    binaries+=("$argument")
  fi
done
[[ ${#binaries[@]} -gt 0 ]] || { echo "no binaries under $*" >&2; exit 2; }

status=0
for binary in "${binaries[@]}"; do
  [[ -f $binary ]] || { echo "$binary: missing" >&2; exit 2; }
  hooks=$( { strings -a "$binary" | grep -E 'STGUARD_TEST_' || true;
             { nm -C "$binary" 2>/dev/null || true; nm -C -D "$binary" 2>/dev/null || true; } |
               grep -E 'ForTesting' || true; } | sort -u)
  if [[ -n $hooks ]]; then
    echo "$binary carries a test hook:"
    echo "$hooks" | sed 's/^/  /'
    status=1
  else
    echo "$binary: no test hook"
  fi
done
exit $status
