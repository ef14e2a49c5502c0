// SPDX-License-Identifier: Apache-2.0
// The pickle machine's walk over a file's first opcodes: does it read as a pickle, and
// what is the first opcode that calls out of the machine (see stguard/sniff.h, WHAT
// COUNTS AS A PICKLE). Opcodes and their arguments come from pickle/opcodes.h's table;
// the stack is reduced to counts, so memory is constant (marks capped) and time linear
// in the bytes walked.
#include "sniff/pickle_walk.h"

#include <algorithm>
#include <vector>

#include "base/little_endian.h"
#include "pickle/opcodes.h"

namespace stguard {
namespace {

uint8_t ByteAt(std::span<const std::byte> bytes, size_t at) {
  return static_cast<uint8_t>(bytes[at]);
}

bool IsIdentifierByte(uint8_t c, bool first) {
  if (c >= 0x80 || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return !first && c >= '0' && c <= '9';
}

// IsDottedName says whether `text` is a Python dotted name ("os.path", "torch._utils");
// bytes >= 0x80 count as identifier characters (Python allows Unicode identifiers).
bool IsDottedName(std::string_view text) {
  bool at_start = true;
  for (char ch : text) {
    const auto c = static_cast<uint8_t>(ch);
    if (c == '.' && !at_start) {
      at_start = true;
      continue;
    }
    if (!IsIdentifierByte(c, at_start)) return false;
    at_start = false;
  }
  return !text.empty() && !at_start;
}

bool IsDecimal(std::string_view text, bool allow_long_suffix) {
  if (allow_long_suffix && !text.empty() && text.back() == 'L') text.remove_suffix(1);
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsFloatText(std::string_view text) {
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' ||
           c == '-' || c == '_' || c == 'i' || c == 'n' || c == 'f' || c == 'a' ||
           c == 't' || c == 'y' || c == 'I' || c == 'N' || c == 'F' || c == 'A';
  });
}

// LineValid checks a protocol-0 opcode's text argument as CPython parses it.
bool LineValid(uint8_t code, std::string_view line) {
  switch (code) {
    case 'I': return IsDecimal(line, false);
    case 'L': return IsDecimal(line, true);
    case 'g': case 'p': return IsDecimal(line, false);
    case 'F': return IsFloatText(line);
    case 'S':
      return line.size() >= 2 && (line.front() == '\'' || line.front() == '"') &&
             line.back() == line.front();
    default: return true;  // UNICODE, PERSID: any line
  }
}

// ArgStatus says whether an opcode's argument is whole and well-formed.
enum class ArgStatus : uint8_t { kOk, kMalformed, kPastEnd };

// ArgumentLen finds how many bytes the argument at `at` takes. For GLOBAL and INST it also says whether the names are
// importable (`*importable`).
ArgStatus ArgumentLen(std::span<const std::byte> bytes, size_t at, const OpcodeInfo& info,
                      uint64_t* out_len, bool* importable, std::string_view* out_module,
                      std::string_view* out_name) {
  const size_t left = bytes.size() - at;
  auto fixed = [&](uint64_t n) {
    *out_len = n;
    return n <= left ? ArgStatus::kOk : ArgStatus::kPastEnd;
  };
  auto counted = [&](uint64_t prefix) {
    if (left < prefix) return ArgStatus::kPastEnd;
    uint64_t n = 0;
    if (prefix == 1) n = ByteAt(bytes, at);
    if (prefix == 4) n = LoadLittleEndian<uint32_t>(bytes.data() + at);
    if (prefix == 8) n = LoadLittleEndian<uint64_t>(bytes.data() + at);
    if (prefix == 4 && info.code == 'T' && n > 0x7FFFFFFF) return ArgStatus::kMalformed;
    if (n > left - prefix) return ArgStatus::kPastEnd;
    *out_len = prefix + n;
    return ArgStatus::kOk;
  };
  const std::string_view rest(reinterpret_cast<const char*>(bytes.data() + at), left);
  switch (info.arg) {
    case ArgKind::kNone: return fixed(0);
    case ArgKind::kU8: return fixed(1);
    case ArgKind::kU16: return fixed(2);
    case ArgKind::kI32: case ArgKind::kU32: return fixed(4);
    case ArgKind::kU64: case ArgKind::kF64BigEnd: return fixed(8);
    case ArgKind::kBytes1: return counted(1);
    case ArgKind::kBytes4: return counted(4);
    case ArgKind::kBytes8: return counted(8);
    case ArgKind::kLine: {
      const size_t end = rest.find('\n');
      if (end == std::string_view::npos) return ArgStatus::kPastEnd;
      if (!LineValid(info.code, rest.substr(0, end))) return ArgStatus::kMalformed;
      *out_len = end + 1;
      return ArgStatus::kOk;
    }
    case ArgKind::kTwoLines: {
      const size_t first = rest.find('\n');
      if (first == std::string_view::npos) return ArgStatus::kPastEnd;
      const size_t second = rest.find('\n', first + 1);
      if (second == std::string_view::npos) return ArgStatus::kPastEnd;
      *out_module = rest.substr(0, first);
      *out_name = rest.substr(first + 1, second - first - 1);
      *importable = IsDottedName(*out_module) && IsDottedName(*out_name);
      *out_len = second + 1;
      return ArgStatus::kOk;
    }
  }
  return ArgStatus::kMalformed;
}

// PickleStack is the machine's stack reduced to counts: values above the last mark, and
// the counts saved under each mark.
class PickleStack {
 public:
  bool Push(uint64_t n = 1) { top_ += n; return true; }
  bool Pop(uint64_t n) {
    if (top_ < n) return false;
    top_ -= n;
    return true;
  }
  // Replace pops `pops` values and pushes one.
  bool Replace(uint64_t pops) { return Pop(pops) && Push(); }
  bool Mark() {
    if (marks_.size() >= kMaxSniffMarks) return false;
    marks_.push_back(top_);
    top_ = 0;
    return true;
  }
  // PopMark drops the values above the last mark and the mark; `below` values must
  // remain under it (APPENDS needs its list).
  bool PopMark(uint64_t below = 0) {
    if (marks_.empty() || marks_.back() < below) return false;
    top_ = marks_.back();
    marks_.pop_back();
    return true;
  }
  bool DeepMarks() const { return marks_.size() >= kMaxSniffMarks; }
  uint64_t top() const { return top_; }

