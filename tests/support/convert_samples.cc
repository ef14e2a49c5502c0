// SPDX-License-Identifier: Apache-2.0
#include "support/convert_samples.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "stguard/dtype.h"
#include "stguard/writer.h"

namespace stguard::testing {

std::vector<std::byte> Bytes16(uint32_t count, uint32_t first) {
  std::vector<std::byte> out;
  for (uint32_t i = first; i < first + count; ++i) {
    out.push_back(static_cast<std::byte>(i & 0xFF));
    out.push_back(static_cast<std::byte>((i >> 8) & 0xFF));
  }
  return out;
}

std::vector<std::byte> LittleEndianDoubles(std::initializer_list<double> values) {
  std::vector<std::byte> out;
  for (double value : values) {
    const uint64_t bits = std::bit_cast<uint64_t>(value);
    for (size_t i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((bits >> (8 * i)) & 0xFF));
  }
  return out;
}

std::string MixedCheckpoint() {
  Writer writer;
  static const std::vector<std::byte> f32 = [] {
    std::vector<std::byte> out;
    for (float value : {1.0f, -2.5f, 65520.0f, 1e-8f, NAN, -INFINITY, 0.1f, 3.0f}) {
      const uint32_t bits = std::bit_cast<uint32_t>(value);
      for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::byte>(bits >> (8 * k)));
    }
    return out;
  }();
  static const std::vector<std::byte> bf16 = Bytes16(6, 0x3F80);
  static const std::vector<std::byte> f64 = LittleEndianDoubles({1.0 + 0x1p-11 + 0x1p-40, -0.0});
  static const std::vector<std::byte> i32 = LittleEndian<int32_t>({16842753, -7});
  static const std::vector<std::byte> e4m3 = {std::byte{0x38}, std::byte{0x7E}};
  EXPECT_TRUE(writer.AddTensor("f32", Dtype::kF32, {2, 4}, f32).ok());
  EXPECT_TRUE(writer.AddTensor("bf16", Dtype::kBF16, {6}, bf16).ok());
  EXPECT_TRUE(writer.AddTensor("f64", Dtype::kF64, {2}, f64).ok());
  EXPECT_TRUE(writer.AddTensor("i32", Dtype::kI32, {2}, i32).ok());
  EXPECT_TRUE(writer.AddTensor("e4m3", Dtype::kF8_E4M3, {2}, e4m3).ok());
  EXPECT_TRUE(writer.AddMetadata("format", "pt").ok());
  Result<std::string> bytes = writer.WriteToString();
  EXPECT_TRUE(bytes.ok()) << bytes.error().ToString();
  return bytes.ok() ? *bytes : std::string();
}

}  // namespace stguard::testing
