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
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/huge_pages.h"
#include "base/page_release.h"
#include "convert/pipeline.h"
#include "data/fortran_order.h"
#include "stguard/convert.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "stguard/npz.h"
#include "stguard/writer.h"
#include "write/converting_sink.h"
#include "write/placing_sink.h"

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

// ---- A deflated Fortran-order member, placed into the output file as it inflates.
//
// The stream comes in Fortran order, the output wants C order: the inflated bytes are
// gathered in a buffer and each buffer's elements stored at their C-order places in the
// output file, mapped (write/placing_sink.h); the mapping's pages are handed back to the
// kernel every kPlaceWindow of output, so the process holds the buffer (at most
// kMaxBandLen, 64 MiB, less for a smaller member) and about kPlaceWindow of output pages,
// whatever the array's size. A slab is the elements sharing the last index (d0 * ... *
// dn-2 of them, contiguous in the stream): when one fits the buffer, the buffer holds
// whole slabs, a Fortran-order block of the array that FortranBlockToC places with the
// cache-blocked transpose; a larger slab is placed a column piece at a time. With
// --dtype, each buffer's elements are converted (ConvertElements, as ConvertingSink does)
// into a second buffer before they are placed: the two share the kMaxBandLen, and the
// placing works in output elements.
constexpr uint64_t kPlaceWindow = uint64_t{16} << 20;
constexpr uint64_t kPageLen = 4096;
constexpr uint64_t kPreparePages = 16;
constexpr uint64_t kTlbRows = 256;

// ElementConversion is the --dtype conversion a ConvertingSink would apply.
struct ElementConversion {
  Dtype from;
  Dtype to;
};

class FortranPlacer {
 public:
  FortranPlacer(const NpyArrayInfo& info, std::optional<ElementConversion> conversion,
                std::byte* out, PlacingSink& placing)
      : info_(info), shape_(info.shape), in_size_(info.type.itemsize),
        size_(conversion ? ElementSize(conversion->to) : in_size_), conversion_(conversion),
        out_(out), placing_(placing), row_(info.data_len / in_size_ / shape_[0] * size_),
        slab_elements_(info.data_len / in_size_ / shape_.back()),
        swap_(info.type.byte_order == NpyByteOrder::kBig ? info.type.scalar_size : 1),
        index_(shape_.size(), 0), c_steps_(shape_.size(), 1) {
    for (size_t k = shape_.size() - 1; k-- > 1;) c_steps_[k] = c_steps_[k + 1] * shape_[k + 1];
    // Buffer bytes per element: the inflated one, and its converted copy.
    const uint64_t unit = in_size_ + (conversion ? size_ : 0);
    whole_slabs_ = slab_elements_ * unit <= kMaxBandLen;
    const uint64_t elements =
        whole_slabs_ ? std::min(shape_.back(), kMaxBandLen / (slab_elements_ * unit)) *
                           slab_elements_
                     : std::min(info.data_len / in_size_, kMaxBandLen / unit);
    capacity_ = elements * in_size_;
    buffer_ = std::make_unique_for_overwrite<std::byte[]>(capacity_);
    AdviseHugePages(buffer_.get(), capacity_);
    if (conversion) converted_ = std::make_unique_for_overwrite<std::byte[]>(elements * size_);
  }

  // Append takes the next inflated bytes (any split). StreamNpzMember passes exactly the
  // member's declared data; more would be stored past the placed range, so it is refused
  // here too.
  Error Append(std::span<const std::byte> bytes) {
    if (bytes.size() > info_.data_len - received_) return SizeError();
    received_ += bytes.size();
    while (!bytes.empty()) {
      const size_t n = std::min<size_t>(bytes.size(), capacity_ - filled_);
      std::memcpy(buffer_.get() + filled_, bytes.data(), n);
      filled_ += n;
      bytes = bytes.subspan(n);
      if (filled_ == capacity_) {
        if (Error e = Place(); !e.ok()) return e;
      }
    }
    return {};
  }
  // Finish places what the buffer still holds; every declared byte must have come.
  Error Finish() {
    if (received_ != info_.data_len) return SizeError();
    return filled_ > 0 ? Place() : Error{};
  }

