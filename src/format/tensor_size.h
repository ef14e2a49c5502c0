// SPDX-License-Identifier: Apache-2.0
// Stage 4: the byte size that a dtype and a shape imply.
#ifndef STGUARD_SRC_FORMAT_TENSOR_SIZE_H_
#define STGUARD_SRC_FORMAT_TENSOR_SIZE_H_

#include <cstdint>
#include <span>

#include "stguard/dtype.h"
#include "stguard/error.h"

namespace stguard {

// ComputeTensorByteSize returns kOk and sets *out_byte_size, or returns
// kValidationOverflow when the element count (a running product of the dims, left to
// right, as the reference computes it) or the bit count overflows 64 bits, or
// kMisalignedSlice when a sub-byte dtype's bits do not fill whole bytes.
ErrorCode ComputeTensorByteSize(Dtype dtype, std::span<const uint64_t> shape,
                                uint64_t* out_byte_size);

// ElementCount is the running product of a shape's dims, fed one dim at a time, for
// shapes too long to hold as uint64_t: it overflows exactly where
// ComputeTensorByteSize's product does.
struct ElementCount {
  uint64_t count = 1;
  bool overflowed = false;
  void Add(uint64_t dim) {
    if (!overflowed && __builtin_mul_overflow(count, dim, &count)) overflowed = true;
  }
};

// ByteSizeFromCount finishes ComputeTensorByteSize from an ElementCount.
ErrorCode ByteSizeFromCount(Dtype dtype, const ElementCount& count, uint64_t* out_byte_size);

}  // namespace stguard

#endif  // STGUARD_SRC_FORMAT_TENSOR_SIZE_H_
