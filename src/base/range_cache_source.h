// SPDX-License-Identifier: Apache-2.0
// RangeCacheSource: a ByteSource that keeps the ranges read through it while recording,
// and serves a later read lying inside one of them from memory. The sniff reads a ZIP's
// tail and central directory to classify it; the ZIP reader then reads the same bytes
// again: with this cache a remote archive costs those requests once.
#ifndef STGUARD_SRC_BASE_RANGE_CACHE_SOURCE_H_
#define STGUARD_SRC_BASE_RANGE_CACHE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "stguard/byte_source.h"

namespace stguard {

class RangeCacheSource final : public ByteSource {
 public:
  // kMaxCachedBytes bounds what the cache holds: reads made while it is fuller are not kept.
  static constexpr uint64_t kMaxCachedBytes = uint64_t{4} << 20;

  // `source` outlives this object.
  explicit RangeCacheSource(const ByteSource& source) : source_(source) {}
  uint64_t size() const override { return source_.size(); }
  bool remote() const override { return source_.remote(); }

  [[nodiscard]] Error ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    if (Error error = SourceRangeError(size(), offset, out.size(), "source"); !error.ok()) {
      return error;
    }
    for (const Range& range : ranges_) {
      if (offset >= range.offset && offset - range.offset <= range.bytes.size() &&
          out.size() <= range.bytes.size() - (offset - range.offset)) {
        if (!out.empty()) {
          std::memcpy(out.data(), range.bytes.data() + (offset - range.offset), out.size());
        }
        return {};
      }
    }
    if (Error error = source_.ReadAt(offset, out); !error.ok()) return error;
    if (recording_ && out.size() <= kMaxCachedBytes - held_) {
      ranges_.push_back({offset, std::vector<std::byte>(out.begin(), out.end())});
      held_ += out.size();
    }
    return {};
  }

  // Stop keeps what was read so far and keeps nothing more.
  void Stop() { recording_ = false; }
  // Clear forgets every range (a format that will not read them again).
  void Clear() {
    recording_ = false;
    std::vector<Range>().swap(ranges_);
    held_ = 0;
  }

 private:
  struct Range {
    uint64_t offset;
    std::vector<std::byte> bytes;
  };
  const ByteSource& source_;
  bool recording_ = true;
  mutable std::vector<Range> ranges_;
  mutable uint64_t held_ = 0;
};

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_RANGE_CACHE_SOURCE_H_
