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

// ErrorCode lists every way a file can be rejected. Names follow the reference
// implementation's error kinds where the meaning is the same. Keep ErrorCodeName() and the
// table in src/error.cc in sync (tests/error_test.cc checks this).
enum class ErrorCode : uint8_t {
  kOk = 0,

  // Stage 1: the length prefix and the file itself.
  kIoError,              // the file could not be opened, read, mapped or written
  kNotARegularFile,      // the path names a directory, device or other non-file
  kHeaderTooSmall,       // fewer than 8 bytes: no room for the length prefix
  kHeaderTooLarge,       // N exceeds Options::max_header_len (100,000,000 at most)
  kInvalidHeaderLength,  // 8 + N is larger than the file

  // Stage 2: JSON text (RFC 8259, strict).
  kInvalidUtf8,             // overlong, surrogate, > U+10FFFF, truncated or stray byte
  kControlCharacter,        // raw U+0000..U+001F inside a string
  kInvalidEscape,           // a backslash followed by anything but "\/bfnrtu
  kInvalidUnicodeEscape,    // \u not followed by four hex digits
  kLoneSurrogate,           // \uD800..\uDFFF not forming a high-low pair
  kInvalidNumber,           // number outside the grammar: leading zero, '+', '.5', NaN...
  kInvalidLiteral,          // a misspelled true/false/null, or any other stray word
  kUnexpectedToken,         // a token that the grammar does not allow here
  kUnexpectedEnd,           // the text ended inside a value
  kTrailingContent,         // something other than whitespace after the top-level value
  kDepthExceeded,           // nesting deeper than Options::max_depth

  // Stage 3: header schema.
  kHeaderNotObject,         // the top-level value is not an object
  kDuplicateKey,            // a key appears twice in one object (after unescaping)
  kMetadataNotObject,       // __metadata__ is not an object (null included)
  kMetadataValueNotString,  // a __metadata__ value is not a string
  kTensorNotObject,         // a tensor entry is not an object
  kUnknownField,            // a tensor entry has a field other than dtype/shape/data_offsets
  kMissingField,            // a tensor entry lacks dtype, shape or data_offsets
  kInvalidDtype,            // dtype is not a string naming a known dtype
  kInvalidShape,            // shape is not an array of non-negative 64-bit integers
  kInvalidDataOffsets,      // data_offsets is not an array of two non-negative 64-bit integers

  // Stage 4: sizes.
  kValidationOverflow,  // the element count or bit count does not fit in 64 bits
  kMisalignedSlice,     // a sub-byte dtype whose bits do not fill whole bytes
  kTensorInvalidInfo,   // end - begin differs from the size that dtype and shape imply

  // Stage 5: tiling.
  kInvalidOffset,             // a tensor does not start where the previous one ended
  kMetadataIncompleteBuffer,  // the tensors do not end exactly at the end of the file

  // Writing.
  kInvalidTensorName,   // the writer was given the reserved name __metadata__
  kDuplicateName,       // the writer was given two tensors or metadata keys of one name
  kInvalidArgument,     // the writer was given data that does not match dtype and shape

  // Checkpoint directories and sharded indexes (stguard/checkpoint_dir.h).
  kInvalidIndex,        // the index JSON is not {"metadata": {...}, "weight_map": {...}}
  kUnsafeShardName,     // a shard name that is not a plain file name in the index's folder,
                        // or a shard or index that is a symbolic link out of the folder
  kMissingShard,        // a shard named by the index (or the folder's checkpoint) is absent
  kShardMismatch,       // the index and the shards disagree about which tensor is where
  kTensorInTwoShards,   // one tensor name in two shard files
  kInvalidConfig,       // the folder's config.json is not one JSON object

