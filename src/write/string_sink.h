// SPDX-License-Identifier: Apache-2.0
// StringSink: a ByteSink that keeps the bytes in memory, for the in-memory variants of the
// streaming writers and readers (WriteToString, TensorBytes) and for tests.
#ifndef STGUARD_SRC_WRITE_STRING_SINK_H_
#define STGUARD_SRC_WRITE_STRING_SINK_H_

#include <cstddef>
#include <span>
#include <string>

#include "stguard/error.h"
#include "stguard/writer.h"

namespace stguard {

// StringSink appends every byte written to it to the string it was given, which must
// outlive it. It never fails (an allocation failure throws std::bad_alloc, as any string).
class StringSink final : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Error Write(std::span<const std::byte> bytes) override {
    out_->append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return Error{};
  }

 private:
  std::string* out_;
};

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_STRING_SINK_H_
