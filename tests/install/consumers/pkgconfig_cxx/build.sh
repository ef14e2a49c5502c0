#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# build.sh OUTPUT: compiles the C++ consumer with nothing but what pkg-config says for
# stguard-cxx (stguard's flags plus the -std=c++20 its C++ headers need), as README shows.
# The rpath lets the program find a shared libstguard in the prefix.
set -eu
here=$(dirname "$0")
# shellcheck disable=SC2046  # pkg-config's output is meant to be split into words
${CXX:-c++} -Wall -Wextra -Werror "$here/../../consumer_main.cc" -o "$1" \
  $(pkg-config --cflags --libs stguard-cxx) -Wl,-rpath,"$(pkg-config --variable=libdir stguard)"
