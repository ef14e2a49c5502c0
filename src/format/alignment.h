// SPDX-License-Identifier: Apache-2.0
// Stage 6, only with Options::require_aligned_data: every tensor's data must begin at a
// file offset that is a multiple of its dtype's alignment (DtypeAlignment).
#ifndef STGUARD_SRC_FORMAT_ALIGNMENT_H_
#define STGUARD_SRC_FORMAT_ALIGNMENT_H_

#include <cstdint>
#include <span>

#include "stguard/error.h"
#include "stguard/reader.h"

namespace stguard {

// CheckAlignment returns kMisalignedData for the first tensor, in the order given, whose
// absolute start `data_start + begin` is not a multiple of DtypeAlignment(dtype). The
// offset is the tensor's key in the header, as for tiling errors.
Error CheckAlignment(std::span<const TensorView> tensors, uint64_t data_start);

}  // namespace stguard

#endif  // STGUARD_SRC_FORMAT_ALIGNMENT_H_
