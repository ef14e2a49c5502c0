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

// WalkArg decodes the argument at `at` (opcodes.h's one decoder), then checks what
// CPython checks beyond its encoding: a protocol-0 line's syntax, BINSTRING's signed length.
// For GLOBAL and INST it says whether the names are importable (`*importable`).
ArgStatus WalkArg(std::span<const std::byte> bytes, size_t at, const OpcodeInfo& info,
                  PickleArg* arg, bool* importable, bool* malformed) {
  // BINSTRING's length is signed in CPython: one past 2^31 fails at once, whatever follows.
  *malformed = info.code == 'T' && bytes.size() - at >= 4 &&
               LoadLittleEndian<uint32_t>(bytes.data() + at) > 0x7FFFFFFF;
  if (*malformed) return ArgStatus::kOk;
  const ArgStatus status = DecodeArg(info.arg, bytes.subspan(at), arg);
  if (status != ArgStatus::kOk) return status;
  if (info.arg == ArgKind::kLine) *malformed = !LineValid(info.code, arg->bytes);
  if (info.arg == ArgKind::kTwoLines) {
    *importable = IsDottedName(arg->bytes) && IsDottedName(arg->line2);
  }
  return status;
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
  // MarkHolds says whether there is a mark with at least `below` values under it.
  bool MarkHolds(uint64_t below) const { return !marks_.empty() && marks_.back() >= below; }
  bool DeepMarks() const { return marks_.size() >= kMaxSniffMarks; }
  uint64_t top() const { return top_; }

 private:
  uint64_t top_ = 0;
  std::vector<uint64_t> marks_;
};

// StackNeeds is an opcode's stack_before (opcodes.h) as counts: the values it takes from
// the top, or, when it takes a mark, the values under that mark and those above it it
// needs (OBJ's class).
struct StackNeeds {
  bool mark = false;
  uint64_t below = 0;
  uint64_t above = 0;
};

StackNeeds NeedsOf(const OpcodeInfo& info) {
  StackNeeds needs;
  for (char c : info.before) {
    if (c == 'm') needs.mark = true;
    if (c == 'v') ++(needs.mark ? needs.above : needs.below);
  }
  return needs;
}

// HasOperands says whether the stack holds what the opcode takes (CPython checks that
// before it acts, and raises otherwise).
bool HasOperands(const PickleStack& stack, const StackNeeds& needs) {
  if (!needs.mark) return stack.top() >= needs.below;
  return stack.MarkHolds(needs.below) && stack.top() >= needs.above;
}

// StackEffect applies a non-calling opcode's stack_before and stack_after; false when
// CPython would raise. Two facts pickletools does not list: POP with nothing above the
// mark pops the mark (CPython's load_pop), and the PUT opcodes read the top value.
bool StackEffect(const OpcodeInfo& info, PickleStack* stack) {
  if (info.code == '0' && stack->top() == 0) return stack->PopMark();
  if (info.code == 'p' || info.code == op::kBinPut || info.code == op::kLongBinPut) {
    return stack->top() > 0;
  }
  const StackNeeds needs = NeedsOf(info);
  if (!HasOperands(*stack, needs)) return false;
  if (needs.mark) {
    stack->PopMark();
    stack->Pop(needs.below);
  } else {
    stack->Pop(needs.below);
  }
  for (char c : info.after) {
    if (c == 'm' && !stack->Mark()) return false;
    if (c == 'v') stack->Push();
  }
  return true;
}

// Calls says whether an opcode hands control to code outside the machine (opcodes.h's
// calls_out), as CPython would reach the call: an import (GLOBAL, INST) as soon as its
// names are read, when they are importable; any other call once its operands are on the
// stack. *reached is false when CPython raises first (the walk rejects).
bool Calls(const OpcodeInfo& info, const PickleStack& stack, bool importable, bool* reached) {
  *reached = true;
  if (!info.calls_out) return false;
  *reached = info.arg == ArgKind::kTwoLines ? importable : HasOperands(stack, NeedsOf(info));
  return *reached;
}

}  // namespace

PickleWalkResult WalkPickle(std::span<const std::byte> bytes) {
  PickleStack stack;
  size_t at = 0;
  while (at < bytes.size()) {
    const uint8_t code = ByteAt(bytes, at);
    const OpcodeInfo* info = FindOpcode(code);
    if (info == nullptr) return {};
    PickleArg arg;
    bool importable = false;
    bool malformed = false;
    const ArgStatus status = WalkArg(bytes, at + 1, *info, &arg, &importable, &malformed);
    if (status != ArgStatus::kOk) return {PickleWalk::kRejected, at, code, {}, {}, true};
    if (malformed) return {};
    if (code == op::kProto && arg.u > 5) return {};
    if (code == op::kStop) {
      if (stack.top() == 0) return {};
      return {PickleWalk::kStops, at, code};
    }
    bool reached = false;
    if (Calls(*info, stack, importable, &reached)) {
      return {PickleWalk::kCalls, at, code, std::string(arg.bytes), std::string(arg.line2)};
    }
    if (!reached) return {};
    if (!StackEffect(*info, &stack)) {
      if (stack.DeepMarks()) return {PickleWalk::kStops, at, code};
      return {};
    }
    at += 1 + static_cast<size_t>(arg.len);
  }
  // No STOP: pickle.load fails at the end, having run nothing (if this is the end).
  return {PickleWalk::kRejected, at, 0, {}, {}, true};
}

}  // namespace stguard
