#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh SOURCE_DIR WORK_DIR VERSION CXX_COMPILER: the install test (run by ctest).
#
# Builds stguard from SOURCE_DIR as a user would, static then shared, installs each with
# `cmake --install BUILD --prefix WORK_DIR/prefix-<kind>` (configured for another prefix,
# so the package must be relocatable), checks the installed files and the installed CLI,
# then builds and runs every consumer in consumers/ against that prefix alone.
#
# ADDING A CONSUMER: make a folder consumers/<name>/ with
#   - either CMakeLists.txt, configured with -DCMAKE_PREFIX_PATH=<prefix>
#     -DSTGUARD_SOURCE_DIR=<stguard source> -DBUILD_SHARED_LIBS=ON|OFF and built; it must
#     produce an executable named `consumer`;
#     (and -DSTGUARD_GIT_COMMIT=<the checkout's commit> when SOURCE_DIR is a git checkout;
#     a consumer that uses it is skipped otherwise);
#   - or build.sh, run as `build.sh OUTPUT` with PKG_CONFIG_LIBDIR set to the prefix's
#     pkgconfig folder (only stguard's .pc files are visible) and CC / CXX set; it must
#     build OUTPUT.
#   - and `expect`: the exact output of `consumer corpus/sample.safetensors`, with
#     @VERSION@ and @TENSORS@ standing for the project version and the sample's tensor
#     count; lines starting with '#' are ignored.
# Each consumer runs once per kind. In the shared round it must link libstguard.so
# dynamically, in the static round statically (checked from the executable's NEEDED list).
#
# The inner builds are Debug (fast to compile; packaging does not depend on optimisation),
# build the library and the CLI only, use -j2 and ccache when it is installed, and reuse
# one build folder for both kinds: the objects are the same (always position-independent),
# so the shared round only relinks.
set -euo pipefail

