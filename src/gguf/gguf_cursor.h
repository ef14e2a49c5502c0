// SPDX-License-Identifier: Apache-2.0
// GgufCursor: a bounded little-endian reader over a GGUF file's bytes. Every read checks
// "remaining < n" before touching memory and never forms a pointer past the end, so a
// length or count from the file can only fail a check, never move the cursor outside.
//
// PREFIXES. A range reader gives the cursor the file's first bytes and the file's size:
// every bound ("remaining") is against the file, so each decision is the one the whole
// file would give, and a read that fits the file but not the prefix fails and records
// needs_more() (and how long a prefix it needed): the caller discards that run's result,
// reads more and runs again.
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
  explicit GgufCursor(std::span<const std::byte> bytes)
      : bytes_(bytes), file_size_(bytes.size()) {}
  // A cursor over the first bytes of a file of file_size bytes (>= bytes.size()).
  GgufCursor(std::span<const std::byte> prefix, uint64_t file_size)
      : bytes_(prefix), file_size_(file_size) {}

  uint64_t position() const { return pos_; }
  // remaining counts the bytes left in the file; available those left in hand.
  uint64_t remaining() const { return file_size_ - pos_; }
  uint64_t available() const { return bytes_.size() - pos_; }
  // needs_more says a read fit the file but not the prefix; needed is the prefix length
  // that read wanted.
  bool needs_more() const { return needed_ != 0; }
  uint64_t needed() const { return needed_; }
  std::span<const std::byte> all() const { return bytes_; }

  // Read reads one little-endian integer; false (and nothing moved) if too few bytes.
  template <typename T>
  bool Read(T* out) {
    if (!Fits(sizeof(T))) return false;
    *out = LoadLittleEndian<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return true;
  }

  // Take views the next `n` bytes; false (and nothing moved) if fewer remain.
  bool Take(uint64_t n, std::span<const std::byte>* out) {
    if (!Fits(n)) return false;
    *out = bytes_.subspan(static_cast<size_t>(pos_), static_cast<size_t>(n));
    pos_ += n;
    return true;
  }

  // Skip moves past `n` bytes; false (and nothing moved) if fewer remain.
  bool Skip(uint64_t n) {
    if (!Fits(n)) return false;
    pos_ += n;
    return true;
  }

 private:
  // Fits says whether n more bytes are in hand; when they are in the file but not in
  // hand, it records the prefix length they need.
  bool Fits(uint64_t n) {
    if (remaining() < n) return false;
    if (available() >= n) return true;
    if (needed_ == 0) needed_ = pos_ + n;  // pos_ + n <= file_size_: no overflow
    return false;
  }

  std::span<const std::byte> bytes_;
  uint64_t file_size_;
  uint64_t pos_ = 0;
  uint64_t needed_ = 0;
};

inline std::string_view AsText(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace stguard::gguf

#endif  // STGUARD_SRC_GGUF_GGUF_CURSOR_H_
