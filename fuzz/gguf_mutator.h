// SPDX-License-Identifier: Apache-2.0
// gguf_mutator.h: structure-aware mutation of GGUF files, for fuzz_gguf.
//
// Why: a GGUF file's counts, lengths and offsets must agree with each other and with the
// data section's layout, so a byte-level change nearly always fails the first check it
// meets. This mutator decodes a valid input into a GgufModel (tests/support/
// gguf_encoder.h), changes ONE thing - a key (renamed, removed, added, duplicated), a
// value's type, an array's count or a string's length, a bool's byte, a tensor's name,
// dims, ne, type or offset, a tensor added, removed or reordered, general.alignment, the
// version, the header's counts, the bytes after the last tensor - and re-encodes it with
// every other field consistent, so each mutant tells at most one lie. Inputs that do not
// decode go to libFuzzer's byte mutation half the time and are replaced by a small valid
// model otherwise.
#ifndef STGUARD_FUZZ_GGUF_MUTATOR_H_
#define STGUARD_FUZZ_GGUF_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "support/gguf_encoder.h"

namespace stguard_fuzz::mutator {

// DecodeGguf returns the model of a file stguard accepts, or nullopt.
std::optional<stguard::testing::GgufModel> DecodeGguf(std::string_view bytes);

// MutateGgufModel changes one thing in *model, chosen by `seed`.
void MutateGgufModel(stguard::testing::GgufModel* model, unsigned seed);

// MutateGguf is the body of fuzz_gguf's LLVMFuzzerCustomMutator.
size_t MutateGguf(uint8_t* data, size_t size, size_t max_size, unsigned seed);

}  // namespace stguard_fuzz::mutator

#endif  // STGUARD_FUZZ_GGUF_MUTATOR_H_
