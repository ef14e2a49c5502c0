// SPDX-License-Identifier: Apache-2.0
// ConvertingSink: element conversion (data/convert.cc) over a stream of byte chunks.
#include "write/converting_sink.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "data/conversion_target.h"
#include "stguard/convert.h"

namespace stguard {
namespace {

// kChunkElements is how many elements are converted at a time (bounds the buffer).
constexpr size_t kChunkElements = 16384;

}  // namespace

ConvertingSink::ConvertingSink(Dtype from, Dtype to, ByteSink& out)
    : from_(from), to_(to), out_(out), from_size_(ElementSize(from)), to_size_(ElementSize(to)) {}

Error ConvertingSink::ConvertWhole(std::span<const std::byte> whole) {
  while (!whole.empty()) {
    const size_t count = std::min(kChunkElements, whole.size() / from_size_);
    // Sized by the first chunk, not ahead: a checkpoint may convert millions of tiny
    // tensors, each through its own sink.
    if (buffer_.size() < count * to_size_) buffer_.resize(count * to_size_);
    const std::span<std::byte> dst(buffer_.data(), count * to_size_);
    if (Error error = ConvertElements(from_, whole.first(count * from_size_), to_, dst);
        !error.ok()) {
      return error;
    }
    if (Error error = out_.Write(dst); !error.ok()) return error;
    whole = whole.subspan(count * from_size_);
  }
  return {};
}

Error ConvertingSink::Write(std::span<const std::byte> bytes) {
  if (from_size_ == 0 || from_size_ > carry_.size() || to_size_ == 0) {
    return Error{ErrorCode::kInvalidArgument, 0, "conversion needs whole-byte dtypes"};
  }
  if (carried_ > 0) {  // complete the element begun by an earlier write
    const size_t take = std::min(from_size_ - carried_, bytes.size());
    std::memcpy(carry_.data() + carried_, bytes.data(), take);
    carried_ += take;
    bytes = bytes.subspan(take);
    if (carried_ < from_size_) return {};
    carried_ = 0;
    if (Error error = ConvertWhole(std::span(carry_.data(), from_size_)); !error.ok()) {
      return error;
    }
  }
  const size_t whole = bytes.size() - bytes.size() % from_size_;
  if (Error error = ConvertWhole(bytes.first(whole)); !error.ok()) return error;
  carried_ = bytes.size() - whole;
  if (carried_ > 0) std::memcpy(carry_.data(), bytes.data() + whole, carried_);
  return {};
}

Error ConvertingSink::Finish() const {
  if (carried_ == 0) return {};
  return Error{ErrorCode::kInvalidArgument, 0, "a tensor ended inside an element"};
}

Error AddSource(Writer& writer, TensorSource source, std::optional<Dtype> target,
                size_t* num_converted) {
  if (!ChangesDtype(source.dtype, target)) {
    return writer.AddTensor(source.name, source.dtype, source.shape, source.byte_len,
                            std::move(source.stream));
  }
  if (num_converted != nullptr) ++*num_converted;
  const Dtype from = source.dtype;
  const Dtype to = *target;
  return writer.AddTensor(
      source.name, to, source.shape, ConvertedByteLen(from, source.byte_len, target),
      [from, to, stream = std::move(source.stream)](ByteSink& sink) -> Error {
        ConvertingSink converting(from, to, sink);
        if (Error error = stream(converting); !error.ok()) return error;
        return converting.Finish();
      });
}

Error AddSources(Writer& writer, TensorSources sources, std::optional<Dtype> target,
                 size_t* num_converted) {
  for (TensorSource& source : sources.tensors) {
    if (Error error = AddSource(writer, std::move(source), target, num_converted);
        !error.ok()) {
      return error;
    }
  }
  for (const auto& [key, value] : sources.metadata) {
    if (Error error = writer.AddMetadata(key, value); !error.ok()) return error;
  }
  return {};
}

}  // namespace stguard
