#!/bin/bash -eu
# SPDX-License-Identifier: Apache-2.0
# oss-fuzz/build.sh: builds stguard's fuzz targets for OSS-Fuzz (and ClusterFuzzLite,
# whose .clusterfuzzlite/build.sh runs this script).
#
# Run from the project root (the Dockerfile's WORKDIR) with the OSS-Fuzz environment:
# CC, CXX, CFLAGS, CXXFLAGS (sanitizer and coverage flags), LIB_FUZZING_ENGINE (the engine
# to link: -fsanitize=fuzzer for libFuzzer, a library for AFL++ or honggfuzz), SRC, WORK
# and OUT. No CMake: the library is a handful of files with no dependencies, compiled
# once into $WORK with exactly the flags given, then linked into each target with $CXX.
#
# Produces in $OUT, for each target (every fuzz/fuzz_*.cc defining LLVMFuzzerTestOneInput,
# fuzz/targets.sh): the binary, <target>_seed_corpus.zip (corpus/<target>/ and what
# fuzz/<target>.seeds lists, flat, each file named <folder>_<name>), <target>.dict
# (fuzz/<target>.dict if present, else fuzz/safetensors.dict) and <target>.options
# (fuzz/<target>.options).
# fuzz/ci.sh runs this script locally with clang/libFuzzer values and checks the output.
# The values still to fill in at submission are in oss-fuzz/project.yaml (its header says
# which); this script has none.

: "${CXX:?}" "${CXXFLAGS?}" "${LIB_FUZZING_ENGINE:?}" "${WORK:?}" "${OUT:?}"

if [[ ! -f include/stguard/reader.h || ! -f fuzz/fuzz_header.cc ]]; then
  echo "oss-fuzz/build.sh: run me from the stguard project root" >&2
  exit 1
fi
source fuzz/targets.sh
mapfile -t targets < <(stguard_fuzz_targets "$(pwd)")

objects=$WORK/stguard-objects
rm -rf "$objects"
mkdir -p "$objects/lib" "$OUT"
compile() {  # compile SOURCE OBJECT
  $CXX $CXXFLAGS -std=c++20 -Iinclude -Isrc -c "$1" -o "$2"
}

# The library and the shared fuzz support code (every fuzz/*.cc that is not a target, the
# replay main or a test: checks, reference checker, mutators), once.
support=()
for source in fuzz/*.cc; do
  name=$(basename "$source" .cc)
  [[ " ${targets[*]} " == *" $name "* || $name == replay_main || $name == *_test ]] ||
    support+=("$source")
done
for source in src/*/*.cc "${support[@]}"; do
  name=${source//\//_}
  compile "$source" "$objects/lib/${name%.cc}.o"
done

for target in "${targets[@]}"; do
  compile "fuzz/$target.cc" "$objects/$target.o"
  # $CXX links, even for C code; $LIB_FUZZING_ENGINE supplies main().
  $CXX $CXXFLAGS "$objects/$target.o" "$objects"/lib/*.o $LIB_FUZZING_ENGINE -o "$OUT/$target"
  if [[ -f fuzz/$target.dict ]]; then  # a target's own dictionary, else the shared one
    cp "fuzz/$target.dict" "$OUT/$target.dict"
  else
    cp fuzz/safetensors.dict "$OUT/$target.dict"
  fi
  cp "fuzz/$target.options" "$OUT/$target.options"
  # The seed zip: every seed folder and file of the target, flat, names prefixed by the
  # folder so that equal names in two folders do not collide.
  seeds=$WORK/seeds/$target
  rm -rf "$seeds" "$OUT/${target}_seed_corpus.zip"
  mkdir -p "$seeds"
  while IFS= read -r path; do
    if [[ -d $path ]]; then
      for file in "$path"/*; do
        [[ -f $file ]] && cp "$file" "$seeds/$(basename "$path")_$(basename "$file")"
      done
    elif [[ -f $path ]]; then
      cp "$path" "$seeds/$(basename "$path")"
    fi
  done < <(stguard_fuzz_seed_paths "$target" "$(pwd)")
  (cd "$seeds" && zip -q -X -r "$OUT/${target}_seed_corpus.zip" .)
done
