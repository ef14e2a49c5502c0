// SPDX-License-Identifier: Apache-2.0
// stguard/writer.h: the canonical safetensors writer and the canonical-form check.
//
// CANONICAL FORM
// The writer produces, byte for byte, the file that the reference implementation
// (Hugging Face safetensors `serialize`, Python `save_file`) produces for the same tensors
// and a metadata map with one key, and a fully specified file in every other case:
// - Tensor order: dtypes in descending reference enum order (U64, I64, F64, C64, F32, U32,
//   I32, BF16, F16, U16, I16, F8_E5M2FNUZ, F8_E4M3FNUZ, F8_E8M0, F8_E4M3, F8_E5M2, I8, U8,
//   F6_E3M2, F6_E2M3, F4, BOOL), then by name comparing UTF-8 bytes. The data buffer
//   holds the tensors in that order from offset 0, with no gaps.
// - Header: compact JSON (no whitespace). "__metadata__" first, omitted when the map is
//   empty, its keys in ascending byte order; then every tensor as
//   {"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}, keys in that order.
// - Strings are escaped as serde_json escapes them: \" \\ \b \f \n \r \t, other
//   U+0000..U+001F as \u00xx (lowercase hex); '/', DEL and non-ASCII are written raw.
// - The header is padded with spaces to a multiple of 8 bytes; N counts the spaces.
//
// POLICY: stguard writes only files its own reader accepts. Where the reference writes an
// unreadable or ambiguous file, the writer refuses instead, with an Error and no output:
// - a tensor named "__metadata__"                                -> kInvalidTensorName
// - two tensors, or two metadata keys, with one name               -> kDuplicateName
// - a name, metadata key or value that is not valid UTF-8          -> kInvalidArgument
// - a byte count that differs from what dtype and shape imply      -> kInvalidArgument
// - an element count or bit count beyond 64 bits, or a total size
//   beyond 64 bits                                                 -> kValidationOverflow
// - a sub-byte dtype (F4, F6_*) whose bits do not fill whole bytes -> kMisalignedSlice
// - a header longer than kMaxHeaderLen (100,000,000) bytes         -> kHeaderTooLarge
// The reference also writes an unreadable file for zero tensors with an empty metadata
// map; stguard omits an empty map, so zero tensors and no metadata give the 16-byte file
// N = 8, "{}" and six spaces, which the reader accepts.
//
// Every check runs before the first byte is written. Writer errors carry the tensor (or
// metadata key) concerned in Error::tensor and detail in Error::context; their offset is
// 0, except I/O errors, whose offset is the output position where writing failed.
//
// CRASH SAFETY
// WriteToFile writes a temporary file in the destination's directory (created with
// O_EXCL under a unique name), fsyncs it, renames it over the destination and fsyncs the
// directory. On any error, a full disk included, the destination is untouched and the
// temporary file is removed. A reader that mapped the old file keeps its mapping: the
// rename leaves the old inode alive, so rewriting the very file being read is safe.
// Only a process killed outright (SIGKILL, power loss) can leave a temporary file behind;
// the destination then still holds the old file or the complete new one. Such leftovers
// are named ".NAME.stguard-PID-*.tmp" beside the destination; FindLeftoverTemporaryFiles
// lists those whose process is gone, and they are safe to delete. A program that wants
// them removed on SIGINT, SIGTERM and SIGHUP too calls RemoveTemporaryFilesOnSignals.
//
// DESTINATIONS
// - The temporary file is created with mode 0600, so no other user can open it while the
//   data goes in. Just before the rename it gets its final mode: the destination's
//   permission bits when it exists, else 0666 minus the umask (as for any new file).
// - Owner: when the destination exists, its owner and group are given to the new file
//   where the process may do so (root; or a group the user belongs to). Otherwise the new
//   file belongs to the writing user, like any file that replaces another by rename.
// - A symbolic link is followed, through every hop, and the file it finally names is
//   replaced; the link stays a link. A dangling link is followed too: the file it names
//   is created (as `cp` and the shell's `>` do), and the link then resolves to it.
// - Hard links are split: the rename gives the destination's name a new inode, so other
//   names of the old file keep the old content. (Rewriting in place is what a rename
//   avoids: a crash would leave a half-written file under every name.)
// - A path that reaches its file only through a process's descriptor table
//   (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/PID/fd/N) is refused with
//   kNotARegularFile: its target may be a file the user never named, such as a log that
//   standard output is appended to. Stream to a descriptor with WriteTo and a ByteSink.
// - A destination that is a directory, device, FIFO or socket is refused
//   (kNotARegularFile).
// - These rules are for a path the user names. Names that stguard itself chooses inside
//   a folder the user names (`convert DIR OUTDIR`: ConvertTorchFolder) follow no link:
//   they are created and renamed through the folder's descriptor, and a link at such a
//   name is refused (see stguard/torch_checkpoint.h).
#ifndef STGUARD_WRITER_H_
#define STGUARD_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/shape.h"

