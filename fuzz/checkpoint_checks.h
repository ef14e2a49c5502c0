// SPDX-License-Identifier: Apache-2.0
// checkpoint_checks.h: properties that every Checkpoint the reader accepts must have,
// shared by the header, round-trip and writer targets. Each function aborts through
// FUZZ_CHECK on the first violation.
#ifndef STGUARD_FUZZ_CHECKPOINT_CHECKS_H_
#define STGUARD_FUZZ_CHECKPOINT_CHECKS_H_

#include <cstddef>
#include <span>
#include <string_view>

#include "reference_checker.h"
#include "stguard/error.h"
#include "stguard/reader.h"

namespace stguard_fuzz {

// CheckInvariants checks a checkpoint read from `bytes` against the reader's promises:
// spans inside the buffer, exact tiling in file order, Find and FindMetadata, UTF-8 names,
// sizes that match dtype and shape, and the documented orders.
void CheckInvariants(const stguard::Checkpoint& checkpoint, std::span<const std::byte> bytes);

// CheckRejection checks an Error returned for an input of `size` bytes: a real code, an
// offset inside [0, size], and a printable message.
void CheckRejection(const stguard::Error& error, size_t size);

// CheckAgreesWithReference checks that the reader's result for `bytes` agrees with the
// independent checker's: same verdict (and the same code for the length-prefix stage),
// and on acceptance the same tensors, metadata and header length.
void CheckAgreesWithReference(const stguard::Result<stguard::Checkpoint>& result,
                              const reference::File& expected);

// CheckSameContent checks that two checkpoints hold the same tensors (name, dtype, shape,
// bytes) and metadata, whatever their layout.
void CheckSameContent(const stguard::Checkpoint& a, const stguard::Checkpoint& b);

// CheckCanonicalLayout checks what the CANONICAL FORM block of include/stguard/writer.h
// promises, on a checkpoint read back from the writer's output: compact header padded
// with the fewest spaces to a multiple of 8, __metadata__ first and only when non-empty,
// and the data laid out from offset 0 in canonical tensor order (dtype descending in enum
// order, then name bytes ascending).
void CheckCanonicalLayout(const stguard::Checkpoint& canon);

}  // namespace stguard_fuzz

#endif  // STGUARD_FUZZ_CHECKPOINT_CHECKS_H_
