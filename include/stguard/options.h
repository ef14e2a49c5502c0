// SPDX-License-Identifier: Apache-2.0
// stguard/options.h: limits, with strict defaults.
#ifndef STGUARD_OPTIONS_H_
#define STGUARD_OPTIONS_H_

#include <cstdint>

#include "stguard/export.h"

namespace stguard {

// kMaxHeaderLen is the format's cap on N, the header length (inclusive). Options can lower
// it, never raise it: a larger value is treated as this one.
inline constexpr uint64_t kMaxHeaderLen = 100'000'000;

// kDefaultMaxDepth bounds JSON nesting. A safetensors header needs depth 3; the limit
// matters for `stguard json` and index files. Nesting is tracked with a counter and a bit
// stack, never with recursion, so the limit protects memory, not the call stack.
inline constexpr uint32_t kDefaultMaxDepth = 1024;

// Options tunes the reader. The defaults are the format's rules; every field can only make
// the reader stricter.
struct STGUARD_API Options {
  // Largest header length N accepted. Values above kMaxHeaderLen act as kMaxHeaderLen.
  uint64_t max_header_len = kMaxHeaderLen;
  // Deepest JSON nesting accepted (objects and arrays count alike).
  uint32_t max_depth = kDefaultMaxDepth;
  // Reject (kMisalignedData) a file in which some tensor's data does not begin at a file
  // offset that is a multiple of its element size (DtypeAlignment). The format does not
  // require alignment and valid files in the wild may lack it; an engine that reads
  // tensor data in place as float*, uint16_t*... needs it, because an unaligned access is
  // undefined behaviour in C and C++ (and a fault on some CPUs). Files written by
  // stguard's canonical writer (and by the reference save_file) always pass: see ALIGNMENT
  // in stguard/reader.h.
  bool require_aligned_data = false;
};

}  // namespace stguard

#endif  // STGUARD_OPTIONS_H_
