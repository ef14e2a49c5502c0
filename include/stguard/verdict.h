// SPDX-License-Identifier: Apache-2.0
// stguard/verdict.h: the front door. One function decides whether a file or a folder of
// any format stguard recognises is valid, and one result (the envelope) says so in the
// same words for every command, the C API and Python.
//
// THE FOUR VERDICTS (VerdictName gives the word; VerdictExitStatus the exit status)
// - valid (exit 0): every rule for the format holds, and loading it runs no code of the
//   file's choosing. A pickle-bearing file the static scan reads to its end is valid,
//   including one whose tensors sit under a key (needs-key: a warning names the keys) and
//   a clean bare pickle (it holds no tensor data: a warning says so).
// - invalid (exit 1): malformed: a rule of its format does not hold (the error says which,
//   where, and for which tensor).
// - refused (exit 1): loading it would run code the file chose (a pickle naming a global
//   outside the allowlist, an npy object array), or it cannot be proven safe (a pickle the
//   scan cannot read to its end, a tar, an archive that is neither npz nor PyTorch).
// - error (exit 2): no verdict on the file: it could not be read (I/O), the request was
//   not usable (a flag that does not apply to the format found), or memory ran out.
//
// THE ENVELOPE (AppendEnvelopeJson writes it; schema version kEnvelopeSchemaVersion)
//   "schema_version": 2, "file": the path given, "format": FormatName of what was found
//   ("folder" for a folder), "verdict": the word above; "unchecked" (only for a remote
//   file some of whose checks were skipped: CheckResult::unchecked); and when not valid: "code" (the
//   error code's name), "message" (the sentence and its detail), "offset" (only when it is
//   a byte offset into the file named by "file", or by "member" inside a folder:
//   ResultOffsetInFile), "member" (inside a folder, the file the error is about:
//   Error::file), "tensor" (may be ""). Every command's --json (check, lint, scan, inspect,
//   convert) starts with these and adds its own fields after them; the options a command
//   was given are part of the verdict (check --canonical: CheckOptions::require_canonical),
//   so the envelope never says valid where the exit status says otherwise.
//   Version 2 (this release): one order of verdicts for folders and exit statuses, the
//   member from Error::file, offsets from error_codes.def's HAS_OFFSET column everywhere,
//   `check --canonical` and a lint that cannot run as verdicts in the envelope.
//
// FOLDERS. CheckPath on a folder (or an index file: a *.safetensors.index.json is read as
// the index, another *.index.json such as pytorch_model.bin.index.json names no safetensors
// and its folder is checked; either way the verdict is the folder's, a note says so and
// `member` names the file deciding it) validates the logical safetensors checkpoint and
// the files around it (config.json, the index), scans every pickle-bearing file (found
// by content, subfolders included) statically, and validates every GGUF, npy and npz
// file in it: each file is examined once and listed once in
// `files` (pickle-bearing files first, then the others, each in walk order). The
// folder's verdict is the worst (THE ORDER OF VERDICTS below) of its own error (index,
// shards, config.json, the walk's bounds) and its files' verdicts: a refused file
// outranks any other finding (DecideFolderVerdict). A file of the folder behind a link
// out of it is refused (a loader may read it); one that cannot be read here is error. A
// folder without safetensors is checked for its other files; one with no recognised file
// at all keeps the "no .safetensors file" error.
#ifndef STGUARD_VERDICT_H_
#define STGUARD_VERDICT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/file_verdict.h"
#include "stguard/sniff.h"
#include "stguard/torch_checkpoint.h"
#include "stguard/writer.h"

