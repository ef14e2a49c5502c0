// SPDX-License-Identifier: Apache-2.0
// The .npy descr strings stguard accepts, as a table, and their safetensors dtypes.
// A descr is numpy's dtype.str: a byte order ('<' little, '>' big, '|' not applicable),
// a kind letter and a size ("<f4", "|b1", "<U5", "<M8[s]").
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/checked_math.h"
#include "stguard/npy.h"

namespace stguard {

namespace {

// FixedType is a descr whose size is fixed by its kind: "<kind><itemsize>".
struct FixedType {
  std::string_view code;       // descr without its byte order: "f4"
  uint64_t itemsize;           // bytes per element
  uint64_t scalar_size;        // bytes per value that byte order applies to
  std::optional<Dtype> dtype;  // nullopt: safetensors has no such type
};

// Every fixed-size type numpy writes for the numeric kinds. The long doubles numpy writes
// on x86-64 (f16, c32: 80-bit extended numbers padded to 16 bytes) are accepted for their
// size alone: their layout differs between machines, and safetensors has no such type.
// numpy on x86-64 does not load f12 (32-bit x86's long double) at all.
constexpr std::array<FixedType, 16> kFixedTypes = {{
    {"b1", 1, 1, Dtype::kBOOL},
    {"i1", 1, 1, Dtype::kI8},
    {"i2", 2, 2, Dtype::kI16},
    {"i4", 4, 4, Dtype::kI32},
    {"i8", 8, 8, Dtype::kI64},
    {"u1", 1, 1, Dtype::kU8},
    {"u2", 2, 2, Dtype::kU16},
    {"u4", 4, 4, Dtype::kU32},
    {"u8", 8, 8, Dtype::kU64},
    {"f2", 2, 2, Dtype::kF16},
    {"f4", 4, 4, Dtype::kF32},
    {"f8", 8, 8, Dtype::kF64},
    {"c8", 8, 4, Dtype::kC64},
    {"c16", 16, 8, std::nullopt},
    {"f16", 16, 16, std::nullopt},
    {"c32", 32, 16, std::nullopt},
}};

// The units numpy's datetime64/timedelta64 descrs name ("<M8[s]").
constexpr std::array<std::string_view, 13> kTimeUnits = {"Y",  "M",  "W",  "D",  "h",
                                                         "m",  "s",  "ms", "us", "ns",
                                                         "ps", "fs", "as"};

Error DescrError(uint64_t offset, const char* message, std::string_view descr) {
  return Error{ErrorCode::kNpyDescr, offset, message, std::string(descr.substr(0, 64)), {}};
}

// ParseCount reads a positive decimal count without leading zeros ("5" in "<U5").
bool ParseCount(std::string_view digits, uint64_t* out) {
  if (digits.empty() || digits[0] == '0') return false;
  return ParseUint64(digits, out) && *out > 0;
}

// ParseTimeUnit accepts "[unit]" or "[Nunit]" (a multiple of the unit).
bool ParseTimeUnit(std::string_view bracketed) {
  if (bracketed.size() < 3 || bracketed.front() != '[' || bracketed.back() != ']') {
    return false;
  }
  std::string_view inner = bracketed.substr(1, bracketed.size() - 2);
  size_t digits = 0;
  while (digits < inner.size() && inner[digits] >= '0' && inner[digits] <= '9') ++digits;
  uint64_t multiple = 0;
  // numpy holds the multiple in a C int and refuses larger ones.
  if (digits > 0 && (!ParseCount(inner.substr(0, digits), &multiple) ||
                     multiple > uint64_t{INT32_MAX})) {
    return false;
  }
  inner.remove_prefix(digits);
  for (std::string_view unit : kTimeUnits) {
    if (inner == unit) return true;
  }
  return false;
}

// ParseFlexible handles the kinds whose size is part of the string: S<n>, U<n>, V<n>,
// M8[unit], m8[unit], and the generic M8, m8 (no unit: numpy writes '<M8' for
// np.datetime64 values without one). Returns false when `code` is none of them.
bool ParseFlexible(std::string_view code, NpyType* type) {
  const char kind = code[0];
  if (kind == 'V') {
    // Raw bytes (np.void): numpy writes '|V0' for a zero-size void, so 0 counts; no byte
    // order applies. As for S and U, numpy keeps the size in a C int.
    const std::string_view digits = code.substr(1);
    uint64_t count = 0;
    type->scalar_size = 1;
    if (digits == "0") return true;
    if (!ParseCount(digits, &count) || count > uint64_t{INT32_MAX}) return false;
    type->itemsize = count;
    return true;
  }
  if ((kind == 'M' || kind == 'm') && code.size() == 2 && code[1] == '8') {
    type->scalar_size = type->itemsize = 8;
    return true;
  }
  if (kind == 'S' || kind == 'U') {
    uint64_t count = 0;
    if (!ParseCount(code.substr(1), &count)) return false;
    type->scalar_size = kind == 'S' ? 1 : 4;  // U is UCS-4: four bytes per character
    // numpy keeps itemsize in a C int: beyond 2^31 - 1 it wraps negative ('|S2147483648'
    // has itemsize -2147483648), so such a descr is refused.
    return CheckedMul(count, type->scalar_size, &type->itemsize) &&
           type->itemsize <= uint64_t{INT32_MAX};
  }
  if ((kind == 'M' || kind == 'm') && code.size() > 2 && code[1] == '8') {
    type->scalar_size = type->itemsize = 8;
    return ParseTimeUnit(code.substr(2));
  }
  return false;
}

}  // namespace

Result<NpyType> ParseNpyDescr(std::string_view descr, uint64_t offset) {
  if (descr.empty()) return DescrError(offset, "an empty descr", descr);
  const char order = descr[0];
  if (order == '=') {
    return DescrError(offset, "a descr with native byte order '=' (not explicit)", descr);
  }
  if (order != '<' && order != '>' && order != '|') {
    return DescrError(offset,
                      "a descr that is not a type string with byte order ('<f4'), such as a "
                      "dtype name ('float32')",
                      descr);
  }
  const std::string_view code = descr.substr(1);
  if (!code.empty() && code[0] == 'O') {
    return Error{ErrorCode::kNpyObjectArray, offset,
                 "an object array: its data is a pickle that would run code when loaded",
                 std::string(descr.substr(0, 64)), {}};
  }
  NpyType type;
  bool known = false;
  for (const FixedType& fixed : kFixedTypes) {
    if (code == fixed.code) {
      type.dtype = fixed.dtype;
      type.itemsize = fixed.itemsize;
      type.scalar_size = fixed.scalar_size;  // a complex number swaps each half
      known = true;
      break;
    }
  }
  if (!known && (code.empty() || !ParseFlexible(code, &type))) {
    return DescrError(offset, "a descr stguard does not know", descr);
  }
  type.kind = code[0];
  // '|' says byte order does not apply, which is only true of one-byte values; '<' and '>'
  // are accepted there too (cnpy writes "<u1").
  if (order == '|' && type.scalar_size != 1) {
    return DescrError(offset, "a multi-byte descr without byte order ('|')", descr);
  }
  type.byte_order = order == '<'   ? NpyByteOrder::kLittle
                    : order == '>' ? NpyByteOrder::kBig
                                   : NpyByteOrder::kNotApplicable;
  return type;
}

}  // namespace stguard
