// SPDX-License-Identifier: Apache-2.0
// Error code names and Error::ToString.
#include "stguard/error.h"

#include <array>

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
};

}  // namespace

std::string_view ErrorCodeName(ErrorCode code) {
  const auto index = static_cast<size_t>(code);
  if (index >= kErrorCodeNames.size()) return "Unknown";
  return kErrorCodeNames[index];
}

std::string PrintableText(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    } else {
      out += c;
    }
  }
  return out;
}

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
