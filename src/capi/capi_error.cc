// SPDX-License-Identifier: Apache-2.0
// C API: status codes, their names, and filling stguard_error.
#include <cstring>

#include "capi/capi_common.h"

namespace stguard::capi {
namespace {

// stguard_code must mirror ErrorCode value for value: the C API converts by casting. Each
// row of stguard/error_codes.def names its C twin, so a code missing from the C enum, or
// placed at another position there, stops the build here.
#define STGUARD_ERROR_CODE(name, c_name, has_offset, verdict)                          \
  static_assert(static_cast<int>(c_name) == static_cast<int>(ErrorCode::k##name), \
                #c_name " is not at " #name "'s position in stguard/error_codes.def");
#include "stguard/error_codes.def"
#undef STGUARD_ERROR_CODE
static_assert(static_cast<int>(STGUARD_NUM_CODES) == static_cast<int>(ErrorCode::kNumErrorCodes),
              "the C enum has a code that stguard/error_codes.def does not list");

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
