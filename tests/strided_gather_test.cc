// SPDX-License-Identifier: Apache-2.0
// The strided gather (src/torch/strided_gather.h) against a naive reference: an odometer
// over every dimension, one element at a time, on zero, overlapping, unit, merged and
// transposed strides, and on random views.
#include "torch/strided_gather.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace stguard {
namespace {

using Dims = std::vector<uint64_t>;

// NaiveGather is the definition: element (i0, i1, ...) is first + sum i_d * stride_d.
std::string NaiveGather(const std::string& storage, uint64_t element_len, uint64_t first,
                        const Dims& shape, const Dims& strides) {
  uint64_t count = 1;
  for (uint64_t size : shape) count *= size;
  std::string out;
  Dims index(shape.size(), 0);
  for (uint64_t n = 0; n < count; ++n) {
    uint64_t element = first;
    for (size_t d = 0; d < shape.size(); ++d) element += index[d] * strides[d];
    out.append(storage, element * element_len, element_len);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Gather runs GatherStrided with a buffer of `buffer_len` bytes and collects its flushes.
std::string Gather(const std::string& storage, uint64_t element_len, uint64_t first,
                   const Dims& shape, const Dims& strides, size_t buffer_len,
                   size_t* flushes = nullptr) {
  std::vector<std::byte> buffer(buffer_len);
  std::string out;
  size_t calls = 0;
  Error error = GatherStrided(
      reinterpret_cast<const std::byte*>(storage.data()), element_len, first,
      PlanGather(shape, strides), buffer, [&](std::span<const std::byte> chunk) {
        EXPECT_FALSE(chunk.empty());
        out.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
        ++calls;
        return Error{};
      });
  EXPECT_TRUE(error.ok()) << error.ToString();
  if (flushes != nullptr) *flushes = calls;
  return out;
}

std::string Storage(size_t len) {
  std::string storage(len, '\0');
  for (size_t k = 0; k < len; ++k) storage[k] = static_cast<char>(k * 7 + 3);
  return storage;
}

struct Case {
  const char* name;
  uint64_t element_len;
  uint64_t first;
  Dims shape;
  Dims strides;
};

TEST(StridedGatherTest, MatchesTheNaiveGatherOnOddStrides) {
  const std::string storage = Storage(4096);
  const Case cases[] = {
      {"scalar", 4, 5, {}, {}},
      {"empty", 2, 0, {3, 0, 4}, {4, 1, 1}},
      {"contiguous", 2, 1, {3, 4}, {4, 1}},
      {"transposed", 4, 0, {5, 4}, {1, 5}},
      {"zero stride (expand)", 4, 2, {3, 4}, {1, 0}},
      {"all zero strides", 1, 9, {6, 1, 5}, {0, 0, 0}},
      {"overlapping windows", 2, 0, {6, 4}, {2, 1}},
      {"unit dims with odd strides", 8, 3, {1, 3, 1, 1, 2, 1}, {999, 7, 0, 12345, 2, 1}},
      {"stepped", 4, 1, {3, 2, 2}, {20, 10, 3}},
      {"mergeable outer, strided inner", 1, 0, {2, 3, 4}, {24, 8, 2}},
      {"only unit dims", 2, 17, {1, 1, 1}, {5, 0, 3}},
      {"inner unit stride after zero", 1, 0, {4, 1, 8}, {0, 1, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string want = NaiveGather(storage, c.element_len, c.first, c.shape, c.strides);
    for (size_t buffer_len : {c.element_len, c.element_len * 3, size_t{4096}}) {
      EXPECT_EQ(Gather(storage, c.element_len, c.first, c.shape, c.strides, buffer_len), want)
          << "buffer " << buffer_len;
    }
  }
}

TEST(StridedGatherTest, PlanDropsUnitDimensionsAndMergesContiguousOnes) {
  Dims shape(50'000, 1);
  shape[0] = 200'000;
  Dims strides(shape.size(), 0);
  GatherPlan plan = PlanGather(shape, strides);
  EXPECT_EQ(plan.shape, Dims{200'000});
  EXPECT_EQ(plan.strides, Dims{0});
  EXPECT_EQ(plan.num_elements, 200'000u);
  // A contiguous (2, 3, 4) view is one run of 24; a transposed one stays two dimensions.
  plan = PlanGather(Dims{2, 3, 4}, Dims{12, 4, 1});
  EXPECT_EQ(plan.shape, Dims{24});
  EXPECT_EQ(plan.strides, Dims{1});
  plan = PlanGather(Dims{4, 3}, Dims{1, 4});
  EXPECT_EQ(plan.shape, (Dims{4, 3}));
  // Zero strides merge with zero strides (an expanded scalar), not with others.
  plan = PlanGather(Dims{2, 3, 5}, Dims{0, 0, 1});
  EXPECT_EQ(plan.shape, (Dims{6, 5}));
  EXPECT_EQ(plan.strides, (Dims{0, 1}));
  EXPECT_EQ(PlanGather(Dims{3, 0, 2}, Dims{1, 1, 1}).num_elements, 0u);
}

TEST(StridedGatherTest, ManyUnitDimensionsCostNothing) {
  // The shape of a 200 KB file that took 42 s: 200,000 elements under 50,000 unit dims.
  // The gather's own work bound (kGatherStepsPerElement) fails the call if it is exceeded.
  Dims shape(50'001, 1);
  shape[0] = 200'000;
  const Dims strides(shape.size(), 0);
  const std::string storage = Storage(16);
  size_t flushes = 0;
  const std::string out = Gather(storage, 1, 4, shape, strides, 1 << 16, &flushes);
  EXPECT_EQ(out, std::string(200'000, storage[4]));
  EXPECT_EQ(flushes, 4u);  // 3 full buffers and the rest
}

TEST(StridedGatherTest, MatchesTheNaiveGatherOnRandomViews) {
  std::mt19937_64 random(20261203);
  const std::string storage = Storage(1 << 14);
  for (int round = 0; round < 2000; ++round) {
    const size_t dims = random() % 6;
    const uint64_t element_len = uint64_t{1} << (random() % 4);
    Dims shape(dims), strides(dims);
    uint64_t reach = 0;
    for (size_t d = 0; d < dims; ++d) {
      shape[d] = random() % 5;  // 0 and 1 included
      strides[d] = random() % 3 == 0 ? 0 : random() % 40;
      if (shape[d] > 0) reach += (shape[d] - 1) * strides[d];
    }
    const uint64_t first = random() % 64;
    if ((first + reach + 1) * element_len > storage.size()) continue;
    SCOPED_TRACE(round);
    EXPECT_EQ(Gather(storage, element_len, first, shape, strides, element_len * (1 + round % 7)),
              NaiveGather(storage, element_len, first, shape, strides));
  }
}

TEST(StridedGatherTest, ASinkErrorStopsTheGather) {
  const std::string storage = Storage(64);
  std::vector<std::byte> buffer(4);
  int calls = 0;
  Error error = GatherStrided(reinterpret_cast<const std::byte*>(storage.data()), 1, 0,
                              PlanGather(Dims{16, 2}, Dims{1, 0}), buffer,
                              [&calls](std::span<const std::byte>) {
                                ++calls;
                                return Error{ErrorCode::kIoError, 0, "disk full"};
                              });
  EXPECT_EQ(error.code, ErrorCode::kIoError);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace stguard
