// SPDX-License-Identifier: Apache-2.0
// PrefixedSource: a ByteSource whose first bytes were already read (by the sniff), so the
// format's reader gets them from memory instead of asking the source again: what keeps a
// remote safetensors file at two requests.
#ifndef STGUARD_SRC_BASE_PREFIXED_SOURCE_H_
#define STGUARD_SRC_BASE_PREFIXED_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "stguard/byte_source.h"

namespace stguard {

class PrefixedSource final : public ByteSource {
 public:
  // `prefix` holds the first prefix.size() bytes of `source`; both outlive this object.
  PrefixedSource(const ByteSource& source, std::span<const std::byte> prefix)
      : source_(source), prefix_(prefix) {}
  uint64_t size() const override { return source_.size(); }
  bool remote() const override { return source_.remote(); }
  // ReadAt serves the part of the range inside the prefix from memory and asks the source
  // for the rest (one read at most).
  [[nodiscard]] Error ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    if (Error error = SourceRangeError(size(), offset, out.size(), "source"); !error.ok()) {
      return error;
    }
    if (offset >= prefix_.size()) return source_.ReadAt(offset, out);
    const auto at = static_cast<size_t>(offset);
    const size_t cached = std::min(out.size(), prefix_.size() - at);
    if (cached != 0) std::memcpy(out.data(), prefix_.data() + at, cached);
    if (cached == out.size()) return {};
    return source_.ReadAt(offset + cached, out.subspan(cached));
  }

 private:
  const ByteSource& source_;
  std::span<const std::byte> prefix_;
};

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_PREFIXED_SOURCE_H_
