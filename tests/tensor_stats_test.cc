// SPDX-License-Identifier: Apache-2.0
// Tensor statistics on known data: every dtype family, non-finite values, chunk
// boundaries, exact integer sums, progress reporting and page release.
#include <gtest/gtest.h>


#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "stguard/convert.h"
#include "stguard/reader.h"
#include "stguard/tensor_stats.h"
#include "stguard/writer.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Owned bytes plus a TensorView over them.
struct Data {
  std::vector<std::byte> bytes;
  uint64_t dims[1] = {0};
  std::vector<uint8_t> encoded_dims;
  TensorView View(Dtype dtype) const {
    TensorView view;
    view.name = "t";
    view.dtype = dtype;
    view.data = bytes;
    view.end = bytes.size();
    view.shape = Shape::FromVarints(encoded_dims, 1);
    return view;
  }
};

template <typename T>
Data Of(const std::vector<T>& values) {
  Data data;
  data.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(data.bytes.data(), values.data(), data.bytes.size());
  data.dims[0] = values.size();
  Shape::AppendVarint(values.size(), &data.encoded_dims);
  return data;
}

TEST(TensorStatsTest, F32CountsNonFiniteValuesApart) {
  const Data data = Of<float>({1.0f, -2.0f, 3.5f, kNan, kInf, -kInf, 0.0f, -kNan, kInf});
  const TensorStats stats = ComputeTensorStats(data.View(Dtype::kF32));
  EXPECT_TRUE(stats.supported);
  EXPECT_TRUE(stats.floating);
  EXPECT_EQ(stats.num_elements, 9u);
  EXPECT_EQ(stats.num_finite, 4u);
  EXPECT_EQ(stats.num_nan, 2u);
  EXPECT_EQ(stats.num_pos_inf, 2u);
  EXPECT_EQ(stats.num_neg_inf, 1u);
  EXPECT_EQ(stats.min, -2.0);
  EXPECT_EQ(stats.max, 3.5);
  EXPECT_EQ(stats.mean, 0.625);
}

TEST(TensorStatsTest, NoFiniteValuesGivesNaNSummaries) {
  for (const Data& data : {Of<float>({kNan, kInf}), Of<float>({})}) {
    const TensorStats stats = ComputeTensorStats(data.View(Dtype::kF32));
    EXPECT_TRUE(stats.supported);
    EXPECT_EQ(stats.num_finite, 0u);
    EXPECT_TRUE(std::isnan(stats.min));
    EXPECT_TRUE(std::isnan(stats.max));
    EXPECT_TRUE(std::isnan(stats.mean));
  }
}

TEST(TensorStatsTest, SixteenBitFloatsAreDecodedExactly) {
  // BF16: 1.0, -0.5, +inf, NaN, 2^-133 (the smallest subnormal).
  const Data bf16 = Of<uint16_t>({0x3F80, 0xBF00, 0x7F80, 0x7FC1, 0x0001});
  TensorStats stats = ComputeTensorStats(bf16.View(Dtype::kBF16));
  EXPECT_EQ(stats.num_finite, 3u);
  EXPECT_EQ(stats.num_pos_inf, 1u);
  EXPECT_EQ(stats.num_nan, 1u);
  EXPECT_EQ(stats.min, -0.5);
  EXPECT_EQ(stats.max, 1.0);
  EXPECT_EQ(stats.mean, (0.5 + std::ldexp(1.0, -133)) / 3);
  // F16: 65504, the smallest subnormal 2^-24, -inf, -2.
  const Data f16 = Of<uint16_t>({0x7BFF, 0x0001, 0xFC00, 0xC000});
  stats = ComputeTensorStats(f16.View(Dtype::kF16));
  EXPECT_EQ(stats.num_finite, 3u);
  EXPECT_EQ(stats.num_neg_inf, 1u);
  EXPECT_EQ(stats.min, -2.0);
  EXPECT_EQ(stats.max, 65504.0);
  EXPECT_EQ(stats.mean, (65502.0 + std::ldexp(1.0, -24)) / 3);
}

TEST(TensorStatsTest, EightBitFloats) {
  const Data e4m3 = Of<uint8_t>({0x7E, 0xFE, 0x7F, 0x38});  // 448, -448, NaN, 1
  TensorStats stats = ComputeTensorStats(e4m3.View(Dtype::kF8_E4M3));
  EXPECT_EQ(stats.num_nan, 1u);
  EXPECT_EQ(stats.min, -448.0);
  EXPECT_EQ(stats.max, 448.0);
  EXPECT_EQ(stats.mean, 1.0 / 3);
  const Data e8m0 = Of<uint8_t>({0x7F, 0x80, 0xFF});  // 1, 2, NaN
  stats = ComputeTensorStats(e8m0.View(Dtype::kF8_E8M0));
  EXPECT_EQ(stats.num_nan, 1u);
  EXPECT_EQ(stats.mean, 1.5);
}

TEST(TensorStatsTest, F64IsScannedInDoublePrecision) {
  const Data data = Of<double>({1e300, -1e300, 1e-300, 0.1, std::nan(""), -HUGE_VAL});
  const TensorStats stats = ComputeTensorStats(data.View(Dtype::kF64));
  EXPECT_EQ(stats.num_finite, 4u);
  EXPECT_EQ(stats.num_nan, 1u);
  EXPECT_EQ(stats.num_neg_inf, 1u);
  EXPECT_EQ(stats.max, 1e300);
  EXPECT_EQ(stats.min, -1e300);
  EXPECT_EQ(stats.mean, (0.1 + 1e-300) / 4);  // the huge values cancel exactly
}