namespace stguard {

namespace gguf {
class GgufFile;
}  // namespace gguf
struct NpyArrayInfo;
struct NpzInfo;
struct CheckResult;

// Verdict (stguard/error.h, so that error_codes.def can name one per code) is valid,
// invalid, refused or error, as described under THE FOUR VERDICTS.

// VerdictName returns "valid", "invalid", "refused" or "error".
STGUARD_API std::string_view VerdictName(Verdict verdict);

// VerdictSentence returns the verdict's meaning in one sentence for a person (the
// browser page shows it under the verdict): the page prints it, never a copy of its own.
STGUARD_API std::string_view VerdictSentence(Verdict verdict);

// VerdictLine returns the verdict's word followed by what a remote read left unchecked:
// "valid (remote: 3 storage checksums not read)", or "valid" when nothing was left out.
STGUARD_API std::string VerdictLine(const CheckResult& result);

// VerdictExitStatus returns the exit status for a verdict: 0 valid, 1 invalid or
// refused, 2 error. A command over several paths exits with its worst verdict's status
// (WorseVerdict), not with the largest number.
STGUARD_API int VerdictExitStatus(Verdict verdict);

// THE ORDER OF VERDICTS: refused, then invalid, then error, then valid. The worst wins
// wherever verdicts are combined: a folder's verdict over its files and its own error
// (CheckFolder), the C API's and Python's folders, and the exit status of a command given
// several paths. So a file that cannot be read (error, exit 2) never hides one that would
// run code (refused, exit 1) or one that is malformed (invalid, exit 1): "no verdict" on
// one input says nothing about the others, while a refusal or a malformed file is a
// finding. VerdictRank gives the place in this order (refused 3, invalid 2, error 1,
// valid 0); WorseVerdict returns the worse of two (the first on a tie).
STGUARD_API int VerdictRank(Verdict verdict);
STGUARD_API Verdict WorseVerdict(Verdict first, Verdict second);

// VerdictForError classifies an error found while checking a file by the VERDICT column
// of its code's row in stguard/error_codes.def (ErrorVerdict): kOk → valid; I/O,
// not-a-regular-file, out-of-memory and invalid-argument → error; codes meaning "would run
// code" (a refused global or opcode, an npy object array) → refused; anything else →
// invalid. Pickle-bearing files are classified by their FileVerdict instead
// (VerdictForPickle), since "cannot prove safe" is a refusal whatever the code.
STGUARD_API Verdict VerdictForError(const Error& error);

// VerdictForPickle maps the static scan's verdict: clean and needs-key → valid;
// names-code and cannot-prove-safe → refused (an unreadable file → error).
STGUARD_API Verdict VerdictForPickle(const PickleFileReport& report);

inline constexpr int kEnvelopeSchemaVersion = 2;

struct CheckOptions {
  // require_aligned_data: every safetensors tensor's data aligned to its element size
  // (else invalid, kMisalignedData).
  bool require_aligned_data = false;
  // require_canonical (check --canonical): a valid safetensors file must also be byte for
  // byte its canonical form (else invalid, kNotCanonical, at the first differing byte;
  // CheckResult::canonical holds the comparison). Asked of a folder or of another format,
  // it is a usage error (verdict error, kInvalidArgument), never ignored.
  bool require_canonical = false;
  // Read files through symbolic links that resolve out of the folder.
  bool allow_external_symlinks = false;
  // How a pickle-bearing file's state dict is selected (--key) and its output bounded.
  TorchOptions torch;
  // list_contents: fill CheckResult::tensors and ::metadata for a file that was read (see
  // CONTENTS below). Off by default: a verdict alone needs none of it.
  bool list_contents = false;
  // keep_reader: keep what the format's reader built for a valid safetensors, GGUF, npy or
  // npz file in CheckResult::checkpoint, ::gguf, ::npy or ::npz, so a caller that goes on
  // to describe the file (`inspect`) does not read its header (or inflate an npz's
  // members) a second time; for a folder, its safetensors checkpoint (headers only) in
  // CheckResult::checkpoint_dir. Off by default: a
  // verdict alone needs none of it (a GGUF file keeps its mapping while it is held).
  bool keep_reader = false;
  // progress, when set, hears how far a folder check is: the byte size of each file (for
  // the safetensors shards, their data bytes at once) as the check finishes with it, so
  // that a tool can show progress on a folder of many or large files. Not called for a
  // single file.
  std::function<void(uint64_t bytes)> progress;
};

// CONTENTS (CheckOptions::list_contents). What a checked file holds, for a person or a
// page to show; every string is the file's own text (attacker input: escape it).
// - dtype is the format's own type name: "F32" (safetensors), "q4_K" (GGUF, ggml's name),
//   "<f4" (npy, npz), torch's storage dtype by its safetensors name ("BF16").
// - shape is outermost first, except GGUF, whose shape is ne in file order (innermost
//   first, as ggml stores it and as GGUF tools print it).
// - begin and end are absolute byte offsets of the tensor's data in the file, when known
//   (0 and 0 otherwise: an npz member that is deflated, a torch tensor, a bare pickle).
// - metadata: safetensors' __metadata__ entries; GGUF's keys with their values (an array
//   summarised as "[string × 32000]", a float as FloatText in stguard/json_escape.h
//   writes it: "-0.0", "1.0", "0.1", "nan", the digits of `inspect`); npy's descr,
//   fortran_order and shape; torch's globals ("global" → "module.name"). Values longer
//   than kMaxContentsValueLen bytes are cut there (at a UTF-8 boundary) and end in "…".
// BOUND: one entry per tensor or key the reader already holds, so the lists are linear in
// the header the readers bounded (a safetensors header ≤ 100 MB, an npy header ≤ 10,000
// bytes, a GGUF's tensor-info section ≤ its file), and so is their JSON.
inline constexpr size_t kMaxContentsValueLen = 1024;

// TensorEntry is one tensor of a checked file (see CONTENTS).
struct TensorEntry {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t bytes = 0;
};

// CheckSummary holds the counts a valid file or folder reports (0 where not known).
struct CheckSummary {
  uint64_t tensors = 0;
  uint64_t data_bytes = 0;    // tensor data bytes (safetensors, gguf, npy)
  uint64_t header_bytes = 0;  // a single safetensors file's JSON header
  uint64_t shards = 0;        // safetensors files validated: a folder's shards, 1 for a file
  std::string index;          // a folder's index file, when it has one
  // detail: what was found, in a few words for a person ("gguf v3, 2 tensors, 5 keys";
  // "npy 1.0, <f4, 64 data bytes"); empty when there is nothing to add.
  std::string detail;
};

// CheckResult is the envelope and what it rests on.
struct CheckResult {
  std::string file;                  // the path given (or, in `files`, the name in the folder)
  Format format = Format::kUnknown;  // what SniffFormat found (a folder: kUnknown)
  bool is_folder = false;
  Verdict verdict = Verdict::kError;
  // error: ok when valid; otherwise the error that decided the verdict. For a folder,
  // `member` names the file inside the folder it is about (a pickle-bearing file, a
  // shard, the index, config.json; "" for the folder as a whole).
  Error error;
  std::string member;
  std::vector<Warning> warnings;
  CheckSummary summary;
  // pickle: the static scan's report, for a pickle-bearing file (tensors, globals, keys).
  std::optional<PickleFileReport> pickle;
  // files: a folder's files that were examined, each once, in walk order.
  std::vector<CheckResult> files;
  // tensors, metadata: the file's contents when CheckOptions::list_contents asked (see
  // CONTENTS); empty otherwise, and for a folder.
  std::vector<TensorEntry> tensors;
  std::vector<std::pair<std::string, std::string>> metadata;
  // checkpoint, gguf, npy, npz: the format reader's validated result when
  // CheckOptions::keep_reader asked and the file is valid (a safetensors checkpoint holds
  // its header only, as Checkpoint::OpenHeader); null otherwise, for a folder, and for a
  // folder's files (only the folder's checkpoint_dir below is kept).
  std::shared_ptr<const Checkpoint> checkpoint;
  std::shared_ptr<const gguf::GgufFile> gguf;
  std::shared_ptr<const NpyArrayInfo> npy;
  std::shared_ptr<const NpzInfo> npz;
  // checkpoint_dir: for a folder, when CheckOptions::keep_reader asked and its safetensors
  // checkpoint opened (the shards' headers, as DirOptions::headers_only); null otherwise.
  std::shared_ptr<const CheckpointDir> checkpoint_dir;
  // config: for a folder, when CheckOptions::keep_reader asked, its config.json as the
  // check read it (ModelFolderReport::config; null when absent), so that lint reads it once.
  std::shared_ptr<const MappedFile> config;
  // canonical: with CheckOptions::require_canonical, the comparison of a safetensors
  // file's header with its canonical form (unset when none was made).
  std::optional<CanonicalDiff> canonical;
  // unchecked: the checks a remote file's verdict does not rest on because their bytes
  // were not read (stguard/remote.h, THE POLICY): "3 storage checksums", "2 member
  // checksums", "the padding between tensors". Empty for a local file and for a remote
  // file received whole. The envelope lists them ("unchecked") and the verdict line says
  // "valid (remote: 3 storage checksums not read)" (VerdictLine).
  std::vector<std::string> unchecked;
  // notes: each check that was skipped and why ("tensor data CRC not checked: the data was
  // not read"), so a valid verdict says what it rests on. Always filled.
  std::vector<std::string> notes;