[[ $# -eq 4 ]] || { echo "usage: $0 SOURCE_DIR WORK_DIR VERSION CXX_COMPILER" >&2; exit 2; }
source_dir=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
version=$3
export CXX=$4
here="$source_dir/tests/install"
sample="$source_dir/corpus/sample.safetensors"
unset CMAKE_BUILD_TYPE CMAKE_PREFIX_PATH PKG_CONFIG_PATH LD_LIBRARY_PATH  # nothing from outside

fail() { echo "install test: FAIL: $*" >&2; exit 1; }
step() { echo "=== $*"; }

cmake_launcher=()
if command -v ccache > /dev/null; then
  cmake_launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

# The expected tensor count, read without stguard: the sample is a canonical file whose
# header names each tensor's "data_offsets" once.
header_len=$(od -An -t u8 -N 8 "$sample" | tr -d ' ')
expected_tensors=$(head -c $((8 + header_len)) "$sample" | tail -c "$header_len" |
                   grep -o '"data_offsets"' | wc -l)
[[ $expected_tensors -gt 0 ]] || fail "could not count the sample's tensors"

# The commit FetchContent checks out (README's snippet), when the source is a git checkout.
git_commit=$(git -C "$source_dir" rev-parse --verify --quiet HEAD 2> /dev/null || true)

build="$work/build"
for kind in static shared; do
  if [[ $kind == shared ]]; then shared=ON; else shared=OFF; fi
  prefix="$work/prefix-$kind"
  rm -rf "$prefix"

  step "$kind: configure, build and install stguard into $prefix"
  cmake -S "$source_dir" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DBUILD_SHARED_LIBS=$shared \
        -DSTGUARD_BUILD_TESTS=OFF -DSTGUARD_BUILD_FUZZ_REPLAY=OFF -DSTGUARD_BUILD_CLI=ON \
        -DCMAKE_INSTALL_PREFIX="$work/configured-prefix-never-used" "${cmake_launcher[@]}" \
        > "$work/configure-$kind.log" || { cat "$work/configure-$kind.log"; fail "configure"; }
  cmake --build "$build" -j2 > "$work/build-$kind.log" ||
    { cat "$work/build-$kind.log"; fail "build"; }
  cmake --install "$build" --prefix "$prefix" > "$work/install-$kind.log"
  [[ ! -e "$work/configured-prefix-never-used" ]] || fail "installed into the configured prefix"

  step "$kind: installed files"
  libdir=$(cd "$prefix" && ls -d lib*/cmake/stguard | head -n 1)
  libdir=$prefix/${libdir%/cmake/stguard}
  for file in include/stguard/reader.h include/stguard/export.h include/stguard/version.h \
              include/stguard/stguard.h include/stguard/error_codes.def \
              bin/stguard share/man/man1/stguard.1 share/bash-completion/completions/stguard; do
    [[ -f "$prefix/$file" ]] || fail "$file is not installed"
  done
  for file in cmake/stguard/stguardConfig.cmake cmake/stguard/stguardConfigVersion.cmake \
              cmake/stguard/stguardTargets.cmake pkgconfig/stguard.pc pkgconfig/stguard-cxx.pc; do
    [[ -f "$libdir/$file" ]] || fail "${libdir#"$prefix/"}/$file is not installed"
  done
  if [[ $kind == shared ]]; then
    [[ ! -e "$libdir/libstguard.a" ]] || fail "a shared install holds libstguard.a"
    soname_expected="libstguard.so.$(cut -d. -f1-2 <<< "$version")"
    [[ "$version" == 0.* ]] || soname_expected="libstguard.so.${version%%.*}"
    soname=$(readelf -d "$libdir/libstguard.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
    [[ "$soname" == "$soname_expected" ]] || fail "SONAME is '$soname', not $soname_expected"
    [[ -f "$libdir/libstguard.so.$version" ]] || fail "libstguard.so.$version is not installed"
  else
    [[ -f "$libdir/libstguard.a" ]] || fail "libstguard.a is not installed"
    ! ls "$libdir"/libstguard.so* > /dev/null 2>&1 || fail "a static install holds libstguard.so"
  fi
  grep -q "^Version: $version$" "$libdir/pkgconfig/stguard.pc" || fail "stguard.pc version"

  step "$kind: the installed CLI"
  [[ "$("$prefix/bin/stguard" --version)" == "stguard $version" ]] || fail "stguard --version"
  "$prefix/bin/stguard" check "$sample" | grep -q ": valid: safetensors, $expected_tensors tensor" ||
    fail "the installed stguard check"
  # The man page and completion installed are the ones the installed CLI writes from its
  # command table, and the man page reads as one.
  cmp -s "$prefix/share/man/man1/stguard.1" <("$prefix/bin/stguard" --man) ||
    fail "the installed man page is not the CLI's"
  cmp -s "$prefix/share/bash-completion/completions/stguard" \
         <("$prefix/bin/stguard" --bash-completion) || fail "the installed completion is not the CLI's"
  if command -v man > /dev/null; then
    MANPATH="$prefix/share/man" man -P cat stguard 2> /dev/null | grep -q "^SYNOPSIS" ||
      fail "man stguard with MANPATH=$prefix/share/man"
  fi

  for consumer_dir in "$here"/consumers/*/; do
    name=$(basename "$consumer_dir")
    if grep -qs STGUARD_GIT_COMMIT "$consumer_dir/CMakeLists.txt" && [[ -z $git_commit ]]; then
      echo "=== $kind: consumer $name SKIPPED: $source_dir is not a git checkout"
      continue
    fi
    out="$work/consumers/$name"
    mkdir -p "$out"
    step "$kind: consumer $name"
    if [[ -f "$consumer_dir/CMakeLists.txt" ]]; then
      # One build folder per consumer for both kinds; -U forgets where stguard was found.
      cmake -S "$consumer_dir" -B "$out" --no-warn-unused-cli -U stguard_DIR -DCMAKE_PREFIX_PATH="$prefix" \
            -DSTGUARD_SOURCE_DIR="$source_dir" -DSTGUARD_GIT_COMMIT="$git_commit" \
            -DBUILD_SHARED_LIBS=$shared \
            "${cmake_launcher[@]}" > "$out/configure.log" ||
        { cat "$out/configure.log"; fail "$name: configure"; }
      cmake --build "$out" -j2 > "$out/build.log" || { cat "$out/build.log"; fail "$name: build"; }
      executable="$out/consumer"
    elif [[ -f "$consumer_dir/build.sh" ]]; then
      executable="$out/consumer-$kind"
      PKG_CONFIG_LIBDIR="$libdir/pkgconfig" CC="${CC:-cc}" CXX="$CXX" \
        sh "$consumer_dir/build.sh" "$executable" || fail "$name: build.sh"
    else
      fail "$name has neither CMakeLists.txt nor build.sh"
    fi
    [[ -x "$executable" ]] || fail "$name: no executable $executable"

    if readelf -d "$executable" | grep -q 'NEEDED.*libstguard\.so'; then linked=shared; else linked=static; fi
    [[ $linked == "$kind" ]] || fail "$name linked stguard $linked in the $kind round"

    expected=$(grep -v '^#' "$consumer_dir/expect" |
               sed -e "s/@VERSION@/$version/g" -e "s/@TENSORS@/$expected_tensors/g")
    actual=$("$executable" "$sample") || fail "$name exited with status $?"
    if [[ "$actual" != "$expected" ]]; then
      diff <(echo "$expected") <(echo "$actual") || true
      fail "$name printed the wrong output"
    fi
    echo "$actual"
  done
  if [[ $kind == shared ]]; then
    # README's run-time path for a shared install in a prefix the loader does not search:
    # without an rpath the program cannot start; LD_LIBRARY_PATH (or the rpath above, or
    # ldconfig for a system prefix) lets it.
    step "shared: the run-time path without an rpath"
    plain="$work/consumers/pkgconfig-no-rpath"
    # shellcheck disable=SC2046
    "${CC:-cc}" -std=c99 "$here/consumers/pkgconfig_c99/main.c" -o "$plain" \
      $(PKG_CONFIG_LIBDIR="$libdir/pkgconfig" pkg-config --cflags --libs stguard)
    if "$plain" "$sample" > "$work/no-rpath.log" 2>&1; then
      fail "a program without an rpath found libstguard.so in a non-standard prefix"
    fi
    grep -q "libstguard.so.* cannot open shared object file" "$work/no-rpath.log" ||
      { cat "$work/no-rpath.log"; fail "the loader's error is not the one README names"; }
    LD_LIBRARY_PATH="$libdir" "$plain" "$sample" > /dev/null ||
      fail "LD_LIBRARY_PATH=$libdir did not let the program start"
  fi
done
echo "install test: ok (static and shared, $(ls -d "$here"/consumers/*/ | wc -l) consumers each)"
