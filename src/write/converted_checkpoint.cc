// SPDX-License-Identifier: Apache-2.0
// AddConvertedCheckpoint: a checkpoint's tensors handed to a Writer, each floating tensor
// converted as the writer streams it (element conversion itself is src/data/convert.cc).
#include <algorithm>
#include <vector>

#include "base/out_of_memory.h"
#include "data/conversion_target.h"
#include "stguard/convert.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard {
namespace {

// kStep is the number of elements read, converted and written at a time.
constexpr uint64_t kStep = 16384;

}  // namespace

Error AddConvertedCheckpoint(const Checkpoint& checkpoint, Dtype target, Writer* writer,
                             size_t* out_num_converted) {
  return CatchOutOfMemory("out of memory while adding tensors to the writer", [&]() -> Error {
    if (Error error = CheckConversionTarget(target); !error.ok()) return error;
    size_t num_converted = 0;
    const Checkpoint* source = &checkpoint;
    const uint64_t data_start = 8 + checkpoint.header_len();
    for (const TensorView& tensor : checkpoint.tensors()) {
      const bool convert = ChangesDtype(tensor.dtype, target);
      const Dtype src_dtype = tensor.dtype;
      const Dtype dst_dtype = convert ? target : tensor.dtype;
      // Whole elements per step (F4 packs 2 per byte, F6 4 per 3 bytes): step by bytes
      // that are a multiple of 3 and of every element size.
      const size_t src_size = convert ? ElementSize(src_dtype) : 3;
      const size_t dst_size = convert ? ElementSize(dst_dtype) : 3;
      const uint64_t count = tensor.byte_size() / src_size;
      const uint64_t begin = data_start + tensor.begin;
      const uint64_t tail = tensor.byte_size() - count * src_size;  // copies: 0..2 bytes
      // The producer runs when the writer reaches this tensor. It reads the source with
      // Checkpoint::ReadData (pread for a file, never the mapping: a file truncated meanwhile
      // is kIoError, not SIGBUS), kStep elements at a time into one reused buffer.
      TensorProducer producer = [source, begin, src_dtype, dst_dtype, convert, src_size,
                                 dst_size, count, tail](ByteSink& sink) -> Error {
        const auto step = static_cast<size_t>(std::min<uint64_t>(kStep, count));
        std::vector<std::byte> in(std::max<size_t>(step * src_size, 3));
        std::vector<std::byte> out(convert ? step * dst_size : 0);
        for (uint64_t done = 0; done < count;) {
          const auto n = static_cast<size_t>(std::min<uint64_t>(kStep, count - done));
          const std::span<std::byte> src(in.data(), n * src_size);
          if (Error error = source->ReadData(begin + done * src_size, src); !error.ok()) {
            return error;
          }
          if (convert) {
            const std::span<std::byte> dst(out.data(), n * dst_size);
            if (Error error = ConvertElements(src_dtype, src, dst_dtype, dst); !error.ok()) {
              return error;
            }
            if (Error error = sink.Write(dst); !error.ok()) return error;
          } else if (Error error = sink.Write(src); !error.ok()) {
            return error;
          }
          done += n;
        }
        if (tail > 0) {
          const std::span<std::byte> rest(in.data(), static_cast<size_t>(tail));
          if (Error error = source->ReadData(begin + count * src_size, rest); !error.ok()) {
            return error;
          }
          if (Error error = sink.Write(rest); !error.ok()) return error;
        }
        return Error{};
      };
      const uint64_t out_len = convert ? count * dst_size : tensor.byte_size();
      Error added = writer->AddTensor(tensor.name, dst_dtype, tensor.shape, out_len,
                                      std::move(producer));
      if (convert) ++num_converted;
      if (!added.ok()) return added;
    }
    for (const MetadataEntry& entry : checkpoint.metadata()) {
      if (Error error = writer->AddMetadata(entry.key, entry.value); !error.ok()) return error;
    }
    if (out_num_converted != nullptr) *out_num_converted = num_converted;
    return Error{};
  });
}

}  // namespace stguard