namespace stguard {

class Checkpoint;

// ByteSink receives a file's bytes in order.
class STGUARD_API ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Write appends `bytes`. Returns an Error whose code is kOk on success; on failure the
  // caller must stop writing and pass the error on.
  virtual Error Write(std::span<const std::byte> bytes) = 0;
};

// TensorProducer streams one tensor's bytes into `sink`, in chunks of any size, and
// returns the first error it met (from the sink or its own source), or an ok Error. It
// must write exactly the byte count declared to Writer::AddTensor: more is refused by the
// sink and fewer is reported after it returns, both as kInvalidArgument. A producer is
// called once per write, when that tensor's turn in the data buffer comes.
using TensorProducer = std::function<Error(ByteSink& sink)>;

// Writer collects tensors and metadata, then writes them in canonical form. The Add*
// functions check what they can at once and return that Error; the first such error also
// sticks, so every later Write*/Canonical* call returns it rather than writing a file
// that lacks a tensor. Checks that need all entries (duplicates, header size, total size)
// run when writing. A Writer can write any number of times.
//
// A Writer is not thread-safe: use one from one thread at a time. Every function returns
// kOutOfMemory when an allocation fails (an Add* failure sticks, as above), except the
// constructor, which throws std::bad_alloc if it cannot allocate its small state.
class STGUARD_API Writer {
 public:
  Writer();
  ~Writer();
  Writer(Writer&&) noexcept;
  Writer& operator=(Writer&&) noexcept;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // AddTensor adds a tensor whose bytes are `data` (little-endian, row-major). Name and
  // shape are copied; `data` is not, and must stay valid until the last write.
  [[nodiscard]] Error AddTensor(std::string_view name, Dtype dtype,
                                std::span<const uint64_t> shape,
                                std::span<const std::byte> data);
  [[nodiscard]] Error AddTensor(std::string_view name, Dtype dtype,
                                std::initializer_list<uint64_t> shape,
                                std::span<const std::byte> data);
  // AddTensor adds a tensor of `byte_len` bytes that `producer` streams at write time, so
  // the data never has to sit in memory.
  [[nodiscard]] Error AddTensor(std::string_view name, Dtype dtype,
                                std::span<const uint64_t> shape, uint64_t byte_len,
                                TensorProducer producer);
  // The same two, with a checkpoint's compact Shape (TensorView::shape).
  [[nodiscard]] Error AddTensor(std::string_view name, Dtype dtype, const Shape& shape,
                                std::span<const std::byte> data);
  [[nodiscard]] Error AddTensor(std::string_view name, Dtype dtype, const Shape& shape,
                                uint64_t byte_len, TensorProducer producer);

  // AddMetadata adds one __metadata__ entry. Keys must be distinct.
  [[nodiscard]] Error AddMetadata(std::string_view key, std::string_view value);

  // AddCheckpoint adds every tensor and metadata entry of `checkpoint`. The tensors' bytes
  // are not copied: `checkpoint` must outlive the last write.
  [[nodiscard]] Error AddCheckpoint(const Checkpoint& checkpoint);

  size_t num_tensors() const;
  size_t num_metadata() const;

  // CanonicalHeader returns the N header bytes (JSON text and padding), or the Error that
  // prevents writing.
  [[nodiscard]] Result<std::string> CanonicalHeader() const;
  // FileSize returns the size of the file that a write produces: 8 + N + data bytes.
  [[nodiscard]] Result<uint64_t> FileSize() const;

  // WriteTo validates everything, then writes the whole file to `sink`. Nothing reaches
  // the sink when validation fails; an error from the sink or a producer can come after
  // part of the file was written, and is returned as is.
  [[nodiscard]] Error WriteTo(ByteSink& sink) const;
  // WriteToString returns the whole file in memory.
  [[nodiscard]] Result<std::string> WriteToString() const;
  // WriteToFile writes the file to `path` crash-safely (see CRASH SAFETY above). If `path`
  // is a symbolic link, the file it points to is replaced, not the link. A destination
  // that exists but is not a regular file (directory, device, FIFO) is refused with
  // kNotARegularFile; every other failure to write is kIoError.
  [[nodiscard]] Error WriteToFile(const std::string& path) const;

