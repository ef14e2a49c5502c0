// SPDX-License-Identifier: Apache-2.0
// Dtype conversions: every 8- and 16-bit input against a plainly written reference
// (std::ldexp on the format's fields), every rounding boundary of F32 -> BF16 and
// F32 -> F16, and the double-rounding cases that ConvertElements must get right.
#include <gtest/gtest.h>


#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <ostream>
#include <vector>

#include "stguard/convert.h"
#include "stguard/reader.h"
#include "stguard/writer.h"
#include "support/convert_samples.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::Bytes16;
using testing::LittleEndian;
using testing::LittleEndianDoubles;
using testing::MixedCheckpoint;

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- Reference decoders: the definitions in stguard/convert.h, written out ----

// RefFinite is the value of a finite, non-special minifloat: sign, exponent field e,
// mantissa field m. Subnormal when e == 0.
double RefFinite(uint32_t bits, int exponent_bits, int mantissa_bits, int bias) {
  const int sign_shift = exponent_bits + mantissa_bits;
  const double sign = ((bits >> sign_shift) & 1) != 0 ? -1.0 : 1.0;
  const int e = static_cast<int>((bits >> mantissa_bits) & ((1u << exponent_bits) - 1));
  const int m = static_cast<int>(bits & ((1u << mantissa_bits) - 1));
  if (e == 0) return sign * std::ldexp(m, 1 - bias - mantissa_bits);
  return sign * std::ldexp((1 << mantissa_bits) + m, e - bias - mantissa_bits);
}

// ExpectSame compares a decoded value with the reference: NaN with NaN, zeros by sign,
// everything else exactly.
void ExpectSame(float actual, double expected, uint32_t input) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << "input 0x" << std::hex << input;
    return;
  }
  EXPECT_EQ(static_cast<double>(actual), expected) << "input 0x" << std::hex << input;
  EXPECT_EQ(std::signbit(actual), std::signbit(expected)) << "input 0x" << std::hex << input;
}

double RefBf16(uint32_t h) {
  const int e = (h >> 7) & 0xFF;
  const int m = h & 0x7F;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0xFF) return m == 0 ? sign * HUGE_VAL : NAN;
  return RefFinite(h, 8, 7, 127);
}

double RefF16(uint32_t h) {
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m == 0 ? sign * HUGE_VAL : NAN;
  return RefFinite(h, 5, 10, 15);
}

double RefE4M3(uint32_t b) {  // OFP8 E4M3: S.1111.111 is NaN, no infinities
  if ((b & 0x7F) == 0x7F) return NAN;
  return RefFinite(b, 4, 3, 7);
}

double RefE5M2(uint32_t b) {  // OFP8 E5M2: IEEE-like
  const int e = (b >> 2) & 0x1F;
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  if (e == 31) return (b & 3) == 0 ? sign * HUGE_VAL : NAN;
  return RefFinite(b, 5, 2, 15);
}

double RefE4M3Fnuz(uint32_t b) { return b == 0x80 ? NAN : RefFinite(b, 4, 3, 8); }
double RefE5M2Fnuz(uint32_t b) { return b == 0x80 ? NAN : RefFinite(b, 5, 2, 16); }
double RefE8M0(uint32_t b) { return b == 0xFF ? NAN : std::ldexp(1.0, static_cast<int>(b) - 127); }

// ---- Reference encoder: round |x| to a multiple of the format's quantum, ties to even ----

// RefRound rounds a finite float to a binary format with `mantissa_bits` stored bits,
// minimum normal exponent `min_exponent`, and largest finite value `max_finite`; values
// at or beyond max_finite + half its quantum become inf.
double RefRound(float x, int mantissa_bits, int min_exponent, double max_finite) {
  const double ax = std::fabs(static_cast<double>(x));
  const double sign = std::signbit(x) ? -1.0 : 1.0;
  if (ax == 0) return sign * 0.0;
  const int e = std::max(std::ilogb(ax), min_exponent);
  const double quantum = std::ldexp(1.0, e - mantissa_bits);
  const double max_quantum = std::ldexp(1.0, std::ilogb(max_finite) - mantissa_bits);
  if (ax >= max_finite + max_quantum / 2) return sign * HUGE_VAL;
  return sign * std::nearbyint(ax / quantum) * quantum;  // default mode: ties to even
}