 private:
  // Place stores the buffer's elements (whole: the capacity and the data are multiples of
  // the element size), swapped to little-endian and converted first when asked.
  Error Place() {
    const uint64_t count = filled_ / in_size_;
    const std::span<std::byte> in(buffer_.get(), count * in_size_);
    SwapScalars(in, swap_);
    const std::byte* placed = buffer_.get();
    if (conversion_) {
      const std::span<std::byte> to(converted_.get(), count * size_);
      if (Error e = ConvertElements(conversion_->from, in, conversion_->to, to); !e.ok()) {
        return e;
      }
      placed = converted_.get();
    }
    if (whole_slabs_) {
      PlaceSlabs(placed, count / slab_elements_);
    } else {
      PlaceColumns(placed, count);
    }
    filled_ = 0;
    return {};
  }

  // PlaceSlabs stores the `count` slabs at `placed` (last index from next_slab_) in units of
  // rows by runs whose output pages come to about kPlaceWindow: at least a cache line's
  // worth of rows (each line read from the buffer is used whole), then as many runs as
  // fit, counting each run's piece of a row as touching a page more than its bytes.
  void PlaceSlabs(const std::byte* placed, uint64_t count) {
    std::vector<uint64_t> block(shape_.begin(), shape_.end());
    block.back() = count;
    const uint64_t run_bytes = shape_.back() * size_;
    const uint64_t runs = row_ / run_bytes;
    const uint64_t line_rows = std::max<uint64_t>(kCacheLine / size_, 1);
    const uint64_t touched = count * size_ + kPageLen;  // per row and run, at most
    // Rows of one run are a page apart or more when rows are wide: a unit of many rows
    // would store each column's elements to as many 4 KiB pages of the mapping, more than
    // the TLB holds (a 23170 x 23170 |u1 member took tens of seconds). kTlbRows caps that.
    const uint64_t fit_rows = std::max(kPlaceWindow / (runs * touched), line_rows);
    const uint64_t rows_per = std::clamp<uint64_t>(
        row_ >= kPageLen ? std::min(fit_rows, std::max(kTlbRows, line_rows)) : fit_rows, 1,
        shape_[0]);
    const uint64_t runs_per =
        std::clamp<uint64_t>(kPlaceWindow / (rows_per * touched), 1, runs);
    const std::span<const std::byte> data(placed, count * slab_elements_ * size_);
    for (uint64_t a = 0; a < shape_[0]; a += rows_per) {
      const uint64_t n = std::min(rows_per, shape_[0] - a);
      for (uint64_t r = 0; r < runs; r += runs_per) {
        const uint64_t nr = std::min(runs_per, runs - r);
        const uint64_t at = a * row_ + r * run_bytes + next_slab_ * size_;
        Prepare(at, n, (nr - 1) * run_bytes + count * size_, run_bytes <= touched);
        FortranBlockToC(data, block, size_, a, n, r, nr, out_ + at, row_, run_bytes);
        placing_.ReleasePlaced(at, (n - 1) * row_ + (nr - 1) * run_bytes + count * size_);
      }
    }
    next_slab_ += count;
  }

  // Prepare maps the pages `n` rows from `at` will take, a row's `span` bytes each, in
  // a call per row where the row's pieces fill most of its pages (`dense`) and span
  // enough of them (kPreparePages) to be worth a call.
  void Prepare(uint64_t at, uint64_t n, uint64_t span, bool dense) {
    if (!dense || span < kPreparePages * kPageLen) return;
    for (uint64_t i = 0; i < n; ++i) placing_.PreparePlaced(at + i * row_, span);
  }

  // PlaceColumns stores the `count` elements at `in`, which continue the stream from
  // row row_at_ of the column whose C-order place is column_at_: each column piece goes
  // one output row apart, its pages handed back about every kPlaceWindow.
  // Short columns (a small d0) add up: the pages are handed back once the pieces since
  // the last release may have touched kPlaceWindow, over the span they covered.
  void PlaceColumns(const std::byte* in, uint64_t count) {
    const uint64_t rows_per = std::max<uint64_t>(kPlaceWindow / std::max(row_, kPageLen), 1);
    uint64_t touched = 0;
    uint64_t low = UINT64_MAX;
    uint64_t high = 0;
    while (count > 0) {
      const uint64_t n = std::min({count, shape_[0] - row_at_, rows_per});
      const uint64_t at = row_at_ * row_ + column_at_ * size_;
      CopyStridedAnySize(in, size_, out_ + at, row_, n, size_);
      touched += row_ >= kPageLen ? n * kPageLen : n * row_ + kPageLen;
      low = std::min(low, at);
      high = std::max(high, at + (n - 1) * row_ + size_);
      if (touched >= kPlaceWindow || n == count) {
        placing_.ReleasePlaced(low, high - low);
        touched = 0;
        low = UINT64_MAX;
        high = 0;
      }
      in += n * size_;
      count -= n;
      row_at_ += n;
      if (row_at_ == shape_[0]) NextColumn();
    }
  }

