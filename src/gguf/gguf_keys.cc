// SPDX-License-Identifier: Apache-2.0
// The key/value section: each key's syntax, each value (gguf_values.cc), and the one key
// the reader itself obeys, general.alignment.
#include <algorithm>
#include <string>

#include "gguf/gguf_internal.h"

namespace stguard::gguf {

namespace {

bool IsKeyCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

constexpr std::string_view kAlignmentKey = "general.alignment";

}  // namespace

bool IsValidKey(std::string_view key) {
  if (key.empty() || key.size() >= kMaxKeyBytes) return false;
  bool segment_empty = true;
  for (char c : key) {
    if (c == '.') {
      if (segment_empty) return false;
      segment_empty = true;
    } else if (IsKeyCharacter(c)) {
      segment_empty = false;
    } else {
      return false;
    }
  }
  return !segment_empty;
}

Error ReadMetadata(GgufCursor* cursor, uint64_t count, std::vector<MetadataEntry>* out) {
  // ReadHeader bounded count * 14 by the file; the bytes in hand bound it again, so a
  // prefix of a large remote file never reserves for entries it does not hold.
  out->reserve(static_cast<size_t>(std::min(count, cursor->available() / kMinKeyValueBytes)));
  for (uint64_t i = 0; i < count; ++i) {
    MetadataEntry entry;
    entry.offset = cursor->position();
    if (Error error = ReadString(cursor, "key", &entry.key); !error.ok()) return error;
    if (!IsValidKey(entry.key)) {
      return {ErrorCode::kGgufInvalidKey, entry.offset,
              "a key is not dot-separated segments of a-z, 0-9, '_' and '-' shorter than "
              "65,536 bytes",
              std::string(entry.key.substr(0, 256))};
    }
    uint32_t type = 0;
    if (!cursor->Read(&type)) {
      return {ErrorCode::kGgufTruncated, cursor->position(), "the file ends inside a key's type",
              std::string(entry.key)};
    }
    if (Error error = ReadValue(cursor, type, &entry.value); !error.ok()) {
      error.context = (error.context.empty() ? "" : error.context + ", ") + "key '" +
                      std::string(entry.key) + "'";
      return error;
    }
    out->push_back(entry);
  }
  return {};
}

Error FindAlignment(const std::vector<MetadataEntry>& metadata, uint32_t* alignment) {
  *alignment = kDefaultAlignment;
  for (const MetadataEntry& entry : metadata) {
    if (entry.key != kAlignmentKey) continue;
    const std::optional<uint64_t> value =
        entry.value.type == ValueType::kU32 ? entry.value.AsUnsigned() : std::nullopt;
    // The spec's rule: a power of two and a multiple of 8 (so 8 at least).
    if (!value || *value < 8 || (*value & (*value - 1)) != 0) {
      return {ErrorCode::kGgufInvalidAlignment, entry.offset,
              "general.alignment must be a u32 power of two and a multiple of 8",
              value ? std::to_string(*value) : std::string(ValueTypeName(entry.value.type))};
    }
    *alignment = static_cast<uint32_t>(*value);
  }
  return {};
}

}  // namespace stguard::gguf
