// SPDX-License-Identifier: Apache-2.0
// Streaming tensor statistics (see stguard/tensor_stats.h).
#include "stguard/tensor_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "base/little_endian.h"
#include "base/page_release.h"
#include "base/test_pause.h"
#include "stguard/convert.h"

namespace stguard {
namespace {

constexpr size_t kChunkElements = 8192;
constexpr size_t kLanes = 8;
constexpr uint64_t kReleaseInterval = uint64_t{32} << 20;  // bytes between madvise calls

__extension__ typedef __int128 Int128;


// NeumaierSum adds doubles with a running compensation term, so that adding many chunk
// sums of different magnitudes loses (almost) nothing.
struct NeumaierSum {
  double sum = 0;
  double compensation = 0;
  void Add(double value) {
    const double total = sum + value;
    if (std::fabs(sum) >= std::fabs(value)) {
      compensation += (sum - total) + value;
    } else {
      compensation += (value - total) + sum;
    }
    sum = total;
  }
  double Value() const { return sum + compensation; }
};

// FloatAccumulator gathers statistics over chunks of F32 or F64 values.
template <typename T>
struct FloatAccumulator {
  T min = std::numeric_limits<T>::infinity();
  T max = -std::numeric_limits<T>::infinity();
  NeumaierSum sum;
  // F64 values near the top of the range overflow a double sum ([1.7e308, 1.7e308] sums
  // to inf); the same sum of the values times 2^-512 cannot, and gives the mean when the
  // plain sum overflowed. Unused (and optimised away) for F32, whose sums stay far below.
  NeumaierSum scaled_sum;
  uint64_t num_finite = 0;
  uint64_t num_nan = 0;
  uint64_t num_pos_inf = 0;
  uint64_t num_neg_inf = 0;

  void AddChunk(const T* values, size_t n) {
    // x - x is 0 for finite x and NaN for inf and NaN. The flag loop has no branches, so
    // the common case (all finite) costs one quick pass and then a branch-free one.
    // Blocks of kLanes with one flag per lane: the shape GCC's -O2 vectoriser accepts.
    unsigned lane_flags[kLanes] = {};
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (size_t j = 0; j < kLanes; ++j) {
        lane_flags[j] |= !(values[i + j] - values[i + j] == 0);
      }
    }
    unsigned not_finite = 0;
    for (; i < n; ++i) not_finite |= !(values[i] - values[i] == 0);
    for (size_t j = 0; j < kLanes; ++j) not_finite |= lane_flags[j];
    if (not_finite == 0) {
      AddFinite(values, n);
      return;
    }
    // Branch-free too: random data (or a NaN-heavy tensor) would mispredict every branch.
    double chunk_sum = 0;
    uint64_t finite_count = 0;
    uint64_t nan_count = 0;
    uint64_t pos_inf_count = 0;
    for (size_t k = 0; k < n; ++k) {
      const T x = values[k];
      const bool finite = x - x == 0;
      const bool nan = x != x;
      min = finite && x < min ? x : min;
      max = finite && x > max ? x : max;
      chunk_sum += finite ? static_cast<double>(x) : 0.0;
      finite_count += finite;
      nan_count += nan;
      pos_inf_count += !finite && x > 0;
    }
    num_finite += finite_count;
    num_nan += nan_count;
    num_pos_inf += pos_inf_count;
    num_neg_inf += n - finite_count - nan_count - pos_inf_count;
    sum.Add(chunk_sum);
    if constexpr (kMayOverflow) {
      if (std::isfinite(chunk_sum)) {
        scaled_sum.Add(chunk_sum * kDownScale);
      } else {  // sum the finite values again, scaled
        double scaled = 0;
        for (size_t k = 0; k < n; ++k) {
          scaled += values[k] - values[k] == 0 ? static_cast<double>(values[k]) * kDownScale : 0.0;
        }
        scaled_sum.Add(scaled);
      }
    }
  }

  static constexpr bool kMayOverflow = std::is_same_v<T, double>;
  static constexpr double kDownScale = 0x1p-512;
  static constexpr double kUpScale = 0x1p512;