double RefRoundBf16(float x) { return RefRound(x, 7, -126, std::ldexp(255.0, 120)); }
double RefRoundF16(float x) { return RefRound(x, 10, -14, 65504.0); }

std::vector<std::byte> Bytes8() {
  std::vector<std::byte> out;
  for (uint32_t i = 0; i < 256; ++i) out.push_back(static_cast<std::byte>(i));
  return out;
}

std::vector<float> ToF32(Dtype dtype, const std::vector<std::byte>& bytes) {
  std::vector<float> out(bytes.size() / ElementSize(dtype));
  const Error error = ConvertToF32(dtype, bytes, out);
  EXPECT_TRUE(error.ok()) << error.ToString();
  return out;
}

// ---- Decoding: exhaustive ----

TEST(ConvertTest, Bf16ToF32IsAShiftForAll65536Inputs) {
  const std::vector<float> bulk = ToF32(Dtype::kBF16, Bytes16(65536));
  for (uint32_t h = 0; h < 65536; ++h) {
    EXPECT_EQ(std::bit_cast<uint32_t>(Bf16ToF32(static_cast<uint16_t>(h))), h << 16);
    EXPECT_EQ(std::bit_cast<uint32_t>(bulk[h]), h << 16);
    ExpectSame(bulk[h], RefBf16(h), h);
  }
}

