// SPDX-License-Identifier: Apache-2.0
// The dtype table: names and element sizes in bits, in the reference's enum order.
#include "stguard/dtype.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace stguard {
namespace {

struct DtypeInfo {
  std::string_view name;
  uint32_t bits;
};

// Indexed by Dtype. Sizes are in bits because F4 and F6_* pack below a byte.
constexpr std::array<DtypeInfo, kNumDtypes> kDtypeTable = {{
    {"BOOL", 8},        {"F4", 4},           {"F6_E2M3", 6},     {"F6_E3M2", 6},
    {"U8", 8},          {"I8", 8},           {"F8_E5M2", 8},     {"F8_E4M3", 8},
    {"F8_E8M0", 8},     {"F8_E4M3FNUZ", 8},  {"F8_E5M2FNUZ", 8}, {"I16", 16},
    {"U16", 16},        {"F16", 16},         {"BF16", 16},       {"I32", 32},
    {"U32", 32},        {"F32", 32},         {"C64", 64},        {"F64", 64},
    {"I64", 64},        {"U64", 64},
}};

constexpr std::array<Dtype, kNumDtypes> MakeAllDtypes() {
  std::array<Dtype, kNumDtypes> all{};
  for (int i = 0; i < kNumDtypes; ++i) all[i] = static_cast<Dtype>(i);
  return all;
}

}  // namespace

const std::array<Dtype, kNumDtypes> kAllDtypes = MakeAllDtypes();

std::string_view DtypeName(Dtype dtype) {
  return kDtypeTable[static_cast<size_t>(dtype)].name;
}

uint32_t DtypeBits(Dtype dtype) { return kDtypeTable[static_cast<size_t>(dtype)].bits; }

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
