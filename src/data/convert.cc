// SPDX-License-Identifier: Apache-2.0
// Element conversions: decoders to F32, encoders from F32 with round-to-nearest-even.
//
// The hot loops (BF16/F16 -> F32, F32 -> BF16/F16) are branch-free per element and run in
// fixed blocks of kBlock elements with restrict-qualified pointers, which is the shape
// GCC's and Clang's -O2 vectorisers accept (GCC's -O2 "very cheap" cost model refuses a
// loop whose trip count is unknown, but not a fixed-count inner loop). The 8-bit formats
// decode through 256-entry tables built once from their definitions.
#include "stguard/convert.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/out_of_memory.h"
#include "base/little_endian.h"
#include "data/conversion_target.h"


namespace stguard {
namespace {

constexpr size_t kBlock = 16;   // elements per vectorised inner loop
constexpr size_t kChunk = 4096; // elements per staging buffer in ConvertElements

Error InvalidArgument(const char* message, std::string context = {}) {
  return Error{ErrorCode::kInvalidArgument, 0, message, std::move(context)};
}

// ---- Single elements, as bit patterns ----

// Select returns `a` if `condition`, else `b`, through a mask rather than a branch: GCC
// at -O2 will not if-convert a ternary whose arms it has sunk floating-point arithmetic
// into, and then refuses to vectorise the loop ("control flow in loop").
inline uint32_t Select(bool condition, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(condition);
  return (a & mask) | (b & ~mask);
}

inline uint32_t Bf16BitsToF32Bits(uint32_t bits) { return bits << 16; }

// F16BitsToF32Bits is exact and branch-free: normal numbers are re-biased (+112 in the
// exponent), inf and NaN get a second +112 (31 + 224 = 255, payload kept), and
// subnormals m * 2^-24 are computed as int -> float times a power of two, which is exact
// and never touches an F32 subnormal (slow on some CPUs, flushed under DAZ).
inline uint32_t F16BitsToF32Bits(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t magnitude = h & 0x7FFFu;
  const uint32_t exponent = magnitude >> 10;
  uint32_t normal = (magnitude << 13) + (112u << 23);
  normal += Select(exponent == 31, 112u << 23, 0u);
  const float subnormal = static_cast<float>(static_cast<int32_t>(magnitude)) * 0x1p-24f;
  const uint32_t bits = Select(exponent == 0, std::bit_cast<uint32_t>(subnormal), normal);
  return sign | bits;
}

// F32BitsToBf16Bits rounds to nearest even by adding 0x7FFF plus the lowest kept bit;
// the carry runs into the exponent, so the largest values round up to inf. NaN is
// truncated and made quiet (bit 6), so a payload in the low bits cannot become inf.
inline uint16_t F32BitsToBf16Bits(uint32_t x) {
  const uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x0040u;
  const bool is_nan = (x & 0x7FFFFFFFu) > 0x7F800000u;
  return static_cast<uint16_t>(Select(is_nan, nan, rounded));
}

// F32BitsToF16Bits rounds to nearest even, branch-free:
// - |x| >= 2^-14 (0x38800000): re-bias the exponent (-112) and round the 23-bit mantissa
//   to 10 bits like BF16 above; a carry correctly steps into the next binade.
// - |x| <  2^-14: a binary16 subnormal (or zero). Adding 0.5f, whose ulp is 2^-24 (the
//   binary16 subnormal step), makes the FPU round |x| to a multiple of 2^-24, nearest
//   even; the low bits of the sum are then the binary16 bits (0x400 if it rounded up to
//   the smallest normal).
// - |x| >= 65520 (0x477FF000, the midpoint between 65504 and 65536, which rounds to the
//   even neighbour 65536 = inf): inf.
// - NaN: quiet NaN with the sign and the top 10 payload bits.
inline uint16_t F32BitsToF16Bits(uint32_t x) {
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t magnitude = x & 0x7FFFFFFFu;
  const uint32_t rebiased = magnitude - (112u << 23);
  const uint32_t normal = (rebiased + 0xFFFu + ((rebiased >> 13) & 1u)) >> 13;
  const float sum = std::bit_cast<float>(magnitude) + 0.5f;
  const uint32_t subnormal = std::bit_cast<uint32_t>(sum) - 0x3F000000u;
  uint32_t bits = Select(magnitude < 0x38800000u, subnormal, normal);
  bits = Select(magnitude >= 0x477FF000u, 0x7C00u, bits);
  bits = Select(magnitude > 0x7F800000u, 0x7E00u | ((magnitude >> 13) & 0x3FFu), bits);
  return static_cast<uint16_t>(sign | bits);
}

// ---- 8-bit formats ----

// Minifloat8 describes an 8-bit float: 1 sign bit, exponent_bits, mantissa_bits, a bias,
// and which bit patterns are special.
enum class Special8 : uint8_t {
  kFiniteOnlyNanAllOnes,  // OFP8 E4M3: S.1111.111 is NaN, no inf
  kFnuz,                  // FNUZ: 0x80 is the only NaN, no inf, no -0
};

struct Minifloat8 {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Special8 special;
};

constexpr uint32_t kQuietNanBits = 0x7FC00000u;

// DecodeMinifloat8 builds the F32 bit pattern of `byte` from the fields, with integer
// arithmetic only (the tests check it against std::ldexp).
uint32_t DecodeMinifloat8(uint8_t byte, const Minifloat8& format) {
  const uint32_t sign = (byte & 0x80u) ? 0x80000000u : 0u;
  const uint32_t exponent_mask = (1u << format.exponent_bits) - 1u;
  const uint32_t mantissa_mask = (1u << format.mantissa_bits) - 1u;
  const uint32_t exponent = (byte >> format.mantissa_bits) & exponent_mask;
  uint32_t mantissa = byte & mantissa_mask;
  if (format.special == Special8::kFnuz && byte == 0x80u) return kQuietNanBits;
  if (format.special == Special8::kFiniteOnlyNanAllOnes && exponent == exponent_mask &&
      mantissa == mantissa_mask) {
    return sign | kQuietNanBits;
  }
  const int mantissa_shift = 23 - format.mantissa_bits;
  if (exponent != 0) {
    const auto f32_exponent = static_cast<uint32_t>(static_cast<int>(exponent) - format.bias + 127);
    return sign | (f32_exponent << 23) | (mantissa << mantissa_shift);
  }
  if (mantissa == 0) return sign;  // +-0
  // Subnormal: mantissa * 2^(1 - bias - mantissa_bits). Normalise so that the leading 1
  // becomes the implicit bit; all these values are F32 normals.
  int scale = 1 - format.bias;  // exponent of the value 0.mmm written as 1.xxx * 2^scale
  while ((mantissa & (1u << format.mantissa_bits)) == 0) {
    mantissa <<= 1;
    --scale;
  }
  mantissa &= mantissa_mask;
  return sign | (static_cast<uint32_t>(scale + 127) << 23) | (mantissa << mantissa_shift);
}

uint32_t DecodeE8M0(uint8_t byte) {
  if (byte == 0xFF) return kQuietNanBits;
  if (byte == 0) return 0x00400000u;  // 2^-127: the F32 subnormal 0.1b * 2^-126
  return static_cast<uint32_t>(byte) << 23;  // exponent field E: 2^(E-127)
}

using Table8 = std::array<float, 256>;

template <typename Decode>
Table8 MakeTable(Decode decode) {
  Table8 table{};
  for (uint32_t i = 0; i < 256; ++i) {
    table[i] = std::bit_cast<float>(decode(static_cast<uint8_t>(i)));
  }
  return table;
}

constexpr Minifloat8 kE4M3{4, 3, 7, Special8::kFiniteOnlyNanAllOnes};
constexpr Minifloat8 kE4M3Fnuz{4, 3, 8, Special8::kFnuz};
constexpr Minifloat8 kE5M2Fnuz{5, 2, 16, Special8::kFnuz};

// The tables are built on first use (thread-safe static initialisation).
const Table8& E4M3Table() {
  static const Table8 table = MakeTable([](uint8_t b) { return DecodeMinifloat8(b, kE4M3); });
  return table;
}
const Table8& E5M2Table() {
  // E5M2 is binary16 without its low byte.
  static const Table8 table = MakeTable([](uint8_t b) { return F16BitsToF32Bits(b << 8u); });
  return table;
}
const Table8& E4M3FnuzTable() {
  static const Table8 table =
      MakeTable([](uint8_t b) { return DecodeMinifloat8(b, kE4M3Fnuz); });
  return table;
}
const Table8& E5M2FnuzTable() {
  static const Table8 table =
      MakeTable([](uint8_t b) { return DecodeMinifloat8(b, kE5M2Fnuz); });
  return table;
}
const Table8& E8M0Table() {
  static const Table8 table = MakeTable(DecodeE8M0);
  return table;
}

// ---- Rounding wide sources to F32 ----

float U64ToF32RoundToOdd(uint64_t value) {
  if (value < (uint64_t{1} << 24)) return static_cast<float>(value);  // exact
  const int shift = 64 - std::countl_zero(value) - 24;
  uint64_t kept = value >> shift;
  if ((value & ((uint64_t{1} << shift) - 1)) != 0) kept |= 1;  // sticky bit
  return std::ldexp(static_cast<float>(kept), shift);           // both steps exact
}

float I64ToF32RoundToOdd(int64_t value) {
  const uint64_t magnitude =
      value < 0 ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const float rounded = U64ToF32RoundToOdd(magnitude);
  return value < 0 ? -rounded : rounded;
}

// ---- Block loops ----

// DecodeLoop writes fn(element i) to dst[i] for n elements of type Src.
template <typename Src, typename Fn>
void DecodeLoop(const std::byte* __restrict src, float* __restrict dst, size_t n, Fn fn) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) dst[i + j] = fn(LoadLittleEndian<Src>(src + (i + j) * sizeof(Src)));
  }
  for (; i < n; ++i) dst[i] = fn(LoadLittleEndian<Src>(src + i * sizeof(Src)));
}

