// SPDX-License-Identifier: Apache-2.0
// Sorting index arrays quickly when the input is already (mostly) in order.
#ifndef STGUARD_SRC_BASE_SORT_INDEXES_H_
#define STGUARD_SRC_BASE_SORT_INDEXES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace stguard {

// SortIndexesStable fills *out with 0..count-1 ordered by `less` on the items they index,
// keeping equal items in index order. It is a natural merge sort: it finds the runs that
// are already in order and merges them pairwise. Headers written by the canonical writer
// list tensors in one run per dtype, sorted by name and laid out by offset, so the name
// and offset sorts cost one linear pass plus a merge per dtype instead of n log n string
// comparisons. Arbitrary input still takes O(n log n).
template <typename Less>
void SortIndexesStable(size_t count, const Less& less, std::vector<uint32_t>* out) {
  std::vector<uint32_t>& order = *out;
  order.resize(count);
  std::iota(order.begin(), order.end(), 0u);
  if (count < 2) return;

  // Run boundaries: run k is [starts[k], starts[k + 1]).
  std::vector<size_t> starts = {0};
  for (size_t i = 1; i < count; ++i) {
    if (less(order[i], order[i - 1])) starts.push_back(i);
  }
  starts.push_back(count);

  // Merge neighbouring runs until one is left; each round halves the run count.
  while (starts.size() > 2) {
    std::vector<size_t> merged = {0};
    for (size_t k = 0; k + 1 < starts.size(); k += 2) {
      const size_t begin = starts[k];
      const size_t middle = starts[k + 1];
      const size_t end = k + 2 < starts.size() ? starts[k + 2] : middle;
      if (middle != end) {
        std::inplace_merge(order.begin() + begin, order.begin() + middle, order.begin() + end,
                           less);
      }
      merged.push_back(end);
    }
    starts = std::move(merged);
  }
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_SORT_INDEXES_H_