  // AddScaled adds a finite chunk to scaled_sum, exactly rescaled when its plain sum was
  // finite, else summed again from the scaled values.
  void AddScaled(const T* values, size_t n, double chunk_sum) {
    if (std::isfinite(chunk_sum)) {
      scaled_sum.Add(chunk_sum * kDownScale);
      return;
    }
    double scaled = 0;
    for (size_t k = 0; k < n; ++k) scaled += static_cast<double>(values[k]) * kDownScale;
    scaled_sum.Add(scaled);
  }

  void AddFinite(const T* values, size_t n) {
    T lane_min[kLanes];
    T lane_max[kLanes];
    double lane_sum[kLanes];
    for (size_t j = 0; j < kLanes; ++j) {
      lane_min[j] = min;
      lane_max[j] = max;
      lane_sum[j] = 0;
    }
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (size_t j = 0; j < kLanes; ++j) {
        const T x = values[i + j];
        lane_min[j] = x < lane_min[j] ? x : lane_min[j];
        lane_max[j] = x > lane_max[j] ? x : lane_max[j];
        lane_sum[j] += static_cast<double>(x);
      }
    }
    for (; i < n; ++i) {
      const T x = values[i];
      lane_min[0] = x < lane_min[0] ? x : lane_min[0];
      lane_max[0] = x > lane_max[0] ? x : lane_max[0];
      lane_sum[0] += static_cast<double>(x);
    }
    double chunk_sum = 0;
    for (size_t j = 0; j < kLanes; ++j) {
      min = lane_min[j] < min ? lane_min[j] : min;
      max = lane_max[j] > max ? lane_max[j] : max;
      chunk_sum += lane_sum[j];
    }
    sum.Add(chunk_sum);
    if constexpr (kMayOverflow) AddScaled(values, n, chunk_sum);
    num_finite += n;
  }

  void Finish(TensorStats* out) const {
    out->floating = true;
    out->num_finite = num_finite;
    out->num_nan = num_nan;
    out->num_pos_inf = num_pos_inf;
    out->num_neg_inf = num_neg_inf;
    if (num_finite > 0) {
      out->min = static_cast<double>(min);
      out->max = static_cast<double>(max);
      out->mean = sum.Value() / static_cast<double>(num_finite);
      if (kMayOverflow && !std::isfinite(out->mean)) {
        // The mean lies between min and max, so scaling back up cannot overflow.
        out->mean = scaled_sum.Value() / static_cast<double>(num_finite) * kUpScale;
      }
    }
  }
};

// IntAccumulator gathers exact statistics over integers held as Wide (int64_t or
// uint64_t). The sum cannot overflow 128 bits: fewer than 2^61 elements of under 2^64.
template <typename Wide>
struct IntAccumulator {
  Wide min = std::numeric_limits<Wide>::max();
  Wide max = std::numeric_limits<Wide>::min();
  Int128 sum = 0;
  uint64_t count = 0;

  void Finish(TensorStats* out) const {
    out->num_finite = count;
    if (count > 0) {
      out->min = static_cast<double>(min);
      out->max = static_cast<double>(max);
      // Split the division so that the quotient is exact before the one rounding.
      const Int128 n = static_cast<Int128>(count);
      const Int128 quotient = sum / n;
      const Int128 remainder = sum % n;
      out->mean = static_cast<double>(quotient) +
                  static_cast<double>(remainder) / static_cast<double>(count);
    }
  }
};

// Scanner walks one tensor's bytes chunk by chunk, reporting progress and releasing
// pages as it goes.
class Scanner {
 public:
  Scanner(const TensorView& tensor, const ScanOptions& options)
      : data_(tensor.data), size_(tensor.byte_size()), options_(options) {}
  // With a checkpoint, the bytes are copied with Checkpoint::ReadData chunk by chunk
  // instead of read from tensor.data (see reader.h, FILES THAT CHANGE).
  Scanner(const Checkpoint& source, const TensorView& tensor, const ScanOptions& options)
      : source_(&source),
        source_begin_(8 + source.header_len() + tensor.begin),
        size_(tensor.byte_size()),
        options_(options) {}
  // With a file, the same chunks are read from it (a checkpoint that holds its header only).
  Scanner(const ByteSource& file, const Checkpoint& header, const TensorView& tensor,
          const ScanOptions& options)
      : file_(&file),
        source_begin_(8 + header.header_len() + tensor.begin),
        size_(tensor.byte_size()),
        options_(options) {}

