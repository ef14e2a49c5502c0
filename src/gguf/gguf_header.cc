// SPDX-License-Identifier: Apache-2.0
// The fixed header: "GGUF", the version, and the tensor and key/value counts. The counts
// are bounded here, before anything is allocated from them, by the bytes that remain.
#include <string>

#include "gguf/gguf_internal.h"

namespace stguard::gguf {

bool LooksLikeGguf(std::span<const std::byte> prefix) {
  return prefix.size() >= kMagic.size() && AsText(prefix.first(kMagic.size())) == kMagic;
}

namespace {

Error CheckVersion(uint32_t version) {
  if (version == 2 || version == 3) return {};
  // A version-3 file written big-endian reads here as 0x03000000: its low half is zero,
  // which no little-endian version number has.
  if ((version & 0xFFFF) == 0 && version != 0) {
    return {ErrorCode::kGgufByteSwapped, 4,
            "the version is byte-swapped: this is a big-endian GGUF file, which stguard "
            "does not read",
            std::to_string(version)};
  }
  return {ErrorCode::kGgufUnsupportedVersion, 4,
          "unsupported GGUF version (2 and 3 are read)", std::to_string(version)};
}

}  // namespace

Error ReadHeader(GgufCursor* cursor, GgufHeader* header) {
  std::span<const std::byte> magic;
  if (!cursor->Take(kMagic.size(), &magic) || AsText(magic) != kMagic) {
    return {ErrorCode::kGgufBadMagic, 0, "the file does not begin with \"GGUF\""};
  }
  if (!cursor->Read(&header->version)) {
    return {ErrorCode::kGgufTruncated, cursor->position(), "the file ends inside the header"};
  }
  if (Error error = CheckVersion(header->version); !error.ok()) return error;
  if (!cursor->Read(&header->num_tensors) || !cursor->Read(&header->num_key_values)) {
    return {ErrorCode::kGgufTruncated, cursor->position(), "the file ends inside the header"};
  }
  // Each pair and each info takes at least its smallest encoding: a count past what the
  // rest of the file could hold is refused now, so no allocation ever follows from it.
  const uint64_t left = cursor->remaining();
  if (header->num_key_values > left / kMinKeyValueBytes) {
    return {ErrorCode::kGgufTruncated, 16,
            "the key/value count needs more bytes than the file has",
            std::to_string(header->num_key_values)};
  }
  const uint64_t left_for_tensors = left - header->num_key_values * kMinKeyValueBytes;
  if (header->num_tensors > left_for_tensors / kMinTensorInfoBytes) {
    return {ErrorCode::kGgufTruncated, 8, "the tensor count needs more bytes than the file has",
            std::to_string(header->num_tensors)};
  }
  return {};
}

}  // namespace stguard::gguf
