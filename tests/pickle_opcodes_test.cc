// SPDX-License-Identifier: Apache-2.0
// The opcode table (src/pickle/opcodes.h) against CPython's pickletools, row by row: the
// checked-in tests/pickle/pickletools_opcodes.txt is pickletools' table (ctest's
// pickletools_opcodes regenerates it with CPython and compares), so the byte, name,
// argument encoding, protocol and stack effect of every opcode cannot drift.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "pickle/opcodes.h"

namespace stguard {
namespace {

// ArgClass names an ArgKind as check_opcodes.py names pickletools' argument descriptors.
std::string_view ArgClass(ArgKind kind) {
  switch (kind) {
    case ArgKind::kNone: return "none";
    case ArgKind::kU8: return "uint1";
    case ArgKind::kU16: return "uint2";
    case ArgKind::kI32: return "int4";
    case ArgKind::kU32: return "uint4";
    case ArgKind::kU64: return "uint8";
    case ArgKind::kF64BigEnd: return "float8";
    case ArgKind::kBytes1: return "len1";
    case ArgKind::kBytes4: return "len4";
    case ArgKind::kBytes8: return "len8";
    case ArgKind::kLine: return "line";
    case ArgKind::kTwoLines: return "twolines";
  }
  return "?";
}

std::string Stack(std::string_view letters) {
  return letters.empty() ? "-" : std::string(letters);
}

TEST(PickleOpcodesTest, EveryRowIsPickletools) {
  std::ifstream in(std::string(STGUARD_SOURCE_DIR) + "/tests/pickle/pickletools_opcodes.txt");
  ASSERT_TRUE(in.good());
  std::string line;
  std::set<int> listed;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string code, name, arg, before, after;
    int protocol = -1;
    ASSERT_TRUE(fields >> code >> name >> arg >> protocol >> before >> after) << line;
    const int byte = std::stoi(code, nullptr, 16);
    listed.insert(byte);
    const OpcodeInfo* info = FindOpcode(static_cast<uint8_t>(byte));
    ASSERT_NE(info, nullptr) << line;
    EXPECT_EQ(info->name, name) << line;
    EXPECT_EQ(ArgClass(info->arg), arg) << line;
    EXPECT_EQ(info->protocol, protocol) << line;
    EXPECT_EQ(Stack(info->before), before) << line;
    EXPECT_EQ(Stack(info->after), after) << line;
  }
  EXPECT_EQ(listed.size(), 68u);  // protocols 0-5
  for (int byte = 0; byte < 256; ++byte) {
    EXPECT_EQ(FindOpcode(static_cast<uint8_t>(byte)) != nullptr, listed.count(byte) == 1)
        << byte;
  }
}

// Which opcodes call out is stguard's reading of pickletools' descriptions (it has no
// column for it): imports, calls, __setstate__ and the extension registry.
TEST(PickleOpcodesTest, CallsOutOfTheMachine) {
  const std::set<std::string_view> calls = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD",
                                            "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX",
                                            "EXT1", "EXT2", "EXT4"};
  for (int byte = 0; byte < 256; ++byte) {
    const OpcodeInfo* info = FindOpcode(static_cast<uint8_t>(byte));
    if (info == nullptr) {
      EXPECT_FALSE(CallsOut(static_cast<uint8_t>(byte)));
      continue;
    }
    EXPECT_EQ(info->calls_out, calls.count(info->name) == 1) << info->name;
    EXPECT_EQ(CallsOut(info->code), info->calls_out) << info->name;
  }
  // Persistent ids call the loader's persistent_load, not code the file names.
  EXPECT_FALSE(CallsOut('Q'));
  EXPECT_FALSE(CallsOut('P'));
}

std::span<const std::byte> Bytes(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

// DecodeArg, the one argument decoder of the machine and the walk: each kind, whole and cut.
TEST(PickleOpcodesTest, DecodeArgDecodesEachKindAndReportsACut) {
  // String-view literals have static storage, so the decoded views stay valid.
  using namespace std::string_view_literals;
  PickleArg arg;
  ASSERT_EQ(DecodeArg(ArgKind::kI32, Bytes("\xfe\xff\xff\xff"sv), &arg), ArgStatus::kOk);
  EXPECT_EQ(arg.i, -2);
  EXPECT_EQ(arg.len, 4u);
  EXPECT_EQ(DecodeArg(ArgKind::kI32, Bytes("\xfe\xff\xff"sv), &arg), ArgStatus::kPastEnd);
  ASSERT_EQ(DecodeArg(ArgKind::kU16, Bytes("\x01\x02"sv), &arg), ArgStatus::kOk);
  EXPECT_EQ(arg.u, 0x0201u);
  ASSERT_EQ(DecodeArg(ArgKind::kF64BigEnd, Bytes("\x3f\xf0\0\0\0\0\0\0"sv), &arg),
            ArgStatus::kOk);
  EXPECT_EQ(arg.f, 1.0);
  constexpr std::string_view counted = "\x02" "abc"sv;
  ASSERT_EQ(DecodeArg(ArgKind::kBytes1, Bytes(counted), &arg), ArgStatus::kOk);
  EXPECT_EQ(arg.bytes, "ab");
  EXPECT_EQ(arg.len, 3u);
  EXPECT_EQ(DecodeArg(ArgKind::kBytes4, Bytes("\x05\0\0\0" "abc"sv), &arg),
            ArgStatus::kLengthPastEnd);
  EXPECT_EQ(DecodeArg(ArgKind::kBytes8, Bytes("\x01\0\0"sv), &arg), ArgStatus::kPastEnd);
  constexpr std::string_view two_lines = "os\nsystem\nrest";
  ASSERT_EQ(DecodeArg(ArgKind::kTwoLines, Bytes(two_lines), &arg), ArgStatus::kOk);
  EXPECT_EQ(arg.bytes, "os");
  EXPECT_EQ(arg.line2, "system");
  EXPECT_EQ(arg.len, 10u);
  EXPECT_EQ(DecodeArg(ArgKind::kTwoLines, Bytes("os\nsystem"sv), &arg), ArgStatus::kPastEnd);
  ASSERT_EQ(DecodeArg(ArgKind::kLine, Bytes("12\n."sv), &arg), ArgStatus::kOk);
  EXPECT_EQ(arg.bytes, "12");
  EXPECT_EQ(DecodeArg(ArgKind::kLine, Bytes("12"sv), &arg), ArgStatus::kPastEnd);
}

}  // namespace
}  // namespace stguard
