// SPDX-License-Identifier: Apache-2.0
// The .npy and .npz adapters of the conversion pipeline (convert/pipeline.h): a validated
// .npy array, or every array of an .npz, yielded as tensor sources whose bytes stream from
// the mapped file (through the inflater, once, for a deflated member) through fixed
// buffers, byte-swapped when the array is big-endian and reordered when it is stored in
// Fortran order (safetensors is little-endian, row-major); the pipeline converts them to
// another floating dtype when asked and writes them crash-safely.
#include "stguard/npy_convert.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "base/huge_pages.h"
#include "base/page_release.h"
#include "convert/pipeline.h"
#include "data/fortran_order.h"
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

// StreamCOrder writes data that is already row-major, a chunk of whole elements at a time,
// handing the input's pages back behind it (so a mapped file larger than memory streams
// in a bounded resident set).
Error StreamCOrder(std::span<const std::byte> data, const NpyType& type, ByteSink& sink) {
  ChunkWriter writer(sink, type);
  const size_t step = std::max<size_t>(kChunkLen / type.itemsize, 1) * type.itemsize;
  size_t released = 0;
  for (size_t at = 0; at < data.size(); at += step) {
    if (Error e = writer.Append(data.subspan(at, std::min(step, data.size() - at))); !e.ok()) {
      return e;
    }
    released = ReleaseReadPages(data, released, at);  // bytes before `at` are written
  }
  return writer.Flush();
}

// ColumnRuns visits the columns of a Fortran-order array of shape (d0, d1, ..., dn-1)
// seen as a d0 x R matrix (R = d1 * ... * dn-1): column j holds the d0 elements sharing
// (i1, ..., in-1), stored contiguously from element j * d0, where j is the Fortran (first
// axis fastest) index of (i1, ..., in-1). Row-major output wants the columns in C order
// (last axis fastest), which comes in runs of dn-1 columns a constant `stride()` apart;
// Next() moves to the next run with an odometer over the axes between (no allocation
// beyond the rank).
class ColumnRuns {
 public:
  explicit ColumnRuns(std::span<const uint64_t> shape)
      : dims_(shape.begin() + 1, shape.end() - 1), strides_(dims_.size()),
        index_(dims_.size()), length_(shape.back()) {
    uint64_t stride = 1;
    for (size_t k = 0; k < dims_.size(); ++k) {
      strides_[k] = stride;
      stride *= dims_[k];  // no overflow: the total was checked by ParseNpy
    }
    stride_ = stride;
  }
  uint64_t first() const { return first_; }    // the run's first column
  uint64_t stride() const { return stride_; }  // between its columns
  uint64_t length() const { return length_; }  // its columns: dn-1
  void Next() {
    for (size_t k = dims_.size(); k-- > 0;) {
      first_ += strides_[k];
      if (++index_[k] < dims_[k]) return;
      first_ -= strides_[k] * index_[k];
      index_[k] = 0;
    }
  }

 private:
  std::vector<uint64_t> dims_, strides_, index_;
  uint64_t length_, stride_ = 1, first_ = 0;
};

// CopyStrided copies `count` elements of `Size` bytes from `in` to `out`, the source
// elements `in_step` bytes apart and the destinations `out_step` apart: a constant size
// lets each copy compile to a plain move.
template <size_t Size>
void CopyStrided(const std::byte* in, uint64_t in_step, std::byte* out, uint64_t out_step,
                 uint64_t count) {
  for (uint64_t k = 0; k < count; ++k) std::memcpy(out + k * out_step, in + k * in_step, Size);
}

void CopyStridedAnySize(const std::byte* in, uint64_t in_step, std::byte* out,
                        uint64_t out_step, uint64_t count, size_t size) {
  switch (size) {
    case 1: return CopyStrided<1>(in, in_step, out, out_step, count);
    case 2: return CopyStrided<2>(in, in_step, out, out_step, count);
    case 4: return CopyStrided<4>(in, in_step, out, out_step, count);
    case 8: return CopyStrided<8>(in, in_step, out, out_step, count);
    default:
      for (uint64_t k = 0; k < count; ++k) std::memcpy(out + k * out_step, in + k * in_step, size);
  }
}

// A Fortran-order array is reordered through a buffer of a band of whole output rows:
// kBandLen when rows are short; else at least a cache line's worth of rows (so each line
// read from a column is used whole), up to kMaxBandLen; rows wider than that are gathered
// kBandLen bytes at a time. Memory: at most kMaxBandLen.
constexpr uint64_t kBandLen = uint64_t{4} << 20;
constexpr uint64_t kMaxBandLen = uint64_t{64} << 20;
constexpr uint64_t kCacheLine = 64;

