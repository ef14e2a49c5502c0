// SPDX-License-Identifier: Apache-2.0
// Stage 4: the byte size that a dtype and a shape imply.
#include "format/tensor_size.h"

#include "base/checked_math.h"

namespace stguard {

ErrorCode ComputeTensorByteSize(Dtype dtype, std::span<const uint64_t> shape,
                                uint64_t* out_byte_size) {
  // The running product matches the reference exactly: [0, 2^40, 2^40] is fine (0 stays
  // 0), while [2^40, 2^40, 0] overflows at the second step and is rejected, even though
  // the final product would be 0.
  uint64_t num_elements = 1;
  for (uint64_t dim : shape) {
    if (!CheckedMul(num_elements, dim, &num_elements)) return ErrorCode::kValidationOverflow;
  }
  return ByteSizeFromCount(dtype, ElementCount{num_elements, false}, out_byte_size);
}

ErrorCode ByteSizeFromCount(Dtype dtype, const ElementCount& count, uint64_t* out_byte_size) {
  if (count.overflowed) return ErrorCode::kValidationOverflow;
  uint64_t num_bits = 0;
  if (!CheckedMul(count.count, DtypeBits(dtype), &num_bits)) {
    return ErrorCode::kValidationOverflow;
  }
  if (num_bits % 8 != 0) return ErrorCode::kMisalignedSlice;
  *out_byte_size = num_bits / 8;
  return ErrorCode::kOk;
}

}  // namespace stguard