void DecodeTable(const std::byte* __restrict src, float* __restrict dst, size_t n,
                 const Table8& table) {
  for (size_t i = 0; i < n; ++i) dst[i] = table[static_cast<uint8_t>(src[i])];
}

// EncodeLoop16 reads n F32 bit patterns from `src` (native floats when `src` is a staging
// buffer, little-endian bytes of the input otherwise: the same thing on a little-endian
// host) and writes fn(bits) as 16-bit little-endian values.
template <bool kFromNative, typename Fn>
void EncodeLoop16(const std::byte* __restrict src, std::byte* __restrict dst, size_t n, Fn fn) {
  auto load = [src](size_t i) {
    if constexpr (kFromNative) {
      uint32_t bits;
      std::memcpy(&bits, src + i * 4, 4);
      return bits;
    } else {
      return LoadLittleEndian<uint32_t>(src + i * 4);
    }
  };
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) StoreLittleEndian<uint16_t>(dst + (i + j) * 2, fn(load(i + j)));
  }
  for (; i < n; ++i) StoreLittleEndian<uint16_t>(dst + i * 2, fn(load(i)));
}

// DecodeToF32 decodes n elements. With round_to_odd, sources wider than F32 are rounded
// to odd (for a second rounding to F16/BF16); otherwise to nearest even. The caller has
// checked that the dtype is convertible.
void DecodeToF32(Dtype dtype, const std::byte* src, float* dst, size_t n, bool round_to_odd) {
  switch (dtype) {
    case Dtype::kBOOL:
      DecodeLoop<uint8_t>(src, dst, n, [](uint8_t v) { return v != 0 ? 1.0f : 0.0f; });
      return;
    case Dtype::kU8:
      DecodeLoop<uint8_t>(src, dst, n, [](uint8_t v) { return static_cast<float>(v); });
      return;
    case Dtype::kI8:
      DecodeLoop<uint8_t>(src, dst, n,
                          [](uint8_t v) { return static_cast<float>(static_cast<int8_t>(v)); });
      return;
    case Dtype::kU16:
      DecodeLoop<uint16_t>(src, dst, n, [](uint16_t v) { return static_cast<float>(v); });
      return;
    case Dtype::kI16:
      DecodeLoop<uint16_t>(
          src, dst, n, [](uint16_t v) { return static_cast<float>(static_cast<int16_t>(v)); });
      return;
    case Dtype::kU32:
      if (round_to_odd) {
        DecodeLoop<uint32_t>(src, dst, n, [](uint32_t v) { return U64ToF32RoundToOdd(v); });
      } else {
        DecodeLoop<uint32_t>(src, dst, n, [](uint32_t v) { return static_cast<float>(v); });
      }
      return;
    case Dtype::kI32:
      if (round_to_odd) {
        DecodeLoop<uint32_t>(src, dst, n, [](uint32_t v) {
          return I64ToF32RoundToOdd(static_cast<int32_t>(v));
        });
      } else {
        DecodeLoop<uint32_t>(
            src, dst, n, [](uint32_t v) { return static_cast<float>(static_cast<int32_t>(v)); });
      }
      return;
    case Dtype::kU64:
      if (round_to_odd) {
        DecodeLoop<uint64_t>(src, dst, n, [](uint64_t v) { return U64ToF32RoundToOdd(v); });
      } else {
        DecodeLoop<uint64_t>(src, dst, n, [](uint64_t v) { return static_cast<float>(v); });
      }
      return;
    case Dtype::kI64:
      if (round_to_odd) {
        DecodeLoop<uint64_t>(src, dst, n, [](uint64_t v) {
          return I64ToF32RoundToOdd(static_cast<int64_t>(v));
        });
      } else {
        DecodeLoop<uint64_t>(
            src, dst, n, [](uint64_t v) { return static_cast<float>(static_cast<int64_t>(v)); });
      }
      return;
    case Dtype::kF64:
      if (round_to_odd) {
        DecodeLoop<uint64_t>(src, dst, n, [](uint64_t v) {
          return F64ToF32RoundToOdd(std::bit_cast<double>(v));
        });
      } else {
        DecodeLoop<uint64_t>(
            src, dst, n, [](uint64_t v) { return static_cast<float>(std::bit_cast<double>(v)); });
      }
      return;
    case Dtype::kF32:
      DecodeLoop<uint32_t>(src, dst, n, [](uint32_t v) { return std::bit_cast<float>(v); });
      return;
    case Dtype::kBF16:
      DecodeLoop<uint16_t>(src, dst, n,
                           [](uint16_t v) { return std::bit_cast<float>(Bf16BitsToF32Bits(v)); });
      return;
    case Dtype::kF16:
      DecodeLoop<uint16_t>(src, dst, n,
                           [](uint16_t v) { return std::bit_cast<float>(F16BitsToF32Bits(v)); });
      return;
    case Dtype::kF8_E4M3:
      DecodeTable(src, dst, n, E4M3Table());
      return;
    case Dtype::kF8_E5M2:
      DecodeTable(src, dst, n, E5M2Table());
      return;
    case Dtype::kF8_E4M3FNUZ:
      DecodeTable(src, dst, n, E4M3FnuzTable());
      return;
    case Dtype::kF8_E5M2FNUZ:
      DecodeTable(src, dst, n, E5M2FnuzTable());
      return;
    case Dtype::kF8_E8M0:
      DecodeTable(src, dst, n, E8M0Table());
      return;
    case Dtype::kF4:
    case Dtype::kF6_E2M3:
    case Dtype::kF6_E3M2:
    case Dtype::kC64:
      return;  // refused by CanConvertToF32 before we get here
  }
}

