// SPDX-License-Identifier: Apache-2.0
// Stage 1: the 8-byte length prefix.
#include "format/length_prefix.h"

#include <algorithm>

namespace stguard {

Error ReadLengthPrefix(std::span<const std::byte> file, const Options& options,
                       uint64_t* out_header_len) {
  return ReadLengthPrefix(file.first(file.size() < 8 ? file.size() : 8), file.size(), options,
                          out_header_len);
}

Error ReadLengthPrefix(std::span<const std::byte> prefix, uint64_t file_size,
                       const Options& options, uint64_t* out_header_len) {
  if (prefix.size() < 8 || file_size < 8) {
    return Error{ErrorCode::kHeaderTooSmall, 0, "file is shorter than the 8-byte length prefix", {}};
  }
  // Little-endian by definition of the format, whatever the host's byte order.
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) {
    header_len = (header_len << 8) | static_cast<uint8_t>(prefix[i]);
  }
  const uint64_t cap = std::min(options.max_header_len, kMaxHeaderLen);
  if (header_len > cap) {
    return Error{ErrorCode::kHeaderTooLarge, 0, "header length N exceeds the maximum",
                 std::to_string(header_len) + " > " + std::to_string(cap)};
  }
  // Subtract instead of add: 8 + N cannot overflow here, but the habit keeps it so.
  if (header_len > file_size - 8) {
    return Error{ErrorCode::kInvalidHeaderLength, 0, "header length N runs past the end of the file",
                 "N = " + std::to_string(header_len) + ", file size = " +
                     std::to_string(file_size)};
  }
  *out_header_len = header_len;
  return Error{};
}

}  // namespace stguard