  // PyTorch checkpoints: the ZIP container (src/zip/).
  kZipFormat,            // the archive's structure is broken: truncated, bad signature,
                         // counts or lengths that do not fit, a malformed extra field
  kZipUnsupported,       // a compressed, encrypted or multi-disk entry (torch stores only)
  kZipHeaderMismatch,    // a local header disagrees with the central directory (name,
                         // sizes, method, flags, CRC) or with its data descriptor
  kZipDuplicateName,     // two records of one name
  kZipLayout,            // records overlap, leave gaps, or bytes precede the first record
                         // or follow the end of the central directory
  kZipBadName,           // a name that is not "<folder>/<path>" under one top-level folder
  kZipMissingRecord,     // data.pkl, or a storage record a tensor names, is absent
  kZipChecksum,          // a record's bytes do not match its CRC-32

  // PyTorch checkpoints: the pickle (src/pickle/).
  kPickleCorrupt,        // structural: truncated argument, stack underflow, missing MARK,
                         // unknown memo key, no STOP, more than one value left
  kPickleOpcodeRefused,  // an opcode outside the set torch.save writes for tensors
  kPickleGlobalRefused,  // GLOBAL/STACK_GLOBAL naming anything outside the allowlist
  kPickleBadArguments,   // an allowlisted callable REDUCEd (or BUILD applied) with
                         // arguments of the wrong shape
  kPickleMemoConflict,   // PUT/BINPUT/LONG_BINPUT/MEMOIZE redefining an existing memo key

  // PyTorch checkpoints: tensors and storages (src/torch/).
  kNotATorchCheckpoint,  // neither a torch ZIP archive, a legacy stream nor a pickle
  kRawPickle,            // a bare pickle: it can name no tensor data, so nothing converts
  kLegacyHeader,         // the legacy format's magic number, protocol version or system
                         // information (byte order, type sizes) is not what torch writes
  kStorageMismatch,      // a storage's declared element count or dtype differs from its
                         // record, or two references to one storage disagree
  kTensorOutOfBounds,    // a tensor's offset, sizes and strides reach outside its storage,
                         // are negative, or overflow
  kNotAStateDict,        // the object is not a mapping of names to tensors (or --key
                         // names no such mapping)

  // Resources.
  kOutOfMemory,  // an allocation failed (the process's memory limit is below O(header))

  // Optional checks (new codes are added at the end, so existing values never change).
  kMisalignedData,  // with Options::require_aligned_data: a tensor's data does not begin
                    // at a file offset that is a multiple of its element size
  kOutputTooLarge,  // a torch checkpoint's views ask for more output bytes than
                    // TorchOptions::max_output_ratio times its size (overlapping views)

  // npy: NumPy .npy files (src/npy/).
  kNpyPreamble,  // a .npy file's magic, version, header length (over 10,000 bytes, past the
                    // end of the file) or 16-byte alignment is not what numpy writes
  kNpyHeaderSyntax,  // the .npy header is not a plain dict literal of strings, True/False and a
                        // tuple of integers, padded with spaces and ending in a newline
  kNpyHeaderKeys,  // the .npy header's keys are not exactly descr, fortran_order and shape,
                      // each once, or a value has the wrong type
  kNpyDescr,  // the .npy descr is not a simple type string stguard knows (structured,
                 // no explicit byte order, a dtype name such as 'float32')
  kNpyObjectArray,  // a .npy object array: its data is a pickle that would run code
  kNpyDataLength,  // a .npy file's data is shorter or longer than its shape and descr imply

  kNumErrorCodes  // not an error: the number of codes above
};

// ErrorCodeName returns the code's name without the leading 'k' ("DuplicateKey").
STGUARD_API std::string_view ErrorCodeName(ErrorCode code);

// Error describes one failure. `message` is a static string; `context` holds dynamic
// detail (sizes, a key, a path) and `tensor` the tensor concerned; both may be empty.
struct STGUARD_API Error {
  ErrorCode code = ErrorCode::kOk;
  uint64_t offset = 0;  // absolute byte offset in the input where the problem was found
  const char* message = "";
  std::string context;
  std::string tensor;

  bool ok() const { return code == ErrorCode::kOk; }
  // ToString renders "<CodeName> at byte <offset>: <message>[: <context>][ (tensor
  // '<name>')]". Context and name pass through PrintableText, so that a hostile name
  // cannot drive or reorder the terminal.
  std::string ToString() const;
};

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