// EncodeFromF32 writes n values as `dtype` (F32, F16 or BF16) little-endian bytes. `src`
// holds native floats when kFromNative, else little-endian F32 bytes.
template <bool kFromNative>
void EncodeFromF32(const std::byte* src, Dtype dtype, std::byte* dst, size_t n) {
  switch (dtype) {
    case Dtype::kBF16:
      EncodeLoop16<kFromNative>(src, dst, n, [](uint32_t x) { return F32BitsToBf16Bits(x); });
      return;
    case Dtype::kF16:
      EncodeLoop16<kFromNative>(src, dst, n, [](uint32_t x) { return F32BitsToF16Bits(x); });
      return;
    case Dtype::kF32:
      for (size_t i = 0; i < n; ++i) {
        uint32_t bits;
        std::memcpy(&bits, src + i * 4, 4);
        StoreLittleEndian<uint32_t>(dst + i * 4, kFromNative ? bits : LoadLittleEndian<uint32_t>(src + i * 4));
      }
      return;
    case Dtype::kBOOL:
    case Dtype::kF4:
    case Dtype::kF6_E2M3:
    case Dtype::kF6_E3M2:
    case Dtype::kU8:
    case Dtype::kI8:
    case Dtype::kF8_E5M2:
    case Dtype::kF8_E4M3:
    case Dtype::kF8_E8M0:
    case Dtype::kF8_E4M3FNUZ:
    case Dtype::kF8_E5M2FNUZ:
    case Dtype::kI16:
    case Dtype::kU16:
    case Dtype::kI32:
    case Dtype::kU32:
    case Dtype::kC64:
    case Dtype::kF64:
    case Dtype::kI64:
    case Dtype::kU64:
      return;  // not conversion targets: refused by CheckConversionTarget before we get here
  }
}

}  // namespace

