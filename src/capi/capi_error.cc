// SPDX-License-Identifier: Apache-2.0
// C API: status codes, their names, and filling stguard_error.
#include <cstring>

#include "capi/capi_common.h"

namespace stguard::capi {
namespace {

// stguard_code must mirror ErrorCode value for value: the C API converts by casting.
// A code added to stguard/error.h without its STGUARD_ twin stops the build here.
#define STGUARD_SAME_CODE(c_name, cpp_name) \
  static_assert(static_cast<int>(c_name) == static_cast<int>(ErrorCode::cpp_name), #c_name)
STGUARD_SAME_CODE(STGUARD_OK, kOk);
STGUARD_SAME_CODE(STGUARD_IO_ERROR, kIoError);
STGUARD_SAME_CODE(STGUARD_NOT_A_REGULAR_FILE, kNotARegularFile);
STGUARD_SAME_CODE(STGUARD_HEADER_TOO_SMALL, kHeaderTooSmall);
STGUARD_SAME_CODE(STGUARD_HEADER_TOO_LARGE, kHeaderTooLarge);
STGUARD_SAME_CODE(STGUARD_INVALID_HEADER_LENGTH, kInvalidHeaderLength);
STGUARD_SAME_CODE(STGUARD_INVALID_UTF8, kInvalidUtf8);
STGUARD_SAME_CODE(STGUARD_CONTROL_CHARACTER, kControlCharacter);
STGUARD_SAME_CODE(STGUARD_INVALID_ESCAPE, kInvalidEscape);
STGUARD_SAME_CODE(STGUARD_INVALID_UNICODE_ESCAPE, kInvalidUnicodeEscape);
STGUARD_SAME_CODE(STGUARD_LONE_SURROGATE, kLoneSurrogate);
STGUARD_SAME_CODE(STGUARD_INVALID_NUMBER, kInvalidNumber);
STGUARD_SAME_CODE(STGUARD_INVALID_LITERAL, kInvalidLiteral);
STGUARD_SAME_CODE(STGUARD_UNEXPECTED_TOKEN, kUnexpectedToken);
STGUARD_SAME_CODE(STGUARD_UNEXPECTED_END, kUnexpectedEnd);
STGUARD_SAME_CODE(STGUARD_TRAILING_CONTENT, kTrailingContent);
STGUARD_SAME_CODE(STGUARD_DEPTH_EXCEEDED, kDepthExceeded);
STGUARD_SAME_CODE(STGUARD_HEADER_NOT_OBJECT, kHeaderNotObject);
STGUARD_SAME_CODE(STGUARD_DUPLICATE_KEY, kDuplicateKey);
STGUARD_SAME_CODE(STGUARD_METADATA_NOT_OBJECT, kMetadataNotObject);
STGUARD_SAME_CODE(STGUARD_METADATA_VALUE_NOT_STRING, kMetadataValueNotString);
STGUARD_SAME_CODE(STGUARD_TENSOR_NOT_OBJECT, kTensorNotObject);
STGUARD_SAME_CODE(STGUARD_UNKNOWN_FIELD, kUnknownField);
STGUARD_SAME_CODE(STGUARD_MISSING_FIELD, kMissingField);
STGUARD_SAME_CODE(STGUARD_INVALID_DTYPE, kInvalidDtype);
STGUARD_SAME_CODE(STGUARD_INVALID_SHAPE, kInvalidShape);
STGUARD_SAME_CODE(STGUARD_INVALID_DATA_OFFSETS, kInvalidDataOffsets);
STGUARD_SAME_CODE(STGUARD_VALIDATION_OVERFLOW, kValidationOverflow);
STGUARD_SAME_CODE(STGUARD_MISALIGNED_SLICE, kMisalignedSlice);
STGUARD_SAME_CODE(STGUARD_TENSOR_INVALID_INFO, kTensorInvalidInfo);
STGUARD_SAME_CODE(STGUARD_INVALID_OFFSET, kInvalidOffset);
STGUARD_SAME_CODE(STGUARD_METADATA_INCOMPLETE_BUFFER, kMetadataIncompleteBuffer);
STGUARD_SAME_CODE(STGUARD_INVALID_TENSOR_NAME, kInvalidTensorName);
STGUARD_SAME_CODE(STGUARD_DUPLICATE_NAME, kDuplicateName);
STGUARD_SAME_CODE(STGUARD_INVALID_ARGUMENT, kInvalidArgument);
STGUARD_SAME_CODE(STGUARD_INVALID_INDEX, kInvalidIndex);
STGUARD_SAME_CODE(STGUARD_UNSAFE_SHARD_NAME, kUnsafeShardName);
STGUARD_SAME_CODE(STGUARD_MISSING_SHARD, kMissingShard);
STGUARD_SAME_CODE(STGUARD_SHARD_MISMATCH, kShardMismatch);
STGUARD_SAME_CODE(STGUARD_TENSOR_IN_TWO_SHARDS, kTensorInTwoShards);
STGUARD_SAME_CODE(STGUARD_INVALID_CONFIG, kInvalidConfig);
STGUARD_SAME_CODE(STGUARD_ZIP_FORMAT, kZipFormat);
STGUARD_SAME_CODE(STGUARD_ZIP_UNSUPPORTED, kZipUnsupported);
STGUARD_SAME_CODE(STGUARD_ZIP_HEADER_MISMATCH, kZipHeaderMismatch);
STGUARD_SAME_CODE(STGUARD_ZIP_DUPLICATE_NAME, kZipDuplicateName);
STGUARD_SAME_CODE(STGUARD_ZIP_LAYOUT, kZipLayout);
STGUARD_SAME_CODE(STGUARD_ZIP_BAD_NAME, kZipBadName);
STGUARD_SAME_CODE(STGUARD_ZIP_MISSING_RECORD, kZipMissingRecord);
STGUARD_SAME_CODE(STGUARD_ZIP_CHECKSUM, kZipChecksum);
STGUARD_SAME_CODE(STGUARD_PICKLE_CORRUPT, kPickleCorrupt);
STGUARD_SAME_CODE(STGUARD_PICKLE_OPCODE_REFUSED, kPickleOpcodeRefused);
STGUARD_SAME_CODE(STGUARD_PICKLE_GLOBAL_REFUSED, kPickleGlobalRefused);
STGUARD_SAME_CODE(STGUARD_PICKLE_BAD_ARGUMENTS, kPickleBadArguments);
STGUARD_SAME_CODE(STGUARD_PICKLE_MEMO_CONFLICT, kPickleMemoConflict);
STGUARD_SAME_CODE(STGUARD_NOT_A_TORCH_CHECKPOINT, kNotATorchCheckpoint);
STGUARD_SAME_CODE(STGUARD_RAW_PICKLE, kRawPickle);
STGUARD_SAME_CODE(STGUARD_LEGACY_HEADER, kLegacyHeader);
STGUARD_SAME_CODE(STGUARD_STORAGE_MISMATCH, kStorageMismatch);
STGUARD_SAME_CODE(STGUARD_TENSOR_OUT_OF_BOUNDS, kTensorOutOfBounds);
STGUARD_SAME_CODE(STGUARD_NOT_A_STATE_DICT, kNotAStateDict);
STGUARD_SAME_CODE(STGUARD_OUT_OF_MEMORY, kOutOfMemory);
STGUARD_SAME_CODE(STGUARD_MISALIGNED_DATA, kMisalignedData);
STGUARD_SAME_CODE(STGUARD_OUTPUT_TOO_LARGE, kOutputTooLarge);
STGUARD_SAME_CODE(STGUARD_NPY_PREAMBLE, kNpyPreamble);
STGUARD_SAME_CODE(STGUARD_NPY_HEADER_SYNTAX, kNpyHeaderSyntax);
STGUARD_SAME_CODE(STGUARD_NPY_HEADER_KEYS, kNpyHeaderKeys);
STGUARD_SAME_CODE(STGUARD_NPY_DESCR, kNpyDescr);
STGUARD_SAME_CODE(STGUARD_NPY_OBJECT_ARRAY, kNpyObjectArray);
STGUARD_SAME_CODE(STGUARD_NPY_DATA_LENGTH, kNpyDataLength);
STGUARD_SAME_CODE(STGUARD_NUM_CODES, kNumErrorCodes);
#undef STGUARD_SAME_CODE

// IsUtf8Continuation says whether `byte` continues a multi-byte UTF-8 sequence, where a
// cut must not fall.
bool IsUtf8Continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

// BoundedText appends to a fixed char array, always keeping room for the final NUL, and
// remembers whether anything had to be left out.
class BoundedText {
 public:
  BoundedText(char* buffer, size_t capacity) : buffer_(buffer), capacity_(capacity) {
    buffer_[0] = '\0';
  }

  // Append copies `text` raw, cut at a UTF-8 character boundary if it does not fit.
  void Append(std::string_view text) {
    size_t n = text.size();
    if (n > room()) {
      truncated_ = true;
      n = room();
      while (n > 0 && IsUtf8Continuation(text[n])) --n;
    }
    if (n > 0) std::memcpy(buffer_ + len_, text.data(), n);  // an empty view may be null
    len_ += n;
    buffer_[len_] = '\0';
  }

  // AppendPrintable copies `text` with bytes 0x00..0x1F and 0x7F shown as \xNN (as
  // stguard::PrintableText does, without allocating), never cutting an escape in two.
  void AppendPrintable(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (size_t i = 0; i < text.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text[i]);
      if (byte < 0x20 || byte == 0x7F) {
        const char escape[4] = {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xF]};
        if (room() < sizeof(escape)) {
          truncated_ = true;
          return;
        }
        Append(std::string_view(escape, sizeof(escape)));
        continue;
      }
      // Copy the run of printable bytes up to the next control byte in one step.
      size_t end = i;
      while (end < text.size() && static_cast<unsigned char>(text[end]) >= 0x20 &&
             static_cast<unsigned char>(text[end]) != 0x7F) {
        ++end;
      }
      Append(text.substr(i, end - i));
      if (truncated_) return;
      i = end - 1;
    }
  }

