// SPDX-License-Identifier: Apache-2.0
// Fortran (first axis fastest) to C (last axis fastest) order, a band of output rows at a
// time, through a cache-blocked transpose: bits to bits, no files.
#ifndef STGUARD_SRC_DATA_FORTRAN_ORDER_H_
#define STGUARD_SRC_DATA_FORTRAN_ORDER_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace stguard {

// FortranRowsToC writes output rows [first_row, first_row + count) of the C-order copy
// of the Fortran-order array `data` of `shape` (rank 2 or more, every dimension
// non-zero), elements of `size` bytes, to `out`: count * (data.size() / shape[0]) bytes.
// The caller has checked that data holds the whole array and that first_row + count is
// at most shape[0]. Any element size works; 1, 2, 4 and 8 bytes move as single loads.
void FortranRowsToC(std::span<const std::byte> data, std::span<const uint64_t> shape,
                    size_t size, uint64_t first_row, uint64_t count, std::byte* out);

}  // namespace stguard

#endif  // STGUARD_SRC_DATA_FORTRAN_ORDER_H_
