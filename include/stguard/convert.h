// SPDX-License-Identifier: Apache-2.0
// stguard/convert.h: element conversions between dtypes.
//
// DEFINITIONS
// Each decoder follows the definition below exactly; tests/convert_test.cc checks every
// one of the 2^8 or 2^16 inputs against a reference written plainly with std::ldexp.
// - BF16: the upper 16 bits of an IEEE 754 binary32. To F32 is exact: a shift.
// - F16: IEEE 754 binary16: sign, 5 exponent bits (bias 15), 10 mantissa bits, with
//   subnormals, +-inf and NaN. To F32 is exact; NaN payloads are kept.
// - F8_E5M2: OCP 8-bit Floating Point Specification (OFP8) rev. 1.0, E5M2: bias 15,
//   subnormals, inf = S.11111.00, NaN = S.11111.{01,10,11}; max 57344. It is binary16 with
//   the low byte cut off, and is decoded as such.
// - F8_E4M3: OFP8 rev. 1.0, E4M3 (PyTorch float8_e4m3fn, ONNX FLOAT8E4M3FN): bias 7,
//   subnormals, no infinities, NaN = S.1111.111 (0x7F and 0xFF) only; max 448.
// - F8_E4M3FNUZ: LLVM APFloat Float8E4M3FNUZ (also ml_dtypes float8_e4m3fnuz and ONNX
//   FLOAT8E4M3FNUZ): bias 8, subnormals, no infinities, no negative zero; 0x80 is the
//   only NaN; max 240.
// - F8_E5M2FNUZ: LLVM APFloat Float8E5M2FNUZ (ml_dtypes, ONNX FLOAT8E5M2FNUZ): bias 16,
//   subnormals, no infinities, no negative zero; 0x80 is the only NaN; max 57344.
// - F8_E8M0: OCP Microscaling Formats (MX) Specification v1.0, scale type E8M0 (PyTorch
//   float8_e8m0fnu): 8 exponent bits, bias 127, no sign and no mantissa; the value is
//   2^(E-127) for E = 0..254 (2^-127 is an F32 subnormal, still exact); 0xFF is NaN.
//   There is no zero and no infinity.
// - U8..U64, I8..I64: the integer's value, rounded to nearest even in F32 (exact up to
//   2^24 in magnitude).
// - BOOL: byte 0 is 0.0, any other byte 1.0.
// - F64: rounded to nearest even in F32; overflow gives +-inf; NaN stays NaN.
// Not converted: F4, F6_E2M3 and F6_E3M2 (the OCP MX spec defines the element formats,
// but safetensors does not say how sub-byte elements are packed into bytes, so a decoder
// would be a guess) and C64 (complex).
//
// ENCODING
// F32 to BF16 and to F16 rounds to nearest, ties to even. Values beyond the largest
// finite value (after rounding) become +-inf, values below half the smallest subnormal
// become +-0, NaN stays NaN (made quiet; the sign and the top payload bits are kept).
// ConvertElements converts any convertible dtype to F32, F16 or BF16 with ONE correct
// rounding: sources wider than F32 (I32, U32, I64, U64, F64) go to F32 with
// round-to-odd first, which makes the second rounding exact (24 bits >= 11 + 2).
//
// All buffers hold little-endian elements, as safetensors stores them, and need no
// alignment: the loops read through memcpy and compile to plain vector loads.
#ifndef STGUARD_CONVERT_H_
#define STGUARD_CONVERT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "stguard/dtype.h"  // CanConvertToF32, ElementSize and the other dtype facts
#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// Single elements, by bit pattern. Bf16ToF32 and friends return the exact value.
STGUARD_API float Bf16ToF32(uint16_t bits);
STGUARD_API float F16ToF32(uint16_t bits);
STGUARD_API float F8E4M3ToF32(uint8_t bits);
STGUARD_API float F8E5M2ToF32(uint8_t bits);
STGUARD_API float F8E4M3FnuzToF32(uint8_t bits);
STGUARD_API float F8E5M2FnuzToF32(uint8_t bits);
STGUARD_API float F8E8M0ToF32(uint8_t bits);
// F32ToBf16 and F32ToF16 round to nearest even (see ENCODING above).
STGUARD_API uint16_t F32ToBf16(float value);
STGUARD_API uint16_t F32ToF16(float value);
// F64ToF32RoundToOdd rounds `value` toward zero to F32 and, if that lost anything, sets
// the last mantissa bit. Overflow gives the largest finite F32 (odd), so a later
// rounding to a narrower format still overflows to inf as it should.
STGUARD_API float F64ToF32RoundToOdd(double value);

// ConvertToF32 decodes src.size() / ElementSize(src_dtype) elements into `dst`. Returns
// kInvalidArgument, writing nothing, when the dtype cannot be converted or when src is not
// exactly dst.size() elements.
[[nodiscard]] STGUARD_API Error ConvertToF32(Dtype src_dtype, std::span<const std::byte> src,
                                             std::span<float> dst);

// ConvertElements converts little-endian elements of `src_dtype` in `src` to `dst_dtype`
// in `dst` (F32, F16 or BF16; any source that CanConvertToF32, with one rounding). Works
// in fixed-size chunks, so memory does not depend on the size. Returns kInvalidArgument,
// writing nothing, for an unsupported pair or when src and dst hold different counts.
[[nodiscard]] STGUARD_API Error ConvertElements(Dtype src_dtype, std::span<const std::byte> src,
                                                Dtype dst_dtype, std::span<std::byte> dst);

}  // namespace stguard

#endif  // STGUARD_CONVERT_H_
