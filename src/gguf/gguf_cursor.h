// SPDX-License-Identifier: Apache-2.0
// GgufCursor: a bounded little-endian reader over a GGUF file's bytes. Every read checks
// "remaining < n" before touching memory and never forms a pointer past the end, so a
// length or count from the file can only fail a check, never move the cursor outside.
#ifndef STGUARD_SRC_GGUF_GGUF_CURSOR_H_
#define STGUARD_SRC_GGUF_GGUF_CURSOR_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/little_endian.h"

namespace stguard::gguf {

class GgufCursor {
 public:
  explicit GgufCursor(std::span<const std::byte> bytes) : bytes_(bytes) {}

  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  std::span<const std::byte> all() const { return bytes_; }

  // Read reads one little-endian integer; false (and nothing moved) if too few bytes.
  template <typename T>
  bool Read(T* out) {
    if (remaining() < sizeof(T)) return false;
    *out = LoadLittleEndian<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return true;
  }

  // Take views the next `n` bytes; false (and nothing moved) if fewer remain.
  bool Take(uint64_t n, std::span<const std::byte>* out) {
    if (remaining() < n) return false;
    *out = bytes_.subspan(static_cast<size_t>(pos_), static_cast<size_t>(n));
    pos_ += n;
    return true;
  }

  // Skip moves past `n` bytes; false (and nothing moved) if fewer remain.
  bool Skip(uint64_t n) {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }

 private:
  std::span<const std::byte> bytes_;
  uint64_t pos_ = 0;
};

inline std::string_view AsText(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace stguard::gguf

#endif  // STGUARD_SRC_GGUF_GGUF_CURSOR_H_
