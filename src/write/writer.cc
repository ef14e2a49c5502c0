// SPDX-License-Identifier: Apache-2.0
// The canonical writer: collects entries, plans the file, then streams it to a sink.
#include "stguard/writer.h"

#include <algorithm>
#include <cstdint>
#include <new>

#include "base/out_of_memory.h"
#include "data/conversion_target.h"
#include "stguard/reader.h"
#include "write/atomic_file.h"
#include "write/canonical_header.h"
#include "write/canonical_text.h"
#include "write/converting_sink.h"
#include "write/progress_sink.h"
#include "write/string_sink.h"

namespace stguard {
namespace {

// TooManyBytes is the refusal of bytes beyond a producer's declared count.
Error TooManyBytes() {
  Error error;
  error.code = ErrorCode::kInvalidArgument;
  error.message = "the tensor's producer wrote more bytes than declared";
  return error;
}

// BoundedSink passes a producer's bytes on and refuses any beyond the declared count;
// placed bytes (write/placing_sink.h) count when placed, if the inner sink can place.
class BoundedSink final : public PassThroughSink {
 public:
  BoundedSink(ByteSink& inner, uint64_t byte_len)
      : PassThroughSink(inner), remaining_(byte_len) {}
  Error Write(std::span<const std::byte> bytes) override {
    if (bytes.size() > remaining_) return TooManyBytes();
    remaining_ -= bytes.size();
    return inner().Write(bytes);
  }
  Error BeginPlaced(uint64_t len, std::byte** at) override {
    *at = nullptr;
    if (len > remaining_) return TooManyBytes();
    Error error = BeginInner(len, at);
    if (error.ok() && *at != nullptr) remaining_ -= len;
    return error;
  }
  Error EndPlaced() override { return EndInner(TooManyBytes()); }
  uint64_t remaining() const { return remaining_; }

 private:
  uint64_t remaining_;
};

std::span<const std::byte> AsBytes(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

}  // namespace

struct Writer::Impl {
  // Names, metadata keys and values live back to back in `text`, so an entry costs its
  // bytes and an offset, not a std::string each.
  struct Tensor {
    size_t name_at;  // in text
    size_t name_len;
    Dtype dtype;
    size_t shape_at;     // the shape's first byte in shape_bytes
    uint32_t shape_len;  // its bytes there
    uint32_t rank;
    uint64_t byte_len;
    std::span<const std::byte> data;  // used when producer is empty
    TensorProducer producer;
  };
  struct Metadata {
    size_t key_at;  // in text
    size_t key_len;
    size_t value_at;
    size_t value_len;
  };

  std::vector<Tensor> tensors;
  std::function<void(uint64_t)> progress;  // set_progress
  // Every tensor's shape as varints (stguard/shape.h), back to back: a checkpoint with one
  // shape of 50 million dims takes half its header here, not four times it.
  std::vector<uint8_t> shape_bytes;
  std::vector<Metadata> metadata;
  std::string text;

  std::string_view Text(size_t at, size_t len) const { return std::string_view(text).substr(at, len); }
  std::string_view NameOf(const Tensor& tensor) const { return Text(tensor.name_at, tensor.name_len); }
  size_t Keep(std::string_view bytes) {
    const size_t at = text.size();
    text.append(bytes);
    return at;
  }
  Error first_error;  // the first Add* failure; sticks

  Error Remember(Error error) {
    if (!error.ok() && first_error.ok()) first_error = error;
    return error;
  }

  Shape ShapeOf(const Tensor& tensor) const {
    return Shape::FromVarints(
        std::span<const uint8_t>(shape_bytes.data() + tensor.shape_at, tensor.shape_len),
        tensor.rank);
  }

