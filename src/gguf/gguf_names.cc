// SPDX-License-Identifier: Apache-2.0
// Unique keys and tensor names, found by sorting indexes (O(n log n), no hash table whose
// cost an attacker could choose), and the lookups that use the sorted order.
#include <algorithm>
#include <string>

#include "gguf/gguf_internal.h"

namespace stguard::gguf {

namespace {

// SortUnique sorts the indexes of `entries` by name_of(entry) and refuses the first name
// that appears twice, naming the later entry in file order.
template <typename Entry, typename NameOf>
Error SortUnique(const std::vector<Entry>& entries, NameOf name_of, ErrorCode code,
                 const char* message, std::vector<uint32_t>* sorted) {
  sorted->resize(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) (*sorted)[i] = static_cast<uint32_t>(i);
  std::stable_sort(sorted->begin(), sorted->end(), [&](uint32_t a, uint32_t b) {
    return name_of(entries[a]) < name_of(entries[b]);
  });
  for (size_t i = 1; i < sorted->size(); ++i) {
    const Entry& later = entries[(*sorted)[i]];  // stable: the later one in file order
    if (name_of(entries[(*sorted)[i - 1]]) == name_of(later)) {
      Error error{code, 0, message};
      if constexpr (std::is_same_v<Entry, TensorInfo>) {
        error.offset = later.info_offset;
        error.tensor = std::string(later.name);
      } else {
        error.offset = later.offset;
        error.context = std::string(later.key);
      }
      return error;
    }
  }
  return {};
}

}  // namespace

Error SortUniqueKeys(const std::vector<MetadataEntry>& entries, std::vector<uint32_t>* sorted) {
  return SortUnique(
      entries, [](const MetadataEntry& e) { return e.key; }, ErrorCode::kGgufDuplicateKey,
      "a key appears twice", sorted);
}

Error SortUniqueNames(const std::vector<TensorInfo>& tensors, std::vector<uint32_t>* sorted) {
  return SortUnique(
      tensors, [](const TensorInfo& t) { return t.name; }, ErrorCode::kGgufDuplicateTensor,
      "two tensors have one name", sorted);
}

}  // namespace stguard::gguf
