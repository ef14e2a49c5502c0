// SPDX-License-Identifier: Apache-2.0
// fuzz_support.h: what every fuzz target shares: checks that survive NDEBUG, the
// exact-size input copy, and small plain helpers.
//
// Fuzz targets do not use assert(): a fuzz build may define NDEBUG, and a check that
// vanishes finds nothing. FUZZ_CHECK prints the failed condition and calls abort(), which
// libFuzzer reports as a crash and the replay main() as a failed run.
#ifndef STGUARD_FUZZ_FUZZ_SUPPORT_H_
#define STGUARD_FUZZ_FUZZ_SUPPORT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/utf8.h"

namespace stguard_fuzz {

// CheckFailed prints "fuzz check failed at FILE:LINE: CONDITION [DETAIL]" and aborts.
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const std::string& detail);

// ExactCopy holds the fuzz input in a heap buffer of exactly its size, so that AddressSanitizer
// reports a read one byte past the end (libFuzzer's own buffer may have slack after it).
class ExactCopy {
 public:
  ExactCopy(const uint8_t* data, size_t size)
      : size_(size), bytes_(new uint8_t[size == 0 ? 1 : size]) {
    // new[] of 0 bytes is legal, but one byte keeps data() non-null for every caller;
    // the extra byte is never exposed through size().
    if (size != 0) std::copy(data, data + size, bytes_.get());
  }
  const uint8_t* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  std::string_view text() const {
    return {reinterpret_cast<const char*>(bytes_.get()), size_};
  }
  std::span<const std::byte> bytes() const {
    return {reinterpret_cast<const std::byte*>(bytes_.get()), size_};
  }

 private:
  size_t size_;
  std::unique_ptr<uint8_t[]> bytes_;
};

// Hex renders bytes as "7b 22 61", at most `limit` bytes, for check messages.
std::string Hex(std::string_view bytes, size_t limit = 64);

// Ignored says whether the known issue `name` is listed in the environment variable
// STGUARD_FUZZ_IGNORE (comma-separated), so that a long campaign can look past a reported,
// not yet fixed bug. CI never sets it.
bool Ignored(std::string_view name);

// CountExecution records one execution of the target, and whether it reached the target's
// oracle (the checks that only run on input the library accepts). At exit the counts are
// printed to stderr as one line that fuzz/run.sh reports:
//   stat::oracle_reached: 312004 of 845301 executions (36.9%)
// The counters are not atomic: libFuzzer runs one input at a time per process.
void CountExecution(bool reached_oracle);

// AppendUtf8 (base/utf8.h) appends a code point (at most 0x10FFFF, not a surrogate)
// encoded as UTF-8: the library's one encoder, which the generators, the mutators and the
// reference checker share.
using stguard::AppendUtf8;

// BytesOf views a span of bytes as text.
inline std::string_view BytesOf(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace stguard_fuzz

// FUZZ_CHECK(condition) aborts with a message when condition is false, NDEBUG or not.
#define FUZZ_CHECK(condition)                                                        \
  do {                                                                               \
    if (!(condition)) ::stguard_fuzz::CheckFailed(__FILE__, __LINE__, #condition, {}); \
  } while (0)

// FUZZ_CHECK_MSG(condition, detail) adds `detail` (a std::string expression, evaluated
// only on failure) to the message.
#define FUZZ_CHECK_MSG(condition, detail)                                                \
  do {                                                                                   \
    if (!(condition)) ::stguard_fuzz::CheckFailed(__FILE__, __LINE__, #condition, (detail)); \
  } while (0)

// STGUARD_FUZZ_CUSTOM_MUTATORS(mutate, cross_over) defines libFuzzer's two custom hooks,
// LLVMFuzzerCustomMutator and LLVMFuzzerCustomCrossOver, as calls to a structure-aware
// mutator's pair (fuzz/*_mutator.h), the same way in every target that has one.
#define STGUARD_FUZZ_CUSTOM_MUTATORS(mutate, cross_over)                                  \
  extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,  \
                                            unsigned int seed) {                          \
    return mutate(data, size, max_size, seed);                                            \
  }                                                                                       \
  extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1,         \
                                              const uint8_t* data2, size_t size2,         \
                                              uint8_t* out, size_t max_out_size,          \
                                              unsigned int seed) {                        \
    return cross_over(data1, size1, data2, size2, out, max_out_size, seed);               \
  }

#endif  // STGUARD_FUZZ_FUZZ_SUPPORT_H_
