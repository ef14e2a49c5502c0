// SPDX-License-Identifier: Apache-2.0
// Stage 6 (optional): tensor data aligned to the element size in the file.
#include "format/alignment.h"

#include <string>

#include "base/concat.h"

namespace stguard {

Error CheckAlignment(std::span<const TensorView> tensors, uint64_t data_start) {
  for (const TensorView& tensor : tensors) {
    const uint64_t alignment = DtypeAlignment(tensor.dtype);
    const uint64_t file_offset = data_start + tensor.begin;  // tiling proved it is in the file
    if (file_offset % alignment != 0) {
      return Error{ErrorCode::kMisalignedData, tensor.header_offset,
                   "tensor data is not aligned to its element size in the file",
                   Concat({DtypeName(tensor.dtype), " data begins at byte ",
                           std::to_string(file_offset), ", not a multiple of ",
                           std::to_string(alignment)}),
                   std::string(tensor.name)};
    }
  }
  return Error{};
}

}  // namespace stguard
