// SPDX-License-Identifier: Apache-2.0
// ScanFolderForPickles: the bounded walk of stguard/folder_scan.h.
#include "stguard/folder_scan.h"

#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "folder/folder_util.h"
#include "stguard/mapped_file.h"
#include "stguard/sniff.h"

namespace stguard {
namespace {

using folder::JoinPath;

class FolderWalk {
 public:
  FolderWalk(const std::string& root, const FolderScanOptions& options, FolderScanReport* report)
      : root_(root), options_(options), report_(report) {}

  Error Run() {
    if (!folder::RealPath(root_, &real_root_)) {
      return folder::FolderIoError("cannot resolve folder", root_, errno);
    }
    return Walk("", 0);
  }

 private:
  // Walk lists `relative` (a folder under the root, "" for the root) at `depth`.
  Error Walk(const std::string& relative, size_t depth) {
    const std::string dir = relative.empty() ? root_ : JoinPath(root_, relative);
    Result<std::vector<std::string>> names = folder::ListFolder(dir);
    if (!names.ok()) return names.error();
    for (const std::string& name : *names) {
      if (++num_entries_ > options_.max_entries) {
        return Error{ErrorCode::kFolderTooLarge, 0, "the folder holds more names than the walk reads",
                     std::to_string(options_.max_entries) + " names; at '" + dir + "'"};
      }
      const std::string rel = relative.empty() ? name : relative + "/" + name;
      const std::string path = JoinPath(dir, name);
      struct stat info;
      if (::lstat(path.c_str(), &info) != 0) continue;  // removed meanwhile
      if (S_ISDIR(info.st_mode)) {
        if (depth >= options_.max_depth) {
          return Error{ErrorCode::kFolderTooLarge, 0, "the folder nests deeper than the walk reads",
                       std::to_string(options_.max_depth) + " levels; at '" + rel + "'"};
        }
        if (Error error = Walk(rel, depth + 1); !error.ok()) return error;
      } else if (S_ISLNK(info.st_mode)) {
        VisitLink(rel, path);
      } else if (S_ISREG(info.st_mode)) {
        VisitFile(rel, path);
      }
    }
    return {};
  }

  // VisitLink reads a link to a file that stays in the folder, or a hub cache snapshot's
  // link to its blob (folder::IsHubSnapshotLink); any other link out, to a file or a
  // folder, is reported unread (a loader would follow it). Links are never walked into.
  void VisitLink(const std::string& rel, const std::string& path) {
    struct stat target;
    if (::stat(path.c_str(), &target) != 0) return;  // dangling: nothing a loader reads
    std::string real;
    if (!folder::RealPath(path, &real)) return;
    const bool inside = real.size() > real_root_.size() &&
                        real.compare(0, real_root_.size(), real_root_) == 0 &&
                        (real_root_ == "/" || real[real_root_.size()] == '/');
    if (inside || options_.allow_external_symlinks || folder::IsHubSnapshotLink(path)) {
      if (S_ISREG(target.st_mode)) VisitFile(rel, path);
      return;
    }
    FolderScanEntry entry{rel, {}};
    entry.report.verdict = FileVerdict::kCannotProveSafe;
    entry.report.reason = Error{ErrorCode::kUnsafeShardName, 0,
                                S_ISDIR(target.st_mode)
                                    ? "a symbolic link to a folder out of the folder, not read "
                                      "(--allow-external-symlinks reads it)"
                                    : "a symbolic link out of the folder, not read "
                                      "(--allow-external-symlinks reads it)",
                                "file '" + rel + "'"};
    entry.report.scan.error = entry.report.reason;
    report_->files.push_back(std::move(entry));
  }

  void VisitFile(const std::string& rel, const std::string& path) {
    Format format = Format::kUnknown;
    {
      // Sniffed by ranges, not mapped: the walk meets every file of the folder, shards of
      // many gigabytes included, and where mapping means copying (WebAssembly) a
      // mapping would read each one whole.
      // Unreadable here: a loader may read it; say so rather than skip it.
      const auto record_unreadable = [&](const Error& error) {
        FolderScanEntry entry{rel, {}};
        entry.report.reason = error;
        entry.report.scan.error = error;
        report_->files.push_back(std::move(entry));
      };
      Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
      if (!file.ok()) return record_unreadable(file.error());
      const Result<Format> sniffed = SniffSource(**file);
      if (!sniffed.ok()) return record_unreadable(sniffed.error());
      format = *sniffed;
    }
    if (format == Format::kGguf || format == Format::kNpy || format == Format::kNpz) {
      report_->others.push_back({rel, format});
      return;
    }
    if (!IsPickleBearing(format)) return;
    report_->files.push_back({rel, JudgePickleFile(path, options_.torch)});
  }

  std::string root_;
  std::string real_root_;
  const FolderScanOptions& options_;
  FolderScanReport* report_;
  size_t num_entries_ = 0;
};

}  // namespace

FolderScanReport ScanFolderForPickles(const std::string& folder,
                                      const FolderScanOptions& options) {
  FolderScanReport report;
  FolderWalk walk(folder, options, &report);
  report.error = walk.Run();
  return report;
}

const FolderScanEntry* FirstFolderFailure(const FolderScanReport& report) {
  for (const FolderScanEntry& entry : report.files) {
    if (VerdictFailsFolder(entry.report.verdict)) return &entry;
  }
  return nullptr;
}

}  // namespace stguard