float Bf16ToF32(uint16_t bits) { return std::bit_cast<float>(Bf16BitsToF32Bits(bits)); }
float F16ToF32(uint16_t bits) { return std::bit_cast<float>(F16BitsToF32Bits(bits)); }
float F8E4M3ToF32(uint8_t bits) { return E4M3Table()[bits]; }
float F8E5M2ToF32(uint8_t bits) { return E5M2Table()[bits]; }
float F8E4M3FnuzToF32(uint8_t bits) { return E4M3FnuzTable()[bits]; }
float F8E5M2FnuzToF32(uint8_t bits) { return E5M2FnuzTable()[bits]; }
float F8E8M0ToF32(uint8_t bits) { return E8M0Table()[bits]; }
uint16_t F32ToBf16(float value) { return F32BitsToBf16Bits(std::bit_cast<uint32_t>(value)); }
uint16_t F32ToF16(float value) { return F32BitsToF16Bits(std::bit_cast<uint32_t>(value)); }

float F64ToF32RoundToOdd(double value) {
  const float nearest = static_cast<float>(value);  // NaN stays NaN, inf stays inf
  if (std::isnan(value) || std::isinf(value) || static_cast<double>(nearest) == value) {
    return nearest;
  }
  // Inexact (or overflowed to inf): take the neighbour toward zero, then make it odd.
  float truncated = nearest;
  if (std::fabs(static_cast<double>(nearest)) > std::fabs(value)) {
    truncated = std::nextafter(nearest, 0.0f);  // inf steps to the largest finite value
  }
  return std::bit_cast<float>(std::bit_cast<uint32_t>(truncated) | 1u);
}