TEST(ConvertTest, F16ToF32MatchesReferenceForAll65536Inputs) {
  const std::vector<float> bulk = ToF32(Dtype::kF16, Bytes16(65536));
  for (uint32_t h = 0; h < 65536; ++h) {
    ExpectSame(F16ToF32(static_cast<uint16_t>(h)), RefF16(h), h);
    ExpectSame(bulk[h], RefF16(h), h);
  }
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(F16ToF32(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(F16ToF32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(F16ToF32(0x7BFF), 65504.0f);
  EXPECT_EQ(F16ToF32(0x7C00), kInf);
  EXPECT_EQ(F16ToF32(0xFC00), -kInf);
  EXPECT_TRUE(std::signbit(F16ToF32(0x8000)));
  // NaN payloads survive: the quiet bit and the low bit.
  EXPECT_EQ(std::bit_cast<uint32_t>(F16ToF32(0x7E01)), 0x7FC02000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(F16ToF32(0xFC01)), 0xFF802000u);
}

struct Case8 {
  const char* name;
  Dtype dtype;
  float (*decode)(uint8_t);
  double (*reference)(uint32_t);
};

// PrintTo shows a case by its name: GoogleTest would otherwise print its bytes (pointers
// included, so different on every build) after each test name it lists.
void PrintTo(const Case8& c, std::ostream* out) { *out << c.name; }

class Convert8Test : public ::testing::TestWithParam<Case8> {};

TEST_P(Convert8Test, MatchesReferenceForAll256Inputs) {
  const Case8& c = GetParam();
  const std::vector<float> bulk = ToF32(c.dtype, Bytes8());
  for (uint32_t b = 0; b < 256; ++b) {
    ExpectSame(c.decode(static_cast<uint8_t>(b)), c.reference(b), b);
    ExpectSame(bulk[b], c.reference(b), b);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, Convert8Test,
    ::testing::Values(Case8{"E4M3", Dtype::kF8_E4M3, F8E4M3ToF32, RefE4M3},
                      Case8{"E5M2", Dtype::kF8_E5M2, F8E5M2ToF32, RefE5M2},
                      Case8{"E4M3FNUZ", Dtype::kF8_E4M3FNUZ, F8E4M3FnuzToF32, RefE4M3Fnuz},
                      Case8{"E5M2FNUZ", Dtype::kF8_E5M2FNUZ, F8E5M2FnuzToF32, RefE5M2Fnuz},
                      Case8{"E8M0", Dtype::kF8_E8M0, F8E8M0ToF32, RefE8M0}),
    [](const ::testing::TestParamInfo<Case8>& param_info) {
      return std::string(param_info.param.name);
    });

// Known values from the definitions' tables, independent of the reference code above.
TEST(ConvertTest, EightBitFormatsKnownValues) {
  EXPECT_EQ(F8E4M3ToF32(0x7E), 448.0f);  // largest finite
  EXPECT_EQ(F8E4M3ToF32(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(F8E4M3ToF32(0x38), 1.0f);
  EXPECT_TRUE(std::isnan(F8E4M3ToF32(0x7F)));
  EXPECT_TRUE(std::isnan(F8E4M3ToF32(0xFF)));
  EXPECT_EQ(F8E4M3ToF32(0x78), 256.0f);  // S.1111.000 is a number, not inf
  EXPECT_TRUE(std::signbit(F8E4M3ToF32(0x80)));

  EXPECT_EQ(F8E5M2ToF32(0x7B), 57344.0f);
  EXPECT_EQ(F8E5M2ToF32(0x7C), kInf);
  EXPECT_EQ(F8E5M2ToF32(0xFC), -kInf);
  EXPECT_TRUE(std::isnan(F8E5M2ToF32(0x7D)));
  EXPECT_EQ(F8E5M2ToF32(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(F8E5M2ToF32(0x3C), 1.0f);

  EXPECT_EQ(F8E4M3FnuzToF32(0x7F), 240.0f);
  EXPECT_EQ(F8E4M3FnuzToF32(0xFF), -240.0f);
  EXPECT_EQ(F8E4M3FnuzToF32(0x40), 1.0f);
  EXPECT_EQ(F8E4M3FnuzToF32(0x01), std::ldexp(1.0f, -10));
  EXPECT_TRUE(std::isnan(F8E4M3FnuzToF32(0x80)));
  EXPECT_FALSE(std::signbit(F8E4M3FnuzToF32(0x00)));

  EXPECT_EQ(F8E5M2FnuzToF32(0x7F), 57344.0f);
  EXPECT_EQ(F8E5M2FnuzToF32(0x40), 1.0f);
  EXPECT_EQ(F8E5M2FnuzToF32(0x01), std::ldexp(1.0f, -17));
  EXPECT_TRUE(std::isnan(F8E5M2FnuzToF32(0x80)));

  EXPECT_EQ(F8E8M0ToF32(0x7F), 1.0f);
  EXPECT_EQ(F8E8M0ToF32(0x00), std::ldexp(1.0f, -127));
  EXPECT_EQ(F8E8M0ToF32(0xFE), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(F8E8M0ToF32(0xFF)));
}

TEST(ConvertTest, IntegersOfEightAndSixteenBitsAreExactForEveryInput) {
  const std::vector<float> u8 = ToF32(Dtype::kU8, Bytes8());
  const std::vector<float> i8 = ToF32(Dtype::kI8, Bytes8());
  for (uint32_t b = 0; b < 256; ++b) {
    EXPECT_EQ(u8[b], static_cast<float>(b));
    EXPECT_EQ(i8[b], static_cast<float>(static_cast<int8_t>(b)));
  }
  const std::vector<float> u16 = ToF32(Dtype::kU16, Bytes16(65536));
  const std::vector<float> i16 = ToF32(Dtype::kI16, Bytes16(65536));
  for (uint32_t h = 0; h < 65536; ++h) {
    EXPECT_EQ(u16[h], static_cast<float>(h));
    EXPECT_EQ(i16[h], static_cast<float>(static_cast<int16_t>(h)));
  }
  const std::vector<float> bools = ToF32(Dtype::kBOOL, Bytes8());
  EXPECT_EQ(bools[0], 0.0f);
  for (uint32_t b = 1; b < 256; ++b) EXPECT_EQ(bools[b], 1.0f);
}

TEST(ConvertTest, WideIntegersAndF64RoundToNearestEven) {
  EXPECT_EQ(ToF32(Dtype::kI32, LittleEndian<int32_t>({INT32_MIN, -1, 16777217, 16777219})),
            (std::vector<float>{-2147483648.0f, -1.0f, 16777216.0f, 16777220.0f}));
  EXPECT_EQ(ToF32(Dtype::kU32, LittleEndian<uint32_t>({UINT32_MAX, 16777217})),
            (std::vector<float>{4294967296.0f, 16777216.0f}));
  EXPECT_EQ(ToF32(Dtype::kI64, LittleEndian<int64_t>({INT64_MIN, INT64_MAX, -3})),
            (std::vector<float>{-0x1p63f, 0x1p63f, -3.0f}));
  EXPECT_EQ(ToF32(Dtype::kU64, LittleEndian<uint64_t>({UINT64_MAX, 0})),
            (std::vector<float>{0x1p64f, 0.0f}));
  const std::vector<float> f64 =
      ToF32(Dtype::kF64, LittleEndianDoubles({0.1, 1e300, -1e300, 1e-300, NAN, 1.0 + 0x1p-24}));
  EXPECT_EQ(f64[0], 0.1f);
  EXPECT_EQ(f64[1], kInf);
  EXPECT_EQ(f64[2], -kInf);
  EXPECT_EQ(f64[3], 0.0f);
  EXPECT_TRUE(std::isnan(f64[4]));
  EXPECT_EQ(f64[5], 1.0f);  // a tie: to even
}

TEST(ConvertTest, RefusesUnsupportedDtypesAndMismatchedSizes) {
  std::vector<float> out(2);
  const std::vector<std::byte> bytes(8);
  for (Dtype dtype : {Dtype::kF4, Dtype::kF6_E2M3, Dtype::kF6_E3M2, Dtype::kC64}) {
    EXPECT_FALSE(CanConvertToF32(dtype));
    EXPECT_EQ(ConvertToF32(dtype, bytes, out).code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(ConvertToF32(Dtype::kF16, bytes, out).code, ErrorCode::kInvalidArgument);  // 4 != 2
  EXPECT_EQ(ConvertToF32(Dtype::kF16, std::span(bytes).first(3), std::span(out).first(1)).code,
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(ConvertToF32(Dtype::kF32, bytes, out).ok());
  std::vector<std::byte> dst(8);
  EXPECT_EQ(ConvertElements(Dtype::kF32, bytes, Dtype::kI32, dst).code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ConvertElements(Dtype::kF32, bytes, Dtype::kF16, dst).code,
            ErrorCode::kInvalidArgument);  // 2 elements into room for 4
  EXPECT_TRUE(ConvertElements(Dtype::kF32, bytes, Dtype::kF16, std::span(dst).first(4)).ok());
}

// ---- Encoding: every representable value and every rounding boundary ----

// Each finite value h (positive, ascending) and its successor h+1 in magnitude: the
// midpoint, and the floats on either side of it, must round to the right neighbour.
template <typename Decode, typename Encode>
void CheckEveryBoundary(uint32_t num_finite_positive, Decode decode, Encode encode,
                        uint32_t inf_bits) {
  for (uint32_t h = 0; h < num_finite_positive; ++h) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const float value = decode(static_cast<uint16_t>(h | sign));
      ASSERT_EQ(encode(value), h | sign) << std::hex << h;  // round trip
      // The successor's value; past the largest finite value, the virtual next binade
      // step, whose midpoint is the overflow threshold.
      const double here = std::fabs(static_cast<double>(value));
      const double next = h + 1 < num_finite_positive
                              ? std::fabs(static_cast<double>(decode(static_cast<uint16_t>(h + 1))))
                              : 2 * here - std::fabs(static_cast<double>(
                                               decode(static_cast<uint16_t>(h - 1))));
      const uint32_t next_bits = h + 1 < num_finite_positive ? h + 1 : inf_bits;
      const double mid = (here + next) / 2;
      const float mid_f = static_cast<float>(mid);
      ASSERT_EQ(static_cast<double>(mid_f), mid) << "midpoint is exact in F32";
      const float signed_mid = sign ? -mid_f : mid_f;
      const uint32_t tie_winner = (h % 2 == 0) ? h : next_bits;
      EXPECT_EQ(encode(signed_mid), tie_winner | sign) << std::hex << h;
      EXPECT_EQ(encode(std::nextafter(signed_mid, 0.0f)), h | sign) << std::hex << h;
      EXPECT_EQ(encode(std::nextafter(signed_mid, sign ? -kInf : kInf)), next_bits | sign)
          << std::hex << h;
    }
  }
}

TEST(ConvertTest, F32ToBf16RoundsEveryBoundaryToNearestEven) {
  CheckEveryBoundary(0x7F80, Bf16ToF32, F32ToBf16, 0x7F80);
  EXPECT_EQ(F32ToBf16(kInf), 0x7F80);
  EXPECT_EQ(F32ToBf16(-kInf), 0xFF80);
  EXPECT_EQ(F32ToBf16(std::numeric_limits<float>::max()), 0x7F80);  // overflow to inf
  // NaN stays NaN, even with a payload only in the bits that are cut off.
  EXPECT_EQ(F32ToBf16(std::bit_cast<float>(0x7F800001u)), 0x7FC0);
  EXPECT_EQ(F32ToBf16(std::bit_cast<float>(0xFF800001u)), 0xFFC0);
  EXPECT_EQ(F32ToBf16(std::bit_cast<float>(0x7FC00000u)), 0x7FC0);
  // The smallest F32 subnormal is below half of BF16's smallest subnormal (2^-133).
  EXPECT_EQ(F32ToBf16(std::bit_cast<float>(0x00000001u)), 0x0000);
}

TEST(ConvertTest, F32ToF16RoundsEveryBoundaryToNearestEven) {
  CheckEveryBoundary(0x7C00, F16ToF32, F32ToF16, 0x7C00);
  EXPECT_EQ(F32ToF16(kInf), 0x7C00);
  EXPECT_EQ(F32ToF16(-kInf), 0xFC00);
  EXPECT_EQ(F32ToF16(65519.99f), 0x7BFF);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7C00);  // tie with the odd 65504: to inf
  EXPECT_EQ(F32ToF16(1e10f), 0x7C00);
  EXPECT_EQ(F32ToF16(-1e10f), 0xFC00);
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25)), 0x0000);  // half the smallest subnormal: tie
  EXPECT_EQ(F32ToF16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(F32ToF16(std::ldexp(3.0f, -26)), 0x0001);
  EXPECT_EQ(F32ToF16(std::bit_cast<float>(0x00000001u)), 0x0000);
  EXPECT_EQ(F32ToF16(-std::bit_cast<float>(0x00000001u)), 0x8000);
  EXPECT_EQ(F32ToF16(std::bit_cast<float>(0x7F800001u)) & 0x7E00, 0x7E00);  // quiet NaN
  EXPECT_EQ(F32ToF16(std::bit_cast<float>(0xFFC00000u)), 0xFE00);
}

// A sweep of F32 bit patterns (a large prime stride covers every exponent and many
// mantissas) against the reference rounding.
TEST(ConvertTest, F32EncodersMatchTheReferenceOnASweep) {
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 65521) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(x))));
      EXPECT_TRUE(std::isnan(F16ToF32(F32ToF16(x))));
      continue;
    }
    ExpectSame(Bf16ToF32(F32ToBf16(x)), std::isinf(x) ? x : RefRoundBf16(x),
               static_cast<uint32_t>(bits));
    ExpectSame(F16ToF32(F32ToF16(x)), std::isinf(x) ? x : RefRoundF16(x),
               static_cast<uint32_t>(bits));
  }
}