// BandRows is how many whole output rows of `row_bytes` a band holds, or 0 when a row
// is wider than kMaxBandLen (it is then gathered in pieces).
uint64_t BandRows(uint64_t rows, uint64_t row_bytes, size_t size) {
  if (row_bytes > kMaxBandLen) return 0;
  const uint64_t line_rows = std::max<uint64_t>(kCacheLine / size, 1);
  const uint64_t wanted = std::max(kBandLen / row_bytes, line_rows);
  return std::clamp<uint64_t>(std::min(wanted, kMaxBandLen / row_bytes), 1, rows);
}

// StreamFortranOrder writes a Fortran-order array of rank 2 or more row-major. Output row
// i0 is element i0 of every column in C order (ColumnRuns). A band of whole rows is built
// at a time, a blocked transpose: each column's elements for the band are contiguous in
// the input and land one row apart in the band. A row too wide for a band is gathered
// alone, a piece at a time.
Error StreamFortranOrder(std::span<const std::byte> data, const NpyArrayInfo& info,
                         ByteSink& sink) {
  const size_t size = info.type.itemsize;
  const uint64_t rows = info.shape[0];
  const uint64_t row_bytes = info.data_len / rows;  // data_len > 0: rows > 0
  const uint64_t run_count = row_bytes / size / info.shape.back();
  const uint64_t swap = info.type.byte_order == NpyByteOrder::kBig ? info.type.scalar_size : 1;
  const uint64_t band = BandRows(rows, row_bytes, size);
  // Not zeroed, and on huge pages where the kernel has them: the band (up to 64 MiB) is
  // written whole before it is read, and faulting it in 4 KiB pages cost as much system
  // time as the transpose (64 MiB 3-D 1-byte array: 0.09 s system against 0.05 s user).
  const size_t buffer_len = band > 0 ? band * row_bytes : kBandLen / size * size;
  const auto band_memory = std::make_unique_for_overwrite<std::byte[]>(buffer_len);
  AdviseHugePages(band_memory.get(), buffer_len);
  const std::span<std::byte> buffer(band_memory.get(), buffer_len);
  auto write = [&](size_t len) {
    const std::span<std::byte> done(buffer.data(), len);
    SwapScalars(done, swap);
    return sink.Write(done);
  };
  const uint64_t step = std::max<uint64_t>(band, 1);
  for (uint64_t first = 0; first < rows; first += step) {
    const uint64_t count = std::min(step, rows - first);
    if (band > 0) {  // whole rows: a cache-blocked transpose (data/fortran_order.h)
      FortranRowsToC(data, info.shape, size, first, count, buffer.data());
      if (Error e = write(count * row_bytes); !e.ok()) return e;
      continue;
    }
    size_t filled = 0;  // bytes of the buffer built: a band's first row, or a wide piece
    ColumnRuns runs(info.shape);
    for (uint64_t r = 0; r < run_count; ++r, runs.Next()) {
      const std::byte* in = data.data() + (runs.first() * rows + first) * size;
      const uint64_t in_step = runs.stride() * rows * size;
      for (uint64_t t = 0; t < runs.length();) {
        const uint64_t n = std::min<uint64_t>(runs.length() - t, (buffer.size() - filled) / size);
        CopyStridedAnySize(in + t * in_step, in_step, buffer.data() + filled, size, n, size);
        filled += n * size;
        t += n;
        if (filled == buffer.size()) {
          if (Error e = write(filled); !e.ok()) return e;
          filled = 0;
        }
      }
    }
    if (filled > 0) {
      if (Error e = write(filled); !e.ok()) return e;
    }
  }
  return {};
}

// NoDtypeError is the refusal of a type safetensors cannot hold, naming the array.
Error NoDtypeError(const NpyArrayInfo& info, uint64_t offset, const std::string& name) {
  return Error{ErrorCode::kInvalidDtype, offset,
               "safetensors has no dtype for this .npy type (c16, f16, c32, S, U, V, M and m "
               "have none)",
               info.descr, name};
}

// StreamArray writes a mapped array's data (C or Fortran order) as row-major bytes.
Error StreamArray(std::span<const std::byte> data, const NpyArrayInfo& info, ByteSink& sink) {
  // Fortran order only differs from C order for two or more axes (and some data).
  const bool reorder = info.fortran_order && info.shape.size() > 1 && info.data_len > 0;
  return reorder ? StreamFortranOrder(data, info, sink) : StreamCOrder(data, info.type, sink);
}

