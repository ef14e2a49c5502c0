// SPDX-License-Identifier: Apache-2.0
// Duplicate-key detection by sorting: O(n log n) whatever the keys, with no hash table
// that colliding keys could flood and no pairwise comparison.
#ifndef STGUARD_SRC_BASE_DUPLICATE_KEYS_H_
#define STGUARD_SRC_BASE_DUPLICATE_KEYS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <vector>

#include "base/sort_indexes.h"

namespace stguard {

inline constexpr size_t kNoDuplicate = static_cast<size_t>(-1);

// SortKeysFindDuplicate fills *out_sorted with the indexes 0..num_keys-1 ordered by
// (key bytes, index), where key(i) returns the i-th key as a std::string_view and keys are
// numbered in the order they appear in the file. Returns the smallest index that repeats
// an earlier key (the first duplicate a reader of the file meets), or kNoDuplicate.
template <typename KeyFn>
size_t SortKeysFindDuplicate(size_t num_keys, const KeyFn& key,
                             std::vector<uint32_t>* out_sorted) {
  // Fast exit for the common case, keys already strictly ascending (a canonical file with
  // one dtype): one comparison per key proves both the order and the absence of repeats.
  bool strictly_ascending = true;
  for (size_t i = 1; i < num_keys && strictly_ascending; ++i) {
    strictly_ascending = std::string_view(key(i - 1)) < std::string_view(key(i));
  }
  if (strictly_ascending) {
    out_sorted->resize(num_keys);
    std::iota(out_sorted->begin(), out_sorted->end(), 0u);
    return kNoDuplicate;
  }

  // string_view compares bytes as unsigned char, like memcmp: UTF-8 byte order. The sort
  // is stable, so equal keys stay in file order.
  SortIndexesStable(
      num_keys,
      [&key](uint32_t a, uint32_t b) { return std::string_view(key(a)) < std::string_view(key(b)); },
      out_sorted);
  const std::vector<uint32_t>& sorted = *out_sorted;
  // Within a run of equal keys the indexes ascend, so every element after the first of a
  // run is a repeat; the smallest such index is the first duplicate in file order.
  size_t first_duplicate = kNoDuplicate;
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (std::string_view(key(sorted[i])) == key(sorted[i - 1])) {
      first_duplicate = std::min<size_t>(first_duplicate, sorted[i]);
    }
  }
  return first_duplicate;
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_DUPLICATE_KEYS_H_
