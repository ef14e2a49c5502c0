// SPDX-License-Identifier: Apache-2.0
// Structure-aware mutation of .npy files (see npy_mutator.h).
#include "npy_mutator.h"

#include <array>
#include <random>
#include <string>
#include <string_view>

#include "npy/dict_literal.h"
#include "safetensors_mutator.h"  // ByteLevelMutate, CopyOut
#include "stguard/npy.h"

namespace stguard_fuzz::mutator {

namespace {

constexpr std::string_view kDefaultDict =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

constexpr std::array<std::string_view, 16> kValues = {
    "'<f4'", "'>f8'", "'|b1'", "'<u1'", "'<c8'", "'<c16'", "'<U3'", "'|S2'",
    "'<M8[s]'", "'|O'", "True", "False", "()", "(0,)", "(3,)", "(2, 2, 1, )"};
constexpr std::array<std::string_view, 4> kKeys = {"'descr'", "'fortran_order'", "'shape'",
                                                   "\"shape\""};

// DictText returns the dict of a .npy file: the bytes after the preamble that the length
// names (or to the end of the input when it lies), without the padding and newline.
std::string DictText(std::string_view file) {
  if (file.size() < 10 || file.substr(0, stguard::kNpyMagicLen) !=
                              std::string_view(stguard::kNpyMagic, stguard::kNpyMagicLen)) {
    return std::string(kDefaultDict);
  }
  const size_t start = file[6] == 1 ? 10 : 12;
  if (file.size() < start) return std::string(kDefaultDict);
  uint64_t len = 0;
  for (size_t i = start - 8; i-- > 0;) len = (len << 8) | static_cast<uint8_t>(file[8 + i]);
  std::string dict(file.substr(start, std::min<uint64_t>(len, file.size() - start)));
  while (!dict.empty() && (dict.back() == ' ' || dict.back() == '\n')) dict.pop_back();
  return dict;
}

// ReplaceToken swaps the text between a random quote, parenthesis or letter and the next
// ',' or ':' for a table entry, keeping the dict mostly well-formed.
void ReplaceToken(std::string* dict, std::mt19937& rng) {
  if (dict->empty()) return;
  const size_t at = rng() % dict->size();
  const size_t begin = dict->find_first_of("'\"(TF", at);
  if (begin == std::string::npos) return;
  const size_t end = dict->find_first_of(":,}", begin);
  if (end == std::string::npos) return;
  const bool key = (*dict)[end] == ':';
  const std::string_view with = key ? kKeys[rng() % kKeys.size()] : kValues[rng() % kValues.size()];
  dict->replace(begin, end - begin, with);
}

// DataLength returns shape × itemsize when the dict parses and names both, else 0.
uint64_t DataLength(const std::string& dict, uint64_t limit) {
  auto entries = stguard::npy::ParseDictLiteral(dict + "\n", 0);
  if (!entries.ok()) return 0;
  uint64_t itemsize = 0, count = 1;
  for (const auto& entry : *entries) {
    if (entry.key == "descr" && entry.kind == stguard::npy::LiteralKind::kString) {
      auto type = stguard::ParseNpyDescr(entry.text, 0);
      if (type.ok()) itemsize = type->itemsize;
    } else if (entry.key == "shape" && entry.kind == stguard::npy::LiteralKind::kIntTuple) {
      for (uint64_t dim : entry.integers) {
        if (dim != 0 && count > limit / dim) return 0;
        count *= dim;
      }
    }
  }
  if (itemsize == 0 || (count != 0 && itemsize > limit / count)) return 0;
  return count * itemsize;
}

}  // namespace

size_t MutateNpy(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  std::mt19937 rng(seed);
  if (ByteLevelOnly() || rng() % 16 == 0) return ByteLevelMutate(data, size, max_size, seed);
  const std::string_view old(reinterpret_cast<const char*>(data), size);
  std::string dict = DictText(old);
  if (rng() % 2 == 0) {
    dict.resize(dict.size() + 32);
    dict.resize(ByteLevelMutate(reinterpret_cast<uint8_t*>(dict.data()), dict.size() - 32,
                                dict.size(), seed));
  } else {
    ReplaceToken(&dict, rng);
  }
  const int major = 1 + static_cast<int>(rng() % 3);
  const size_t prefix = major == 1 ? 10 : 12;
  const bool lie = rng() % 8 == 0;
  const size_t align = (rng() % 4 == 0) ? 16 : 64;
  std::string header = dict;
  while ((prefix + header.size() + 1) % align != 0) header += ' ';
  if (lie && rng() % 3 == 0) header += ' ';  // padding off by one
  header += '\n';
  std::string file(stguard::kNpyMagic, stguard::kNpyMagicLen);
  file += static_cast<char>(major);
  file += '\0';
  uint64_t len = header.size() + (lie && rng() % 3 == 0 ? 1 : 0);  // length off by one
  for (size_t i = 0; i < prefix - 8; ++i) file += static_cast<char>((len >> (8 * i)) & 0xff);
  file += header;
  const uint64_t room = max_size > file.size() ? max_size - file.size() : 0;
  uint64_t data_len = DataLength(dict, room);
  if (lie && rng() % 3 == 0 && data_len < room) ++data_len;  // data off by one
  // Zero data bytes: their values never matter to the verdict (the target checks that).
  file.append(data_len, '\0');
  return CopyOut(file, data, max_size);
}

}  // namespace stguard_fuzz::mutator
