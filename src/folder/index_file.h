// SPDX-License-Identifier: Apache-2.0
// Sharded-checkpoint index files (model.safetensors.index.json), parsed strictly with the
// project's own tokenizer, and a JSON validator that also rejects duplicate keys.
//
// POLICY for the index, every choice being the strict one:
// - The text is exactly one RFC 8259 JSON text (JsonTokenizer's rules: UTF-8, no BOM, no
//   trailing bytes, depth limit).
// - No object anywhere in it has two equal keys, compared after unescaping
//   -> kDuplicateKey. (Python's json keeps the last silently; a tensor listed twice in
//   weight_map would then be looked up in whichever shard came last.)
// - The top level is an object with "weight_map" (required) and "metadata" (optional),
//   and nothing else -> kInvalidIndex. Writers in the wild (transformers, diffusers,
//   accelerate, safetensors' own helpers) write exactly these two keys.
// - "metadata" is an object. Its "total_size", when present, is a non-negative integer
//   that fits in 64 bits, written without fraction, exponent or sign -> kInvalidIndex.
//   Its other values may be any JSON (transformers adds "total_parameters").
// - "weight_map" is an object whose every value is a string -> kInvalidIndex.
// Shard names are not checked here: that is CheckpointDir's job (it knows the folder).
//
// Time is O(n log n) in the index size (duplicates are found by sorting each object's
// keys); memory is O(n). Nothing recurses.
#ifndef STGUARD_SRC_FOLDER_INDEX_FILE_H_
#define STGUARD_SRC_FOLDER_INDEX_FILE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/error.h"
#include "stguard/options.h"

namespace stguard {

// IndexEntry is one weight_map pair. Views point into the index text or into
// IndexFile::owned_strings.
struct IndexEntry {
  std::string_view tensor;    // unescaped key
  std::string_view shard;     // unescaped value
  uint64_t key_offset = 0;    // offset of the key's opening quote in the index text
  uint64_t value_offset = 0;  // offset of the value's opening quote
};

// IndexFile is a parsed index.
struct IndexFile {
  std::vector<IndexEntry> weight_map;  // in file order
  bool has_metadata = false;
  bool has_total_size = false;
  uint64_t total_size = 0;
  uint64_t total_size_offset = 0;  // offset of the total_size number
  std::deque<std::string> owned_strings;  // unescaped strings that had escapes
};

// ValidateJsonUniqueKeys checks that `text` is exactly one JSON text (as ValidateJson)
// and that no object in it repeats a key, compared after unescaping. Returns an Error
// whose code is kOk when both hold; a repeat gives kDuplicateKey at the later key, with
// the key in `context`.
Error ValidateJsonUniqueKeys(std::string_view text, uint32_t max_depth = kDefaultMaxDepth);

// ParseIndexFile checks `text` against the POLICY above and fills *out. Offsets in errors
// and entries are byte offsets into `text`. Returns the first error, or an ok Error.
Error ParseIndexFile(std::string_view text, const Options& options, IndexFile* out);

}  // namespace stguard

#endif  // STGUARD_SRC_FOLDER_INDEX_FILE_H_