// ---- ConvertElements: bulk paths agree with the element functions, one rounding ----

TEST(ConvertTest, ConvertElementsBetweenSixteenBitFormatsForAll65536Inputs) {
  const std::vector<std::byte> all = Bytes16(65536);
  std::vector<std::byte> out(all.size());
  ASSERT_TRUE(ConvertElements(Dtype::kBF16, all, Dtype::kF16, out).ok());
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto got = static_cast<uint16_t>(static_cast<uint32_t>(out[2 * h]) |
                                           static_cast<uint32_t>(out[2 * h + 1]) << 8);
    ASSERT_EQ(got, F32ToF16(Bf16ToF32(static_cast<uint16_t>(h)))) << std::hex << h;
  }
  ASSERT_TRUE(ConvertElements(Dtype::kF16, all, Dtype::kBF16, out).ok());
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto got = static_cast<uint16_t>(static_cast<uint32_t>(out[2 * h]) |
                                           static_cast<uint32_t>(out[2 * h + 1]) << 8);
    ASSERT_EQ(got, F32ToBf16(F16ToF32(static_cast<uint16_t>(h)))) << std::hex << h;
  }
  // F16 -> F32 -> F16 is the identity, except that signalling NaNs come back quiet (their
  // payload is kept).
  std::vector<std::byte> wide(all.size() * 2);
  ASSERT_TRUE(ConvertElements(Dtype::kF16, all, Dtype::kF32, wide).ok());
  ASSERT_TRUE(ConvertElements(Dtype::kF32, wide, Dtype::kF16, out).ok());
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto got = static_cast<uint32_t>(out[2 * h]) | static_cast<uint32_t>(out[2 * h + 1]) << 8;
    const bool is_nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
    ASSERT_EQ(got, is_nan ? (h | 0x200) : h) << std::hex << h;
  }
}

