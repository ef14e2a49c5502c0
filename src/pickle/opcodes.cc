// SPDX-License-Identifier: Apache-2.0
// The opcode table (names and encodings as in CPython's Lib/pickletools.py).
#include "pickle/opcodes.h"

#include <array>
#include <bit>

#include "base/little_endian.h"

namespace stguard {
namespace {

constexpr OpcodeInfo kOpcodes[] = {
    // Accepted: what torch.save and protocols 2-5 write for tensors and plain containers.
    {'(', "MARK", ArgKind::kNone, 0, true, "", "m", false},
    {'.', "STOP", ArgKind::kNone, 0, true, "v", "", false},
    {'J', "BININT", ArgKind::kI32, 1, true, "", "v", false},
    {'K', "BININT1", ArgKind::kU8, 1, true, "", "v", false},
    {'M', "BININT2", ArgKind::kU16, 1, true, "", "v", false},
    {'N', "NONE", ArgKind::kNone, 0, true, "", "v", false},
    {'Q', "BINPERSID", ArgKind::kNone, 1, true, "v", "v", false},
    {'R', "REDUCE", ArgKind::kNone, 0, true, "vv", "v", true},
    {'X', "BINUNICODE", ArgKind::kBytes4, 1, true, "", "v", false},
    {']', "EMPTY_LIST", ArgKind::kNone, 1, true, "", "v", false},
    {'a', "APPEND", ArgKind::kNone, 0, true, "vv", "v", false},
    {'b', "BUILD", ArgKind::kNone, 0, true, "vv", "v", true},
    {'c', "GLOBAL", ArgKind::kTwoLines, 0, true, "", "v", true},
    {'e', "APPENDS", ArgKind::kNone, 1, true, "vms", "v", false},
    {'h', "BINGET", ArgKind::kU8, 1, true, "", "v", false},
    {'j', "LONG_BINGET", ArgKind::kU32, 1, true, "", "v", false},
    {'}', "EMPTY_DICT", ArgKind::kNone, 1, true, "", "v", false},
    {'s', "SETITEM", ArgKind::kNone, 0, true, "vvv", "v", false},
    {'t', "TUPLE", ArgKind::kNone, 0, true, "ms", "v", false},
    {'u', "SETITEMS", ArgKind::kNone, 1, true, "vms", "v", false},
    {')', "EMPTY_TUPLE", ArgKind::kNone, 1, true, "", "v", false},
    {'G', "BINFLOAT", ArgKind::kF64BigEnd, 1, true, "", "v", false},
    {'q', "BINPUT", ArgKind::kU8, 1, true, "", "", false},
    {'r', "LONG_BINPUT", ArgKind::kU32, 1, true, "", "", false},
    {0x80, "PROTO", ArgKind::kU8, 2, true, "", "", false},
    {0x85, "TUPLE1", ArgKind::kNone, 2, true, "v", "v", false},
    {0x86, "TUPLE2", ArgKind::kNone, 2, true, "vv", "v", false},
    {0x87, "TUPLE3", ArgKind::kNone, 2, true, "vvv", "v", false},
    {0x88, "NEWTRUE", ArgKind::kNone, 2, true, "", "v", false},
    {0x89, "NEWFALSE", ArgKind::kNone, 2, true, "", "v", false},
    {0x8a, "LONG1", ArgKind::kBytes1, 2, true, "", "v", false},
    {'B', "BINBYTES", ArgKind::kBytes4, 3, true, "", "v", false},
    {'C', "SHORT_BINBYTES", ArgKind::kBytes1, 3, true, "", "v", false},
    {0x8c, "SHORT_BINUNICODE", ArgKind::kBytes1, 4, true, "", "v", false},
    {0x8d, "BINUNICODE8", ArgKind::kBytes8, 4, true, "", "v", false},
    {0x8e, "BINBYTES8", ArgKind::kBytes8, 4, true, "", "v", false},
    {0x93, "STACK_GLOBAL", ArgKind::kNone, 4, true, "vv", "v", true},
    {0x94, "MEMOIZE", ArgKind::kNone, 4, true, "v", "v", false},
    {0x95, "FRAME", ArgKind::kU64, 4, true, "", "", false},
    // Refused: object construction beyond the allowlist, protocol 0/1 text forms, and
    // everything torch.save does not write.
    {'0', "POP", ArgKind::kNone, 0, false, "v", "", false},
    {'1', "POP_MARK", ArgKind::kNone, 1, false, "ms", "", false},
    {'2', "DUP", ArgKind::kNone, 0, false, "v", "vv", false},
    {'F', "FLOAT", ArgKind::kLine, 0, false, "", "v", false},
    {'I', "INT", ArgKind::kLine, 0, false, "", "v", false},
    {'L', "LONG", ArgKind::kLine, 0, false, "", "v", false},
    {'P', "PERSID", ArgKind::kLine, 0, false, "", "v", false},
    {'S', "STRING", ArgKind::kLine, 0, false, "", "v", false},
    {'T', "BINSTRING", ArgKind::kBytes4, 1, false, "", "v", false},
    {'U', "SHORT_BINSTRING", ArgKind::kBytes1, 1, false, "", "v", false},
    {'V', "UNICODE", ArgKind::kLine, 0, false, "", "v", false},
    {'d', "DICT", ArgKind::kNone, 0, false, "ms", "v", false},
    {'g', "GET", ArgKind::kLine, 0, false, "", "v", false},
    {'i', "INST", ArgKind::kTwoLines, 0, false, "ms", "v", true},
    {'l', "LIST", ArgKind::kNone, 0, false, "ms", "v", false},
    {'o', "OBJ", ArgKind::kNone, 1, false, "mvs", "v", true},
    {'p', "PUT", ArgKind::kLine, 0, false, "", "", false},
    {0x81, "NEWOBJ", ArgKind::kNone, 2, false, "vv", "v", true},
    {0x82, "EXT1", ArgKind::kU8, 2, false, "", "v", true},
    {0x83, "EXT2", ArgKind::kU16, 2, false, "", "v", true},
    {0x84, "EXT4", ArgKind::kI32, 2, false, "", "v", true},
    {0x8b, "LONG4", ArgKind::kBytes4, 2, false, "", "v", false},
    {0x8f, "EMPTY_SET", ArgKind::kNone, 4, false, "", "v", false},
    {0x90, "ADDITEMS", ArgKind::kNone, 4, false, "vms", "v", false},
    {0x91, "FROZENSET", ArgKind::kNone, 4, false, "ms", "v", false},
    {0x92, "NEWOBJ_EX", ArgKind::kNone, 4, false, "vvv", "v", true},
    {0x96, "BYTEARRAY8", ArgKind::kBytes8, 5, false, "", "v", false},
    {0x97, "NEXT_BUFFER", ArgKind::kNone, 5, false, "", "v", false},
    {0x98, "READONLY_BUFFER", ArgKind::kNone, 5, false, "v", "v", false},
};

// kByCode maps a byte to its row (index + 1; 0 for no opcode), built once at compile time.
constexpr std::array<uint8_t, 256> BuildIndex() {
  std::array<uint8_t, 256> index{};
  for (size_t i = 0; i < std::size(kOpcodes); ++i) {
    index[kOpcodes[i].code] = static_cast<uint8_t>(i + 1);
  }
  return index;
}
constexpr std::array<uint8_t, 256> kByCode = BuildIndex();

}  // namespace

const OpcodeInfo* FindOpcode(uint8_t code) {
  const uint8_t slot = kByCode[code];
  return slot == 0 ? nullptr : &kOpcodes[slot - 1];
}

bool CallsOut(uint8_t code) {
  const OpcodeInfo* info = FindOpcode(code);
  return info != nullptr && info->calls_out;
}

ArgStatus DecodeArg(ArgKind kind, std::span<const std::byte> rest, PickleArg* arg) {
  const size_t left = rest.size();
  const std::byte* p = rest.data();
  auto fixed = [&](size_t n) {
    arg->len = n;
    return n <= left;
  };
  switch (kind) {
    case ArgKind::kNone:
      arg->len = 0;
      return ArgStatus::kOk;
    case ArgKind::kU8:
      if (!fixed(1)) break;
      arg->u = static_cast<uint8_t>(p[0]);
      return ArgStatus::kOk;
    case ArgKind::kU16:
      if (!fixed(2)) break;
      arg->u = LoadLittleEndian<uint16_t>(p);
      return ArgStatus::kOk;
    case ArgKind::kI32:
      if (!fixed(4)) break;
      arg->i = LoadLittleEndian<int32_t>(p);
      return ArgStatus::kOk;
    case ArgKind::kU32:
      if (!fixed(4)) break;
      arg->u = LoadLittleEndian<uint32_t>(p);
      return ArgStatus::kOk;
    case ArgKind::kU64:
      if (!fixed(8)) break;
      arg->u = LoadLittleEndian<uint64_t>(p);
      return ArgStatus::kOk;
    case ArgKind::kF64BigEnd: {
      if (!fixed(8)) break;
      uint64_t bits = 0;
      for (int k = 0; k < 8; ++k) bits = (bits << 8) | static_cast<uint8_t>(p[k]);
      arg->f = std::bit_cast<double>(bits);
      return ArgStatus::kOk;
    }
    case ArgKind::kBytes1:
    case ArgKind::kBytes4:
    case ArgKind::kBytes8: {
      const size_t width = kind == ArgKind::kBytes1 ? 1 : kind == ArgKind::kBytes4 ? 4 : 8;
      if (left < width) break;
      const uint64_t len = width == 1   ? static_cast<uint8_t>(p[0])
                           : width == 4 ? LoadLittleEndian<uint32_t>(p)
                                        : LoadLittleEndian<uint64_t>(p);
      if (left - width < len) return ArgStatus::kLengthPastEnd;
      arg->bytes = {reinterpret_cast<const char*>(p + width), static_cast<size_t>(len)};
      arg->len = width + len;
      return ArgStatus::kOk;
    }
    case ArgKind::kLine:
    case ArgKind::kTwoLines: {
      const std::string_view text(reinterpret_cast<const char*>(p), left);
      const size_t first = text.find('\n');
      if (first == std::string_view::npos) break;
      arg->bytes = text.substr(0, first);
      arg->len = first + 1;
      if (kind == ArgKind::kLine) return ArgStatus::kOk;
      const size_t second = text.find('\n', first + 1);
      if (second == std::string_view::npos) break;
      arg->line2 = text.substr(first + 1, second - first - 1);
      arg->len = second + 1;
      return ArgStatus::kOk;
    }
  }
  return ArgStatus::kPastEnd;
}

}  // namespace stguard