  // set_progress makes WriteTo and WriteToFile call `progress` with the number of bytes
  // written since its previous call, after each piece they write (the header, each
  // chunk of data), so a tool can show how far a long write is. Empty: no calls.
  void set_progress(std::function<void(uint64_t bytes)> progress);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// RemoveTemporaryFilesOnSignals installs handlers for SIGINT, SIGTERM and SIGHUP that
// remove the temporary file of every WriteToFile / WriteCanonicalFile in progress, then
// let the signal end the process as it would have (so the exit status still says which
// signal it was). Signals the process ignores stay ignored. It also ignores SIGXFSZ, so
// that a write past RLIMIT_FSIZE fails with EFBIG and is reported (kIoError) instead of
// killing the process silently. Signal handling belongs to the program, so the library
// never calls this itself; a command-line tool calls it once at start.
STGUARD_API void RemoveTemporaryFilesOnSignals();

// FindLeftoverTemporaryFiles lists the temporary files that earlier writes to `path` left
// beside it when their process was killed outright (SIGKILL, power loss): the names
// ".NAME.stguard-PID-*.tmp" in the destination's folder whose PID is no longer running.
// They never hold anything the destination needs and can be deleted.
STGUARD_API std::vector<std::string> FindLeftoverTemporaryFiles(const std::string& path);

// CanonicalBytes returns the canonical form of a validated checkpoint.
[[nodiscard]] STGUARD_API Result<std::string> CanonicalBytes(const Checkpoint& checkpoint);

// kCanonicalCopyChunkLen is how much tensor data WriteCanonicalFile copies at a time when
// it releases source pages.
inline constexpr size_t kCanonicalCopyChunkLen = size_t{8} << 20;

// CanonicalWriteOptions tunes WriteCanonicalFile.
struct STGUARD_API CanonicalWriteOptions {
  // Copy the tensor data with Checkpoint::ReadData (pread(2) for a checkpoint from
  // Checkpoint::Open), kCanonicalCopyChunkLen bytes at a time, instead of reading the
  // mapped spans. Resident memory stays near one chunk whatever the data size (mapped
  // data pages would stay resident until the checkpoint is closed), and a source file
  // truncated by another process meanwhile gives kIoError naming it instead of SIGBUS.
  // For bytes already in memory it only adds a copy.
  bool release_source_pages = false;
};

// WriteCanonicalFile writes the canonical form of `checkpoint` crash-safely to `path`,
// streaming the data from the checkpoint's bytes. `path` may name the file that
// `checkpoint` was opened from.
[[nodiscard]] STGUARD_API Error WriteCanonicalFile(const Checkpoint& checkpoint,
                                                   const std::string& path,
                                                   const CanonicalWriteOptions& options = {});

// WriteCanonical streams the canonical form of `checkpoint` to `sink` (standard output,
// a socket), copying the data as release_source_pages does. Nothing is written when the
// header cannot be built; an error reading the source or writing the sink can come after
// part of the file was written.
[[nodiscard]] STGUARD_API Error WriteCanonical(const Checkpoint& checkpoint, ByteSink& sink);

// CanonicalDiffReason says why a valid file is not in canonical form. When a file differs
// in several ways, the reason is the one met first reading the header from its start.
enum class CanonicalDiffReason : uint8_t {
  kNone,           // the file is byte-identical to its canonical form
  kOrder,          // keys in another order: tensors, metadata keys, __metadata__ not
                   // first, or the fields of a tensor entry
  kOffsets,        // keys in canonical order, but the data is laid out differently
  kEscapes,        // a string is escaped differently ("\u0041" for "A", "\/" for "/")
  kWhitespace,     // whitespace between tokens, or other than spaces after the header
  kPadding,        // only spaces after the header, but not the canonical number of them
  kEmptyMetadata,  // an empty "__metadata__":{} object, which canonical form omits
};

// CanonicalDiffReasonName returns "none", "order", "offsets", "escapes", "whitespace",
// "padding" or "empty-metadata".
STGUARD_API std::string_view CanonicalDiffReasonName(CanonicalDiffReason reason);

// CanonicalDiff compares a file with its canonical form.
struct STGUARD_API CanonicalDiff {
  bool canonical = true;
  CanonicalDiffReason reason = CanonicalDiffReason::kNone;
  // offset is the first byte at which the file and its canonical form differ. It is 0..7
  // when the header lengths differ, since the length prefix comes first.
  uint64_t offset = 0;
  // reason_offset is the absolute file offset, inside the header, of the difference that
  // `reason` names (the token, the whitespace byte, the first padding byte).
  uint64_t reason_offset = 0;
  uint64_t canonical_header_len = 0;  // N of the canonical form
};

// CompareToCanonical computes the canonical header of `checkpoint` (never touching its
// data pages) and compares. Data needs no comparison: a header identical to the canonical
// one fixes every offset, so the data buffers are identical too; a header that differs
// already gives the first differing byte. Returns an Error only if the canonical header
// cannot be built, which cannot happen for a checkpoint the reader accepted.
[[nodiscard]] STGUARD_API Result<CanonicalDiff> CompareToCanonical(const Checkpoint& checkpoint);

// DescribeCanonicalDiff renders a diff for people: "canonical" or
// "not canonical: first difference at byte 0 (whitespace at byte 57)".
STGUARD_API std::string DescribeCanonicalDiff(const CanonicalDiff& diff);

// CheckOutputIsNotInput is the one rule every conversion of a file or folder `in` to
// `out` applies before it writes anything: `out` must not name `in` itself. They are
// compared by st_dev and st_ino after following symbolic links, as opening them does, so
// the same path, a hard link and a symbolic link (or a folder reached two ways) are all
// the input, and an `out` that does not exist yet never is. Returns kInvalidArgument
// naming both paths when they are the same file: the converters other than safetensors
// to safetensors read the input while writing and would replace it with their output.
// (WriteConvertedFile may write onto its input: it reads a checkpoint opened before the
// crash-safe rename, as `canon IN IN` does.) An `in` that cannot be reached is no
// refusal here: the conversion reports it as it opens the input.
[[nodiscard]] STGUARD_API Error CheckOutputIsNotInput(const std::string& in,
                                                      const std::string& out);

// Converted files: each tensor whose dtype IsConvertibleFloat (stguard/dtype.h) converted
// to F32, F16 or BF16 with stguard/convert.h's element conversion (see its ENCODING).

// AddConvertedCheckpoint adds every tensor and metadata entry of `checkpoint` to
// `writer`, with each tensor whose dtype IsConvertibleFloat converted to `target` (F32,
// F16 or BF16; see ENCODING). Conversion happens as the writer streams the file, in
// fixed-size chunks, so memory does not depend on the data size; `checkpoint` must
// outlive the writer's last write. The data is read with Checkpoint::ReadData (pread for
// a file, never the mapped spans), so a source truncated meanwhile is kIoError naming it. Other tensors are copied unchanged. On success,
// *out_num_converted (if not null) is the number of tensors whose dtype changed.
// Returns kInvalidArgument for another target, or the writer's error.
[[nodiscard]] STGUARD_API Error AddConvertedCheckpoint(const Checkpoint& checkpoint,
                                                       Dtype target, Writer* writer,
                                                       size_t* out_num_converted = nullptr);

// WriteConvertedFile writes, crash-safely to `path`, the file that AddConvertedCheckpoint
// and Writer::WriteToFile would write, byte for byte, without a Writer: the header is
// streamed in pieces and the data converted tensor by tensor, so memory is a few bytes a
// tensor and fixed buffers however large the header (a Writer keeps each name, metadata
// entry and producer). WriteConverted streams the same bytes to `sink`. Errors are as for
// AddConvertedCheckpoint and the write; nothing is written when the header cannot be made.
// `progress`, when set, is called with the number of bytes of each write to the file, as
// Writer::set_progress's is, so that a tool can show how far a long conversion is.
[[nodiscard]] STGUARD_API Error WriteConvertedFile(
    const Checkpoint& checkpoint, Dtype target, const std::string& path,
    size_t* out_num_converted = nullptr,
    const std::function<void(uint64_t bytes)>& progress = {});
[[nodiscard]] STGUARD_API Error WriteConverted(const Checkpoint& checkpoint, Dtype target,
                                               ByteSink& sink,
                                               size_t* out_num_converted = nullptr);

}  // namespace stguard

#endif  // STGUARD_WRITER_H_
