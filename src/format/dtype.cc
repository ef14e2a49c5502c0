// SPDX-License-Identifier: Apache-2.0
// The dtype table: every fact about each dtype (name, bits, kind, conversions), in the
// reference's enum order.
#include "stguard/dtype.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace stguard {
namespace {

// DtypeKind says what a dtype's elements are.
enum class DtypeKind : uint8_t { kBool, kUnsigned, kSigned, kFloat, kComplex };

// DtypeInfo is everything stguard knows about one dtype; every dtype fact is read from
// kDtypeTable below, so a new dtype is one row here (and its enumerator).
struct DtypeInfo {
  std::string_view name;
  uint32_t bits;           // element size; F4 and F6_* pack below a byte
  DtypeKind kind;
  bool decodes_to_f32;     // ConvertToF32 has an exact decoder (CanConvertToF32)
  bool rewritten_by_convert;  // `convert` rewrites it to the target (IsConvertibleFloat)
  bool conversion_target;  // `convert` may write it (IsConversionTarget)
};

constexpr auto kBool = DtypeKind::kBool;
constexpr auto kUnsigned = DtypeKind::kUnsigned;
constexpr auto kSigned = DtypeKind::kSigned;
constexpr auto kFloat = DtypeKind::kFloat;
constexpr auto kComplex = DtypeKind::kComplex;

// Indexed by Dtype. Sub-byte floats and C64 have no decoder (stguard/convert.h says why).
constexpr std::array<DtypeInfo, kNumDtypes> kDtypeTable = {{
    // name           bits  kind       to F32  rewritten  target
    {"BOOL",          8,    kBool,     true,   false,     false},
    {"F4",            4,    kFloat,    false,  false,     false},
    {"F6_E2M3",       6,    kFloat,    false,  false,     false},
    {"F6_E3M2",       6,    kFloat,    false,  false,     false},
    {"U8",            8,    kUnsigned, true,   false,     false},
    {"I8",            8,    kSigned,   true,   false,     false},
    {"F8_E5M2",       8,    kFloat,    true,   false,     false},
    {"F8_E4M3",       8,    kFloat,    true,   false,     false},
    {"F8_E8M0",       8,    kFloat,    true,   false,     false},
    {"F8_E4M3FNUZ",   8,    kFloat,    true,   false,     false},
    {"F8_E5M2FNUZ",   8,    kFloat,    true,   false,     false},
    {"I16",           16,   kSigned,   true,   false,     false},
    {"U16",           16,   kUnsigned, true,   false,     false},
    {"F16",           16,   kFloat,    true,   true,      true},
    {"BF16",          16,   kFloat,    true,   true,      true},
    {"I32",           32,   kSigned,   true,   false,     false},
    {"U32",           32,   kUnsigned, true,   false,     false},
    {"F32",           32,   kFloat,    true,   true,      true},
    {"C64",           64,   kComplex,  false,  false,     false},
    {"F64",           64,   kFloat,    true,   true,      false},
    {"I64",           64,   kSigned,   true,   false,     false},
    {"U64",           64,   kUnsigned, true,   false,     false},
}};

// Facts the conversion code relies on, checked once for every row.
constexpr bool RowsAreConsistent() {
  for (const DtypeInfo& info : kDtypeTable) {
    if (info.bits == 0 || info.bits > 64) return false;
    // A decoder reads whole elements; sub-byte packing is not defined by the format.
    if (info.decodes_to_f32 && info.bits % 8 != 0) return false;
    // What convert rewrites it must first decode; what it writes it must also rewrite.
    if (info.rewritten_by_convert && (!info.decodes_to_f32 || info.kind != kFloat)) return false;
    if (info.conversion_target && !info.rewritten_by_convert) return false;
  }
  return true;
}
static_assert(RowsAreConsistent());

const DtypeInfo& InfoOf(Dtype dtype) { return kDtypeTable[static_cast<size_t>(dtype)]; }

constexpr std::array<Dtype, kNumDtypes> MakeAllDtypes() {
  std::array<Dtype, kNumDtypes> all{};
  for (int i = 0; i < kNumDtypes; ++i) all[i] = static_cast<Dtype>(i);
  return all;
}

}  // namespace

const std::array<Dtype, kNumDtypes> kAllDtypes = MakeAllDtypes();

std::string_view DtypeName(Dtype dtype) { return InfoOf(dtype).name; }

uint32_t DtypeBits(Dtype dtype) { return InfoOf(dtype).bits; }

size_t ElementSize(Dtype dtype) {
  const uint32_t bits = DtypeBits(dtype);
  return bits % 8 == 0 ? bits / 8 : 0;
}

bool IsFloatingDtype(Dtype dtype) { return InfoOf(dtype).kind == DtypeKind::kFloat; }

bool CanConvertToF32(Dtype dtype) { return InfoOf(dtype).decodes_to_f32; }

bool IsConvertibleFloat(Dtype dtype) { return InfoOf(dtype).rewritten_by_convert; }

bool IsConversionTarget(Dtype dtype) { return InfoOf(dtype).conversion_target; }

size_t DtypeAlignment(Dtype dtype) {
  const uint32_t bits = DtypeBits(dtype);
  return bits < 8 ? 1 : bits / 8;  // every whole-byte element size is a power of two
}

namespace {

// PackedName holds a name of up to 16 bytes as two zero-padded words, so that matching a
// header's dtype against the table is integer comparisons rather than 22 memcmp calls
// (this runs once per tensor; near the header cap that is 800,000 times). The length is
// part of the key, so a name with NUL bytes cannot match through the zero padding.
struct PackedName {
  uint64_t low = 0;
  uint64_t high = 0;
  uint64_t size = 0;
  bool operator==(const PackedName&) const = default;
};

constexpr PackedName Pack(std::string_view name) {
  PackedName packed;
  packed.size = name.size();
  for (size_t i = 0; i < name.size() && i < 16; ++i) {
    const uint64_t byte = static_cast<unsigned char>(name[i]);
    if (i < 8) {
      packed.low |= byte << (8 * i);
    } else {
      packed.high |= byte << (8 * (i - 8));
    }
  }
  return packed;
}

constexpr std::array<PackedName, kNumDtypes> MakePackedNames() {
  std::array<PackedName, kNumDtypes> packed{};
  for (int i = 0; i < kNumDtypes; ++i) packed[i] = Pack(kDtypeTable[i].name);
  return packed;
}

constexpr std::array<PackedName, kNumDtypes> kPackedNames = MakePackedNames();

}  // namespace

std::optional<Dtype> ParseDtype(std::string_view name) {
  if (name.empty() || name.size() > 16) return std::nullopt;
  PackedName packed;
  packed.size = name.size();
  std::memcpy(&packed.low, name.data(), std::min<size_t>(name.size(), 8));
  if (name.size() > 8) std::memcpy(&packed.high, name.data() + 8, name.size() - 8);
  if constexpr (std::endian::native == std::endian::big) packed = Pack(name);
  for (size_t i = 0; i < kPackedNames.size(); ++i) {
    if (kPackedNames[i] == packed) return static_cast<Dtype>(i);
  }
  return std::nullopt;
}

}  // namespace stguard
