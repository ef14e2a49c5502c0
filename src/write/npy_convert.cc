// SPDX-License-Identifier: Apache-2.0
// A validated .npy array rewritten as a one-tensor safetensors file: the bytes stream from
// the mapped file through a fixed buffer into the crash-safe writer, byte-swapped when
// the array is big-endian and reordered when it is stored in Fortran order (safetensors
// is little-endian, row-major).
#include "stguard/npy_convert.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "stguard/npz.h"
#include "stguard/writer.h"
#include "write/converting_sink.h"

namespace stguard {

namespace {

constexpr size_t kChunkLen = size_t{1} << 20;

// SwapScalars reverses the bytes of every `scalar_size`-byte value in `bytes`.
void SwapScalars(std::span<std::byte> bytes, uint64_t scalar_size) {
  if (scalar_size <= 1) return;
  for (size_t i = 0; i + scalar_size <= bytes.size(); i += scalar_size) {
    std::reverse(bytes.begin() + static_cast<ptrdiff_t>(i),
                 bytes.begin() + static_cast<ptrdiff_t>(i + scalar_size));
  }
}

// ChunkWriter fills a fixed buffer, swaps it if needed, and hands it to the sink.
class ChunkWriter {
 public:
  ChunkWriter(ByteSink& sink, const NpyType& type)
      : sink_(sink), swap_(type.byte_order == NpyByteOrder::kBig ? type.scalar_size : 1) {
    // Whole elements per chunk, so no value is split between two swaps.
    buffer_.reserve(std::max<size_t>(kChunkLen / type.itemsize, 1) * type.itemsize);
  }
  Error Append(std::span<const std::byte> element) {
    if (buffer_.size() + element.size() > buffer_.capacity()) {
      if (Error e = Flush(); !e.ok()) return e;
    }
    buffer_.insert(buffer_.end(), element.begin(), element.end());
    return {};
  }
  // AppendStream takes bytes that may split elements anywhere: the buffer holds whole
  // elements when full, so it is flushed exactly then (and the stream ends on an element).
  Error AppendStream(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const size_t n = std::min(bytes.size(), buffer_.capacity() - buffer_.size());
      buffer_.insert(buffer_.end(), bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
      bytes = bytes.subspan(n);
      if (buffer_.size() == buffer_.capacity()) {
        if (Error e = Flush(); !e.ok()) return e;
      }
    }
    return {};
  }
  Error Flush() {
    SwapScalars(buffer_, swap_);
    Error e = sink_.Write(buffer_);
    buffer_.clear();
    return e;
  }