  bool valid() const { return verdict == Verdict::kValid; }
  int exit_status() const { return VerdictExitStatus(verdict); }
};

// CheckPath validates `path`: a file of any format SniffFormat recognises (a file it does
// not recognise is read as safetensors, whose errors say why it is not one), or a folder /
// *.safetensors.index.json as described under FOLDERS. Never throws; never runs anything.
STGUARD_API CheckResult CheckPath(const std::string& path, const CheckOptions& options = {});

// A URL (http://, https://, hf://: stguard/remote.h) is checked as a file by range
// requests under the remote-read policy, through the transport SetHttpTransport
// installed (without one: verdict error, "built without URL support").
// CheckFile and CheckFolder are CheckPath's two halves, for callers that already know.
STGUARD_API CheckResult CheckFile(const std::string& path, const CheckOptions& options = {});

// CheckSource is CheckFile over a file read by ranges (stguard/byte_source.h): the same
// verdict, code, offset and tensor for the same bytes, reading only what the verdict
// needs. `name` is what the result calls the file. The sniff reads first (SniffSource:
// min(size, 512) bytes, more only for what its rules look at) and its bytes serve the
// reader's first reads. Per format:
// - safetensors: the prefix and the header, with the sniff's reads: at most 2 reads and
//   max(512, 8 + N) bytes (a 16 GB file with a 2 KB header: 2 KB).
// - npy: the preamble and header, inside the sniff's 512 bytes (else one more read).
// - GGUF: growing reads of header, key/values and tensor infos (gguf::GgufFile::ReadSource:
//   the tensor infos' end plus at most 16 MiB); then, unless source.remote(), the padding
//   between and after the tensors; when it was skipped a note says so.
// - a PyTorch ZIP, an npz, a legacy torch stream, a bare pickle, a tar: the whole file, in
//   chunks that double from 1 MiB (their readers take the whole archive for now).
// A GGUF split set is checked as one file here, with a note (its other parts are files
// beside it: CheckFile or CheckFolder check the set).
STGUARD_API CheckResult CheckSource(const ByteSource& source, const std::string& name,
                                    const CheckOptions& options = {});
STGUARD_API CheckResult CheckFolder(const std::string& path, const CheckOptions& options = {});

// DecideFolderVerdict sets a folder's verdict, error and member from the folder's own
// error (`folder_error`: the index, the shards, config.json, the walk's bounds; ok when
// none) and the verdicts of result->files, by the order of verdicts: the worst wins; on a
// tie the folder's own error, then the first file in walk order. A file's error is
// carried with Error::file and `member` naming it. CheckFolder, and Python's scan of a
// folder, decide through it.
STGUARD_API void DecideFolderVerdict(const Error& folder_error, CheckResult* result);

// ResultForPickle builds the result for a pickle-bearing file already judged (`scan`
// prints it): the verdict by VerdictForPickle, the warning a needs-key or bare pickle
// gets, the tensor count, and the report itself.
STGUARD_API CheckResult ResultForPickle(const std::string& path, PickleFileReport report);

// IsFolderPath says whether CheckPath treats `path` as a folder: a directory, or a regular
// file whose name ends in ".json" (a sharded index).
STGUARD_API bool IsFolderPath(const std::string& path);

// UsageError returns a result with verdict error and kInvalidArgument, for a flag that
// does not apply to the format found ("--canonical applies to safetensors files, not
// pytorch-zip"): callers print it like any other result.
STGUARD_API CheckResult UsageError(const std::string& path, Format format,
                                   std::string_view flag, std::string_view applies_to);

// ResultOffsetInFile says whether a result's error.offset is a byte of a named file: the
// file itself, or for a folder the member the error is about (ErrorHasOffset for the
// code, the column of stguard/error_codes.def). The envelope shows "offset" exactly when
// this is true; so do the C API and Python.
STGUARD_API bool ResultOffsetInFile(const CheckResult& result);

// AppendEnvelopeJson appends the envelope's fields (no braces: `"schema_version":1,
// "file":...,...`) to *out, so callers add their own fields after a comma.
STGUARD_API void AppendEnvelopeJson(const CheckResult& result, std::string* out);

// AppendContentsJson appends `"tensors":[{"name":..,"dtype":..,"shape":[..],"begin":..,
// "end":..,"bytes":..},...],"metadata":[[key,value],...],"notes":[...]` (no braces) to
// *out, every string escaped as JSON (names are the file's text).
STGUARD_API void AppendContentsJson(const CheckResult& result, std::string* out);

// AppendWarningsJson appends `"warnings":[{"kind":..,"file":..,"tensor":..,"message":..},
// ...]` (no braces) to *out: the one JSON form of warnings for every front end.
STGUARD_API void AppendWarningsJson(std::span<const Warning> warnings, std::string* out);

// EnvelopeJson returns the envelope as one JSON object.
STGUARD_API std::string EnvelopeJson(const CheckResult& result);

}  // namespace stguard

#endif  // STGUARD_VERDICT_H_
