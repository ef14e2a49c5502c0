// SPDX-License-Identifier: Apache-2.0
// stguard/shape.h: a tensor's shape, stored compactly.
//
// A header near the 100,000,000-byte cap can hold one shape of 50 million dims ("0," is
// two bytes a dim). Stored as uint64_t, those dims would take four times the header's own
// size; stored as varints (LEB128: 7 bits a byte, low bits first) they take at most half
// the bytes of their decimal text, so a checkpoint's shapes never take more memory than
// half its header. Shape is a view of such an encoding; it lives as long as the
// Checkpoint that made it.
//
// Reading a dim decodes it: iteration is O(1) a dim, operator[] is O(i) (it decodes the
// dims before i). Code that indexes dims at random should copy them out once with
// to_vector().
#ifndef STGUARD_SHAPE_H_
#define STGUARD_SHAPE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

namespace stguard {

class Shape {
 public:
  // Iterator is a forward iterator whose dims are decoded as they are read.
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using iterator_concept = std::forward_iterator_tag;
    using value_type = uint64_t;
    using difference_type = std::ptrdiff_t;
    using reference = uint64_t;
    using pointer = void;

    Iterator() = default;
    explicit Iterator(const uint8_t* at) : at_(at) {}
    uint64_t operator*() const {
      uint64_t value = 0;
      DecodeVarint(at_, &value);
      return value;
    }
    Iterator& operator++() {
      while (*at_ & 0x80) ++at_;
      ++at_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const Iterator& other) const { return at_ == other.at_; }

   private:
    const uint8_t* at_ = nullptr;
  };
  using iterator = Iterator;
  using const_iterator = Iterator;
  using value_type = uint64_t;
  using size_type = size_t;

  Shape() = default;
  // FromVarints views `rank` dims encoded back to back in `encoded` (made by AppendVarint).
  static Shape FromVarints(std::span<const uint8_t> encoded, size_t rank) {
    Shape shape;
    shape.encoded_ = encoded.data();
    shape.encoded_len_ = static_cast<uint32_t>(encoded.size());
    shape.rank_ = static_cast<uint32_t>(rank);
    return shape;
  }

  size_t size() const { return rank_; }
  bool empty() const { return rank_ == 0; }
  Iterator begin() const { return Iterator(encoded_); }
  Iterator end() const { return Iterator(encoded_ + encoded_len_); }
  // operator[] returns dim i (i < size()). O(i): see the top of this file.
  uint64_t operator[](size_t i) const {
    Iterator it = begin();
    for (; i > 0; --i) ++it;
    return *it;
  }
  std::vector<uint64_t> to_vector() const { return std::vector<uint64_t>(begin(), end()); }
  // The encoding itself: the shape's dims as varints, back to back.
  std::span<const uint8_t> encoded() const { return {encoded_, encoded_len_}; }

  friend bool operator==(const Shape& shape, std::span<const uint64_t> dims) {
    if (shape.size() != dims.size()) return false;
    size_t i = 0;
    for (uint64_t dim : shape) {
      if (dim != dims[i++]) return false;
    }
    return true;
  }
  friend bool operator==(const Shape& a, const Shape& b) {
    return a.rank_ == b.rank_ && a.encoded_len_ == b.encoded_len_ &&
           std::equal(a.encoded_, a.encoded_ + a.encoded_len_, b.encoded_);
  }
  friend bool operator==(const Shape& shape, const std::vector<uint64_t>& dims) {
    return shape == std::span<const uint64_t>(dims);
  }

  // AppendVarint appends `value` to `out` as LEB128 (1 to 10 bytes).
  static void AppendVarint(uint64_t value, std::vector<uint8_t>* out) {
    while (value >= 0x80) {
      out->push_back(static_cast<uint8_t>(value | 0x80));
      value >>= 7;
    }
    out->push_back(static_cast<uint8_t>(value));
  }
  // DecodeVarint reads one varint at `at` into *out and returns the byte after it.
  static const uint8_t* DecodeVarint(const uint8_t* at, uint64_t* out) {
    uint64_t value = 0;
    unsigned shift = 0;
    for (;; shift += 7) {
      const uint8_t byte = *at++;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    *out = value;
    return at;
  }

 private:
  const uint8_t* encoded_ = nullptr;
  uint32_t encoded_len_ = 0;  // at most half the header: < 2^32
  uint32_t rank_ = 0;
};

}  // namespace stguard

#endif  // STGUARD_SHAPE_H_