  // Add takes the dims as any range of uint64_t (a span or a Shape).
  template <typename Dims>
  Error Add(std::string_view name, Dtype dtype, const Dims& shape, uint64_t byte_len,
            std::span<const std::byte> data, TensorProducer producer) {
    const size_t shape_at = shape_bytes.size();
    size_t rank = 0;
    for (uint64_t dim : shape) {
      Shape::AppendVarint(dim, &shape_bytes);
      ++rank;
    }
    if (shape_bytes.size() - shape_at > UINT32_MAX || rank > UINT32_MAX) {
      shape_bytes.resize(shape_at);
      Error error;
      error.code = ErrorCode::kHeaderTooLarge;
      error.message = "the tensor's shape has too many dims for one header";
      error.tensor = std::string(name);
      return Remember(error);
    }
    const size_t name_at = text.size();
    Tensor tensor{name_at, name.size(), dtype, shape_at,
                  static_cast<uint32_t>(shape_bytes.size() - shape_at),
                  static_cast<uint32_t>(rank), byte_len, data, std::move(producer)};
    PlanTensor entry{name, dtype, ShapeOf(tensor), byte_len};
    if (Error error = CheckTensorEntry(entry); !error.ok()) {
      shape_bytes.resize(shape_at);
      return Remember(error);
    }
    Keep(name);
    tensors.push_back(std::move(tensor));
    return Error{};
  }

  Result<CanonicalPlan> Plan() const {
    if (!first_error.ok()) return first_error;
    std::vector<PlanTensor> plan_tensors;
    plan_tensors.reserve(tensors.size());
    for (const Tensor& tensor : tensors) {
      plan_tensors.push_back(
          PlanTensor{NameOf(tensor), tensor.dtype, ShapeOf(tensor), tensor.byte_len});
    }
    std::vector<PlanMetadata> plan_metadata;
    plan_metadata.reserve(metadata.size());
    for (const Metadata& entry : metadata) {
      plan_metadata.push_back(PlanMetadata{Text(entry.key_at, entry.key_len),
                                           Text(entry.value_at, entry.value_len)});
    }
    return PlanCanonicalFile(plan_tensors, plan_metadata);
  }

  // WritePlanned writes a file that Plan() laid out, counting it to `progress` if set.
  Error WritePlanned(const CanonicalPlan& plan, ByteSink& sink) const {
    if (!progress) return WritePlannedBytes(plan, sink);
    ProgressSink counted(sink, progress);
    return WritePlannedBytes(plan, counted);
  }