Error ConvertToF32(Dtype src_dtype, std::span<const std::byte> src, std::span<float> dst) {
  return CatchOutOfMemory("out of memory while converting", [&]() -> Error {
    if (!CanConvertToF32(src_dtype)) {
      return InvalidArgument("no conversion from this dtype to F32",
                             std::string(DtypeName(src_dtype)));
    }
    const size_t size = ElementSize(src_dtype);
    if (src.size() / size != dst.size() || src.size() % size != 0) {
      return InvalidArgument("source and destination hold different element counts");
    }
    DecodeToF32(src_dtype, src.data(), dst.data(), dst.size(), /*round_to_odd=*/false);
    return Error{};
  });
}

Error ConvertElements(Dtype src_dtype, std::span<const std::byte> src, Dtype dst_dtype,
                      std::span<std::byte> dst) {
  return CatchOutOfMemory("out of memory while converting", [&]() -> Error {
    if (!CanConvertToF32(src_dtype)) {
      return InvalidArgument("no conversion from this dtype", std::string(DtypeName(src_dtype)));
    }
    if (Error error = CheckConversionTarget(dst_dtype); !error.ok()) return error;
    const size_t src_size = ElementSize(src_dtype);
    const size_t dst_size = ElementSize(dst_dtype);
    const size_t n = src.size() / src_size;
    if (src.size() % src_size != 0 || dst.size() % dst_size != 0 || dst.size() / dst_size != n) {
      return InvalidArgument("source and destination hold different element counts");
    }
    if (src_dtype == dst_dtype) {
      if (n != 0) std::memmove(dst.data(), src.data(), src.size());
      return Error{};
    }
    if (dst_dtype == Dtype::kF32 && std::endian::native == std::endian::little) {
      // Straight into an aligned destination: F32 bytes on a little-endian host are floats.
      // A misaligned destination goes through the staging buffer below.
      if (reinterpret_cast<uintptr_t>(dst.data()) % alignof(float) == 0) {
        DecodeToF32(src_dtype, src.data(), reinterpret_cast<float*>(dst.data()), n, false);
        return Error{};
      }
    }
    if (src_dtype == Dtype::kF32) {  // one pass, no staging
      EncodeFromF32<false>(src.data(), dst_dtype, dst.data(), n);
      return Error{};
    }
    const bool round_to_odd = dst_dtype != Dtype::kF32;
    float buffer[kChunk];
    for (size_t done = 0; done < n;) {
      const size_t count = std::min(kChunk, n - done);
      DecodeToF32(src_dtype, src.data() + done * src_size, buffer, count, round_to_odd);
      EncodeFromF32<true>(reinterpret_cast<const std::byte*>(buffer), dst_dtype,
                          dst.data() + done * dst_size, count);
      done += count;
    }
    return Error{};
  });
}

Error CheckConversionTarget(Dtype target) {
  if (IsConversionTarget(target)) return Error{};
  return InvalidArgument("conversion target must be F32, F16 or BF16",
                         std::string(DtypeName(target)));
}

bool ChangesDtype(Dtype from, std::optional<Dtype> target) {
  return target.has_value() && IsConvertibleFloat(from) && from != *target;
}

Dtype OutputDtype(Dtype from, std::optional<Dtype> target) {
  return ChangesDtype(from, target) ? *target : from;
}

uint64_t ConvertedByteLen(Dtype from, uint64_t byte_len, std::optional<Dtype> target) {
  if (!ChangesDtype(from, target)) return byte_len;
  return byte_len / ElementSize(from) * ElementSize(*target);
}

}  // namespace stguard
