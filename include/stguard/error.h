// SPDX-License-Identifier: Apache-2.0
// stguard/error.h: error codes, the Error value, and Result<T>.
//
// Errors are values. No function of the library throws across its API: each returns either
// what was asked for or one Error that names the problem (a code), where it was found (an
// absolute byte offset into the file or buffer), a static sentence, and optional context
// such as the tensor name. The first error found wins; parsing stops there.
#ifndef STGUARD_ERROR_H_
#define STGUARD_ERROR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "stguard/export.h"

namespace stguard {

// ErrorCode lists every way a file can be rejected, in the order and with the meaning
// given by stguard/error_codes.def, the one list of codes (a new code is a row there).
// Names follow the reference implementation's error kinds where the meaning is the same.
enum class ErrorCode : uint8_t {
#define STGUARD_ERROR_CODE(name, c_name, has_offset, verdict) k##name,
#include "stguard/error_codes.def"
#undef STGUARD_ERROR_CODE
  kNumErrorCodes  // not an error: the number of codes above
};
static_assert(static_cast<int>(ErrorCode::kOk) == 0, "kOk is the first row and zero");

// ErrorCodeName returns the code's name without the leading 'k' ("DuplicateKey").
STGUARD_API std::string_view ErrorCodeName(ErrorCode code);

// Verdict is what a check concludes about a file: stguard/verdict.h says what each means,
// their order (VerdictRank) and their exit statuses. It is declared here so that each
// error code's row in stguard/error_codes.def can state the verdict it means.
enum class Verdict : uint8_t { kValid, kInvalid, kRefused, kError };

// ErrorVerdict returns the VERDICT column of the code's row in stguard/error_codes.def:
// kValid for kOk; kError when there is no verdict on the file (I/O, not a regular file,
// out of memory, an argument that is not usable); kRefused when loading would run code
// the file chose (a refused pickle global or opcode, an npy object array); kInvalid
// otherwise.
STGUARD_API Verdict ErrorVerdict(ErrorCode code);

// Error describes one failure. `message` is a static string; `context` holds dynamic
// detail (sizes, a key, a path) and `tensor` the tensor concerned; both may be empty.
// `file` names the file of a folder the error is about (a shard, the index, config.json,
// a member found by the walk), as a name inside the folder; empty for a single input, or
// for the folder as a whole. When ErrorHasOffset(code), `offset` is a byte of that file.
struct STGUARD_API Error {
  ErrorCode code = ErrorCode::kOk;
  uint64_t offset = 0;  // absolute byte offset in the input where the problem was found
  const char* message = "";
  std::string context;
  std::string tensor;
  std::string file;

  bool ok() const { return code == ErrorCode::kOk; }
  // ToString renders "<CodeName> at byte <offset>: <message>[: <context>][ (tensor
  // '<name>')]", leaving out " at byte <offset>" when the offset points into no input
  // (ErrorHasOffset). Context and name pass through PrintableText, so that a hostile
  // name cannot drive or reorder the terminal.
  std::string ToString() const;
};

// ErrorHasOffset returns the HAS_OFFSET column of the code's row in
// stguard/error_codes.def: whether an error's offset is a byte of the input (of
// Error::file inside a folder). False for the errors about reaching a file or about the
// caller's arguments (kIoError, kNotARegularFile, kOutOfMemory, the writer's
// kInvalidTensorName, kDuplicateName, kInvalidArgument), about a folder or a model as a
// whole (kFolderTooLarge, kNoSafetensorsInFolder, kMissingShard, kLintError), about a file
// as a whole (kNotSafetensors), and for kOk. Every printer (Error::ToString, the envelope,
// the C API, Python) shows an offset only when this is true.
STGUARD_API bool ErrorHasOffset(ErrorCode code);

// PrintableText returns `text` made safe to show on a terminal: the C0 controls
// (0x00..0x1F), DEL and every byte that is not part of well-formed UTF-8 become \xNN;
// the C1 controls U+0080..U+009F (CSI, OSC, ST start escape sequences), the
// bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and
// U+2028/U+2029 become \u{NNNN} (lowercase hex). Everything else is kept as it is.
STGUARD_API std::string PrintableText(std::string_view text);

namespace detail {
// AbortOnErrorAccess prints "stguard: value of a failed Result: <error.ToString()>" to
// stderr and aborts the process. Result calls it when its value is used without one.
[[noreturn]] STGUARD_API void AbortOnErrorAccess(const Error& error) noexcept;
}  // namespace detail

// Result holds either a value or the Error that prevented it (a default Result does not
// exist: construct it from one or the other).
//
// Reaching for the value of a failed Result (value(), operator*, operator->) is a bug in
// the caller, never silent undefined behaviour: in every build, NDEBUG included, it
// prints the error and aborts (detail::AbortOnErrorAccess). Test ok() first, or use
// value_or().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}       // NOLINT: implicit by design
  Result(Error error) : error_(std::move(error)) {}   // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  // error is the failure; for a successful Result, an Error whose code is kOk.
  const Error& error() const { return error_; }
  T& value() & { return Checked(); }
  const T& value() const& { return Checked(); }
  T&& value() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &Checked(); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return Checked(); }
  T&& operator*() && { return std::move(Checked()); }

  // value_or returns the value, or `fallback` converted to T when there is none.
  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  template <typename U>
  T value_or(U&& fallback) && {
    return ok() ? std::move(*value_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  T& Checked() {
    if (!value_.has_value()) detail::AbortOnErrorAccess(error_);
    return *value_;
  }
  const T& Checked() const {
    if (!value_.has_value()) detail::AbortOnErrorAccess(error_);
    return *value_;
  }

  std::optional<T> value_;
  Error error_;
};

}  // namespace stguard

#endif  // STGUARD_ERROR_H_
