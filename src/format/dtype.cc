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
  std::string_view numpy;      // the numpy type its elements are read as (DtypeNumpyType)
  std::string_view framework;  // torch's (and numpy's) name for it (DtypeFrameworkName)
};

constexpr auto kBool = DtypeKind::kBool;
constexpr auto kUnsigned = DtypeKind::kUnsigned;
constexpr auto kSigned = DtypeKind::kSigned;
constexpr auto kFloat = DtypeKind::kFloat;
constexpr auto kComplex = DtypeKind::kComplex;

// Indexed by Dtype. Sub-byte floats and C64 have no decoder (stguard/convert.h says why).
// numpy: a type numpy lacks is read as unsigned integers of its size holding the bits
// (BF16 as "<u2", F8_* as "u1"), and F4 and F6_* as their bytes. framework: the names
// torch gives the types it has (F6_* it has not).
constexpr std::array<DtypeInfo, kNumDtypes> kDtypeTable = {{
    // name           bits  kind       to F32  rewritten  target  numpy   framework
    {"BOOL",          8,    kBool,     true,   false,     false,  "?",    "bool"},
    {"F4",            4,    kFloat,    false,  false,     false,  "u1",   "float4_e2m1fn_x2"},
    {"F6_E2M3",       6,    kFloat,    false,  false,     false,  "u1",   ""},
    {"F6_E3M2",       6,    kFloat,    false,  false,     false,  "u1",   ""},
    {"U8",            8,    kUnsigned, true,   false,     false,  "u1",   "uint8"},
    {"I8",            8,    kSigned,   true,   false,     false,  "i1",   "int8"},
    {"F8_E5M2",       8,    kFloat,    true,   false,     false,  "u1",   "float8_e5m2"},
    {"F8_E4M3",       8,    kFloat,    true,   false,     false,  "u1",   "float8_e4m3fn"},
    {"F8_E8M0",       8,    kFloat,    true,   false,     false,  "u1",   "float8_e8m0fnu"},
    {"F8_E4M3FNUZ",   8,    kFloat,    true,   false,     false,  "u1",   "float8_e4m3fnuz"},
    {"F8_E5M2FNUZ",   8,    kFloat,    true,   false,     false,  "u1",   "float8_e5m2fnuz"},
    {"I16",           16,   kSigned,   true,   false,     false,  "<i2",  "int16"},
    {"U16",           16,   kUnsigned, true,   false,     false,  "<u2",  "uint16"},
    {"F16",           16,   kFloat,    true,   true,      true,   "<f2",  "float16"},
    {"BF16",          16,   kFloat,    true,   true,      true,   "<u2",  "bfloat16"},
    {"I32",           32,   kSigned,   true,   false,     false,  "<i4",  "int32"},
    {"U32",           32,   kUnsigned, true,   false,     false,  "<u4",  "uint32"},
    {"F32",           32,   kFloat,    true,   true,      true,   "<f4",  "float32"},
    {"C64",           64,   kComplex,  false,  false,     false,  "<c8",  "complex64"},
    {"F64",           64,   kFloat,    true,   true,      false,  "<f8",  "float64"},
    {"I64",           64,   kSigned,   true,   false,     false,  "<i8",  "int64"},
    {"U64",           64,   kUnsigned, true,   false,     false,  "<u8",  "uint64"},
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

std::string_view DtypeNumpyType(Dtype dtype) { return InfoOf(dtype).numpy; }

std::string_view DtypeFrameworkName(Dtype dtype) { return InfoOf(dtype).framework; }

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
