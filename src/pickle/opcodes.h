// SPDX-License-Identifier: Apache-2.0
// pickle/opcodes.h: the pickle opcodes as data, in the manner of CPython's pickletools.
//
// Every opcode of protocols 0-5 has a row: its byte, name, how its argument is encoded,
// the protocol that introduced it, and whether stguard's reader accepts it. Every reader of
// pickle bytes takes opcodes and argument lengths from this one table: the pickle machine
// (pickle_reader.cc), the sniffer's walk over a file's first opcodes (sniff/pickle_walk.cc),
// the container check that tells a raw pickle from other bytes (torch/containers.cc) and
// the verdict's name for a refused opcode (torch/file_verdict.cc). So what is recognised
// as a pickle and what the machine runs cannot drift apart. Accepted opcodes are exactly
// those torch.save (pickle protocol 2 by default, DEFAULT_PROTOCOL in
// torch/serialization.py) and Python's pickler at protocols 2-5 emit for state dicts and
// plain containers; everything else (INST, OBJ, NEWOBJ, EXT*, text-mode opcodes, sets,
// out-of-band buffers, POP/DUP...) is refused with kPickleOpcodeRefused.
#ifndef STGUARD_SRC_PICKLE_OPCODES_H_
#define STGUARD_SRC_PICKLE_OPCODES_H_

#include <cstdint>
#include <string_view>

namespace stguard {

// ArgKind says how an opcode's argument follows it in the stream.
enum class ArgKind : uint8_t {
  kNone,        // no argument
  kU8,          // 1 byte
  kU16,         // 2 bytes little-endian
  kI32,         // 4 bytes little-endian, signed
  kU32,         // 4 bytes little-endian, unsigned
  kU64,         // 8 bytes little-endian
  kF64BigEnd,   // 8 bytes IEEE 754, big-endian (BINFLOAT)
  kBytes1,      // 1-byte length, then that many bytes
  kBytes4,      // 4-byte length, then that many bytes
  kBytes8,      // 8-byte length, then that many bytes
  kLine,        // text up to '\n' (protocol 0 opcodes)
  kTwoLines,    // two '\n'-terminated lines (GLOBAL, INST)
};

// OpcodeInfo is one row of the table.
struct OpcodeInfo {
  uint8_t code;
  std::string_view name;  // pickletools' name
  ArgKind arg;
  uint8_t protocol;       // the protocol that introduced it
  bool accepted;          // whether stguard's reader runs it
};

// FindOpcode returns the row for `code`, or nullptr for a byte that is no opcode.
const OpcodeInfo* FindOpcode(uint8_t code);

namespace op {
inline constexpr uint8_t kMark = '(', kStop = '.', kBinInt = 'J', kBinInt1 = 'K',
                         kBinInt2 = 'M', kNone = 'N', kBinPersId = 'Q', kReduce = 'R',
                         kBinUnicode = 'X', kEmptyList = ']', kAppend = 'a', kBuild = 'b',
                         kGlobal = 'c', kAppends = 'e', kBinGet = 'h', kLongBinGet = 'j',
                         kEmptyDict = '}', kSetItem = 's', kTuple = 't', kSetItems = 'u',
                         kEmptyTuple = ')', kBinFloat = 'G', kBinPut = 'q',
                         kLongBinPut = 'r', kProto = 0x80, kTuple1 = 0x85, kTuple2 = 0x86,
                         kTuple3 = 0x87, kNewTrue = 0x88, kNewFalse = 0x89, kLong1 = 0x8a,
                         kBinBytes = 'B', kShortBinBytes = 'C', kShortBinUnicode = 0x8c,
                         kBinUnicode8 = 0x8d, kBinBytes8 = 0x8e, kStackGlobal = 0x93,
                         kMemoize = 0x94, kFrame = 0x95;
}  // namespace op

}  // namespace stguard

#endif  // STGUARD_SRC_PICKLE_OPCODES_H_