 private:
  ByteSink& sink_;
  uint64_t swap_;
  std::vector<std::byte> buffer_;
};

// StreamCOrder writes data that is already row-major, a chunk of whole elements at a time.
Error StreamCOrder(std::span<const std::byte> data, const NpyType& type, ByteSink& sink) {
  ChunkWriter writer(sink, type);
  const size_t step = std::max<size_t>(kChunkLen / type.itemsize, 1) * type.itemsize;
  for (size_t at = 0; at < data.size(); at += step) {
    if (Error e = writer.Append(data.subspan(at, std::min(step, data.size() - at))); !e.ok()) {
      return e;
    }
  }
  return writer.Flush();
}

// StreamFortranOrder walks the row-major index with an odometer and copies each element
// from its column-major position (strides itemsize, itemsize*shape[0], ...).
Error StreamFortranOrder(std::span<const std::byte> data, const NpyArrayInfo& info,
                         ByteSink& sink) {
  const size_t rank = info.shape.size();
  std::vector<uint64_t> strides(rank), index(rank, 0);
  uint64_t stride = info.type.itemsize;
  for (size_t k = 0; k < rank; ++k) {
    strides[k] = stride;
    stride *= info.shape[k];  // no overflow: the total was checked by ParseNpy
  }
  ChunkWriter writer(sink, info.type);
  const uint64_t count = info.data_len / info.type.itemsize;
  uint64_t offset = 0;
  for (uint64_t n = 0; n < count; ++n) {
    if (Error e = writer.Append(data.subspan(offset, info.type.itemsize)); !e.ok()) return e;
    for (size_t k = rank; k-- > 0;) {  // advance the last axis first (row-major)
      offset += strides[k];
      if (++index[k] < info.shape[k]) break;
      offset -= strides[k] * index[k];
      index[k] = 0;
    }
  }
  return writer.Flush();
}

// StreamFortranMatrix writes a 2-D Fortran-order array (shape rows x cols, stored as cols
// columns of rows elements) row-major, a band of whole output rows at a time: for each
// column the band's elements are contiguous in the input, and the band's rows (at most
// kBandLen bytes, at least one row) stay in cache while the columns are read across. This
// blocked transpose replaces the per-element odometer for matrices.
Error StreamFortranMatrix(std::span<const std::byte> data, const NpyArrayInfo& info,
                          ByteSink& sink) {
  constexpr uint64_t kBandLen = uint64_t{4} << 20;
  const size_t size = info.type.itemsize;
  const uint64_t rows = info.shape[0], cols = info.shape[1];
  const uint64_t row_bytes = cols * size;  // no overflow: the total was checked by ParseNpy
  const uint64_t band = std::clamp<uint64_t>(kBandLen / row_bytes, 1, rows);
  std::vector<std::byte> buffer(band * row_bytes);
  const uint64_t swap = info.type.byte_order == NpyByteOrder::kBig ? info.type.scalar_size : 1;
  for (uint64_t first = 0; first < rows; first += band) {
    const uint64_t count = std::min(band, rows - first);
    for (uint64_t j = 0; j < cols; ++j) {
      const std::byte* column = data.data() + (j * rows + first) * size;
      std::byte* out = buffer.data() + j * size;
      for (uint64_t k = 0; k < count; ++k) {
        std::memcpy(out + k * row_bytes, column + k * size, size);
      }
    }
    const std::span<std::byte> rows_done(buffer.data(), count * row_bytes);
    SwapScalars(rows_done, swap);
    if (Error e = sink.Write(rows_done); !e.ok()) return e;
  }
  return {};
}

// NoDtypeError is the refusal of a type safetensors cannot hold, naming the array.
Error NoDtypeError(const NpyArrayInfo& info, uint64_t offset, const std::string& name) {
  return Error{ErrorCode::kInvalidDtype, offset,
               "safetensors has no dtype for this .npy type (c16, S, U, M and m have none)",
               info.descr, name};
}

// StreamArray writes a mapped array's data (C or Fortran order) as row-major bytes.
Error StreamArray(std::span<const std::byte> data, const NpyArrayInfo& info, ByteSink& sink) {
  // Fortran order only differs from C order when two or more axes are longer than 1;
  // the odometer handles every case, the plain copy is the fast path.
  const bool reorder = info.fortran_order && info.shape.size() > 1;
  if (reorder && info.shape.size() == 2 && info.data_len > 0) {
    return StreamFortranMatrix(data, info, sink);
  }
  return reorder ? StreamFortranOrder(data, info, sink) : StreamCOrder(data, info.type, sink);
}

// StreamDeflatedMember writes a deflated .npz member's array: a C-order array streams
// through the inflater's buffer; a Fortran-order one needs random access, so it is
// inflated whole first (memory: that member's data).
Error StreamDeflatedMember(std::span<const std::byte> archive, const NpzMember& member,
                           ByteSink& sink) {
  const NpyArrayInfo& info = member.array;
  if (info.fortran_order && info.shape.size() > 1) {
    std::vector<std::byte> whole;
    whole.reserve(info.data_len);
    if (Error e = StreamNpzMember(archive, member, info.data_offset,
                                  [&](std::span<const std::byte> chunk) {
                                    whole.insert(whole.end(), chunk.begin(), chunk.end());
                                    return Error{};
                                  });
        !e.ok()) {
      return e;
    }
    return StreamArray(whole, info, sink);
  }
  ChunkWriter writer(sink, info.type);
  if (Error e = StreamNpzMember(archive, member, info.data_offset,
                                [&](std::span<const std::byte> chunk) {
                                  return writer.AppendStream(chunk);
                                });
      !e.ok()) {
    return e;
  }
  return writer.Flush();
}

}  // namespace

Error NpzToSafetensors(const std::string& npz_path, const std::string& out_path,
                       size_t* num_tensors) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(npz_path);
  if (!file.ok()) return file.error();
  const std::span<const std::byte> bytes = (*file)->bytes();
  Result<NpzInfo> parsed = ParseNpz(bytes);
  if (!parsed.ok()) return parsed.error();
  const NpzInfo& npz = *parsed;
  for (const NpzMember& member : npz.members) {  // refuse before anything is written
    if (!member.array.type.dtype) {
      return NoDtypeError(member.array, member.data_offset, member.key);
    }
  }
  Writer writer;
  for (const NpzMember& member : npz.members) {
    const NpyArrayInfo& info = member.array;
    Error added = writer.AddTensor(
        member.key, *info.type.dtype, std::span<const uint64_t>(info.shape), info.data_len,
        [&bytes, &member](ByteSink& sink) {
          if (member.compressed) return StreamDeflatedMember(bytes, member, sink);
          const NpyArrayInfo& array = member.array;
          return StreamArray(bytes.subspan(member.data_offset + array.data_offset,
                                           array.data_len),
                             array, sink);
        });
    if (!added.ok()) return added;
  }
  Error written = writer.WriteToFile(out_path);
  if (written.ok() && num_tensors != nullptr) *num_tensors = writer.num_tensors();
  return written;
}

Error NpyArrayToSafetensors(const std::string& npy_path, const std::string& out_path,
                            const std::string& tensor_name, std::optional<Dtype> dtype) {
  if (dtype.has_value() && !IsConversionTarget(*dtype)) {
    return Error{ErrorCode::kInvalidArgument, 0, "the target dtype must be F32, F16 or BF16",
                 std::string(DtypeName(*dtype))};
  }
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(npy_path);
  if (!file.ok()) return file.error();
  const std::span<const std::byte> bytes = (*file)->bytes();
  Result<NpyArrayInfo> parsed = ParseNpy(bytes, bytes.size());
  if (!parsed.ok()) return parsed.error();
  const NpyArrayInfo info = std::move(*parsed);
  if (!info.type.dtype) return NoDtypeError(info, info.data_offset, tensor_name);
  const std::span<const std::byte> data = bytes.subspan(info.data_offset, info.data_len);
  const Dtype from = *info.type.dtype;
  const bool convert = dtype.has_value() && IsConvertibleFloat(from) && from != *dtype;
  const Dtype to = convert ? *dtype : from;
  const uint64_t out_len = convert ? info.data_len / ElementSize(from) * ElementSize(to)
                                   : info.data_len;
  auto stream = [&](ByteSink& sink) { return StreamArray(data, info, sink); };
  Writer writer;
  Error added = writer.AddTensor(
      tensor_name, to, std::span<const uint64_t>(info.shape), out_len,
      [&](ByteSink& sink) -> Error {
        if (!convert) return stream(sink);
        // The streams above hand on little-endian elements: convert them as they pass.
        ConvertingSink converting(from, to, sink);
        if (Error error = stream(converting); !error.ok()) return error;
        return converting.Finish();
      });
  if (!added.ok()) return added;
  return writer.WriteToFile(out_path);
}

}  // namespace stguard
