// SPDX-License-Identifier: Apache-2.0
// npz_mutator.h: structure-aware mutation of .npz archives, for fuzz_npz.
//
// Why: every member of an .npz is covered by a CRC-32 and sizes repeated in two headers
// (and deflated), so a byte-level change to a member is refused for its checksum before
// the .npy rules or the inflater's rules are reached. MutateNpz takes the first member's
// bytes out (leniently, from the first local header), mutates them as fuzz_npy does
// (npy_mutator.h) and writes a fresh one-member archive: stored, or deflated as stored
// blocks or fixed-Huffman literals, with its CRC, sizes, central directory and end record
// recomputed, sometimes with the ZIP64 extra numpy writes. Sometimes the name changes
// (misplacing, non-ASCII, not UTF-8), the UTF-8 flag is set, "version needed" is 63 or
// 64, or a second member answers to the same numpy key. One time in 8 a byte of the
// result is changed afterwards (a lie in a header, the CRC or the stream).
#ifndef STGUARD_FUZZ_NPZ_MUTATOR_H_
#define STGUARD_FUZZ_NPZ_MUTATOR_H_

#include <cstddef>
#include <cstdint>

namespace stguard_fuzz::mutator {

// MutateNpz is the LLVMFuzzerCustomMutator body of fuzz_npz.
size_t MutateNpz(uint8_t* data, size_t size, size_t max_size, unsigned seed);

}  // namespace stguard_fuzz::mutator

#endif  // STGUARD_FUZZ_NPZ_MUTATOR_H_
