// The dtype table: names and element sizes in bits, in the reference's enum order.
#include "stguard/dtype.h"

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

std::optional<Dtype> ParseDtype(std::string_view name) {
  // 22 short names: a linear scan beats anything cleverer and is obviously correct.
  for (size_t i = 0; i < kDtypeTable.size(); ++i) {
    if (kDtypeTable[i].name == name) return static_cast<Dtype>(i);
  }
  return std::nullopt;
}

}  // namespace stguard