  Error WritePlannedBytes(const CanonicalPlan& plan, ByteSink& sink) const {
    if (Error error = sink.Write(AsBytes(EncodeLengthPrefix(plan.header.size())));
        !error.ok()) {
      return error;
    }
    if (Error error = sink.Write(AsBytes(plan.header)); !error.ok()) return error;
    for (uint32_t index : plan.order) {
      const Tensor& tensor = tensors[index];
      Error error;
      if (!tensor.producer) {
        error = sink.Write(tensor.data);
      } else {
        BoundedSink bounded(sink, tensor.byte_len);
        error = tensor.producer(bounded);
        if (error.ok() && bounded.remaining() != 0) {
          error.code = ErrorCode::kInvalidArgument;
          error.message = "the tensor's producer wrote fewer bytes than declared";
          error.context = std::to_string(bounded.remaining()) + " bytes missing";
        }
      }
      if (!error.ok()) {
        if (error.tensor.empty()) error.tensor = std::string(NameOf(tensor));
        return error;
      }
    }
    return Error{};
  }
};

Writer::Writer() : impl_(std::make_unique<Impl>()) {}
Writer::~Writer() = default;
Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&&) noexcept = default;

Error Writer::AddTensor(std::string_view name, Dtype dtype, std::span<const uint64_t> shape,
                        std::span<const std::byte> data) {
  // A tensor that could not be added must not be silently missing from the file: an
  // allocation failure sticks like any other Add error.
  return impl_->Remember(CatchOutOfMemory("out of memory while adding a tensor", [&] {
    return impl_->Add(name, dtype, shape, data.size(), data, nullptr);
  }));
}

Error Writer::AddTensor(std::string_view name, Dtype dtype,
                        std::initializer_list<uint64_t> shape,
                        std::span<const std::byte> data) {
  return AddTensor(name, dtype, std::span<const uint64_t>(shape.begin(), shape.size()), data);
}

// EmptyProducerError is the refusal of a streamed tensor whose producer is empty.
static Error EmptyProducerError(std::string_view name) {
  Error error;
  error.code = ErrorCode::kInvalidArgument;
  error.message = "the tensor's producer is empty";
  error.tensor = std::string(name);
  return error;
}

Error Writer::AddTensor(std::string_view name, Dtype dtype, std::span<const uint64_t> shape,
                        uint64_t byte_len, TensorProducer producer) {
  if (!producer) return impl_->Remember(EmptyProducerError(name));
  return impl_->Remember(CatchOutOfMemory("out of memory while adding a tensor", [&] {
    return impl_->Add(name, dtype, shape, byte_len, {}, std::move(producer));
  }));
}

Error Writer::AddTensor(std::string_view name, Dtype dtype, const Shape& shape,
                        std::span<const std::byte> data) {
  return impl_->Remember(CatchOutOfMemory("out of memory while adding a tensor", [&] {
    return impl_->Add(name, dtype, shape, data.size(), data, nullptr);
  }));
}

Error Writer::AddTensor(std::string_view name, Dtype dtype, const Shape& shape,
                        uint64_t byte_len, TensorProducer producer) {
  if (!producer) return impl_->Remember(EmptyProducerError(name));
  return impl_->Remember(CatchOutOfMemory("out of memory while adding a tensor", [&] {
    return impl_->Add(name, dtype, shape, byte_len, {}, std::move(producer));
  }));
}

Error Writer::AddMetadata(std::string_view key, std::string_view value) {
  if (Error error = CheckMetadataEntry(PlanMetadata{key, value}); !error.ok()) {
    return impl_->Remember(error);
  }
  return impl_->Remember(CatchOutOfMemory("out of memory while adding metadata", [&] {
    // If push_back throws, the kept bytes are unreferenced and the error sticks.
    const size_t key_at = impl_->Keep(key);
    const size_t value_at = impl_->Keep(value);
    impl_->metadata.push_back(Impl::Metadata{key_at, key.size(), value_at, value.size()});
    return Error{};
  }));
}

Error Writer::AddCheckpoint(const Checkpoint& checkpoint) {
  for (const TensorView& tensor : checkpoint.tensors()) {
    if (Error error = AddTensor(tensor.name, tensor.dtype, tensor.shape, tensor.data);
        !error.ok()) {
      return error;
    }
  }
  for (const MetadataEntry& entry : checkpoint.metadata()) {
    if (Error error = AddMetadata(entry.key, entry.value); !error.ok()) return error;
  }
  return Error{};
}

size_t Writer::num_tensors() const { return impl_->tensors.size(); }
size_t Writer::num_metadata() const { return impl_->metadata.size(); }

void Writer::set_progress(std::function<void(uint64_t bytes)> progress) {
  impl_->progress = std::move(progress);
}

Result<std::string> Writer::CanonicalHeader() const {
  return CatchOutOfMemory("out of memory while building the header", [&]() -> Result<std::string> {
    Result<CanonicalPlan> plan = impl_->Plan();
    if (!plan.ok()) return plan.error();
    return std::move(plan->header);
  });
}

Result<uint64_t> Writer::FileSize() const {
  return CatchOutOfMemory("out of memory while building the header", [&]() -> Result<uint64_t> {
    Result<CanonicalPlan> plan = impl_->Plan();
    if (!plan.ok()) return plan.error();
    return plan->file_size;
  });
}

Error Writer::WriteTo(ByteSink& sink) const {
  return CatchOutOfMemory("out of memory while writing", [&]() -> Error {
    Result<CanonicalPlan> plan = impl_->Plan();
    if (!plan.ok()) return plan.error();
    return impl_->WritePlanned(*plan, sink);
  });
}

Result<std::string> Writer::WriteToString() const {
  return CatchOutOfMemory("out of memory while writing", [&]() -> Result<std::string> {
    Result<CanonicalPlan> plan = impl_->Plan();
    if (!plan.ok()) return plan.error();
    std::string out;
    if (plan->file_size > out.max_size()) {
      return OutOfMemoryError("the file does not fit in memory");
    }
    out.reserve(static_cast<size_t>(plan->file_size));  // failure: kOutOfMemory, above
    StringSink sink(&out);
    if (Error error = impl_->WritePlanned(*plan, sink); !error.ok()) return error;
    return out;
  });
}

Error Writer::WriteToFile(const std::string& path) const {
  return CatchOutOfMemory("out of memory while writing", [&]() -> Error {
    // Validate before creating anything: a refused input leaves no file, not even a
    // temporary one.
    Result<CanonicalPlan> plan = impl_->Plan();
    if (!plan.ok()) return plan.error();
    Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
    if (!file.ok()) return file.error();
    if (Error error = impl_->WritePlanned(*plan, **file); !error.ok()) {
      (*file)->Abort();
      return error;
    }
    return (*file)->Commit();
  });
}

Result<std::string> CanonicalBytes(const Checkpoint& checkpoint) {
  return CatchOutOfMemory("out of memory while writing", [&]() -> Result<std::string> {
    Writer writer;
    if (Error error = writer.AddCheckpoint(checkpoint); !error.ok()) return error;
    return writer.WriteToString();
  });
}

namespace {

// CanonicalStream writes a checkpoint's canonical form without a Writer: the header is
// produced in pieces (CanonicalText) and the data copied tensor by tensor, so memory is the
// tensor order (4 bytes a tensor), one header piece and one data chunk, whatever the header
// holds. The bytes are those Writer::AddCheckpoint and a write would give (the same plan
// text, checked by tests/writer_test.cc), and so are the errors.
class CanonicalStream {
 public:
  // With `convert_to`, IsConvertibleFloat tensors are converted to it as they are copied
  // (AddConvertedCheckpoint's file; copy_data must then be true).
  CanonicalStream(const Checkpoint& checkpoint, bool copy_data,
                  std::optional<Dtype> convert_to = std::nullopt)
      : checkpoint_(checkpoint), copy_data_(copy_data), text_(checkpoint, convert_to) {}

