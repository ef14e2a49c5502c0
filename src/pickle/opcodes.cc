// SPDX-License-Identifier: Apache-2.0
// The opcode table (names and encodings as in CPython's Lib/pickletools.py).
#include "pickle/opcodes.h"

#include <array>

namespace stguard {
namespace {

constexpr OpcodeInfo kOpcodes[] = {
    // Accepted: what torch.save and protocols 2-5 write for tensors and plain containers.
    {'(', "MARK", ArgKind::kNone, 1, true},
    {'.', "STOP", ArgKind::kNone, 0, true},
    {'J', "BININT", ArgKind::kI32, 1, true},
    {'K', "BININT1", ArgKind::kU8, 1, true},
    {'M', "BININT2", ArgKind::kU16, 1, true},
    {'N', "NONE", ArgKind::kNone, 0, true},
    {'Q', "BINPERSID", ArgKind::kNone, 1, true},
    {'R', "REDUCE", ArgKind::kNone, 0, true},
    {'X', "BINUNICODE", ArgKind::kBytes4, 1, true},
    {']', "EMPTY_LIST", ArgKind::kNone, 1, true},
    {'a', "APPEND", ArgKind::kNone, 0, true},
    {'b', "BUILD", ArgKind::kNone, 0, true},
    {'c', "GLOBAL", ArgKind::kTwoLines, 0, true},
    {'e', "APPENDS", ArgKind::kNone, 1, true},
    {'h', "BINGET", ArgKind::kU8, 1, true},
    {'j', "LONG_BINGET", ArgKind::kU32, 1, true},
    {'}', "EMPTY_DICT", ArgKind::kNone, 1, true},
    {'s', "SETITEM", ArgKind::kNone, 0, true},
    {'t', "TUPLE", ArgKind::kNone, 0, true},
    {'u', "SETITEMS", ArgKind::kNone, 1, true},
    {')', "EMPTY_TUPLE", ArgKind::kNone, 1, true},
    {'G', "BINFLOAT", ArgKind::kF64BigEnd, 1, true},
    {'q', "BINPUT", ArgKind::kU8, 1, true},
    {'r', "LONG_BINPUT", ArgKind::kU32, 1, true},
    {0x80, "PROTO", ArgKind::kU8, 2, true},
    {0x85, "TUPLE1", ArgKind::kNone, 2, true},
    {0x86, "TUPLE2", ArgKind::kNone, 2, true},
    {0x87, "TUPLE3", ArgKind::kNone, 2, true},
    {0x88, "NEWTRUE", ArgKind::kNone, 2, true},
    {0x89, "NEWFALSE", ArgKind::kNone, 2, true},
    {0x8a, "LONG1", ArgKind::kBytes1, 2, true},
    {'B', "BINBYTES", ArgKind::kBytes4, 3, true},
    {'C', "SHORT_BINBYTES", ArgKind::kBytes1, 3, true},
    {0x8c, "SHORT_BINUNICODE", ArgKind::kBytes1, 4, true},
    {0x8d, "BINUNICODE8", ArgKind::kBytes8, 4, true},
    {0x8e, "BINBYTES8", ArgKind::kBytes8, 4, true},
    {0x93, "STACK_GLOBAL", ArgKind::kNone, 4, true},
    {0x94, "MEMOIZE", ArgKind::kNone, 4, true},
    {0x95, "FRAME", ArgKind::kU64, 4, true},
    // Refused: object construction beyond the allowlist, protocol 0/1 text forms, and
    // everything torch.save does not write.
    {'0', "POP", ArgKind::kNone, 0, false},
    {'1', "POP_MARK", ArgKind::kNone, 1, false},
    {'2', "DUP", ArgKind::kNone, 0, false},
    {'F', "FLOAT", ArgKind::kLine, 0, false},
    {'I', "INT", ArgKind::kLine, 0, false},
    {'L', "LONG", ArgKind::kLine, 0, false},
    {'P', "PERSID", ArgKind::kLine, 0, false},
    {'S', "STRING", ArgKind::kLine, 0, false},
    {'T', "BINSTRING", ArgKind::kBytes4, 1, false},
    {'U', "SHORT_BINSTRING", ArgKind::kBytes1, 1, false},
    {'V', "UNICODE", ArgKind::kLine, 0, false},
    {'d', "DICT", ArgKind::kNone, 0, false},
    {'g', "GET", ArgKind::kLine, 0, false},
    {'i', "INST", ArgKind::kTwoLines, 0, false},
    {'l', "LIST", ArgKind::kNone, 0, false},
    {'o', "OBJ", ArgKind::kNone, 1, false},
    {'p', "PUT", ArgKind::kLine, 0, false},
    {0x81, "NEWOBJ", ArgKind::kNone, 2, false},
    {0x82, "EXT1", ArgKind::kU8, 2, false},
    {0x83, "EXT2", ArgKind::kU16, 2, false},
    {0x84, "EXT4", ArgKind::kI32, 2, false},
    {0x8b, "LONG4", ArgKind::kBytes4, 2, false},
    {0x8f, "EMPTY_SET", ArgKind::kNone, 4, false},
    {0x90, "ADDITEMS", ArgKind::kNone, 4, false},
    {0x91, "FROZENSET", ArgKind::kNone, 4, false},
    {0x92, "NEWOBJ_EX", ArgKind::kNone, 4, false},
    {0x96, "BYTEARRAY8", ArgKind::kBytes8, 5, false},
    {0x97, "NEXT_BUFFER", ArgKind::kNone, 5, false},
    {0x98, "READONLY_BUFFER", ArgKind::kNone, 5, false},
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

}  // namespace stguard
