// SPDX-License-Identifier: Apache-2.0
// config_mutator.h: structure-aware mutation of fuzz_config's input (config.json, a NUL
// byte, a safetensors file), for its LLVMFuzzerCustomMutator and LLVMFuzzerCustomCrossOver.
//
// Why: the lint engine does its real work (family rows, shape formulas, int4 pairs, the
// format contracts) only when the config names a known family whose fields evaluate *and*
// the checkpoint is a valid file whose names fit that family's table. A byte-level
// mutation keeps both true together almost never. These functions decode the two parts
// (ParseJson, DecodeFile) and change them as structures:
// - the config: "model_type", "tl_arch" or "architectures" set to a value of a family in
//   the library's own tables (lint/family_table.h, so a family added there is fuzzed with
//   no change here) or to an unknown or mistyped one; the fields the family reads set to
//   small values that fit together (FitConfig), to boundary values (0, 2^32, 2^64 - 1,
//   one past it), to the wrong kind (4096.0, -1, 1e3, "64", null, an object) or dropped;
//   flags flipped; "torch_dtype" and "tl_tokenizer" set; keys duplicated;
// - the checkpoint: rebuilt from the config as the engine reads it (ReadConfig and
//   BuildModelSpec: every expected row of the first layers, with the shape its formula
//   gives; BuildCheckpoint), then sometimes changed where the rules look: a tensor
//   dropped, a dimension off by one or two swapped, a layer index at or past the count, a
//   name the family does not know, a prefix, a dtype, modules in the int4 form
//   (<m>.qweight + <m>.scales and "quant" metadata, right or wrong), the "format"
//   metadata; or mutated as any file is (safetensors_mutator.h).
// Input whose config does not parse goes half the time to the byte-level mutator and half
// the time starts from an empty config; 1 in 16 inputs go to the byte-level mutator
// anyway. STGUARD_FUZZ_MUTATOR=bytes turns it all off.
#ifndef STGUARD_FUZZ_CONFIG_MUTATOR_H_
#define STGUARD_FUZZ_CONFIG_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mutator_json.h"
#include "safetensors_mutator.h"

namespace stguard_fuzz::mutator {

// SetFamily makes `config` name family number `family` of stguard::lint::Families()
// through one of the keys the engine reads (model_type, tl_arch, architectures[0]).
void SetFamily(size_t family, JsonValue* config, Rng& rng);

// FitConfig gives every count field of the config's family a small value such that the
// family's constraints and shape formulas evaluate (tried a few times; returns false when
// no family is named or no try fitted) and its flags random values.
bool FitConfig(JsonValue* config, Rng& rng);

// BuildCheckpoint replaces *model with the tensors the config's family expects: every
// expected row for layers [0, min(num_layers, max_layers)), in the table's dtype or the
// config's torch_dtype (else one float dtype for the file), with "format" metadata as the
// format page wants it. Returns false (and leaves *model alone) when the config does not
// pass the engine's policy or names no family. The data is not laid out (LayOut).
bool BuildCheckpoint(const JsonValue& config, uint64_t max_layers, Rng& rng, FileModel* model);

// ConfigInput is fuzz_config's input split at its first NUL byte: the config text before
// it, the checkpoint after it (empty when there is no NUL; strict JSON never holds one).
struct ConfigInput {
  std::string_view config;
  std::string_view file;
};
ConfigInput SplitConfigInput(std::string_view input);

// JoinConfigInput returns config text, a NUL byte and the file: fuzz_config's input.
std::string JoinConfigInput(std::string_view config, std::string_view file);

// MutateConfigInput is the LLVMFuzzerCustomMutator body: mutates data[0, size) in place
// and returns the new size (<= max_size).
size_t MutateConfigInput(uint8_t* data, size_t size, size_t max_size, unsigned seed);

// CrossOverConfigInput is the LLVMFuzzerCustomCrossOver body: one input's config with the
// other's checkpoint.
size_t CrossOverConfigInput(const uint8_t* data1, size_t size1, const uint8_t* data2,
                            size_t size2, uint8_t* out, size_t max_out_size, unsigned seed);

}  // namespace stguard_fuzz::mutator

#endif  // STGUARD_FUZZ_CONFIG_MUTATOR_H_
