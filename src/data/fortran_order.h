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

// FortranBlockToC is FortranRowsToC for a block placed inside a larger output: of each
// output row in [first_row, first_row + count) it writes the runs (dn-1 elements sharing
// i1..in-2; run r is the r-th in C order) [first_run, first_run + run_count), row i at
// out + (i - first_row) * out_row, run r of it at + (r - first_run) * out_run. With
// out_row = data.size() / shape[0] and out_run = shape.back() * size, and every run, it
// is FortranRowsToC. A deflated Fortran-order array is placed this way, a block of
// whole values of the last axis at a time, straight into the output file.
void FortranBlockToC(std::span<const std::byte> data, std::span<const uint64_t> shape,
                     size_t size, uint64_t first_row, uint64_t count, uint64_t first_run,
                     uint64_t run_count, std::byte* out, uint64_t out_row, uint64_t out_run);

}  // namespace stguard

#endif  // STGUARD_SRC_DATA_FORTRAN_ORDER_H_