  static Error SizeError() {
    return Error{ErrorCode::kInvalidArgument, 0,
                 "the member's data is not the size its .npy header declares", "", ""};
  }

  // NextColumn moves to the next column of the stream: axes 1.. in Fortran order (axis 1
  // fastest), column_at_ its C-order place (c_steps_[k]: axis k's C-order step).
  void NextColumn() {
    row_at_ = 0;
    for (size_t k = 1; k < shape_.size(); ++k) {
      column_at_ += c_steps_[k];
      if (++index_[k] < shape_[k]) return;
      column_at_ -= c_steps_[k] * index_[k];
      index_[k] = 0;
    }
  }

  const NpyArrayInfo& info_;
  std::span<const uint64_t> shape_;
  size_t in_size_;  // bytes of an element as inflated
  size_t size_;     // as placed: converted to the --dtype target when there is one
  std::optional<ElementConversion> conversion_;
  std::byte* out_;
  PlacingSink& placing_;
  uint64_t row_;            // bytes of an output row
  uint64_t slab_elements_;  // elements of a slab
  uint64_t swap_;
  bool whole_slabs_ = true;  // the buffer holds whole slabs (else column pieces)
  std::unique_ptr<std::byte[]> buffer_;     // inflated bytes
  std::unique_ptr<std::byte[]> converted_;  // their conversion, with --dtype
  size_t capacity_ = 0;                     // of buffer_, in bytes
  size_t filled_ = 0;
  uint64_t received_ = 0;   // bytes appended
  uint64_t next_slab_ = 0;  // slabs placed
  uint64_t row_at_ = 0;     // PlaceColumns: the stream's place
  uint64_t column_at_ = 0;
  std::vector<uint64_t> index_, c_steps_;
};

// PlaceDeflatedFortran inflates a Fortran-order member into the placed output `out`.
Error PlaceDeflatedFortran(std::span<const std::byte> archive, const NpzMember& member,
                           std::optional<ElementConversion> conversion, std::byte* out,
                           PlacingSink& placing) {
  FortranPlacer placer(member.array, conversion, out, placing);
  if (Error e = StreamNpzMember(archive, member, member.array.data_offset,
                                [&](std::span<const std::byte> chunk) {
                                  return placer.Append(chunk);
                                });
      !e.ok()) {
    return e;
  }
  return placer.Finish();
}

// StreamDeflatedFortran writes a deflated Fortran-order member: placed into the output
// file as it inflates (FortranPlacer), converted on the way with --dtype (the sink is
// then a ConvertingSink, which the placer stands in for: it converts with the same
// ConvertElements and places into the sink's output). Where the output cannot place (a
// platform without shared mappings) the array is inflated whole first (memory: its data,
// at most kDeflateMaxRatio times its compressed size).
Error StreamDeflatedFortran(std::span<const std::byte> archive, const NpzMember& member,
                            ByteSink& sink) {
  const NpyArrayInfo& info = member.array;
  PlacingSink* placing = dynamic_cast<PlacingSink*>(&sink);
  std::optional<ElementConversion> conversion;
  uint64_t out_len = info.data_len;
  if (const auto* converting = dynamic_cast<const ConvertingSink*>(&sink)) {
    placing = dynamic_cast<PlacingSink*>(&converting->out());
    conversion = ElementConversion{converting->from(), converting->to()};
    out_len = info.data_len / info.type.itemsize * ElementSize(conversion->to);
  }
  if (placing != nullptr) {
    std::byte* out = nullptr;
    if (Error e = placing->BeginPlaced(out_len, &out); !e.ok()) return e;
    if (out != nullptr) {
      Error e = PlaceDeflatedFortran(archive, member, conversion, out, *placing);
      Error end = placing->EndPlaced();
      return e.ok() ? end : e;
    }
  }
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

// StreamDeflatedMember writes a deflated .npz member's array, inflating it once: a C-order
// array streams through the inflater's buffer, a Fortran-order one is placed
// (StreamDeflatedFortran). StreamNpzMember checks the DEFLATE stream and the CRC-32 as it
// goes: a member that fails them fails the tensor, and the writer publishes nothing.
Error StreamDeflatedMember(std::span<const std::byte> archive, const NpzMember& member,
                           ByteSink& sink) {
  const NpyArrayInfo& info = member.array;
  if (info.fortran_order && info.shape.size() > 1 && info.data_len > 0) {
    return StreamDeflatedFortran(archive, member, sink);
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
