// SPDX-License-Identifier: Apache-2.0
// index_mutator.h: structure-aware mutation of sharded-checkpoint index files
// (model.safetensors.index.json), for the fuzz_index target's LLVMFuzzerCustomMutator and
// LLVMFuzzerCustomCrossOver.
//
// The input is parsed as a JSON tree (mutator_json.h), usually repaired into an index
// (unknown top-level keys, non-string shard names, repeated names and bad total_size
// dropped: so any JSON object can seed it), and changed where the index policy
// looks (src/folder/index_file.h): weight_map entries are added, dropped, renamed (escaped,
// non-ASCII, duplicate names), pointed at other shards (ordinary, unsafe: "../x", "/x",
// "a/b", "", NUL) or given non-string values; "metadata" is added, dropped or given a
// total_size that is valid, negative, fractional, an exponent, a string or too large;
// top-level keys are reordered, duplicated or joined by unknown ones. The tree is written
// back with other whitespace and escapes. Text that is not a JSON object goes half the
// time to the byte-level mutator and half the time is replaced by an index grown from the
// empty one; 1 in 16 of the rest goes to the byte-level mutator too.
// STGUARD_FUZZ_MUTATOR=bytes turns it all off.
#ifndef STGUARD_FUZZ_INDEX_MUTATOR_H_
#define STGUARD_FUZZ_INDEX_MUTATOR_H_

#include <cstddef>
#include <cstdint>

#include "mutator_json.h"

namespace stguard_fuzz::mutator {

// MutateIndexTree applies one to three changes to a parsed index.
void MutateIndexTree(JsonValue* index, Rng& rng);

// MutateIndex is the LLVMFuzzerCustomMutator body: mutates data[0, size) in place and
// returns the new size (<= max_size).
size_t MutateIndex(uint8_t* data, size_t size, size_t max_size, unsigned seed);

// CrossOverIndex is the LLVMFuzzerCustomCrossOver body: the first index with weight_map
// entries of the second mixed in; a byte splice when either is not a JSON object.
size_t CrossOverIndex(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                      uint8_t* out, size_t max_out_size, unsigned seed);

}  // namespace stguard_fuzz::mutator

#endif  // STGUARD_FUZZ_INDEX_MUTATOR_H_
