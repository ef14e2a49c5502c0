// SPDX-License-Identifier: Apache-2.0
// ConvertingSink: a ByteSink that converts whole elements from one dtype to another as
// they pass, for producers (a torch tensor's strided gather) that stream bytes in chunks
// of any size.
#ifndef STGUARD_SRC_WRITE_CONVERTING_SINK_H_
#define STGUARD_SRC_WRITE_CONVERTING_SINK_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

  // The conversion and where it goes, for a producer that stores elements out of order
  // (a deflated Fortran-order array placed into the output): it converts them itself,
  // with ConvertElements as Write does, and places them into out()'s PlacingSink.
  Dtype from() const { return from_; }
  Dtype to() const { return to_; }
  ByteSink& out() const { return out_; }

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

// TensorSource is one tensor as a format's adapter yields it: its name, dtype and shape
// as stored, its byte length, and a producer streaming its little-endian row-major bytes.
struct TensorSource {
  std::string_view name;
  Dtype dtype = Dtype::kU8;
  std::span<const uint64_t> shape;
  uint64_t byte_len = 0;
  TensorProducer stream;
};

// AddSource adds `source` to `writer`, converted to `target` as it streams when
// ChangesDtype(source.dtype, target) (then *num_converted, when given, is incremented):
// the one place a streamed tensor changes dtype. The name and shape are copied; the
// producer runs at write time.
[[nodiscard]] Error AddSource(Writer& writer, TensorSource source, std::optional<Dtype> target,
                              size_t* num_converted);

// TensorSources is a format adapter's yield: its tensors in order and its metadata.
struct TensorSources {
  std::vector<TensorSource> tensors;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// AddSources adds every tensor of `sources` (AddSource) and then its metadata.
[[nodiscard]] Error AddSources(Writer& writer, TensorSources sources,
                               std::optional<Dtype> target, size_t* num_converted);

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_CONVERTING_SINK_H_
