// SPDX-License-Identifier: Apache-2.0
// The dtype table: names, sizes, and exact, case-sensitive parsing.
#include <gtest/gtest.h>

#include "stguard/dtype.h"

namespace stguard {
namespace {

TEST(DtypeTest, EveryNameParsesBackToItsDtype) {
  for (Dtype dtype : kAllDtypes) {
    EXPECT_EQ(ParseDtype(DtypeName(dtype)), dtype) << DtypeName(dtype);
  }
}

TEST(DtypeTest, SizesInBits) {
  EXPECT_EQ(DtypeBits(Dtype::kF4), 4u);
  EXPECT_EQ(DtypeBits(Dtype::kF6_E2M3), 6u);
  EXPECT_EQ(DtypeBits(Dtype::kBOOL), 8u);
  EXPECT_EQ(DtypeBits(Dtype::kF8_E5M2FNUZ), 8u);
  EXPECT_EQ(DtypeBits(Dtype::kBF16), 16u);
  EXPECT_EQ(DtypeBits(Dtype::kC64), 64u);
  EXPECT_EQ(DtypeBits(Dtype::kU64), 64u);
}

TEST(DtypeTest, NearMissesAreUnknown) {
  for (std::string_view name :
       {"", "f32", "F32 ", " F32", "F3", "F322", "F8_E4M3FNUZZ", "F8_E4M3FN",
        "F8_E4M3FNUZ_LONGER_THAN_16", "bf16", "Bool"}) {
    EXPECT_FALSE(ParseDtype(name).has_value()) << name;
  }
  // Zero padding inside the parser must not let a NUL-extended name match.
  EXPECT_FALSE(ParseDtype(std::string_view("F32\0", 4)).has_value());
  EXPECT_FALSE(ParseDtype(std::string_view("BOOL\0", 5)).has_value());
  EXPECT_FALSE(ParseDtype(std::string_view("U8\0\0\0\0\0\0\0", 9)).has_value());
}

// The facts read from the dtype table, dtype by dtype.
TEST(DtypeTest, KindsAndConversionFactsComeFromTheTable) {
  for (const Dtype dtype : kAllDtypes) {
    const std::string_view name = DtypeName(dtype);
    const bool floating = name[0] == 'F' || dtype == Dtype::kBF16;  // F4, F6_*, F8_*...
    EXPECT_EQ(IsFloatingDtype(dtype), floating) << name;
    const bool sub_byte = DtypeBits(dtype) % 8 != 0;
    EXPECT_EQ(ElementSize(dtype), sub_byte ? 0u : DtypeBits(dtype) / 8) << name;
    EXPECT_EQ(CanConvertToF32(dtype), !sub_byte && dtype != Dtype::kC64) << name;
    const bool wide_float = dtype == Dtype::kF64 || dtype == Dtype::kF32 ||
                            dtype == Dtype::kF16 || dtype == Dtype::kBF16;
    EXPECT_EQ(IsConvertibleFloat(dtype), wide_float) << name;
    EXPECT_EQ(IsConversionTarget(dtype), wide_float && dtype != Dtype::kF64) << name;
    // Whatever decodes has a whole-byte element: ConvertToF32 divides by it.
    if (CanConvertToF32(dtype)) EXPECT_GT(ElementSize(dtype), 0u) << name;
  }
}

// The numpy type holds one element (its bits, for a type numpy lacks) or, for the
// sub-byte types, one byte; it says which, by its kind letter.
TEST(DtypeTest, NumpyTypesHoldOneElementOrOneByte) {
  for (const Dtype dtype : kAllDtypes) {
    const std::string_view name = DtypeName(dtype);
    const std::string_view numpy = DtypeNumpyType(dtype);
    ASSERT_FALSE(numpy.empty()) << name;
    const uint32_t bytes = numpy == "?" ? 1 : static_cast<uint32_t>(numpy.back() - '0');
    EXPECT_EQ(bytes * 8, DtypeBits(dtype) % 8 == 0 ? DtypeBits(dtype) : 8u) << name;
    if (bytes > 1) EXPECT_EQ(numpy.front(), '<') << name << ": little-endian";
  }
  EXPECT_EQ(DtypeNumpyType(Dtype::kF32), "<f4");
  EXPECT_EQ(DtypeNumpyType(Dtype::kBF16), "<u2");  // numpy has no bfloat16: its bits
  EXPECT_EQ(DtypeNumpyType(Dtype::kF8_E4M3), "u1");
  EXPECT_EQ(DtypeNumpyType(Dtype::kBOOL), "?");
}

TEST(DtypeTest, FrameworkNamesAreTorchs) {
  EXPECT_EQ(DtypeFrameworkName(Dtype::kBF16), "bfloat16");
  EXPECT_EQ(DtypeFrameworkName(Dtype::kF8_E4M3), "float8_e4m3fn");
  EXPECT_EQ(DtypeFrameworkName(Dtype::kF4), "float4_e2m1fn_x2");
  EXPECT_EQ(DtypeFrameworkName(Dtype::kF6_E2M3), "");  // torch has no 6-bit float
  for (const Dtype dtype : kAllDtypes) {
    const std::string_view framework = DtypeFrameworkName(dtype);
    if (framework.empty()) continue;
    for (const Dtype other : kAllDtypes) {
      if (other != dtype) EXPECT_NE(DtypeFrameworkName(other), framework) << framework;
    }
  }
}

}  // namespace
}  // namespace stguard