 private:
  uint64_t top_ = 0;
  std::vector<uint64_t> marks_;
};

// StackEffect applies a non-calling opcode to the stack; false when CPython would raise.
bool StackEffect(uint8_t code, PickleStack* stack) {
  switch (code) {
    case '(': return stack->Mark();
    case '0': return stack->top() > 0 ? stack->Pop(1) : stack->PopMark();
    case '1': return stack->PopMark();
    case '2': return stack->top() > 0 && stack->Push();
    case 't': case 'l': case 'd': case 0x91:  // TUPLE, LIST, DICT, FROZENSET
      return stack->PopMark() && stack->Push();
    case 'e': case 'u': case 0x90:  // APPENDS, SETITEMS, ADDITEMS
      return stack->PopMark(1);
    case 'a': case 0x86: return stack->Replace(2);  // APPEND, TUPLE2
    case 's': case 0x87: return stack->Replace(3);  // SETITEM, TUPLE3
    case 0x85: case 'Q': return stack->Replace(1);  // TUPLE1, BINPERSID
    case 'p': case 'q': case 'r': case 0x94: case 0x98:  // PUT..., MEMOIZE, READONLY_BUFFER
      return stack->top() > 0;
    case 0x80: case 0x95: return true;  // PROTO, FRAME
    default: return stack->Push();  // every other opcode pushes one value
  }
}

// CallsOut says whether an opcode hands control to code outside the machine, and whether
// its stack holds what the call needs (CPython checks that before calling).
bool CallsOut(uint8_t code, const PickleStack& stack, bool importable, bool* out_calls) {
  switch (code) {
    case 'c': case 'i':  // GLOBAL, INST: import at once
      *out_calls = importable;
      return importable;  // an unimportable name: the load fails there
    case 0x93: case 'R': case 'b': case 0x81:  // STACK_GLOBAL, REDUCE, BUILD, NEWOBJ
      *out_calls = true;
      return stack.top() >= 2;
    case 0x92: *out_calls = true; return stack.top() >= 3;  // NEWOBJ_EX
    case 'o': *out_calls = true; return true;               // OBJ: needs a mark
    case 0x82: case 0x83: case 0x84: *out_calls = true; return true;  // EXT1/2/4
    default: *out_calls = false; return true;
  }
}

}  // namespace

PickleWalkResult WalkPickle(std::span<const std::byte> bytes) {
  PickleStack stack;
  size_t at = 0;
  while (at < bytes.size()) {
    const uint8_t code = ByteAt(bytes, at);
    const OpcodeInfo* info = FindOpcode(code);
    if (info == nullptr) return {};
    uint64_t arg_len = 0;
    bool importable = false;
    std::string_view module;
    std::string_view name;
    const ArgStatus arg = ArgumentLen(bytes, at + 1, *info, &arg_len, &importable, &module, &name);
    if (arg == ArgStatus::kPastEnd) return {PickleWalk::kRejected, at, code, {}, {}, true};
    if (arg != ArgStatus::kOk) return {};
    if (code == 0x80 && ByteAt(bytes, at + 1) > 5) return {};
    if (code == '.') {
      if (stack.top() == 0) return {};
      return {PickleWalk::kStops, at, code};
    }
    bool calls = false;
    if (!CallsOut(code, stack, importable, &calls)) return {};
    if (calls) return {PickleWalk::kCalls, at, code, std::string(module), std::string(name)};
    if (!StackEffect(code, &stack)) {
      if (stack.DeepMarks()) return {PickleWalk::kStops, at, code};
      return {};
    }
    at += 1 + arg_len;
  }
  // No STOP: pickle.load fails at the end, having run nothing (if this is the end).
  return {PickleWalk::kRejected, at, 0, {}, {}, true};
}

}  // namespace stguard
