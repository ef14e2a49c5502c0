// SPDX-License-Identifier: Apache-2.0
// npy_mutator.h: structure-aware mutation of .npy files, for fuzz_npy.
//
// Why: a .npy file repeats its header's length in the preamble, pads the header to 16
// bytes and must carry exactly shape × itemsize data bytes, so almost every byte-level
// change to the header is refused for its length or padding before the dict is judged.
// MutateNpy takes the dict text out (leniently: whatever follows the preamble, up to the
// padding), mutates it (byte-level, or a descr, shape, key or value swapped for a table
// entry), and writes a fresh file: version 1.0/2.0/3.0, the length recomputed, padding to
// 64 (or 16) bytes, and as many data bytes as the new dict implies when it parses (capped
// by max_size). One time in 8 one lie is told: the length, the padding or the data length
// off by one. Anything without the magic starts again from a small valid file.
#ifndef STGUARD_FUZZ_NPY_MUTATOR_H_
#define STGUARD_FUZZ_NPY_MUTATOR_H_

#include <cstddef>
#include <cstdint>

namespace stguard_fuzz::mutator {

// MutateNpy is the LLVMFuzzerCustomMutator body of fuzz_npy.
size_t MutateNpy(uint8_t* data, size_t size, size_t max_size, unsigned seed);

}  // namespace stguard_fuzz::mutator

#endif  // STGUARD_FUZZ_NPY_MUTATOR_H_
