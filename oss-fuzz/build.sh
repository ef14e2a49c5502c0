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
# Produces in $OUT, for each target: the binary, <target>_seed_corpus.zip (corpus/<target>/,
# flat), <target>.dict (fuzz/<target>.dict if present, else fuzz/safetensors.dict) and
# <target>.options (fuzz/<target>.options).
# fuzz/ci.sh runs this script locally with clang/libFuzzer values and checks the output.

: "${CXX:?}" "${CXXFLAGS?}" "${LIB_FUZZING_ENGINE:?}" "${WORK:?}" "${OUT:?}"

targets=(fuzz_json_tokenizer fuzz_header fuzz_roundtrip fuzz_writer fuzz_index fuzz_config
         fuzz_pickle fuzz_zip fuzz_torch_checkpoint)
if [[ ! -f include/stguard/reader.h || ! -f fuzz/fuzz_header.cc ]]; then
  echo "oss-fuzz/build.sh: run me from the stguard project root" >&2
  exit 1
fi

objects=$WORK/stguard-objects
rm -rf "$objects"
mkdir -p "$objects/lib" "$OUT"
compile() {  # compile SOURCE OBJECT
  $CXX $CXXFLAGS -std=c++20 -Iinclude -Isrc -c "$1" -o "$2"
}

# The library and the shared fuzz support code, once.
for source in src/*/*.cc fuzz/fuzz_support.cc fuzz/reference_checker.cc fuzz/checkpoint_checks.cc; do
  name=${source//\//_}
  compile "$source" "$objects/lib/${name%.cc}.o"
done

for target in "${targets[@]}"; do
  compile "fuzz/$target.cc" "$objects/$target.o"
  # $CXX links, even for C code; $LIB_FUZZING_ENGINE supplies main().
  # -lz: zlib's crc32 for the ZIP records of torch checkpoints (Debian zlib1g-dev).
  $CXX $CXXFLAGS "$objects/$target.o" "$objects"/lib/*.o $LIB_FUZZING_ENGINE -lz -o "$OUT/$target"
  case $target in
    fuzz_pickle | fuzz_zip | fuzz_torch_checkpoint) cp fuzz/torch.dict "$OUT/$target.dict" ;;
    *)
      if [[ -f fuzz/$target.dict ]]; then  # a target's own dictionary, else the shared one
        cp "fuzz/$target.dict" "$OUT/$target.dict"
      else
        cp fuzz/safetensors.dict "$OUT/$target.dict"
      fi
      ;;
  esac
  cp "fuzz/$target.options" "$OUT/$target.options"
  rm -f "$OUT/${target}_seed_corpus.zip"
  (cd "corpus/$target" && zip -q -X -r "$OUT/${target}_seed_corpus.zip" .)
done
