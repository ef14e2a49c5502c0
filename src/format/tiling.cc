// SPDX-License-Identifier: Apache-2.0
// Stage 5: the tensors' byte ranges must tile the data buffer exactly.
#include "format/tiling.h"

#include <string>

#include "base/sort_indexes.h"

namespace stguard {

Error CheckTiling(std::span<const TensorView> tensors, uint64_t data_start, uint64_t data_len,
                  std::vector<uint32_t>* out_file_order) {
  // Sorting by (begin, end) puts a zero-size tensor before a tensor that starts at the
  // same offset, so it may share that offset.
  SortIndexesStable(
      tensors.size(),
      [tensors](uint32_t a, uint32_t b) {
        const TensorView& x = tensors[a];
        const TensorView& y = tensors[b];
        if (x.begin != y.begin) return x.begin < y.begin;
        if (x.end != y.end) return x.end < y.end;
        return x.name < y.name;  // only zero-size tensors tie; name order is deterministic
      },
      out_file_order);
  const std::vector<uint32_t>& order = *out_file_order;

  uint64_t expected_begin = 0;
  for (uint32_t index : order) {
    const TensorView& tensor = tensors[index];
    if (tensor.begin != expected_begin) {
      // The offending tensor's key in the header is the most useful place to point at.
      return Error{ErrorCode::kInvalidOffset, tensor.header_offset,
                   tensor.begin > expected_begin
                       ? "gap in the data buffer: tensor begins after the previous one ends"
                       : "tensor overlaps the previous one in the data buffer",
                   "begins at " + std::to_string(tensor.begin) + ", expected " +
                       std::to_string(expected_begin),
                   std::string(tensor.name)};
    }
    expected_begin = tensor.end;
  }
  if (expected_begin < data_len) {
    return Error{ErrorCode::kMetadataIncompleteBuffer, data_start + expected_begin,
                 "bytes after the last tensor are not covered by any tensor",
                 std::to_string(data_len - expected_begin) + " trailing bytes", {}};
  }
  if (expected_begin > data_len) {
    return Error{ErrorCode::kMetadataIncompleteBuffer, data_start + data_len,
                 "tensors extend past the end of the file",
                 "data buffer holds " + std::to_string(data_len) + " bytes, tensors need " +
                     std::to_string(expected_begin),
                 {}};
  }
  return Error{};
}

}  // namespace stguard
