#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# build.sh OUTPUT: compiles main.c as strict C99 with nothing but what pkg-config says.
# run.sh points PKG_CONFIG_LIBDIR at the install prefix alone. The rpath lets the program
# find a shared libstguard there without LD_LIBRARY_PATH.
set -eu
here=$(dirname "$0")
# shellcheck disable=SC2046  # pkg-config's output is meant to be split into words
${CC:-cc} -std=c99 -Wall -Wextra -pedantic -Werror "$here/main.c" -o "$1" \
  $(pkg-config --cflags --libs stguard) -Wl,-rpath,"$(pkg-config --variable=libdir stguard)"
