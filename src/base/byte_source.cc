// SPDX-License-Identifier: Apache-2.0
// The bounds every ByteSource checks, and the source over bytes already in memory.
#include "stguard/byte_source.h"

#include <cstring>
#include <string>

namespace stguard {

Error SourceRangeError(uint64_t size, uint64_t offset, uint64_t len, const std::string& name) {
  if (offset <= size && len <= size - offset) return {};
  return Error{ErrorCode::kIoError, offset, "a read reaches past the end of the source",
               name + ": " + std::to_string(len) + " bytes at " + std::to_string(offset) +
                   " of " + std::to_string(size)};
}

Error MemorySource::ReadAt(uint64_t offset, std::span<std::byte> out) const {
  if (Error error = SourceRangeError(size(), offset, out.size(), name_); !error.ok()) {
    return error;
  }
  // offset <= size() here, and size() is a span's size: the cast cannot truncate.
  if (!out.empty()) std::memcpy(out.data(), bytes_.data() + static_cast<size_t>(offset), out.size());
  return {};
}

}  // namespace stguard
