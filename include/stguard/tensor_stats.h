// SPDX-License-Identifier: Apache-2.0
// stguard/tensor_stats.h: a streaming scan of tensor data: min, max, mean and the counts
// of NaN, +inf and -inf.
//
// The scan reads a tensor's bytes in fixed chunks (decoded through stguard/convert.h for
// the narrow float types), so its own memory is constant whatever the tensor's size. With
// ScanOptions::release_scanned_pages, the pages already scanned are handed back to the
// kernel as the scan goes (madvise MADV_PAGEOUT, Linux 5.4+; ignored elsewhere), so the
// resident size of a mapped checkpoint stays bounded too; this never changes the data.
//
// DEFINITIONS
// - Floating dtypes (F64, F32, F16, BF16 and the F8 types): min, max and mean are over
//   the finite elements only; NaN, +inf and -inf are counted apart. F64 is scanned in
//   double precision, the others in F32 (which holds every value exactly).
// - Integer dtypes and BOOL (as 0 and 1): min and max are exact as integers and reported
//   as doubles (so exact up to 2^53); the sum is exact (128-bit) before the one division.
// - Sums of floating values are accumulated in double, per chunk in eight independent
//   lanes, and chunk sums are added with Neumaier's compensated summation.
// - F4, F6_E2M3, F6_E3M2 and C64 are not scanned (supported = false): see convert.h.
// - A tensor without finite elements (or without elements) has min, max and mean NaN.
#ifndef STGUARD_TENSOR_STATS_H_
#define STGUARD_TENSOR_STATS_H_

#include <cstdint>
#include <functional>
#include <limits>

#include "stguard/byte_source.h"
#include "stguard/export.h"
#include "stguard/reader.h"

namespace stguard {

// TensorStats summarises one tensor's elements.
struct STGUARD_API TensorStats {
  bool supported = false;   // false when the dtype cannot be scanned; nothing else is set
  bool floating = false;    // NaN and inf counts are meaningful
  uint64_t num_elements = 0;
  uint64_t num_finite = 0;  // elements counted in min, max and mean
  uint64_t num_nan = 0;
  uint64_t num_pos_inf = 0;
  uint64_t num_neg_inf = 0;
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  double mean = std::numeric_limits<double>::quiet_NaN();
};

// ScanProgress receives the number of data bytes scanned since its previous call. It is
// called every ScanOptions::progress_interval bytes or so, and once at the end of each
// tensor.
using ScanProgress = std::function<void(uint64_t bytes)>;

struct STGUARD_API ScanOptions {
  ScanProgress progress;                 // may be empty
  uint64_t progress_interval = 1 << 22;  // bytes between progress calls
  // Hand scanned pages back to the kernel as the scan goes (see the top of this file).
  // Harmless for memory that is not a file mapping, but then it may push it to swap.
  bool release_scanned_pages = false;
};

// ComputeTensorStats scans `tensor.data`.
STGUARD_API TensorStats ComputeTensorStats(const TensorView& tensor,
                                           const ScanOptions& options = {});

// ComputeTensorStats scans a tensor of `checkpoint`, copying its bytes chunk by chunk with
// Checkpoint::ReadData rather than reading the mapped span, so a file truncated by another
// process gives kIoError naming it instead of SIGBUS. release_scanned_pages is moot here:
// nothing is mapped, and only one chunk is resident.
STGUARD_API Result<TensorStats> ComputeTensorStats(const Checkpoint& checkpoint,
                                                   const TensorView& tensor,
                                                   const ScanOptions& options = {});

// ComputeTensorStats reads a tensor of `checkpoint` from `file` instead, the same way
// (chunk by chunk, by ranges): for a checkpoint that holds its header only (OpenHeader,
// or the front door's kept reader, CheckOptions::keep_reader), so a caller that validated
// the header once reads only the data after it. `file` is the file the header came from.
STGUARD_API Result<TensorStats> ComputeTensorStats(const ByteSource& file,
                                                   const Checkpoint& checkpoint,
                                                   const TensorView& tensor,
                                                   const ScanOptions& options = {});

}  // namespace stguard

#endif  // STGUARD_TENSOR_STATS_H_
