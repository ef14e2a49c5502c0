// SPDX-License-Identifier: Apache-2.0
// SortIndexesStable against std::stable_sort on inputs with few and many runs.
#include "base/sort_indexes.h"

#include <gtest/gtest.h>

#include <random>

namespace stguard {
namespace {

std::vector<uint32_t> Expected(const std::vector<int>& keys) {
  std::vector<uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&keys](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  return order;
}

std::vector<uint32_t> Actual(const std::vector<int>& keys) {
  std::vector<uint32_t> order;
  SortIndexesStable(
      keys.size(), [&keys](uint32_t a, uint32_t b) { return keys[a] < keys[b]; }, &order);
  return order;
}

TEST(SortIndexesTest, MatchesStableSort) {
  std::mt19937 random(1234);
  for (int trial = 0; trial < 2000; ++trial) {
    const size_t count = random() % 200;
    const int range = 1 + static_cast<int>(random() % 50);  // small ranges give many ties
    std::vector<int> keys(count);
    for (int& key : keys) key = static_cast<int>(random() % range);
    if (trial % 3 == 0) std::sort(keys.begin(), keys.end());  // one run
    if (trial % 3 == 1) {                                      // a few sorted runs
      for (size_t i = 0; i < count; i += 37) {
        std::sort(keys.begin() + i, keys.begin() + std::min(count, i + 37));
      }
    }
    ASSERT_EQ(Actual(keys), Expected(keys)) << "trial " << trial;
  }
}

TEST(SortIndexesTest, EmptyAndSingle) {
  EXPECT_TRUE(Actual({}).empty());
  EXPECT_EQ(Actual({5}), std::vector<uint32_t>{0});
  EXPECT_EQ(Actual({3, 2, 1}), (std::vector<uint32_t>{2, 1, 0}));
}

}  // namespace
}  // namespace stguard
