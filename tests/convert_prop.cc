// SPDX-License-Identifier: Apache-2.0
// Properties of F32 -> BF16 -> F32 (and F32 -> F16 -> F32) over arbitrary bit patterns:
// the result is the nearest representable value, ties to even, NaN stays NaN, and the
// round trip is idempotent, odd-symmetric and monotone.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "stguard/convert.h"

namespace stguard {
namespace {

// Nearest value of a format with `mantissa_bits` stored bits, min normal exponent
// `min_exponent`, largest finite `max_finite`; ties to even (std::nearbyint in the
// default rounding mode). Written plainly, independently of src/convert.cc.
double RefRound(float x, int mantissa_bits, int min_exponent, double max_finite) {
  const double ax = std::fabs(static_cast<double>(x));
  const double sign = std::signbit(x) ? -1.0 : 1.0;
  if (std::isinf(x)) return sign * HUGE_VAL;
  if (ax == 0) return sign * 0.0;
  const int e = std::max(std::ilogb(ax), min_exponent);
  const double quantum = std::ldexp(1.0, e - mantissa_bits);
  const double max_quantum = std::ldexp(1.0, std::ilogb(max_finite) - mantissa_bits);
  if (ax >= max_finite + max_quantum / 2) return sign * HUGE_VAL;
  return sign * std::nearbyint(ax / quantum) * quantum;
}

float RoundTripBf16(float x) { return Bf16ToF32(F32ToBf16(x)); }
float RoundTripF16(float x) { return F16ToF32(F32ToF16(x)); }

// Bits draws F32 bit patterns of every kind: arbitrary words, and words built from an
// arbitrary exponent so that subnormals, huge values, inf and NaN all come up often.
rc::Gen<uint32_t> Bits() {
  return rc::gen::oneOf(
      rc::gen::arbitrary<uint32_t>(),
      rc::gen::map(rc::gen::tuple(rc::gen::inRange<uint32_t>(0, 2), rc::gen::inRange<uint32_t>(0, 256),
                                  rc::gen::arbitrary<uint32_t>()),
                   [](const std::tuple<uint32_t, uint32_t, uint32_t>& t) {
                     return (std::get<0>(t) << 31) | (std::get<1>(t) << 23) |
                            (std::get<2>(t) & 0x7FFFFFu);
                   }));
}

void CheckRoundTrip(float x, float (*round_trip)(float), double reference) {
  const float r = round_trip(x);
  if (std::isnan(x)) {
    RC_ASSERT(std::isnan(r));
    return;
  }
  RC_ASSERT(static_cast<double>(r) == reference);
  RC_ASSERT(std::signbit(r) == std::signbit(x));
  RC_ASSERT(std::bit_cast<uint32_t>(round_trip(r)) == std::bit_cast<uint32_t>(r));  // idempotent
  RC_ASSERT(std::bit_cast<uint32_t>(round_trip(-x)) == std::bit_cast<uint32_t>(-r));  // odd
}

RC_GTEST_PROP(ConvertProp, F32ToBf16ToF32IsNearestTiesToEven, ()) {
  const float x = std::bit_cast<float>(*Bits());
  CheckRoundTrip(x, RoundTripBf16, RefRound(x, 7, -126, std::ldexp(255.0, 120)));
  // The BF16 result is the F32 input with the low 16 bits rounded away.
  if (!std::isnan(x)) RC_ASSERT((std::bit_cast<uint32_t>(RoundTripBf16(x)) & 0xFFFFu) == 0u);
}

RC_GTEST_PROP(ConvertProp, F32ToF16ToF32IsNearestTiesToEven, ()) {
  const float x = std::bit_cast<float>(*Bits());
  CheckRoundTrip(x, RoundTripF16, RefRound(x, 10, -14, 65504.0));
}

RC_GTEST_PROP(ConvertProp, RoundingIsMonotone, ()) {
  float a = std::bit_cast<float>(*Bits());
  float b = std::bit_cast<float>(*Bits());
  RC_PRE(!std::isnan(a) && !std::isnan(b));
  if (b < a) std::swap(a, b);
  RC_ASSERT(RoundTripBf16(a) <= RoundTripBf16(b));
  RC_ASSERT(RoundTripF16(a) <= RoundTripF16(b));
}

// Bulk conversion agrees with the element functions, whatever the length (tails of the
// vectorised blocks included).
RC_GTEST_PROP(ConvertProp, BulkF32ToBf16AndBackMatchesElementFunctions, ()) {
  const auto words = *rc::gen::container<std::vector<uint32_t>>(Bits());
  std::vector<std::byte> f32(words.size() * 4);
  for (size_t i = 0; i < words.size(); ++i) {
    for (size_t k = 0; k < 4; ++k) f32[4 * i + k] = static_cast<std::byte>(words[i] >> (8 * k));
  }
  std::vector<std::byte> bf16(words.size() * 2);
  RC_ASSERT(ConvertElements(Dtype::kF32, f32, Dtype::kBF16, bf16).ok());
  std::vector<float> back(words.size());
  RC_ASSERT(ConvertToF32(Dtype::kBF16, bf16, back).ok());
  for (size_t i = 0; i < words.size(); ++i) {
    const float x = std::bit_cast<float>(words[i]);
    const uint16_t expected = F32ToBf16(x);
    const auto got = static_cast<uint16_t>(static_cast<uint32_t>(bf16[2 * i]) |
                                           (static_cast<uint32_t>(bf16[2 * i + 1]) << 8));
    RC_ASSERT(got == expected);
    RC_ASSERT(std::bit_cast<uint32_t>(back[i]) == (uint32_t{expected} << 16));
  }
}

}  // namespace
}  // namespace stguard