TEST(ConvertTest, ConvertElementsToF32IgnoresDestinationAlignment) {
  const std::vector<std::byte> all = Bytes16(4099, 0x3C00);  // an odd count: a tail
  std::vector<std::byte> buffer(4099 * 4 + 1);
  const std::span<std::byte> misaligned = std::span(buffer).subspan(1);
  ASSERT_TRUE(ConvertElements(Dtype::kF16, all, Dtype::kF32, misaligned).ok());
  for (uint32_t i = 0; i < 4099; ++i) {
    float value;
    std::memcpy(&value, misaligned.data() + 4 * i, 4);
    ExpectSame(value, RefF16((0x3C00 + i) & 0xFFFF), i);
  }
}

uint16_t Only16(const std::vector<std::byte>& out) {
  return static_cast<uint16_t>(static_cast<uint32_t>(out[0]) | static_cast<uint32_t>(out[1]) << 8);
}

// Rounding I32 16842753 = 2^24 + 2^16 + 1 to BF16 (8 significant bits): the bits past the
// 8th are 1000...01, above the tie, so the answer rounds up to 2^24 * (1 + 2^-7) = 0x4B81.
// Rounding to F32 first gives 2^24 + 2^16 (a tie, to even) and then the tie rounds down
// to 0x4B80: double rounding. Round-to-odd avoids it.
TEST(ConvertTest, ConvertElementsRoundsWideSourcesOnlyOnce) {
  std::vector<std::byte> out(2);
  ASSERT_TRUE(ConvertElements(Dtype::kI32, LittleEndian<int32_t>({16842753}), Dtype::kBF16, out).ok());
  EXPECT_EQ(Only16(out), 0x4B81);
  ASSERT_TRUE(ConvertElements(Dtype::kI32, LittleEndian<int32_t>({-16842753}), Dtype::kBF16, out).ok());
  EXPECT_EQ(Only16(out), 0xCB81);
  ASSERT_TRUE(ConvertElements(Dtype::kU64, LittleEndian<uint64_t>({(uint64_t{1} << 40) + (uint64_t{1} << 32) + 1}),
                              Dtype::kBF16, out).ok());
  EXPECT_EQ(Only16(out), 0x5381);  // 2^40 * (1 + 2^-7)
  // F64 1 + 2^-11 + 2^-40 is just above the F16 tie between 1 and 1 + 2^-10.
  ASSERT_TRUE(ConvertElements(Dtype::kF64, LittleEndianDoubles({1.0 + 0x1p-11 + 0x1p-40}),
                              Dtype::kF16, out).ok());
  EXPECT_EQ(Only16(out), 0x3C01);
  ASSERT_TRUE(ConvertElements(Dtype::kF64, LittleEndianDoubles({1.0 + 0x1p-11}), Dtype::kF16, out).ok());
  EXPECT_EQ(Only16(out), 0x3C00);  // the exact tie: to even
  ASSERT_TRUE(ConvertElements(Dtype::kF64, LittleEndianDoubles({1e300}), Dtype::kBF16, out).ok());
  EXPECT_EQ(Only16(out), 0x7F80);
  ASSERT_TRUE(ConvertElements(Dtype::kF64, LittleEndianDoubles({-1e-300}), Dtype::kF16, out).ok());
  EXPECT_EQ(Only16(out), 0x8000);
  ASSERT_TRUE(ConvertElements(Dtype::kF64, LittleEndianDoubles({NAN}), Dtype::kBF16, out).ok());
  EXPECT_EQ(Only16(out) & 0x7FC0, 0x7FC0);
}

