#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_exports_test.sh HEADER_DIR...: tests check_exports.sh itself, so that the symbol test
# is known to be able to fail. exports_internal.txt holds two public symbols and seven
# that a leaky shared library could export (an internal stage, a testing hook, an internal
# class, an anonymous-namespace helper, a std:: instantiation, unprefixed and undeclared C
# functions): the checker must name each of the seven, pass the two, and fail; given the
# two public lines alone it must pass.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
header_dirs=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
"$here/check_exports.sh" --symbols "$here/exports_internal.txt" "${header_dirs[@]}" > "$work/out" || status=$?
cat "$work/out"
fail() { echo "check_exports_test: $*" >&2; exit 1; }
[[ $status -eq 1 ]] || fail "expected exit status 1 for internal symbols, got $status"
for name in 'stguard::ParseHeader(' 'stguard::SetFileFaultHookForTesting(' \
            'stguard::AtomicFile::Commit()' 'stguard::(anonymous namespace)::IoError(' \
            'void std::vector<' 'stguard_internal_helper' 'parse_header'; do
  grep -qF "not public: $name" "$work/out" || fail "did not reject $name"
done
[[ $(grep -c '^not public: ' "$work/out") -eq 7 ]] || fail "expected exactly 7 offenders"
grep -q 'not public: stguard::Checkpoint::Open' "$work/out" && fail "rejected a public symbol"
grep -q 'not public: stguard_version_string' "$work/out" && fail "rejected a public symbol"

head -n 2 "$here/exports_internal.txt" > "$work/public.txt"
"$here/check_exports.sh" --symbols "$work/public.txt" "${header_dirs[@]}" ||
  fail "rejected a list of public symbols"
echo "check_exports_test: ok"
