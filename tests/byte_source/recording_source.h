// SPDX-License-Identifier: Apache-2.0
// Test sources: one that records every read (to prove the request budgets), fails at a
// chosen read, or claims a size other than its bytes' (to prove errors never crash).
#ifndef STGUARD_TESTS_BYTE_SOURCE_RECORDING_SOURCE_H_
#define STGUARD_TESTS_BYTE_SOURCE_RECORDING_SOURCE_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "stguard/byte_source.h"

namespace stguard::testing {

class RecordingSource final : public ByteSource {
 public:
  // Reads go to `inner`; `remote` is what remote() says.
  explicit RecordingSource(const ByteSource& inner, bool remote = true)
      : inner_(inner), remote_(remote) {}
  uint64_t size() const override { return size_override_ ? claimed_size_ : inner_.size(); }
  bool remote() const override { return remote_; }
  Error ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    reads_.emplace_back(offset, out.size());
    bytes_ += out.size();
    if (fail_at_ != 0 && reads_.size() >= fail_at_) {
      return Error{ErrorCode::kIoError, offset, "injected read failure"};
    }
    if (Error error = SourceRangeError(size(), offset, out.size(), "recording"); !error.ok()) {
      return error;
    }
    // A claimed size beyond the bytes: the read comes back short, which is kIoError.
    return inner_.ReadAt(offset, out);
  }

  // FailFrom makes read number k (1-based) and every later one fail; 0 never.
  void FailFrom(size_t k) { fail_at_ = k; }
  void ClaimSize(uint64_t size) {
    size_override_ = true;
    claimed_size_ = size;
  }
  size_t num_reads() const { return reads_.size(); }
  uint64_t bytes_read() const { return bytes_; }
  const std::vector<std::pair<uint64_t, uint64_t>>& reads() const { return reads_; }

 private:
  const ByteSource& inner_;
  bool remote_;
  size_t fail_at_ = 0;
  bool size_override_ = false;
  uint64_t claimed_size_ = 0;
  mutable std::vector<std::pair<uint64_t, uint64_t>> reads_;
  mutable uint64_t bytes_ = 0;
};

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_BYTE_SOURCE_RECORDING_SOURCE_H_