  // num_converted is the number of tensors whose dtype changes.
  size_t num_converted() const {
    size_t count = 0;
    for (const TensorView& tensor : checkpoint_.tensors()) {
      count += text_.OutDtype(tensor) != tensor.dtype ? 1 : 0;
    }
    return count;
  }

  // Plan checks everything that can fail before a byte is written.
  Error Plan() {
    if (!copy_data_) {
      // Writer::AddCheckpoint adds the mapped spans: a checkpoint without them (OpenHeader)
      // fails as it would there, at its first tensor.
      for (const TensorView& tensor : checkpoint_.tensors()) {
        if (Error error = CheckTensorEntry(
                PlanTensor{tensor.name, tensor.dtype, tensor.shape, tensor.data.size()});
            !error.ok()) {
          return error;
        }
      }
    }
    std::string piece;
    while (text_.Next(&piece)) text_len_ += piece.size();
    if (!text_.error().ok()) return text_.error();
    header_len_ = text_len_ + (8 - text_len_ % 8) % 8;
    if (header_len_ > kMaxHeaderLen) {
      Error error;
      error.code = ErrorCode::kHeaderTooLarge;
      error.message = "the header would exceed 100,000,000 bytes";
      error.context = std::to_string(header_len_) + " bytes and more";
      return error;
    }
    return Error{};
  }

  Error WriteTo(ByteSink& sink) {
    if (Error error = sink.Write(AsBytes(EncodeLengthPrefix(header_len_))); !error.ok()) {
      return error;
    }
    text_.Restart();
    std::string piece;
    while (text_.Next(&piece)) {
      if (Error error = sink.Write(AsBytes(piece)); !error.ok()) return error;
    }
    if (!text_.error().ok()) return text_.error();
    piece.assign(static_cast<size_t>(header_len_ - text_len_), ' ');
    if (Error error = sink.Write(AsBytes(piece)); !error.ok()) return error;

    const std::span<const TensorView> tensors = checkpoint_.tensors();
    std::vector<std::byte> buffer;
    for (uint32_t index : text_.order()) {
      const TensorView& tensor = tensors[index];
      const Dtype out_dtype = text_.OutDtype(tensor);
      Error error;
      if (out_dtype != tensor.dtype) {
        // The one element conversion of streamed tensors (AddSource's decorator), fed
        // kConvertChunkElements whole elements at a time.
        ConvertingSink converting(tensor.dtype, out_dtype, sink);
        error = CopyData(tensor, kConvertChunkElements * ElementSize(tensor.dtype), converting,
                         &buffer);
        if (error.ok()) error = converting.Finish();
      } else if (!copy_data_) {
        error = sink.Write(tensor.data);
      } else {
        error = CopyData(tensor, kCanonicalCopyChunkLen, sink, &buffer);
      }
      if (!error.ok()) {
        if (error.tensor.empty()) error.tensor = std::string(tensor.name);
        return error;
      }
    }
    return Error{};
  }

