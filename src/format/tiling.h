// SPDX-License-Identifier: Apache-2.0
// Stage 5: the tensors' byte ranges must tile the data buffer exactly.
#ifndef STGUARD_SRC_FORMAT_TILING_H_
#define STGUARD_SRC_FORMAT_TILING_H_

#include <cstdint>
#include <span>
#include <vector>

#include "stguard/error.h"
#include "stguard/reader.h"

namespace stguard {

// CheckTiling sorts the tensors' indexes by (begin, end, name) into *out_file_order and
// proves that, in that order, the first tensor begins at 0, each begins where the
// previous one ended, and the last ends at `data_len`. Every tensor's end >= begin must
// already hold (the schema stage checks it). `data_start` is the absolute offset of the
// data buffer, used for error offsets.
Error CheckTiling(std::span<const TensorView> tensors, uint64_t data_start, uint64_t data_len,
                  std::vector<uint32_t>* out_file_order);

}  // namespace stguard

#endif  // STGUARD_SRC_FORMAT_TILING_H_
