// SPDX-License-Identifier: Apache-2.0
// `stguard check` on a checkpoint folder or an index file: the logical checkpoint
// (CheckpointDir::Open), then the model-folder checks around it. Called from cmd_check.cc.
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/file_verdict.h"
#include "stguard/folder_scan.h"
#include "stguard/json_escape.h"
#include "stguard/torch_checkpoint.h"

namespace stguard::cli {
namespace {

void AppendWarningsJson(std::span<const Warning> warnings, std::string* out) {
  *out += "\"warnings\":[";
  for (size_t i = 0; i < warnings.size(); ++i) {
    if (i > 0) *out += ",";
    *out += "{\"kind\":";
    AppendJsonString(WarningKindName(warnings[i].kind), out);
    *out += ",\"file\":";
    AppendJsonText(warnings[i].file, out);
    *out += ",\"tensor\":";
    AppendJsonText(warnings[i].tensor, out);
    *out += ",\"message\":";
    AppendJsonText(warnings[i].message, out);
    *out += "}";
  }
  *out += "]";
}

std::string WarningLine(const std::string& path, const Warning& warning) {
  std::string line = PrintableText(path) + ": warning: " + std::string(WarningKindName(warning.kind)) +
                     ": " + PrintableText(warning.file);
  if (!warning.tensor.empty()) line += " (tensor '" + PrintableText(warning.tensor) + "')";
  return line + ": " + PrintableText(warning.message);
}

// MergePickleWarnings gives each pickle-bearing file one warning saying its verdict: the
// warning the name-based check already made for it, or a new one for a file whose name
// did not give it away. A file flagged by its name but not a pickle by content says so.
void MergePickleWarnings(const FolderScanReport& scan, std::vector<Warning>* warnings) {
  std::vector<bool> matched(scan.files.size(), false);
  for (Warning& warning : *warnings) {
    if (warning.kind != WarningKind::kPickleFile) continue;
    bool found = false;
    for (size_t k = 0; k < scan.files.size() && !found; ++k) {
      if (scan.files[k].name != warning.file) continue;
      warning.message = "pickle-bearing file: " + DescribeVerdict(scan.files[k].report);
      matched[k] = found = true;
    }
    // Only *.npy/*.npz and names like *.bin keep the name-based message; a *.bin whose
    // bytes are no pickle is what a user may wonder about.
    if (!found && warning.message.rfind("pickle-based weight file", 0) == 0) {
      warning.message = "named like a pickle-based weight file, but its content is no pickle "
                        "that a loader would run (found by content, not by name)";
    }
  }
  for (size_t k = 0; k < scan.files.size(); ++k) {
    if (matched[k]) continue;
    warnings->push_back(Warning{WarningKind::kPickleFile, scan.files[k].name, {},
                                "pickle-bearing file: " + DescribeVerdict(scan.files[k].report)});
  }
}

}  // namespace

bool IsCheckpointDirPath(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return false;  // the file path reports the error
  if (S_ISDIR(info.st_mode)) return true;
  return S_ISREG(info.st_mode) && path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

int CheckCheckpointDir(const std::string& path, const CheckDirFlags& flags) {
  DirOptions options;
  options.allow_external_symlinks = flags.allow_external_symlinks;
  // Validation needs no data: keep no shard mapped, so any number of shards can be
  // checked.
  options.headers_only = true;
  options.reader.require_aligned_data = flags.require_aligned_data;
  const Result<CheckpointDir> checkpoint = CheckpointDir::Open(path, options);
  Error error = checkpoint.ok() ? Error{} : checkpoint.error();
  std::vector<Warning> warnings;
  if (checkpoint.ok()) {
    warnings.assign(checkpoint->warnings().begin(), checkpoint->warnings().end());
    ModelFolderReport folder = CheckModelFolder(checkpoint->folder(), &*checkpoint,
                                                options.reader, flags.allow_external_symlinks);
    error = folder.error;
    warnings.insert(warnings.end(), folder.warnings.begin(), folder.warnings.end());
    // Every pickle-bearing file under the folder (found by content, subfolders included)
    // is scanned statically, never loaded. One that names code or cannot be proven safe
    // fails the check; clean and needs-key files stay warnings that say so.
    FolderScanOptions scan_options;
    scan_options.allow_external_symlinks = flags.allow_external_symlinks;
    const FolderScanReport scan = ScanFolderForPickles(checkpoint->folder(), scan_options);
    if (error.ok() && !scan.error.ok()) error = scan.error;
    if (const FolderScanEntry* failure = FirstFolderFailure(scan); error.ok() && failure) {
      error = failure->report.reason;
      error.context = "file '" + failure->name + "'" +
                      (error.context.empty() ? "" : "; " + error.context);
    }
    MergePickleWarnings(scan, &warnings);
  }
  const int status =
      error.ok() ? kExitOk : (IsIoError(error) ? kExitUsage : kExitInvalid);
  if (flags.quiet && error.ok()) return status;

  if (flags.json) {
    std::string line = "{\"file\":";
    AppendJsonText(path, &line);
    if (error.ok()) {
      line += ",\"ok\":true,\"tensors\":" + std::to_string(checkpoint->num_tensors()) +
              ",\"shards\":" + std::to_string(checkpoint->shards().size()) +
              ",\"data_bytes\":" + std::to_string(checkpoint->total_bytes()) + ",\"index\":";
      if (checkpoint->has_index()) {
        AppendJsonText(checkpoint->index_path(), &line);
      } else {
        line += "null";
      }
    } else {
      line += ",\"ok\":false,\"error\":";
      AppendErrorJson(error, &line);
    }
    line += ",";
    AppendWarningsJson(warnings, &line);
    PrintLine(line + "}");
    return status;
  }

  std::string line = PrintableText(path) + ": ";
  if (error.ok()) {
    const size_t num_shards = checkpoint->shards().size();
    line += "ok (" + std::to_string(checkpoint->num_tensors()) + " tensors in " +
            std::to_string(num_shards) + (num_shards == 1 ? " shard, " : " shards, ") +
            std::to_string(checkpoint->total_bytes()) + " data bytes";
    if (checkpoint->has_index()) line += ", index " + PrintableText(checkpoint->index_path());
    line += ")";
  } else {
    line += "error: " + ErrorText(path, error);
  }
  PrintLine(line);
  if (!flags.quiet) {
    for (const Warning& warning : warnings) PrintLine(WarningLine(path, warning));
  }
  return status;
}

}  // namespace stguard::cli