  // Chunks calls fn(offset, count) for consecutive runs of at most kChunkElements
  // elements of `element_size` bytes. It stops at the first read error (see error()).
  template <typename Fn>
  void Chunks(size_t element_size, Fn fn) {
    const uint64_t n = size_ / element_size;
    std::vector<std::byte> buffer;
    const bool copied = source_ != nullptr || file_ != nullptr;
    if (copied) {
      buffer.resize(static_cast<size_t>(std::min<uint64_t>(kChunkElements, n)) * element_size);
    }
    for (uint64_t done = 0; done < n;) {
      const size_t count = static_cast<size_t>(std::min<uint64_t>(kChunkElements, n - done));
      if (copied) {
        const uint64_t at = source_begin_ + done * element_size;
        const std::span<std::byte> chunk(buffer.data(), count * element_size);
        error_ = file_ != nullptr ? file_->ReadAt(at, chunk) : source_->ReadData(at, chunk);
        if (!error_.ok()) return;
        fn(buffer.data(), count);
      } else {
        fn(data_.data() + done * element_size, count);
      }
      done += count;
      Advance(count * element_size);
    }
    Flush();
  }

  const Error& error() const { return error_; }

 private:
  void Advance(uint64_t bytes) {
    scanned_ += bytes;
    pending_progress_ += bytes;
    if (options_.progress && pending_progress_ >= options_.progress_interval) {
      options_.progress(pending_progress_);
      pending_progress_ = 0;
    }
    if (options_.release_scanned_pages && source_ == nullptr && file_ == nullptr &&
        scanned_ - released_ >= kReleaseInterval) {
      Release();
    }
  }

  void Flush() {
    if (options_.progress && pending_progress_ > 0) options_.progress(pending_progress_);
    pending_progress_ = 0;
    if (options_.release_scanned_pages && source_ == nullptr && file_ == nullptr) Release();
  }

  // Release hands back the whole pages between the last release and the scan position.
  // Pages shared with bytes not yet scanned are kept.
  void Release() {
    released_ = ReleaseReadPages(data_, static_cast<size_t>(released_),
                                 static_cast<size_t>(scanned_));
  }

  std::span<const std::byte> data_;
  const Checkpoint* source_ = nullptr;
  const ByteSource* file_ = nullptr;
  uint64_t source_begin_ = 0;
  uint64_t size_;
  const ScanOptions& options_;
  Error error_;
  uint64_t scanned_ = 0;
  uint64_t released_ = 0;
  uint64_t pending_progress_ = 0;
};

// ScanIntegers reads Src elements (as unsigned bits), turns each into Wide with
// `convert`, and accumulates. Chunk sums of elements up to 32 bits fit in 64 bits (8192
// elements of under 2^32), so only 64-bit elements pay for 128-bit additions.
template <typename Src, typename Wide, typename Convert>
void ScanIntegers(Scanner& scanner, TensorStats* out, Convert convert) {
  using ChunkSum = std::conditional_t<(sizeof(Src) <= 4), Wide, Int128>;
  IntAccumulator<Wide> acc;
  scanner.Chunks(sizeof(Src), [&acc, convert](const std::byte* p, size_t count) {
    Wide lo = acc.min;
    Wide hi = acc.max;
    ChunkSum chunk_sum = 0;
    for (size_t i = 0; i < count; ++i) {
      const Wide x = convert(LoadLittleEndian<Src>(p + i * sizeof(Src)));
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
      chunk_sum += x;
    }
    acc.min = lo;
    acc.max = hi;
    acc.sum += chunk_sum;
    acc.count += count;
  });
  acc.Finish(out);
}

template <typename Unsigned>
void ScanUnsigned(Scanner& scanner, TensorStats* out) {
  ScanIntegers<Unsigned, uint64_t>(scanner, out, [](Unsigned v) { return uint64_t{v}; });
}