TEST(ConvertTest, F64ToF32RoundToOdd) {
  EXPECT_EQ(F64ToF32RoundToOdd(1.0), 1.0f);
  EXPECT_EQ(F64ToF32RoundToOdd(1.0 + 0x1p-30), std::bit_cast<float>(0x3F800001u));
  EXPECT_EQ(F64ToF32RoundToOdd(1.0 + 0x1p-23 + 0x1p-30), std::bit_cast<float>(0x3F800001u));
  EXPECT_EQ(F64ToF32RoundToOdd(1.0 + 0x1p-22 + 0x1p-30), std::bit_cast<float>(0x3F800003u));
  EXPECT_EQ(F64ToF32RoundToOdd(1e300), std::numeric_limits<float>::max());
  EXPECT_EQ(F64ToF32RoundToOdd(-1e300), -std::numeric_limits<float>::max());
  EXPECT_EQ(F64ToF32RoundToOdd(1e-300), std::bit_cast<float>(0x00000001u));
  EXPECT_EQ(F64ToF32RoundToOdd(HUGE_VAL), kInf);
  EXPECT_TRUE(std::isnan(F64ToF32RoundToOdd(NAN)));
}

}  // namespace
}  // namespace stguard

// ---- Whole checkpoints: AddConvertedCheckpoint and `stguard convert` ----

