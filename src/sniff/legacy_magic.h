// SPDX-License-Identifier: Apache-2.0
// sniff/legacy_magic.h: the pickled magic number that opens torch's legacy stream, the one
// recogniser shared by SniffFormat and the torch reader (so a file is "pytorch-legacy" to
// both or to neither).
//
// torch.load (torch/serialization.py _legacy_load) unpickles a first object and requires
// it to equal MAGIC_NUMBER, 0x1950a86a20f9469cfc6c, whatever pickle protocol wrote it.
// torch.save(..., pickle_protocol=p) writes it as CPython's pickler does:
//   p = 0, 1:  LONG "L119547037146038801333356L\n", STOP
//   p = 2, 3:  PROTO p, LONG1 of 10 bytes, STOP
//   p = 4, 5:  PROTO p, FRAME 13, LONG1 of 10 bytes, STOP
// Those are the forms recognised (a FRAME is accepted at any protocol from 2 on, as
// CPython's unpickler accepts it; a frame must hold exactly the rest of the pickle).
// Other spellings of the same number (INT, LONG4, memo opcodes) are no pickler's output:
// such a file is sniffed as a bare pickle and refused as one.
#ifndef STGUARD_SRC_SNIFF_LEGACY_MAGIC_H_
#define STGUARD_SRC_SNIFF_LEGACY_MAGIC_H_

#include <cstddef>
#include <span>

namespace stguard {

// kMaxLegacyMagicLen is the longest form above: a prefix this long decides.
inline constexpr size_t kMaxLegacyMagicLen = 28;

// LegacyMagicLen returns the length of the magic-number pickle at the start of `bytes`
// (the offset of the stream's next pickle), or 0 when there is none.
size_t LegacyMagicLen(std::span<const std::byte> bytes);

}  // namespace stguard

#endif  // STGUARD_SRC_SNIFF_LEGACY_MAGIC_H_
