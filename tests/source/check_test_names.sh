#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_test_names.sh TEST_BINARY... : every test a GoogleTest binary lists has a readable,
# stable name. A parameterised test without a name generator is named /0, /1...; a
# parameter GoogleTest cannot print is listed as "GetParam() = 32-byte object <3A-BD ...>",
# bytes that hold pointers and so change from build to build. Both are refused.
# With "-" as the only argument, the listing is read from standard input (the self-test).
set -euo pipefail

list() {
  if [[ $# -eq 1 && $1 == - ]]; then
    cat
  else
    for binary in "$@"; do "$binary" --gtest_list_tests; done
  fi
}

listing=$(list "$@")
[[ -n $listing ]] || { echo "check_test_names: no test listed" >&2; exit 1; }
status=0
# A test line is indented ("  Name/Param  # GetParam() = ..."); its suite line is not.
suite=
while IFS= read -r line; do
  if [[ $line != " "* ]]; then
    suite=$line
    continue
  fi
  if [[ $line == *"-byte object <"* ]]; then
    echo "check_test_names: $suite$line: the parameter is printed as bytes (give it PrintTo)" >&2
    status=1
  fi
  name=${line#  }
  name=${name%%  #*}
  if [[ $name =~ /[0-9]+$ ]]; then
    echo "check_test_names: $suite$name: a parameterised test named by its index" \
         "(give INSTANTIATE_TEST_SUITE_P a name generator)" >&2
    status=1
  fi
done <<< "$listing"
[[ $status -ne 0 ]] || echo "check_test_names: $(grep -c '^  ' <<< "$listing") test names ok"
exit $status
