// SPDX-License-Identifier: Apache-2.0
// ConvertingSink: a ByteSink that converts whole elements from one dtype to another as
// they pass, for producers (a torch tensor's strided gather) that stream bytes in chunks
// of any size.
#ifndef STGUARD_SRC_WRITE_CONVERTING_SINK_H_
#define STGUARD_SRC_WRITE_CONVERTING_SINK_H_

#include <array>
#include <cstddef>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/writer.h"

namespace stguard {

class ConvertingSink final : public ByteSink {
 public:
  // `from` and `to` must be whole-byte dtypes ConvertElements accepts (IsConvertibleFloat
  // to IsConversionTarget). Converted bytes go to `out`, which must outlive this sink.
  ConvertingSink(Dtype from, Dtype to, ByteSink& out);

  // Write converts every whole element it now holds; up to one element's bytes wait for
  // the next Write. Memory is fixed: elements are converted a bounded chunk at a time.
  Error Write(std::span<const std::byte> bytes) override;

  // Finish reports a partial element left at the end (kInvalidArgument): the producer
  // wrote a byte count that is not a whole number of elements.
  Error Finish() const;

 private:
  Error ConvertWhole(std::span<const std::byte> whole);

  Dtype from_;
  Dtype to_;
  ByteSink& out_;
  size_t from_size_;
  size_t to_size_;
  std::array<std::byte, 8> carry_{};  // the start of an element split across writes
  size_t carried_ = 0;
  std::vector<std::byte> buffer_;
};

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_CONVERTING_SINK_H_