// StreamDeflatedMember writes a deflated .npz member's array, inflating it once: a C-order
// array streams through the inflater's buffer; a Fortran-order one needs random access,
// so it is inflated whole first (memory: that member's data, at most kDeflateMaxRatio
// times its compressed size). StreamNpzMember checks the DEFLATE stream and the CRC-32 as
// it goes: a member that fails them fails the tensor, and the writer publishes nothing.
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

// ArraySource is one array as a tensor source. `stream` writes the array's little-endian
// row-major bytes; `info` must outlive the conversion.
TensorSource ArraySource(std::string_view name, const NpyArrayInfo& info, TensorProducer stream) {
  return TensorSource{name, *info.type.dtype, info.shape, info.data_len, std::move(stream)};
}

// ConvertNpy writes `sources` as the pipeline does and reports the counts asked for.
Error ConvertNpy(TensorSources sources, std::optional<Dtype> dtype,
                 const std::function<void(uint64_t bytes)>& progress, const std::string& out,
                 size_t* num_tensors, size_t* num_converted) {
  ConvertedFile done;
  if (Error e = Convert(std::move(sources), ConversionPlan{dtype, progress}, out, &done);
      !e.ok()) {
    return e;
  }
  if (num_tensors != nullptr) *num_tensors = done.num_tensors;
  if (num_converted != nullptr) *num_converted = done.num_converted;
  return {};
}

}  // namespace

Error NpzToSafetensors(const std::string& npz_path, const std::string& out_path,
                       std::optional<Dtype> dtype, size_t* num_tensors,
                       const std::function<void(uint64_t bytes)>& progress,
                       size_t* num_converted) {
  if (Error e = CheckPlan(ConversionPlan{dtype, {}}); !e.ok()) return e;
  if (Error e = CheckOutputIsNotInput(npz_path, out_path); !e.ok()) return e;
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(npz_path);
  if (!file.ok()) return file.error();
  const std::span<const std::byte> bytes = (*file)->bytes();
  // Deflated members are inflated once, as they are written: their streams and CRC-32s
  // are checked then, and a failure leaves no output (the writer is crash-safe).
  Result<NpzInfo> parsed = ParseNpz(bytes, NpzDepth::kHeaders);
  if (!parsed.ok()) return parsed.error();
  const NpzInfo& npz = *parsed;
  TensorSources sources;
  for (const NpzMember& member : npz.members) {  // refuse before anything is written
    if (!member.array.type.dtype) {
      return NoDtypeError(member.array, member.data_offset, member.key);
    }
    sources.tensors.push_back(
        ArraySource(member.key, member.array, [&bytes, &member](ByteSink& sink) {
          if (member.compressed) return StreamDeflatedMember(bytes, member, sink);
          const NpyArrayInfo& array = member.array;
          return StreamArray(
              bytes.subspan(member.data_offset + array.data_offset, array.data_len), array,
              sink);
        }));
  }
  return ConvertNpy(std::move(sources), dtype, progress, out_path, num_tensors, num_converted);
}

Error NpyArrayToSafetensors(const std::string& npy_path, const std::string& out_path,
                            const std::string& tensor_name, std::optional<Dtype> dtype,
                            const std::function<void(uint64_t bytes)>& progress,
                            size_t* num_converted) {
  if (Error e = CheckPlan(ConversionPlan{dtype, {}}); !e.ok()) return e;
  if (Error e = CheckOutputIsNotInput(npy_path, out_path); !e.ok()) return e;
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(npy_path);
  if (!file.ok()) return file.error();
  const std::span<const std::byte> bytes = (*file)->bytes();
  Result<NpyArrayInfo> parsed = ParseNpy(bytes, bytes.size());
  if (!parsed.ok()) return parsed.error();
  const NpyArrayInfo info = std::move(*parsed);
  if (!info.type.dtype) return NoDtypeError(info, info.data_offset, tensor_name);
  const std::span<const std::byte> data = bytes.subspan(info.data_offset, info.data_len);
  TensorSources sources;
  sources.tensors.push_back(ArraySource(
      tensor_name, info, [&](ByteSink& sink) { return StreamArray(data, info, sink); }));
  return ConvertNpy(std::move(sources), dtype, progress, out_path, nullptr, num_converted);
}

}  // namespace stguard
