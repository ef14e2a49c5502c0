// SPDX-License-Identifier: Apache-2.0
// Error code names and Error::ToString.
#include "stguard/error.h"

#include <array>
#include <cstdio>
#include <cstdlib>

#include "base/utf8.h"

namespace stguard {
namespace {

// ErrorFacts is one row of stguard/error_codes.def: the name and the columns.
struct ErrorFacts {
  std::string_view name;
  bool has_offset;
  Verdict verdict;
};

// kErrorFacts is indexed by ErrorCode, expanded from the same list as the enum.
constexpr std::array<ErrorFacts, static_cast<size_t>(ErrorCode::kNumErrorCodes)> kErrorFacts = {{
#define STGUARD_ERROR_CODE(name, c_name, has_offset, verdict) \
  {#name, has_offset, Verdict::k##verdict},
#include "stguard/error_codes.def"
#undef STGUARD_ERROR_CODE
}};
static_assert(kErrorFacts[0].verdict == Verdict::kValid && !kErrorFacts[0].has_offset,
              "kOk is valid and has no offset");

}  // namespace

std::string_view ErrorCodeName(ErrorCode code) {
  const auto index = static_cast<size_t>(code);
  if (index >= kErrorFacts.size()) return "Unknown";
  return kErrorFacts[index].name;
}

Verdict ErrorVerdict(ErrorCode code) {
  const auto index = static_cast<size_t>(code);
  // A value outside the list (a cast from a caller) is no verdict on a file.
  return index < kErrorFacts.size() ? kErrorFacts[index].verdict : Verdict::kError;
}

namespace {

// IsTerminalHazard says whether a code point beyond ASCII can drive or mislead a terminal:
// the C1 controls U+0080..U+009F (CSI U+009B, OSC U+009D and ST U+009C start escape
// sequences in many emulators), and the bidirectional controls that reorder what is
// shown (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), plus the line and
// paragraph separators U+2028 and U+2029.
bool IsTerminalHazard(uint32_t code_point) {
  return (code_point >= 0x80 && code_point <= 0x9F) || code_point == 0x061C ||
         code_point == 0x200E || code_point == 0x200F ||
         (code_point >= 0x202A && code_point <= 0x202E) ||
         (code_point >= 0x2066 && code_point <= 0x2069) || code_point == 0x2028 ||
         code_point == 0x2029;
}

}  // namespace

std::string PrintableText(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    uint32_t code_point = 0;
    const size_t len = DecodeUtf8(text, i, &code_point);
    if (len == 0 || byte < 0x20 || byte == 0x7F) {
      // A C0 control, DEL, or a byte that is not UTF-8 (a lone 0x9B is CSI to some
      // terminals): \xNN.
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
      ++i;
    } else if (IsTerminalHazard(code_point)) {
      char buffer[16];
      std::snprintf(buffer, sizeof(buffer), "\\u{%x}", static_cast<unsigned>(code_point));
      out += buffer;
      i += len;
    } else {
      out.append(text, i, len);
      i += len;
    }
  }
  return out;
}

namespace detail {

void AbortOnErrorAccess(const Error& error) noexcept {
  // Static text first: even if rendering the error fails, the reason is on stderr.
  std::fputs("stguard: value of a failed Result: ", stderr);
  std::fputs(error.ToString().c_str(), stderr);
  std::fputs("\n", stderr);
  std::abort();
}

}  // namespace detail

bool ErrorHasOffset(ErrorCode code) {
  const auto index = static_cast<size_t>(code);
  return index < kErrorFacts.size() && kErrorFacts[index].has_offset;
}

std::string Error::ToString() const {
  std::string out(ErrorCodeName(code));
  if (ErrorHasOffset(code)) {
    out += " at byte ";
    out += std::to_string(offset);
  }
  out += ": ";
  out += message;
  if (!context.empty()) {
    out += ": ";
    out += PrintableText(context);
  }
  if (!tensor.empty()) {
    out += " (tensor '";
    out += PrintableText(tensor);
    out += "')";
  }
  return out;
}

}  // namespace stguard