 private:
  // kConvertChunkElements is how many elements of a converted tensor are read at a time.
  static constexpr uint64_t kConvertChunkElements = uint64_t{1} << 16;

  // CopyData reads `tensor`'s bytes with Checkpoint::ReadData, `chunk_len` at a time into
  // the reused *buffer, and writes them to `sink`.
  Error CopyData(const TensorView& tensor, uint64_t chunk_len, ByteSink& sink,
                 std::vector<std::byte>* buffer) const {
    const uint64_t start = 8 + checkpoint_.header_len() + tensor.begin;
    const uint64_t len = tensor.byte_size();
    const uint64_t step = std::min(len, chunk_len);
    if (buffer->size() < step) buffer->resize(static_cast<size_t>(step));
    for (uint64_t at = 0; at < len;) {
      const size_t n = static_cast<size_t>(std::min(step, len - at));
      const std::span<std::byte> chunk(buffer->data(), n);
      if (Error error = checkpoint_.ReadData(start + at, chunk); !error.ok()) return error;
      if (Error error = sink.Write(chunk); !error.ok()) return error;
      at += n;
    }
    return Error{};
  }

  const Checkpoint& checkpoint_;
  bool copy_data_;
  CanonicalText text_;
  uint64_t text_len_ = 0;
  uint64_t header_len_ = 0;
};

}  // namespace

Error WriteCanonicalFile(const Checkpoint& checkpoint, const std::string& path,
                         const CanonicalWriteOptions& options) {
  return CatchOutOfMemory("out of memory while writing", [&]() -> Error {
    CanonicalStream stream(checkpoint, options.release_source_pages);
    // Validate before creating anything: a refused input leaves no file, not even a
    // temporary one.
    if (Error error = stream.Plan(); !error.ok()) return error;
    Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
    if (!file.ok()) return file.error();
    if (Error error = stream.WriteTo(**file); !error.ok()) {
      (*file)->Abort();
      return error;
    }
    return (*file)->Commit();
  });
}

Error WriteConvertedFile(const Checkpoint& checkpoint, Dtype target, const std::string& path,
                         size_t* out_num_converted,
                         const std::function<void(uint64_t bytes)>& progress) {
  return CatchOutOfMemory("out of memory while writing", [&]() -> Error {
    if (Error error = CheckConversionTarget(target); !error.ok()) return error;
    CanonicalStream stream(checkpoint, /*copy_data=*/true, target);
    if (Error error = stream.Plan(); !error.ok()) return error;
    Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
    if (!file.ok()) return file.error();
    ProgressSink counted(**file, progress);
    ByteSink& sink = progress ? static_cast<ByteSink&>(counted) : **file;
    if (Error error = stream.WriteTo(sink); !error.ok()) {
      (*file)->Abort();
      return error;
    }
    if (Error error = (*file)->Commit(); !error.ok()) return error;
    if (out_num_converted != nullptr) *out_num_converted = stream.num_converted();
    return Error{};
  });
}

Error WriteConverted(const Checkpoint& checkpoint, Dtype target, ByteSink& sink,
                     size_t* out_num_converted) {
  return CatchOutOfMemory("out of memory while writing", [&]() -> Error {
    if (Error error = CheckConversionTarget(target); !error.ok()) return error;
    CanonicalStream stream(checkpoint, /*copy_data=*/true, target);
    if (Error error = stream.Plan(); !error.ok()) return error;
    if (Error error = stream.WriteTo(sink); !error.ok()) return error;
    if (out_num_converted != nullptr) *out_num_converted = stream.num_converted();
    return Error{};
  });
}

Error WriteCanonical(const Checkpoint& checkpoint, ByteSink& sink) {
  return CatchOutOfMemory("out of memory while writing", [&]() -> Error {
    CanonicalStream stream(checkpoint, /*copy_data=*/true);
    if (Error error = stream.Plan(); !error.ok()) return error;
    return stream.WriteTo(sink);
  });
}

}  // namespace stguard