  size_t size() const { return len_; }
  bool truncated() const { return truncated_; }

 private:
  size_t room() const { return capacity_ - 1 - len_; }

  char* buffer_;
  size_t capacity_;
  size_t len_ = 0;
  bool truncated_ = false;
};

void Fill(stguard_error* err, stguard_code code, uint64_t offset, const char* message,
          std::string_view detail, std::string_view tensor) noexcept {
  err->code = code;
  err->code_name = stguard_code_name(code);
  err->offset = offset;
  BoundedText text(err->message, sizeof(err->message));
  text.Append(message != nullptr ? std::string_view(message) : std::string_view());
  if (!detail.empty()) {
    text.Append(": ");
    text.AppendPrintable(detail);
  }
  BoundedText name(err->tensor, sizeof(err->tensor));
  name.Append(tensor);
  err->tensor_len = name.size();
  err->truncated = text.truncated() || name.truncated();
}

}  // namespace

stguard_code FillError(stguard_error* err, const Error& error) noexcept {
  const auto code = static_cast<stguard_code>(error.code);
  if (err != nullptr) Fill(err, code, error.offset, error.message, error.context, error.tensor);
  return code;
}

stguard_code Fail(stguard_error* err, stguard_code code, const char* message,
                  std::string_view detail, std::string_view tensor) noexcept {
  if (err != nullptr) Fill(err, code, 0, message, detail, tensor);
  return code;
}

}  // namespace stguard::capi

extern "C" const char* stguard_code_name(stguard_code code) {
  // Range-check as int: ErrorCode is 8 bits wide, so a cast alone would wrap 256 to kOk.
  const int value = static_cast<int>(code);
  if (value < 0 || value >= static_cast<int>(STGUARD_NUM_CODES)) return "Unknown";
  // ErrorCodeName's views are made from string literals, so data() is NUL-terminated.
  return stguard::ErrorCodeName(static_cast<stguard::ErrorCode>(code)).data();
}
