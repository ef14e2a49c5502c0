// SPDX-License-Identifier: Apache-2.0
// pickle/opcodes.h: the pickle opcodes as data, in the manner of CPython's pickletools.
//
// Every opcode of protocols 0-5 has a row: its byte, name, how its argument is encoded,
// the protocol that introduced it, whether stguard's reader accepts it, its stack effect
// (pickletools' stack_before and stack_after) and whether it calls out of the machine.
// Every reader of pickle bytes takes opcodes, argument lengths, stack effects and "calls
// out" from this one table: the pickle machine (pickle_reader.cc), the sniffer's walk over
// a file's first opcodes (sniff/pickle_walk.cc) and the verdict on a refused opcode
// (torch/file_verdict.cc). tests/pickle/pickletools_opcodes.txt is pickletools' own table
// in the same terms (tests/pickle/check_opcodes.py regenerates it with CPython and compares),
// and pickle_opcodes_test compares every row with it, so the table cannot drift from CPython. Accepted opcodes are exactly
// those torch.save (pickle protocol 2 by default, DEFAULT_PROTOCOL in
// torch/serialization.py) and Python's pickler at protocols 2-5 emit for state dicts and
// plain containers; everything else (INST, OBJ, NEWOBJ, EXT*, text-mode opcodes, sets,
// out-of-band buffers, POP/DUP...) is refused with kPickleOpcodeRefused.
#ifndef STGUARD_SRC_PICKLE_OPCODES_H_
#define STGUARD_SRC_PICKLE_OPCODES_H_

#include <cstddef>
#include <cstdint>
#include <span>
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
  // before and after are pickletools' stack_before and stack_after, one letter per stack
  // object: 'm' markobject, 's' stackslice (everything above that mark), 'v' any value.
  std::string_view before;
  std::string_view after;
  // calls_out: the opcode hands control to code outside the machine (an import, a call, an
  // object's __setstate__, the extension registry): GLOBAL, INST, STACK_GLOBAL, REDUCE,
  // BUILD, OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4. PERSID and BINPERSID call the loader's own
  // persistent_load (torch's, which the reader models), not code the file names.
  bool calls_out;
};

// FindOpcode returns the row for `code`, or nullptr for a byte that is no opcode.
const OpcodeInfo* FindOpcode(uint8_t code);

// CallsOut says whether `code` is an opcode that calls out of the machine (calls_out).
bool CallsOut(uint8_t code);

// PickleArg is an opcode's decoded argument.
struct PickleArg {
  uint64_t u = 0;          // kU8, kU16, kU32, kU64
  int64_t i = 0;           // kI32
  double f = 0;            // kF64BigEnd
  std::string_view bytes;  // kBytes*, the line of kLine, the first line of kTwoLines
  std::string_view line2;  // the second line of kTwoLines
  uint64_t len = 0;        // the bytes the argument takes in the stream, lengths included
};

// ArgStatus is DecodeArg's outcome: kLengthPastEnd is a counted argument (kBytes*) whose
// length runs past the input, kPastEnd any other argument cut by the end (a fixed width, a
// length field, a line without its '\n').
enum class ArgStatus : uint8_t { kOk, kPastEnd, kLengthPastEnd };

// DecodeArg decodes the argument of kind `kind` that starts `rest` (the bytes after its
// opcode): the one decoder of the pickle machine and the sniffer's walk. The views in *arg
// point into `rest`. Only the encoding is checked; what a value may be is the caller's.
ArgStatus DecodeArg(ArgKind kind, std::span<const std::byte> rest, PickleArg* arg);

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
