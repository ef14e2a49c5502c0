// SPDX-License-Identifier: Apache-2.0
// reference_checker.h: a second, independent implementation of stguard's acceptance rules,
// written to be obviously correct rather than fast, for differential fuzzing.
//
// Nothing here comes from src/: not the tokenizer, not the UTF-8 table, not the dtype
// table, not the tiling. The JSON code is a plain recursive-descent parser; the safetensors
// checker parses the header straight against the narrow schema (anything outside it is a
// rejection, whatever the JSON around it), then checks sizes and tiling with formulas that
// differ from the reader's (a sum and a pairwise overlap test instead of a sorted walk).
// The policy implemented is the one in include/stguard/reader.h and SECURITY.md.
#ifndef STGUARD_FUZZ_REFERENCE_CHECKER_H_
#define STGUARD_FUZZ_REFERENCE_CHECKER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stguard_fuzz::reference {

// IsValidUtf8 decodes each sequence and rejects overlong forms, surrogates, values above
// U+10FFFF, stray continuation bytes and truncated sequences.
bool IsValidUtf8(std::string_view text);

// IsJsonText says whether `text` is exactly one JSON text under stguard's strict policy:
// RFC 8259 grammar, strict UTF-8, no raw control characters in strings, escapes limited to
// the RFC's, \u surrogates in high-low pairs only, whitespace limited to space, tab, LF and
// CR, and at most `max_depth` nested containers.
bool IsJsonText(std::string_view text, uint32_t max_depth);

// IsJsonTextWithUniqueKeys is IsJsonText that also rejects any object repeating a key,
// keys compared after decoding.
bool IsJsonTextWithUniqueKeys(std::string_view text, uint32_t max_depth);

// Index is a sharded checkpoint's index file (model.safetensors.index.json) as the
// policy of src/index_file.h reads it.
struct Index {
  bool ok = false;
  std::vector<std::pair<std::string, std::string>> weight_map;  // file order, decoded
  bool has_metadata = false;
  bool has_total_size = false;
  uint64_t total_size = 0;
};

// CheckIndex applies the index policy: one JSON text with unique keys in every object,
// top level exactly {"weight_map": {string: string}} plus an optional "metadata" object
// whose "total_size", if present, is a plain non-negative 64-bit integer.
Index CheckIndex(std::string_view text, uint32_t max_depth);

// DecodeJsonString decodes `quoted`, which must be exactly one JSON string with its
// quotes, into *out. Returns false if it is anything else.
bool DecodeJsonString(std::string_view quoted, std::string* out);

// DtypeBits returns the element size in bits of a dtype name ("F32" -> 32), 0 if unknown.
uint32_t DtypeBits(std::string_view name);

struct Tensor {
  std::string name;  // unescaped
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

enum class Verdict {
  kAccepted,
  kHeaderTooSmall,       // fewer than 8 bytes
  kHeaderTooLarge,       // N above 100,000,000
  kInvalidHeaderLength,  // 8 + N past the end
  kRejected,             // any later reason; `reason` says which
};

struct File {
  Verdict verdict = Verdict::kRejected;
  const char* reason = "";
  uint64_t header_len = 0;
  bool has_metadata_object = false;
  std::vector<Tensor> tensors;                                // header order
  std::vector<std::pair<std::string, std::string>> metadata;  // header order, unescaped
};

// CheckFile applies every rule of the format to the whole file.
File CheckFile(std::string_view bytes);

}  // namespace stguard_fuzz::reference

#endif  // STGUARD_FUZZ_REFERENCE_CHECKER_H_