template <typename Signed, typename Unsigned>
void ScanSigned(Scanner& scanner, TensorStats* out) {
  ScanIntegers<Unsigned, int64_t>(scanner, out, [](Unsigned v) {
    return static_cast<int64_t>(static_cast<Signed>(v));
  });
}

// Scan computes the statistics of `tensor` from the chunks `scanner` delivers.
TensorStats Scan(const TensorView& tensor, Scanner& scanner);

}  // namespace

TensorStats ComputeTensorStats(const TensorView& tensor, const ScanOptions& options) {
  Scanner scanner(tensor, options);
  return Scan(tensor, scanner);
}

Result<TensorStats> ComputeTensorStats(const Checkpoint& checkpoint, const TensorView& tensor,
                                       const ScanOptions& options) {
  Scanner scanner(checkpoint, tensor, options);
  TensorStats stats = Scan(tensor, scanner);
  if (!scanner.error().ok()) return scanner.error();
  return stats;
}

Result<TensorStats> ComputeTensorStats(const ByteSource& file, const Checkpoint& checkpoint,
                                       const TensorView& tensor, const ScanOptions& options) {
  PauseForTestingAt("data");  // as Checkpoint::ReadData: the file's data not yet read
  Scanner scanner(file, checkpoint, tensor, options);
  TensorStats stats = Scan(tensor, scanner);
  if (!scanner.error().ok()) return scanner.error();
  return stats;
}

namespace {

TensorStats Scan(const TensorView& tensor, Scanner& scanner) {
  TensorStats stats;
  const size_t element_size = ElementSize(tensor.dtype);
  if (!CanConvertToF32(tensor.dtype) || element_size == 0) return stats;  // F4, F6_*, C64
  stats.supported = true;
  stats.num_elements = tensor.byte_size() / element_size;
  switch (tensor.dtype) {
    case Dtype::kBOOL:
      ScanIntegers<uint8_t, uint64_t>(scanner, &stats, [](uint8_t v) { return uint64_t{v != 0}; });
      return stats;
    case Dtype::kU8:
      ScanUnsigned<uint8_t>(scanner, &stats);
      return stats;
    case Dtype::kU16:
      ScanUnsigned<uint16_t>(scanner, &stats);
      return stats;
    case Dtype::kU32:
      ScanUnsigned<uint32_t>(scanner, &stats);
      return stats;
    case Dtype::kU64:
      ScanUnsigned<uint64_t>(scanner, &stats);
      return stats;
    case Dtype::kI8:
      ScanSigned<int8_t, uint8_t>(scanner, &stats);
      return stats;
    case Dtype::kI16:
      ScanSigned<int16_t, uint16_t>(scanner, &stats);
      return stats;
    case Dtype::kI32:
      ScanSigned<int32_t, uint32_t>(scanner, &stats);
      return stats;
    case Dtype::kI64:
      ScanSigned<int64_t, uint64_t>(scanner, &stats);
      return stats;
    case Dtype::kF64: {
      FloatAccumulator<double> acc;
      double buffer[kChunkElements];
      scanner.Chunks(8, [&acc, &buffer](const std::byte* p, size_t count) {
        for (size_t i = 0; i < count; ++i) {
          buffer[i] = std::bit_cast<double>(LoadLittleEndian<uint64_t>(p + i * 8));
        }
        acc.AddChunk(buffer, count);
      });
      acc.Finish(&stats);
      return stats;
    }
    default: {  // F32, F16, BF16 and the 8-bit floats, all exact in F32
      FloatAccumulator<float> acc;
      float buffer[kChunkElements];
      const Dtype dtype = tensor.dtype;
      scanner.Chunks(element_size, [&](const std::byte* p, size_t count) {
        // Cannot fail: the dtype is convertible and the sizes match.
        (void)ConvertToF32(dtype, std::span(p, count * element_size), std::span(buffer, count));
        acc.AddChunk(buffer, count);
      });
      acc.Finish(&stats);
      return stats;
    }
  }
}

}  // namespace

}  // namespace stguard
