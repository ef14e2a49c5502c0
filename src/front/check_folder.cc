// SPDX-License-Identifier: Apache-2.0
// CheckFolder: one verdict for a model folder (or a sharded index): the logical
// safetensors checkpoint, the files around it, and every other file the walk recognises
// by content (pickle-bearing files, GGUF, npy, npz), each examined once.
#include "stguard/verdict.h"

#include <sys/stat.h>

#include "front/folder_members.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "stguard/checkpoint_dir.h"
#include "stguard/file_verdict.h"
#include "stguard/folder_scan.h"
#include "stguard/mapped_file.h"

namespace stguard {
namespace {

// NoSafetensorsInFolder: CheckpointDir found neither a .safetensors file nor an index. A
// folder of PyTorch, GGUF or npy files is still a model folder; one with nothing at all
// keeps this error.
bool NoSafetensorsInFolder(const Error& error) {
  return error.code == ErrorCode::kNoSafetensorsInFolder;
}

bool IsDirectory(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// FolderOf returns the folder CheckPath was given: `path` itself, or the folder of an
// index file.
std::string FolderOf(const std::string& path) {
  if (IsDirectory(path)) return path;
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// MemberResult is the verdict on one file the walk reported: a pickle-bearing file, or a
// file it could not read or would not follow a link to. Those last two were never sniffed:
// they are not called pickle-bearing (a config.json behind a link out is no pickle).
CheckResult MemberResult(FolderScanEntry entry) {
  if (entry.report.format == Format::kUnknown) {
    CheckResult member;
    member.file = entry.name;
    member.error = entry.report.reason;
    // The folder's result names the file once (DecideFolderVerdict): drop the walk's naming of it.
    if (member.error.context == "file '" + entry.name + "'") member.error.context.clear();
    // A link out is a verdict on the folder; a file that cannot be read here (permission,
    // I/O) is about this machine: an error naming the file, outranked by any refusal.
    member.verdict =
        VerdictForError(member.error) == Verdict::kError ? Verdict::kError : Verdict::kRefused;
    return member;
  }
  CheckResult member = ResultForPickle(entry.name, std::move(entry.report));
  member.warnings.clear();  // the folder gives each pickle-bearing file its one warning
  return member;
}

// PickleWarnings gives each pickle-bearing file that does not decide the folder's verdict
// one warning saying its verdict: the warning the name-based check made for it, or a new
// one. The file that decides the verdict is named by the result, never again as a warning.
// A file named like a pickle whose content is none says so.
void PickleWarnings(const std::vector<CheckResult>& files, const std::string& decided_by,
                    std::vector<Warning>* warnings) {
  std::vector<bool> matched(files.size(), false);
  std::vector<Warning> kept;
  for (Warning& warning : *warnings) {
    if (warning.kind == WarningKind::kPickleFile) {
      if (!decided_by.empty() && warning.file == decided_by) continue;
      bool found = false;
      for (size_t k = 0; k < files.size() && !found; ++k) {
        if (!files[k].pickle || files[k].file != warning.file) continue;
        warning.message = "pickle-bearing file: " + DescribeVerdict(*files[k].pickle);
        matched[k] = found = true;
      }
      if (!found && warning.message.starts_with("pickle-based weight file")) {
        warning.message = "named like a pickle-based weight file, but its content is no "
                          "pickle that a loader would run (found by content, not by name)";
      }
    }
    kept.push_back(std::move(warning));
  }
  for (size_t k = 0; k < files.size(); ++k) {
    if (matched[k] || !files[k].pickle || files[k].file == decided_by) continue;
    kept.push_back(Warning{WarningKind::kPickleFile, files[k].file, {},
                           "pickle-bearing file: " + DescribeVerdict(*files[k].pickle)});
  }
  *warnings = std::move(kept);
}

// ReportProgress tells options.progress, when set, that `bytes` more are checked.
void ReportProgress(const CheckOptions& options, uint64_t bytes) {
  if (options.progress) options.progress(bytes);
}

// CheckMember judges a GGUF, npy or npz file of the folder by ranges (CheckSource over the
// file unmapped), as a remote or dropped file is read: where mapping means copying
// (WebAssembly, a dropped folder), a file of gigabytes is never held whole.
CheckResult CheckMember(const std::string& path, const CheckOptions& options) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  if (!file.ok()) return CheckFile(path, options);  // which reports the same error
  return CheckSource(**file, path, options);
}

// FileBytes is the size of the file at `path` for progress (0 when it cannot be known).
uint64_t FileBytes(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 ? static_cast<uint64_t>(info.st_size) : 0;
}

// LocalMembers is CheckFolder's walk over a local folder.
FolderMembers LocalMembers(const std::string& folder, const CheckpointDir* checkpoint,
                           const MappedFile* config, const CheckOptions& options) {
  FolderScanOptions scan_options;
  scan_options.allow_external_symlinks = options.allow_external_symlinks;
  scan_options.torch = options.torch;
  if (checkpoint != nullptr) {
    // The shards' heads were read to validate them: the walk's sniff starts from them.
    for (const ShardFile& shard : checkpoint->shards()) {
      scan_options.known_heads.emplace(shard.name, shard.checkpoint.head());
    }
  }
  // So was config.json, whole, for the folder's rules.
  if (config != nullptr) scan_options.known_heads.emplace("config.json", config->bytes());
  FolderScanReport scan = ScanFolderByContent(folder, scan_options);
  FolderMembers members;
  members.error = scan.error;
  for (FolderScanEntry& entry : scan.files) {
    ReportProgress(options, FileBytes(folder + "/" + entry.name));
    members.files.push_back(MemberResult(std::move(entry)));
  }
  // A member's reader is never kept: a folder of thousands of GGUF files would hold as
  // many mappings.
  CheckOptions member_options = options;
  member_options.keep_reader = false;
  for (const FolderScanOther& other : scan.others) {
    const std::string member_path = folder + "/" + other.name;
    CheckResult member = CheckMember(member_path, member_options);
    ReportProgress(options, FileBytes(member_path));
    member.file = other.name;
    members.files.push_back(std::move(member));
  }
  return members;
}

}  // namespace

void DecideFolderVerdict(const Error& folder_error, CheckResult* result) {
  // The worst verdict wins (WorseVerdict: refused, invalid, error, valid); on a tie the
  // folder's own error comes first, then the files in walk order.
  Verdict worst = VerdictForError(folder_error);
  const CheckResult* failing = nullptr;
  for (const CheckResult& file : result->files) {
    if (VerdictRank(file.verdict) > VerdictRank(worst)) {
      worst = file.verdict;
      failing = &file;
    }
  }
  if (failing != nullptr) {
    result->verdict = failing->verdict;
    result->error = failing->error;
    result->member = failing->file;
    result->error.file = failing->file;
    // The text form names the file too (Error::ToString shows the context).
    result->error.context = "file '" + failing->file + "'" +
                            (failing->error.context.empty() ? "" : "; " + failing->error.context);
    return;
  }
  result->error = folder_error;
  result->verdict = worst;
  // An error raised inside a shard, the index or config.json names that file as the
  // member, so that its offset is read in the right file.
  result->member = folder_error.file;
}

namespace {

void Summarise(const CheckpointDir& checkpoint, CheckResult* result) {
  result->summary.tensors = checkpoint.num_tensors();
  result->summary.shards = checkpoint.shards().size();
  result->summary.data_bytes = checkpoint.total_bytes();
  if (checkpoint.has_index()) result->summary.index = checkpoint.index_path();
  const size_t shards = checkpoint.shards().size();
  result->summary.detail = std::to_string(checkpoint.num_tensors()) +
                           (checkpoint.num_tensors() == 1 ? " tensor in " : " tensors in ") +
                           std::to_string(shards) + (shards == 1 ? " shard, " : " shards, ") +
                           std::to_string(checkpoint.total_bytes()) + " data bytes";
}

}  // namespace

CheckResult CheckFolderWith(const std::string& path, const CheckOptions& options,
                            const MemberCheck& members) {
  CheckResult result;
  result.file = path;
  result.is_folder = true;

  DirOptions dir_options;
  dir_options.allow_external_symlinks = options.allow_external_symlinks;
  dir_options.headers_only = true;  // no shard stays mapped: any number can be checked
  dir_options.reader.require_aligned_data = options.require_aligned_data;
  // Another format's index (pytorch_model.bin.index.json) names no safetensors shard: the
  // checkpoint it names is its folder's, checked as such, never read as a safetensors index.
  const bool other_index =
      path.ends_with(".index.json") && !path.ends_with(".safetensors.index.json");
  Result<CheckpointDir> checkpoint =
      CheckpointDir::Open(other_index ? FolderOf(path) : path, dir_options);
  Error folder_error = checkpoint.ok() ? Error{} : checkpoint.error();
  const std::string folder = checkpoint.ok() ? checkpoint->folder() : FolderOf(path);
  if (checkpoint.ok()) {
    result.warnings.assign(checkpoint->warnings().begin(), checkpoint->warnings().end());
    Summarise(*checkpoint, &result);
    ReportProgress(options, checkpoint->total_bytes());
  }
  // The files around the weights are judged beside a checkpoint that opened (or a folder
  // with none); an invalid checkpoint has already decided against the folder's weights.
  std::shared_ptr<const MappedFile> config;
  if (checkpoint.ok() || NoSafetensorsInFolder(folder_error)) {
    ModelFolderReport around = CheckModelFolder(
        folder, checkpoint.ok() ? &*checkpoint : nullptr, dir_options.reader,
        options.allow_external_symlinks);
    if (folder_error.ok() || NoSafetensorsInFolder(folder_error)) folder_error = around.error;
    result.warnings.insert(result.warnings.end(), around.warnings.begin(),
                           around.warnings.end());
    config = std::move(around.config);
  }

  // Every file recognised by content, subfolders included, is examined once: pickles by
  // the static scan (nothing runs), GGUF, npy and npz by their readers. This runs even
  // when the safetensors are invalid: a pickle that would run code must be reported as
  // refused, which outranks invalid.
  FolderMembers found = members(folder, checkpoint.ok() ? &*checkpoint : nullptr, config.get());
  if (folder_error.ok()) folder_error = found.error;
  if (folder_error.ok() && !checkpoint.ok() && found.files.empty()) {
    folder_error = checkpoint.error();
  }
  for (CheckResult& member : found.files) result.files.push_back(std::move(member));
  DecideFolderVerdict(folder_error, &result);
  // An index file is checked as its folder (a loader given the folder reads all of it): the
  // verdict is the folder's, and `member` names the file that decided it.
  if (!IsDirectory(path)) {
    result.notes.push_back("an index file: checked as its folder " + folder +
                           " (the verdict is the folder's; member names the file deciding it)");
  }
  PickleWarnings(result.files, result.member, &result.warnings);
  if (options.keep_reader && checkpoint.ok()) {
    result.checkpoint_dir = std::make_shared<const CheckpointDir>(std::move(*checkpoint));
  }
  if (options.keep_reader) result.config = std::move(config);
  return result;
}

CheckResult CheckFolder(const std::string& path, const CheckOptions& options) {
  return CheckFolderWith(
      path, options, [&options](const std::string& folder, const CheckpointDir* checkpoint,
                 const MappedFile* config) {
        return LocalMembers(folder, checkpoint, config, options);
      });
}

}  // namespace stguard
