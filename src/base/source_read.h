// SPDX-License-Identifier: Apache-2.0
// ReadRange: a range of a ByteSource into a buffer of exactly its length, with the one
// 64-to-size_t conversion every range reader needs checked (WebAssembly's size_t is 32
// bits: a length that does not fit is an error, never a truncated read).
#ifndef STGUARD_SRC_BASE_SOURCE_READ_H_
#define STGUARD_SRC_BASE_SOURCE_READ_H_

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "stguard/byte_source.h"

namespace stguard {

// FitsInSize says whether `len` can be a size_t (always on 64-bit hosts).
inline bool FitsInSize(uint64_t len) { return len <= std::numeric_limits<size_t>::max(); }

// ReadRange replaces *out with the `len` bytes at `offset`, or returns kIoError when the
// range leaves the source or the source fails, and kOutOfMemory when `len` bytes cannot be
// held in this address space. Allocation failure throws std::bad_alloc, as containers do.
inline Error ReadRange(const ByteSource& source, uint64_t offset, uint64_t len,
                       std::vector<std::byte>* out) {
  if (Error error = SourceRangeError(source.size(), offset, len, "source"); !error.ok()) {
    return error;
  }
  if (!FitsInSize(len)) {
    return Error{ErrorCode::kOutOfMemory, offset, "a range larger than this address space",
                 std::to_string(len) + " bytes"};
  }
  out->resize(static_cast<size_t>(len));
  return source.ReadAt(offset, *out);
}

// AppendRange reads [out->size(), new_len) and appends it, so *out holds the source's
// first new_len bytes (new_len >= out->size()).
inline Error AppendRange(const ByteSource& source, uint64_t new_len, std::vector<std::byte>* out) {
  const uint64_t old_len = out->size();
  if (new_len <= old_len) return {};
  if (Error error = SourceRangeError(source.size(), 0, new_len, "source"); !error.ok()) {
    return error;
  }
  if (!FitsInSize(new_len)) {
    return Error{ErrorCode::kOutOfMemory, old_len, "a range larger than this address space",
                 std::to_string(new_len) + " bytes"};
  }
  out->resize(static_cast<size_t>(new_len));
  const std::span<std::byte> tail(out->data() + old_len, static_cast<size_t>(new_len - old_len));
  if (Error error = source.ReadAt(old_len, tail); !error.ok()) {
    out->resize(static_cast<size_t>(old_len));
    return error;
  }
  return {};
}

// ReadWhole reads the whole source into *out (empty on entry), in chunks that double from
// 1 MiB: a source whose size overstates its bytes fails at its first short chunk, before
// memory for the size it claims was ever allocated.
inline Error ReadWhole(const ByteSource& source, std::vector<std::byte>* out) {
  uint64_t chunk = uint64_t{1} << 20;
  while (out->size() < source.size()) {
    const uint64_t left = source.size() - out->size();
    if (Error error = AppendRange(source, out->size() + std::min(left, chunk), out); !error.ok()) {
      return error;
    }
    chunk *= 2;
  }
  return {};
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_SOURCE_READ_H_
