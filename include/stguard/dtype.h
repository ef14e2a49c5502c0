// SPDX-License-Identifier: Apache-2.0
// stguard/dtype.h: the 22 element types of the safetensors format and their facts.
#ifndef STGUARD_DTYPE_H_
#define STGUARD_DTYPE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stguard/export.h"

namespace stguard {

// Dtype is listed in the reference implementation's enum order. The canonical writer sorts
// tensors by this order, descending (U64 first, BOOL last), so the order is part of the
// file format: do not reorder.
enum class Dtype : uint8_t {
  kBOOL,
  kF4,
  kF6_E2M3,
  kF6_E3M2,
  kU8,
  kI8,
  kF8_E5M2,
  kF8_E4M3,
  kF8_E8M0,
  kF8_E4M3FNUZ,
  kF8_E5M2FNUZ,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kC64,
  kF64,
  kI64,
  kU64,
};

inline constexpr int kNumDtypes = 22;

// kAllDtypes holds every dtype in enum order.
extern STGUARD_API const std::array<Dtype, kNumDtypes> kAllDtypes;

// DtypeName returns the name used in headers ("F32", "F8_E4M3FNUZ").
STGUARD_API std::string_view DtypeName(Dtype dtype);

// DtypeBits returns the size of one element in bits (4 for F4, 6 for F6_*, 8 for BOOL...).
STGUARD_API uint32_t DtypeBits(Dtype dtype);

// DtypeNumpyType returns the numpy type string its elements are read as, little-endian
// ("<f4", "?" for BOOL). A type numpy lacks is read as unsigned integers of its size
// holding the bits ("<u2" for BF16, "u1" for F8_*), and F4 and F6_* as their bytes.
STGUARD_API std::string_view DtypeNumpyType(Dtype dtype);

// DtypeFrameworkName returns the name torch gives the type ("float32", "bfloat16",
// "float8_e4m3fn", "float4_e2m1fn_x2"; numpy's name too where numpy has the type), or ""
// when torch has none (F6_E2M3, F6_E3M2).
STGUARD_API std::string_view DtypeFrameworkName(Dtype dtype);

// DtypeAlignment returns the alignment, in bytes, that a tensor of `dtype` needs to be
// read as an array of its element type: the element size (8 for F64, I64, U64 and C64,
// 4 for F32, 2 for BF16...), and 1 for the byte-sized and sub-byte dtypes (F4, F6_*).
STGUARD_API size_t DtypeAlignment(Dtype dtype);

// ElementSize returns the byte size of one element of a whole-byte dtype, or 0 for F4
// and F6_*.
STGUARD_API size_t ElementSize(Dtype dtype);

// IsFloatingDtype says whether `dtype` is a real floating-point type: F64, F32, F16, BF16,
// the F8 variants, F6_*, F4. (C64 is complex; BOOL and integers are not floating.)
STGUARD_API bool IsFloatingDtype(Dtype dtype);

// CanConvertToF32 says whether ConvertToF32 and ConvertElements (stguard/convert.h)
// accept `dtype` as a source: every dtype except F4, F6_E2M3, F6_E3M2 and C64.
STGUARD_API bool CanConvertToF32(Dtype dtype);

// IsConvertibleFloat says whether conversion to F32, F16 or BF16 (AddConvertedCheckpoint,
// `stguard convert`) rewrites tensors of `dtype`: F64, F32, F16 and BF16. The 8-bit and
// smaller float types are kept as they are: they are quantised formats that usually come
// with scale tensors, and widening them alone would not give the model's values.
STGUARD_API bool IsConvertibleFloat(Dtype dtype);

// IsConversionTarget says whether `dtype` is one that conversion writes: F32, F16, BF16.
STGUARD_API bool IsConversionTarget(Dtype dtype);

// ParseDtype maps a header name to its dtype; names are case-sensitive. Returns nullopt
// for unknown names.
STGUARD_API std::optional<Dtype> ParseDtype(std::string_view name);

}  // namespace stguard

#endif  // STGUARD_DTYPE_H_
