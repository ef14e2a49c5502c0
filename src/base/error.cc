// SPDX-License-Identifier: Apache-2.0
// Error code names and Error::ToString.
#include "stguard/error.h"

#include <array>
#include <cstdio>
#include <cstdlib>

namespace stguard {
namespace {

// kErrorCodeNames is indexed by ErrorCode; tests/error_test.cc checks that every code has
// a distinct, non-empty name, so adding a code without a name fails the build's tests.
constexpr std::array<std::string_view, static_cast<size_t>(ErrorCode::kNumErrorCodes)>
    kErrorCodeNames = {
        "Ok",
        "IoError",
        "NotARegularFile",
        "HeaderTooSmall",
        "HeaderTooLarge",
        "InvalidHeaderLength",
        "InvalidUtf8",
        "ControlCharacter",
        "InvalidEscape",
        "InvalidUnicodeEscape",
        "LoneSurrogate",
        "InvalidNumber",
        "InvalidLiteral",
        "UnexpectedToken",
        "UnexpectedEnd",
        "TrailingContent",
        "DepthExceeded",
        "HeaderNotObject",
        "DuplicateKey",
        "MetadataNotObject",
        "MetadataValueNotString",
        "TensorNotObject",
        "UnknownField",
        "MissingField",
        "InvalidDtype",
        "InvalidShape",
        "InvalidDataOffsets",
        "ValidationOverflow",
        "MisalignedSlice",
        "TensorInvalidInfo",
        "InvalidOffset",
        "MetadataIncompleteBuffer",
        "InvalidTensorName",
        "DuplicateName",
        "InvalidArgument",
        "InvalidIndex",
        "UnsafeShardName",
        "MissingShard",
        "ShardMismatch",
        "TensorInTwoShards",
        "InvalidConfig",
        "ZipFormat",
        "ZipUnsupported",
        "ZipHeaderMismatch",
        "ZipDuplicateName",
        "ZipLayout",
        "ZipBadName",
        "ZipMissingRecord",
        "ZipChecksum",
        "PickleCorrupt",
        "PickleOpcodeRefused",
        "PickleGlobalRefused",
        "PickleBadArguments",
        "PickleMemoConflict",
        "NotATorchCheckpoint",
        "RawPickle",
        "LegacyHeader",
        "StorageMismatch",
        "TensorOutOfBounds",
        "NotAStateDict",
        "OutOfMemory",
        "MisalignedData",
        "OutputTooLarge",
        "NpyPreamble",
        "NpyHeaderSyntax",
        "NpyHeaderKeys",
        "NpyDescr",
        "NpyObjectArray",
        "NpyDataLength",
};

}  // namespace

std::string_view ErrorCodeName(ErrorCode code) {
  const auto index = static_cast<size_t>(code);
  if (index >= kErrorCodeNames.size()) return "Unknown";
  return kErrorCodeNames[index];
}

namespace {

// DecodeUtf8 decodes one well-formed UTF-8 sequence at text[i] (shortest form, no
// surrogates, at most U+10FFFF) into *out_code_point and returns its length, or returns 0
// for a byte that does not start one.
size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* out_code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  size_t len = 0;
  uint32_t code_point = 0;
  uint32_t min = 0;
  if (lead < 0x80) {
    *out_code_point = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2, code_point = lead & 0x1F, min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3, code_point = lead & 0x0F, min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4, code_point = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() - i < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(k) & 0x3F);
  }
  if (code_point < min || code_point > 0x10FFFF ||
      (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return 0;
  }
  *out_code_point = code_point;
  return len;
}

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

std::string Error::ToString() const {
  std::string out(ErrorCodeName(code));
  out += " at byte ";
  out += std::to_string(offset);
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
