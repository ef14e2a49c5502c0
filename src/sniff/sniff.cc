// SPDX-License-Identifier: Apache-2.0
// SniffFormat: a file's format from its bytes (see stguard/sniff.h for the rules).
#include "stguard/sniff.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "base/little_endian.h"
#include "pickle/opcodes.h"

namespace stguard {
namespace {

bool StartsWith(std::span<const std::byte> bytes, std::string_view prefix) {
  return bytes.size() >= prefix.size() &&
         std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

uint8_t ByteAt(std::span<const std::byte> bytes, size_t at) {
  return static_cast<uint8_t>(bytes[at]);
}

// ---- ZIP ------------------------------------------------------------------------------

// kMaxEocdSearch is how far from the end the end-of-central-directory record can be: its
// 22 bytes plus a comment of at most 65,535.
constexpr size_t kEocdLen = 22;
constexpr size_t kMaxEocdSearch = kEocdLen + 0xFFFF;

// ZipCentralDirectory finds where the central directory starts and how many entries it
// claims, through the ZIP64 records when the classic fields are saturated. Returns false
// when the archive's end cannot be read.
bool ZipCentralDirectory(std::span<const std::byte> bytes, uint64_t* out_offset,
                         uint64_t* out_count) {
  if (bytes.size() < kEocdLen) return false;
  const size_t lowest = bytes.size() > kMaxEocdSearch ? bytes.size() - kMaxEocdSearch : 0;
  for (size_t at = bytes.size() - kEocdLen + 1; at-- > lowest;) {
    if (!StartsWith(bytes.subspan(at), "PK\x05\x06")) continue;
    const std::byte* eocd = bytes.data() + at;
    *out_count = LoadLittleEndian<uint16_t>(eocd + 10);
    *out_offset = LoadLittleEndian<uint32_t>(eocd + 16);
    if (*out_count != 0xFFFF && *out_offset != 0xFFFFFFFF) return true;
    // ZIP64: a 20-byte locator just before, pointing at the 56-byte ZIP64 record.
    if (at < 20 || !StartsWith(bytes.subspan(at - 20), "PK\x06\x07")) return false;
    const uint64_t record = LoadLittleEndian<uint64_t>(eocd - 20 + 8);
    if (record > bytes.size() || bytes.size() - record < 56 ||
        !StartsWith(bytes.subspan(record), "PK\x06\x06")) {
      return false;
    }
    *out_count = LoadLittleEndian<uint64_t>(bytes.data() + record + 32);
    *out_offset = LoadLittleEndian<uint64_t>(bytes.data() + record + 48);
    return true;
  }
  return false;
}

// ZipMayHoldPickle says whether the archive's central directory names a ".pkl" record.
// It reads leniently (no check beyond bounds), as a loader might, and says yes when it
// cannot read the directory at all: a loader more forgiving than this walk could.
bool ZipMayHoldPickle(std::span<const std::byte> bytes) {
  uint64_t at = 0;
  uint64_t count = 0;
  if (!ZipCentralDirectory(bytes, &at, &count)) return true;
  constexpr size_t kEntryLen = 46;
  for (uint64_t k = 0; k < count; ++k) {
    if (at > bytes.size() || bytes.size() - at < kEntryLen ||
        !StartsWith(bytes.subspan(at), "PK\x01\x02")) {
      return true;
    }
    const std::byte* entry = bytes.data() + at;
    const uint64_t name_len = LoadLittleEndian<uint16_t>(entry + 28);
    const uint64_t rest = name_len + LoadLittleEndian<uint16_t>(entry + 30) +
                          LoadLittleEndian<uint16_t>(entry + 32);
    if (bytes.size() - at - kEntryLen < rest) return true;
    const std::string_view name(reinterpret_cast<const char*>(entry + kEntryLen), name_len);
    if (name.size() >= 4 && name.substr(name.size() - 4) == ".pkl") return true;
    at += kEntryLen + rest;
  }
  return false;
}

// ---- tar ------------------------------------------------------------------------------

// TarChecksumField reads the header's checksum as Python's tarfile does: base-256 when
// the first byte is 0x80 or 0xff, else octal text up to the first NUL, spaces around it
// ignored (empty: 0). Returns false for text tarfile would refuse.
bool TarChecksumField(const std::byte* field, int64_t* out) {
  const uint8_t first = static_cast<uint8_t>(field[0]);
  if (first == 0x80 || first == 0xff) {
    int64_t value = first == 0xff ? -1 : 0;
    for (int k = 1; k < 8; ++k) value = value * 256 + static_cast<uint8_t>(field[k]);
    *out = value;
    return true;
  }
  std::string_view text(reinterpret_cast<const char*>(field), 8);
  text = text.substr(0, std::min(text.find('\0'), text.size()));
  while (!text.empty() && (text.front() == ' ' || (text.front() >= '\t' && text.front() <= '\r'))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || (text.back() >= '\t' && text.back() <= '\r'))) {
    text.remove_suffix(1);
  }
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  int64_t value = 0;
  bool digit_before = false;
  for (char c : text) {
    if (c == '_' && digit_before) {
      digit_before = false;
      continue;
    }
    if (c < '0' || c > '7') return false;
    value = value * 8 + (c - '0');
    digit_before = true;
  }
  if (!text.empty() && !digit_before) return false;
  *out = negative ? -value : value;
  return true;
}

// LooksLikeTar says whether the first 512 bytes are a tar header whose checksum holds,
// which is all Python's tarfile asks of a first member (no "ustar" magic needed).
bool LooksLikeTar(std::span<const std::byte> bytes) {
  constexpr size_t kBlockLen = 512;
  constexpr size_t kChecksumAt = 148;
  if (bytes.size() < kBlockLen) return false;
  int64_t stored = 0;
  if (!TarChecksumField(bytes.data() + kChecksumAt, &stored)) return false;
  int64_t unsigned_sum = 8 * ' ';  // the checksum field counts as spaces
  int64_t signed_sum = 8 * ' ';
  for (size_t k = 0; k < kBlockLen; ++k) {
    if (k >= kChecksumAt && k < kChecksumAt + 8) continue;
    unsigned_sum += ByteAt(bytes, k);
    signed_sum += static_cast<int8_t>(ByteAt(bytes, k));
  }
  return stored == unsigned_sum || stored == signed_sum;
}

// ---- safetensors ----------------------------------------------------------------------

bool LooksLikeSafetensors(std::span<const std::byte> bytes) {
  if (bytes.size() < 10) return false;
  const uint64_t header_len = LoadLittleEndian<uint64_t>(bytes.data());
  return header_len >= 2 && header_len <= bytes.size() - 8 && ByteAt(bytes, 8) == '{';
}

}  // namespace

// ---- pickle ---------------------------------------------------------------------------

namespace {

// PickleWalk is how far the pickle machine gets from byte 0.
enum class PickleWalk : uint8_t {
  kRejected,  // a byte it refuses comes first: not a pickle
  kStops,     // it reaches a STOP: a pickle that calls nothing before it
  kCalls,     // it reaches an opcode that calls out of the machine
};

// kMaxSniffMarks bounds the marks the walk keeps (8 bytes each). A file that opens more
// is treated as a pickle: no text or image does that.
constexpr size_t kMaxSniffMarks = size_t{1} << 16;

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

// ArgumentLen returns how many bytes the argument at `at` takes, or false when it runs
// past the end or is malformed. For GLOBAL and INST it also says whether the names are
// importable (`*importable`).
bool ArgumentLen(std::span<const std::byte> bytes, size_t at, const OpcodeInfo& info,
                 uint64_t* out_len, bool* importable) {
  const size_t left = bytes.size() - at;
  auto fixed = [&](uint64_t n) { *out_len = n; return n <= left; };
  auto counted = [&](uint64_t prefix) {
    if (left < prefix) return false;
    uint64_t n = 0;
    if (prefix == 1) n = ByteAt(bytes, at);
    if (prefix == 4) n = LoadLittleEndian<uint32_t>(bytes.data() + at);
    if (prefix == 8) n = LoadLittleEndian<uint64_t>(bytes.data() + at);
    if (prefix == 4 && info.code == 'T' && n > 0x7FFFFFFF) return false;  // negative
    if (n > left - prefix) return false;
    *out_len = prefix + n;
    return true;
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
      if (end == std::string_view::npos || !LineValid(info.code, rest.substr(0, end))) {
        return false;
      }
      *out_len = end + 1;
      return true;
    }
    case ArgKind::kTwoLines: {
      const size_t first = rest.find('\n');
      if (first == std::string_view::npos) return false;
      const size_t second = rest.find('\n', first + 1);
      if (second == std::string_view::npos) return false;
      *importable = IsDottedName(rest.substr(0, first)) &&
                    IsDottedName(rest.substr(first + 1, second - first - 1));
      *out_len = second + 1;
      return true;
    }
  }
  return false;
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

PickleWalk WalkPickle(std::span<const std::byte> bytes) {
  PickleStack stack;
  size_t at = 0;
  while (at < bytes.size()) {
    const uint8_t code = ByteAt(bytes, at);
    const OpcodeInfo* info = FindOpcode(code);
    if (info == nullptr) return PickleWalk::kRejected;
    uint64_t arg_len = 0;
    bool importable = false;
    if (!ArgumentLen(bytes, at + 1, *info, &arg_len, &importable)) return PickleWalk::kRejected;
    if (code == 0x80 && ByteAt(bytes, at + 1) > 5) return PickleWalk::kRejected;
    if (code == '.') return stack.top() > 0 ? PickleWalk::kStops : PickleWalk::kRejected;
    bool calls = false;
    if (!CallsOut(code, stack, importable, &calls)) return PickleWalk::kRejected;
    if (calls) return PickleWalk::kCalls;
    if (!StackEffect(code, &stack)) {
      return stack.DeepMarks() ? PickleWalk::kStops : PickleWalk::kRejected;
    }
    at += 1 + arg_len;
  }
  return PickleWalk::kRejected;  // no STOP: pickle.load fails at the end, having run nothing
}

// The legacy stream's first pickle: PROTO 2, LONG1 of the magic 0x1950a86a20f9469cfc6c,
// STOP (torch/serialization.py MAGIC_NUMBER).
constexpr std::string_view kLegacyMagic(
    "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e", 15);

}  // namespace

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kSafetensors: return "safetensors";
    case Format::kPytorchZip: return "pytorch-zip";
    case Format::kPytorchLegacy: return "pytorch-legacy";
    case Format::kPickle: return "pickle";
    case Format::kTar: return "tar";
    case Format::kZip: return "zip";
    case Format::kUnknown: case Format::kNumFormats: break;
  }
  return "unknown";
}

bool IsPickleBearing(Format format) {
  return format == Format::kPytorchZip || format == Format::kPytorchLegacy ||
         format == Format::kPickle || format == Format::kTar;
}

Format SniffFormat(std::span<const std::byte> bytes) {
  // torch.load takes any file starting with a local file header for a ZIP.
  if (StartsWith(bytes, "PK\x03\x04")) {
    return ZipMayHoldPickle(bytes) ? Format::kPytorchZip : Format::kZip;
  }
  if (StartsWith(bytes, "PK\x05\x06")) return Format::kZip;  // an empty archive
  if (StartsWith(bytes, kLegacyMagic)) return Format::kPytorchLegacy;
  // torch.load tries a tar before a pickle.
  if (LooksLikeTar(bytes)) return Format::kTar;
  const PickleWalk walk = WalkPickle(bytes);
  // A safetensors header length can spell a short pickle that stops ("N." is 11,854): the
  // header decides then. One that calls out first is a pickle whatever follows.
  if (LooksLikeSafetensors(bytes) && walk != PickleWalk::kCalls) return Format::kSafetensors;
  return walk == PickleWalk::kRejected ? Format::kUnknown : Format::kPickle;
}

}  // namespace stguard