namespace stguard {
namespace {

// A checkpoint with one tensor of each kind that convert treats differently.
TEST(ConvertCheckpointTest, ConvertsFloatingTensorsAndCopiesTheRest) {
  const std::string original = MixedCheckpoint();
  Result<Checkpoint> in = Checkpoint::FromBytes(original);
  ASSERT_TRUE(in.ok()) << in.error().ToString();
  Writer writer;
  size_t converted = 0;
  ASSERT_TRUE(AddConvertedCheckpoint(*in, Dtype::kF16, &writer, &converted).ok());
  EXPECT_EQ(converted, 3u);  // f32, bf16, f64
  Result<std::string> bytes = writer.WriteToString();
  ASSERT_TRUE(bytes.ok()) << bytes.error().ToString();
  Result<Checkpoint> out = Checkpoint::FromBytes(*bytes);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  ASSERT_TRUE(out->FindMetadata("format").has_value());
  EXPECT_EQ(*out->FindMetadata("format"), "pt");
  // The output is canonical.
  Result<CanonicalDiff> diff = CompareToCanonical(*out);
  ASSERT_TRUE(diff.ok());
  EXPECT_TRUE(diff->canonical) << DescribeCanonicalDiff(*diff);

  const TensorView* f32 = out->Find("f32");
  ASSERT_NE(f32, nullptr);
  EXPECT_EQ(f32->dtype, Dtype::kF16);
  EXPECT_EQ(std::vector<uint64_t>(f32->shape.begin(), f32->shape.end()),
            (std::vector<uint64_t>{2, 4}));
  std::vector<uint16_t> halves(8);
  std::memcpy(halves.data(), f32->data.data(), 16);
  const float inputs[] = {1.0f, -2.5f, 65520.0f, 1e-8f, NAN, -INFINITY, 0.1f, 3.0f};
  for (int i = 0; i < 8; ++i) {
    if (std::isnan(inputs[i])) {
      EXPECT_TRUE(std::isnan(F16ToF32(halves[i])));
    } else {
      EXPECT_EQ(halves[i], F32ToF16(inputs[i])) << i;
    }
  }
  EXPECT_EQ(halves[2], 0x7C00);  // overflow to inf
  const TensorView* f64 = out->Find("f64");
  ASSERT_NE(f64, nullptr);
  EXPECT_EQ(Only16(std::vector<std::byte>(f64->data.begin(), f64->data.end())), 0x3C01);  // one rounding
  EXPECT_EQ(out->Find("bf16")->dtype, Dtype::kF16);
  // Integers and 8-bit floats are kept, bytes and all.
  for (const char* name : {"i32", "e4m3"}) {
    const TensorView* before = in->Find(name);
    const TensorView* after = out->Find(name);
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->dtype, before->dtype);
    EXPECT_TRUE(std::equal(after->data.begin(), after->data.end(), before->data.begin(),
                           before->data.end()));
  }
}

TEST(ConvertCheckpointTest, ToTheSameDtypeIsTheCanonicalForm) {
  const std::string original = MixedCheckpoint();
  Result<Checkpoint> in = Checkpoint::FromBytes(original);
  ASSERT_TRUE(in.ok());
  Writer writer;
  size_t converted = 9;
  ASSERT_TRUE(AddConvertedCheckpoint(*in, Dtype::kF32, &writer, &converted).ok());
  EXPECT_EQ(converted, 2u);  // bf16 and f64 become F32; f32 is copied
  Result<std::string> bytes = writer.WriteToString();
  ASSERT_TRUE(bytes.ok());
  Result<Checkpoint> out = Checkpoint::FromBytes(*bytes);
  ASSERT_TRUE(out.ok());
  const TensorView* bf16 = out->Find("bf16");
  float first;
  std::memcpy(&first, bf16->data.data(), 4);
  EXPECT_EQ(first, 1.0f);  // 0x3F80
  EXPECT_EQ(AddConvertedCheckpoint(*in, Dtype::kI8, &writer).code, ErrorCode::kInvalidArgument);
}

TEST(ConvertCheckpointTest, LargeTensorsStreamInChunks) {
  const size_t n = 100'003;  // several producer steps, with a tail
  std::vector<std::byte> f32(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(i) * 0.37f);
    for (int k = 0; k < 4; ++k) f32[4 * i + k] = static_cast<std::byte>(bits >> (8 * k));
  }
  Writer source;
  ASSERT_TRUE(source.AddTensor("w", Dtype::kF32, {n}, f32).ok());
  Result<std::string> original = source.WriteToString();
  ASSERT_TRUE(original.ok());
  Result<Checkpoint> in = Checkpoint::FromBytes(*original);
  ASSERT_TRUE(in.ok());
  Writer writer;
  ASSERT_TRUE(AddConvertedCheckpoint(*in, Dtype::kBF16, &writer).ok());
  Result<std::string> bytes = writer.WriteToString();
  ASSERT_TRUE(bytes.ok()) << bytes.error().ToString();
  Result<Checkpoint> out = Checkpoint::FromBytes(*bytes);
  ASSERT_TRUE(out.ok());
  const TensorView& w = out->tensors()[0];
  ASSERT_EQ(w.byte_size(), n * 2);
  std::vector<std::byte> expected(n * 2);
  ASSERT_TRUE(ConvertElements(Dtype::kF32, f32, Dtype::kBF16, expected).ok());
  EXPECT_TRUE(std::equal(w.data.begin(), w.data.end(), expected.begin(), expected.end()));
}


}  // namespace
}  // namespace stguard
