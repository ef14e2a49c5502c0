// SPDX-License-Identifier: Apache-2.0
// CheckFile and CheckSource: one file of any recognised format, dispatched by its sniffed
// format (never by its name), to the one verdict of stguard/verdict.h. Both read through a
// ByteSource (CheckFile's is the file, opened without a mapping); CheckFile alone hands
// a legacy stream, a bare pickle or a tar, GGUF and npz to the mapped readers by path.
#include "stguard/verdict.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/prefixed_source.h"
#include "base/range_cache_source.h"
#include "base/source_read.h"
#include "front/check_remote.h"
#include "front/contents.h"
#include "sniff/sniff_source.h"
#include "stguard/file_verdict.h"
#include "stguard/gguf.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "stguard/npz.h"
#include "stguard/plural.h"
#include "stguard/reader.h"
#include "stguard/remote.h"
#include "stguard/sniff.h"
#include "torch/zip_source_verdict.h"

namespace stguard {
namespace {

void SetError(const Error& error, CheckResult* result) {
  result->error = error;
  result->verdict = VerdictForError(error);
}

void CheckSafetensors(const ByteSource& source, const CheckOptions& options,
                      CheckResult* result) {
  Options reader;
  reader.require_aligned_data = options.require_aligned_data;
  // Validation needs the prefix and header only: no data is read or mapped.
  Result<Checkpoint> checkpoint = Checkpoint::OpenHeader(source, reader);
  if (!checkpoint.ok()) return SetError(checkpoint.error(), result);
  result->verdict = Verdict::kValid;
  result->summary.tensors = checkpoint->num_tensors();
  result->summary.header_bytes = checkpoint->header_len();
  result->summary.shards = 1;  // the one safetensors file validated
  for (const TensorView& tensor : checkpoint->tensors()) {
    result->summary.data_bytes += tensor.byte_size();
  }
  result->summary.detail =
      "safetensors, " + Plural(checkpoint->num_tensors(), "tensor") + ", " +
      Plural(checkpoint->header_len(), "header byte");
  if (options.list_contents) ListSafetensors(*checkpoint, result);
  if (options.keep_reader) {
    result->checkpoint = std::make_shared<const Checkpoint>(std::move(*checkpoint));
  }
}

// GgufSplitError validates the whole set when `file` is the first part of a split model
// (other parts are checked alone); *parts and *tensors describe a set of several parts.
// Without a path (a file read by ranges) the other parts cannot be found: a note says so.
Error GgufSplitError(const std::string* path, const gguf::GgufFile& file, size_t* parts,
                     uint64_t* tensors, CheckResult* result) {
  const gguf::MetadataEntry* count = file.FindKey("split.count");
  const gguf::MetadataEntry* no = file.FindKey("split.no");
  if (count == nullptr || no == nullptr || count->value.AsUnsigned().value_or(0) <= 1 ||
      no->value.AsUnsigned().value_or(1) != 0) {
    return {};
  }
  if (path == nullptr) {
    result->notes.push_back(
        "split set not checked: the other parts are files beside this one (check the "
        "folder)");
    return {};
  }
  Result<gguf::GgufSplitSet> set = gguf::CheckSplitSet(*path);
  if (!set.ok()) return set.error();
  *parts = set->parts.size();
  *tensors = set->num_tensors;
  return {};
}

// GgufTypesText names the file's tensor types, the most used first, as llama.cpp names
// quantisations (" (Q4_K, F32)"); past three, the rest are counted.
std::string GgufTypesText(const gguf::GgufFile& file) {
  std::vector<std::pair<size_t, std::string_view>> uses;  // (tensors, type name)
  for (const gguf::TensorInfo& tensor : file.tensors()) {
    auto same = std::find_if(uses.begin(), uses.end(),
                             [&](const auto& use) { return use.second == tensor.type->name; });
    if (same == uses.end()) {
      uses.emplace_back(1, tensor.type->name);
    } else {
      ++same->first;
    }
  }
  if (uses.empty()) return "";
  std::stable_sort(uses.begin(), uses.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  constexpr size_t kNamed = 3;
  std::string text = " (";
  for (size_t k = 0; k < uses.size() && k < kNamed; ++k) {
    if (k > 0) text += ", ";
    for (char c : uses[k].second) {
      text += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  if (uses.size() > kNamed) text += ", " + Plural(uses.size() - kNamed, "other");
  return text + ")";
}

void SummariseGguf(const std::string* path, const gguf::GgufFile& file,
                   const CheckOptions& options, CheckResult* result) {
  size_t parts = 1;
  uint64_t set_tensors = 0;
  if (Error error = GgufSplitError(path, file, &parts, &set_tensors, result); !error.ok()) {
    return SetError(error, result);
  }
  result->verdict = Verdict::kValid;
  result->summary.tensors = parts > 1 ? set_tensors : file.tensors().size();
  result->summary.header_bytes = file.data_offset();
  result->summary.data_bytes = file.file_size() - file.data_offset();
  const std::string version = "GGUF v" + std::to_string(file.version());
  result->summary.detail =
      parts > 1 ? version + " split model, " + Plural(parts, "part") + ", " +
                      Plural(set_tensors, "tensor")
                : version + ", " + Plural(file.tensors().size(), "tensor") +
                      GgufTypesText(file) + ", " +
                      Plural(file.metadata().size(), "key");
  if (options.list_contents) ListGguf(file, result);
}

// CheckGguf maps a local file (its path given): its header is parsed in place. Read
// through the sniff's source instead (which would spare the sniff's first block a second
// read), the header is copied in growing prefixes first: checking a 4.8 MB header took
// twice the user time.
void CheckGguf(const ByteSource& source, const std::string* path, const CheckOptions& options,
               CheckResult* result) {
  Result<gguf::GgufFile> file =
      path != nullptr ? gguf::GgufFile::Open(*path) : gguf::GgufFile::ReadSource(source);
  // Said on a failure too: a remote file with bad padding may fail a later rule instead.
  if (path == nullptr && (!file.ok() ? source.remote() : !file->padding_checked())) {
    result->unchecked.push_back("the padding between tensors");
    result->notes.push_back(
        "padding between tensors not checked for zeros: the file is remote, and the padding "
        "is a read per tensor (its length is checked)");
  }
  if (!file.ok()) return SetError(file.error(), result);
  SummariseGguf(path, *file, options, result);
  if (options.keep_reader && result->valid()) {
    result->gguf = std::make_shared<const gguf::GgufFile>(std::move(*file));
  }
}

void CheckNpy(const ByteSource& source, const CheckOptions& options, CheckResult* result) {
  const Result<NpyArrayInfo> info = ReadNpySource(source);
  if (!info.ok()) return SetError(info.error(), result);
  result->verdict = Verdict::kValid;
  result->summary.tensors = 1;
  result->summary.header_bytes = info->header_len;
  result->summary.data_bytes = info->data_len;
  result->summary.detail = ".npy v" + std::to_string(info->major_version) + "." +
                           std::to_string(info->minor_version) + ", " + info->descr + ", " +
                           Plural(info->data_len, "data byte");
  if (options.list_contents) ListNpy(*info, result);
  if (options.keep_reader) result->npy = std::make_shared<const NpyArrayInfo>(*info);
}

void SummariseNpz(const NpzInfo& info, const CheckOptions& options, CheckResult* result) {
  result->verdict = Verdict::kValid;
  result->summary.tensors = info.members.size();
  for (const NpzMember& member : info.members) result->summary.data_bytes += member.array.data_len;
  result->summary.detail = ".npz, " + Plural(info.members.size(), "array") + ", " +
                           Plural(result->summary.data_bytes, "data byte");
  if (options.list_contents) ListNpz(info, result);
  if (options.keep_reader) result->npz = std::make_shared<const NpzInfo>(info);
}

// CheckNpz maps a local file (its path given): each stored member's CRC-32 is computed
// over the mapping in place. Read through the sniff's source instead (which would spare
// the sniff's block, tail and directory a second read), every member is copied by pread:
// checking a 200 MB npz took 40% longer.
void CheckNpz(const ByteSource& source, const std::string* path, const CheckOptions& options,
              CheckResult* result) {
  if (path != nullptr) {
    const Result<NpzInfo> info = ReadNpzFile(*path);
    if (!info.ok()) return SetError(info.error(), result);
    return SummariseNpz(*info, options, result);
  }
  uint64_t unread = 0;
  const Result<NpzInfo> info = ReadNpzSource(source, &unread);
  if (unread != 0) {
    result->unchecked.push_back(Plural(unread, "member checksum"));
    result->notes.push_back("CRC-32s of " + Plural(unread, "member") +
                            " not read: the file is remote (its structure, local headers and "
                            ".npy headers were checked; a deflated member's stream up to its "
                            ".npy header only)");
  }
  if (!info.ok()) return SetError(info.error(), result);
  SummariseNpz(*info, options, result);
}

// CheckPickleBearing judges a pickle-bearing file statically: by path through the mapped
// reader; a PyTorch ZIP source by ranges (its end records, central directory, data.pkl
// and format records; locally also every storage's local header and CRC-32); any other
// source from the whole file: a legacy stream, a bare pickle or a tar is one stream whose
// pickle must be read to its end before the storages after it can be placed.
void CheckPickleBearing(const ByteSource& source, const std::string* path,
                        const CheckOptions& options, CheckResult* result) {
  const std::string name = result->file;
  if (path != nullptr && result->format != Format::kPytorchZip) {
    *result = ResultForPickle(name, JudgePickleFile(*path, options.torch));
  } else if (result->format == Format::kPytorchZip) {
    // By ranges also for a path: the sniff's tail and directory reads serve the reader's.
    uint64_t unread = 0;
    *result = ResultForPickle(name, JudgePickleZipSource(source, options.torch, &unread));
    if (unread != 0) {
      result->unchecked.push_back(Plural(unread, "storage checksum"));
      result->notes.push_back("local headers and CRC-32s of " +
                              Plural(unread, "storage record") +
                              " not read: the file is remote (its structure, data.pkl and "
                              "format records were checked)");
    }
  } else {
    std::vector<std::byte> bytes;
    if (Error error = ReadWhole(source, &bytes); !error.ok()) {
      return SetError(error, result);
    }
    *result = ResultForPickle(name, JudgePickleBytes(bytes, options.torch));
  }
  if (options.list_contents && result->pickle.has_value()) ListPickle(*result->pickle, result);
}

// An archive that is neither PyTorch's nor an npz: what loads it (Keras, a custom
// loader) may run code stguard cannot see, so it cannot be proven safe.
void RefuseOtherArchive(CheckResult* result) {
  result->verdict = Verdict::kRefused;
  result->error = Error{ErrorCode::kZipUnexpectedRecord, 0,
                        "a ZIP archive that is neither a PyTorch checkpoint (a .pkl record) "
                        "nor an npz (only .npy members): it cannot be proven safe"};
}

// Judge sniffs the file `source` reads and hands it to its format's reader. `path` is the
// same file's path when it has one (CheckFile), for the readers that map it (a
// pickle stream, GGUF, npz).
CheckResult Judge(const ByteSource& source, const std::string* path, const std::string& name,
                  const CheckOptions& options) {
  CheckResult result;
  result.file = name;
  std::vector<std::byte> prefix;
  // The sniff classifies a ZIP from its tail and central directory: kept, they serve the
  // ZIP reader's first reads too (bounded: RangeCacheSource::kMaxCachedBytes).
  RangeCacheSource cached(source);
  const Result<Format> format = SniffSourcePrefix(cached, &prefix);
  if (!format.ok()) {
    SetError(format.error(), &result);
    return result;
  }
  result.format = *format;
  if (result.format == Format::kPytorchZip) {
    cached.Stop();
  } else if (result.format == Format::kNpz) {
    // Kept recording: the ZIP reader reads each local header in a block that holds the
    // start of the member's data too, so the .npy header reads after it cost no request.
  } else {
    cached.Clear();
  }
  // The sniff's bytes serve the reader's first reads, so no byte is read twice. The sniff
  // reads a safetensors header past its first block only when the header's length spells
  // the start of a text pickle opcode (about one length in twelve): it then holds up to
  // the whole header while the reader copies it, twice the header for that moment.
  const PrefixedSource prefixed(cached, prefix);
  switch (result.format) {
    case Format::kPytorchZip:
    case Format::kPytorchLegacy:
    case Format::kPickle:
    case Format::kTar:
      CheckPickleBearing(prefixed, path, options, &result);
      break;
    case Format::kGguf: CheckGguf(prefixed, path, options, &result); break;
    case Format::kNpy: CheckNpy(prefixed, options, &result); break;
    case Format::kNpz: CheckNpz(prefixed, path, options, &result); break;
    case Format::kZip: RefuseOtherArchive(&result); break;
    // Not recognised (or JSON given as a file): read as safetensors, whose errors say
    // what is wrong with it as one.
    case Format::kSafetensors:
    case Format::kJson:
    case Format::kUnknown:
    case Format::kNumFormats:
      CheckSafetensors(prefixed, options, &result);
      break;
  }
  return result;
}

// JudgeNoThrow is Judge with allocation failure turned into a result.
CheckResult JudgeNoThrow(const ByteSource& source, const std::string* path,
                         const std::string& name, const CheckOptions& options) {
  try {
    return Judge(source, path, name, options);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  CheckResult result;
  result.file = name;
  SetError(Error{ErrorCode::kOutOfMemory, 0, "out of memory while checking the file"}, &result);
  return result;
}

}  // namespace

// PickleFormatTitle names a pickle-bearing format for people ("PyTorch checkpoint (ZIP)").
std::string_view PickleFormatTitle(Format format) {
  switch (format) {
    case Format::kPytorchZip: return "PyTorch checkpoint (ZIP)";
    case Format::kPytorchLegacy: return "PyTorch checkpoint (legacy stream)";
    case Format::kTar: return "PyTorch checkpoint (tar)";
    case Format::kPickle: return "pickle";
    default: return FormatName(format);
  }
}

// The static scan's verdict (nothing runs): clean and needs-key are valid (needs-key with a
// warning naming the keys), names-code and cannot-prove-safe refused.
CheckResult ResultForPickle(const std::string& path, PickleFileReport report) {
  CheckResult result;
  result.file = path;
  result.format = report.format;
  result.verdict = VerdictForPickle(report);
  if (result.verdict != Verdict::kValid) {
    result.error = report.reason;
  } else if (report.verdict == FileVerdict::kNeedsKey || !report.reason.ok()) {
    result.warnings.push_back(Warning{WarningKind::kPickleFile, path, {}, DescribeVerdict(report)});
  }
  result.summary.tensors = report.scan.tensors.size();
  result.summary.detail = std::string(PickleFormatTitle(report.format)) + ", " +
                          Plural(report.scan.tensors.size(), "tensor") + ", " +
                          (report.verdict == FileVerdict::kClean
                               ? "nothing outside the allowlist"
                               : std::string(FileVerdictName(report.verdict)));
  result.pickle = std::move(report);
  return result;
}

bool IsFolderPath(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return false;  // CheckFile reports the error
  if (S_ISDIR(info.st_mode)) return true;
  return S_ISREG(info.st_mode) && path.ends_with(".json");
}

CheckResult CheckFile(const std::string& path, const CheckOptions& options) {
  if (IsRemoteInput(path)) return CheckRemote(path, options);
  // Opened without a mapping: the sniff and the readers read by pread; only the readers
  // of a pickle stream (legacy, bare pickle, tar), GGUF and npz map the path.
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  if (!file.ok()) {
    CheckResult result;
    result.file = path;
    SetError(file.error(), &result);
    return result;
  }
  return JudgeNoThrow(**file, &path, path, options);
}

CheckResult CheckSource(const ByteSource& source, const std::string& name,
                        const CheckOptions& options) {
  return JudgeNoThrow(source, nullptr, name, options);
}

}  // namespace stguard
