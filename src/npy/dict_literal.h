// SPDX-License-Identifier: Apache-2.0
// The .npy header's dict literal, read by a parser of our own: never evaluated.
#ifndef STGUARD_SRC_NPY_DICT_LITERAL_H_
#define STGUARD_SRC_NPY_DICT_LITERAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/error.h"

namespace stguard::npy {

// LiteralKind is every kind of value the header may hold: nothing else is parsed.
enum class LiteralKind : uint8_t { kString, kBool, kIntTuple };

// DictEntry is one `'key': value` pair. Offsets are absolute file offsets.
struct DictEntry {
  std::string key;
  uint64_t key_offset = 0;
  LiteralKind kind = LiteralKind::kString;
  uint64_t value_offset = 0;
  std::string text;                // kString
  bool flag = false;               // kBool
  std::vector<uint64_t> integers;  // kIntTuple
};

// ParseDictLiteral reads `header` (the bytes after the preamble, starting at file offset
// `base`): '{' entries '}' then spaces and a final '\n', with the grammar in stguard/npy.h.
// Entries are returned in file order, duplicates included (the caller judges keys).
// Anything outside the grammar is kNpyHeaderSyntax at the offending byte. Time and memory
// are linear in header.size(), and the parser is a loop, never recursive.
Result<std::vector<DictEntry>> ParseDictLiteral(std::string_view header, uint64_t base);

}  // namespace stguard::npy

#endif  // STGUARD_SRC_NPY_DICT_LITERAL_H_