TEST(TensorStatsTest, IntegersAreExact) {
  std::vector<int8_t> all_i8;
  for (int i = -128; i < 128; ++i) all_i8.push_back(static_cast<int8_t>(i));
  TensorStats stats = ComputeTensorStats(Of(all_i8).View(Dtype::kI8));
  EXPECT_FALSE(stats.floating);
  EXPECT_EQ(stats.num_finite, 256u);
  EXPECT_EQ(stats.min, -128.0);
  EXPECT_EQ(stats.max, 127.0);
  EXPECT_EQ(stats.mean, -0.5);

  stats = ComputeTensorStats(Of<uint64_t>({UINT64_MAX, UINT64_MAX, 0}).View(Dtype::kU64));
  EXPECT_EQ(stats.max, 0x1p64);
  EXPECT_EQ(stats.min, 0.0);
  EXPECT_EQ(stats.mean, 2 * 0x1p64 / 3);  // the sum does not wrap

  stats = ComputeTensorStats(Of<int64_t>({INT64_MIN, INT64_MAX}).View(Dtype::kI64));
  EXPECT_EQ(stats.mean, -0.5);
  stats = ComputeTensorStats(Of<int64_t>({INT64_MAX, INT64_MAX, INT64_MAX}).View(Dtype::kI64));
  EXPECT_EQ(stats.mean, static_cast<double>(INT64_MAX));

  stats = ComputeTensorStats(Of<uint16_t>({65535, 1}).View(Dtype::kU16));
  EXPECT_EQ(stats.mean, 32768.0);
  stats = ComputeTensorStats(Of<int32_t>({INT32_MIN, -1}).View(Dtype::kI32));
  EXPECT_EQ(stats.min, static_cast<double>(INT32_MIN));
  EXPECT_EQ(stats.max, -1.0);
  stats = ComputeTensorStats(Of<uint32_t>({UINT32_MAX}).View(Dtype::kU32));
  EXPECT_EQ(stats.max, 4294967295.0);

  stats = ComputeTensorStats(Of<uint8_t>({0, 1, 2, 0}).View(Dtype::kBOOL));
  EXPECT_EQ(stats.min, 0.0);
  EXPECT_EQ(stats.max, 1.0);
  EXPECT_EQ(stats.mean, 0.5);
}

TEST(TensorStatsTest, UnsupportedDtypesAreNotScanned) {
  const Data data = Of<uint8_t>({1, 2, 3, 4, 5, 6, 7, 8});
  for (Dtype dtype : {Dtype::kF4, Dtype::kF6_E2M3, Dtype::kF6_E3M2, Dtype::kC64}) {
    const TensorStats stats = ComputeTensorStats(data.View(dtype));
    EXPECT_FALSE(stats.supported);
    EXPECT_EQ(stats.num_elements, 0u);
  }
}

// Many chunks, with a non-finite value in some of them only, and progress in steps.
TEST(TensorStatsTest, LargeTensorAcrossChunksWithProgress) {
  const size_t n = 100'003;
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i) - 50'000.0f;
  values[70'000] = kNan;  // in one chunk only: that chunk takes the slow path
  const Data data = Of(values);
  uint64_t reported = 0;
  int calls = 0;
  ScanOptions options;
  options.progress = [&](uint64_t bytes) {
    reported += bytes;
    ++calls;
  };
  options.progress_interval = 64 * 1024;
  const TensorStats stats = ComputeTensorStats(data.View(Dtype::kF32), options);
  EXPECT_EQ(reported, n * 4);
  EXPECT_GE(calls, 6);
  EXPECT_EQ(stats.num_finite, n - 1);
  EXPECT_EQ(stats.num_nan, 1u);
  EXPECT_EQ(stats.min, -50'000.0);
  EXPECT_EQ(stats.max, 50'002.0);
  // Sum of i - 50000 over i = 0..100002 except 70000: 100003 * 1 - 20000 = 80003.
  EXPECT_EQ(stats.mean, 80'003.0 / (n - 1));
}

TEST(TensorStatsTest, ReleasingScannedPagesOfAMappedFileChangesNothing) {
  testing::TempDir dir;
  const size_t n = 3'000'000;  // 12 MB: several release steps would need more; one suffices
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 1000) * 0.25f;
  Writer writer;
  ASSERT_TRUE(writer.AddTensor("w", Dtype::kF32, {n},
                               std::as_bytes(std::span<const float>(values))).ok());
  ASSERT_TRUE(writer.WriteToFile(dir.File("w.safetensors")).ok());
  Result<Checkpoint> checkpoint = Checkpoint::Open(dir.File("w.safetensors"));
  ASSERT_TRUE(checkpoint.ok());
  ScanOptions options;
  options.release_scanned_pages = true;
  const TensorStats first = ComputeTensorStats(checkpoint->tensors()[0], options);
  const TensorStats second = ComputeTensorStats(checkpoint->tensors()[0], options);
  EXPECT_EQ(first.mean, 124.875);
  EXPECT_EQ(second.mean, first.mean);
  EXPECT_EQ(second.max, 249.75);
}


}  // namespace
}  // namespace stguard
