// SPDX-License-Identifier: Apache-2.0
// ScanFolderByContent and ScanFolderForPickles (stguard/folder_scan.h): each file the folder
// layer's bounded walk (folder/bounded_walk.h) hands over is sniffed by content; the
// pickle-bearing ones are judged here, the other formats listed for their own validators.
#include "stguard/folder_scan.h"

#include <memory>
#include <span>
#include <string>
#include <utility>

#include "base/prefixed_source.h"
#include "folder/bounded_walk.h"
#include "stguard/mapped_file.h"
#include "stguard/sniff.h"
#include "torch/zip_source_verdict.h"

namespace stguard {
namespace {

// Sniff says what the file at `path` is, `head` being its first bytes when the caller
// read them already (else empty). Sniffed by ranges, not mapped: the walk meets every
// file of the folder, shards of many gigabytes included, and where mapping means copying
// (WebAssembly) a mapping would read each one whole.
Result<Format> Sniff(const std::string& path, std::span<const std::byte> head) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  if (!file.ok()) return file.error();
  const PrefixedSource known(**file, head);
  return SniffSource(known);
}

// KnownHead is the first bytes of the file named `rel` that the caller read, or empty.
std::span<const std::byte> KnownHead(const FolderScanOptions& options, const std::string& rel) {
  const auto found = options.known_heads.find(rel);
  return found == options.known_heads.end() ? std::span<const std::byte>() : found->second;
}

// JudgeZipByRanges judges a PyTorch ZIP by ranges (its records, data.pkl, each storage's
// local header and CRC-32 read in pieces), as CheckFile does: never mapped, so a
// checkpoint of gigabytes is not held whole where mapping means copying (WebAssembly).
PickleFileReport JudgeZipByRanges(const std::string& path, const TorchOptions& options) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  if (!file.ok()) {
    PickleFileReport report;
    report.reason = file.error();
    report.scan.error = file.error();
    return report;
  }
  return JudgePickleZipSource(**file, options, nullptr);
}

FolderScanReport Scan(const std::string& folder, const FolderScanOptions& options,
                      bool list_others) {
  FolderScanReport report;
  folder::WalkVisitor visitor;
  visitor.file = [&](const std::string& rel, const std::string& path) {
    const Result<Format> format = Sniff(path, KnownHead(options, rel));
    if (!format.ok()) {
      // Unreadable here: a loader may read it; say so rather than skip it.
      FolderScanEntry entry{rel, {}};
      entry.report.reason = format.error();
      entry.report.scan.error = format.error();
      report.files.push_back(std::move(entry));
    } else if (*format == Format::kGguf || *format == Format::kNpy || *format == Format::kNpz) {
      if (list_others) report.others.push_back({rel, *format});
    } else if (*format == Format::kPytorchZip) {
      report.files.push_back({rel, JudgeZipByRanges(path, options.torch)});
    } else if (IsPickleBearing(*format)) {
      report.files.push_back({rel, JudgePickleFile(path, options.torch)});
    }
  };
  visitor.link_out = [&](const std::string& rel, bool to_folder) {
    FolderScanEntry entry{rel, {}};
    entry.report.verdict = FileVerdict::kCannotProveSafe;
    entry.report.reason = Error{ErrorCode::kUnsafeShardName, 0,
                                to_folder
                                    ? "a symbolic link to a folder out of the folder, not read "
                                      "(--allow-external-symlinks reads it)"
                                    : "a symbolic link out of the folder, not read "
                                      "(--allow-external-symlinks reads it)",
                                "file '" + rel + "'"};
    entry.report.scan.error = entry.report.reason;
    report.files.push_back(std::move(entry));
  };
  visitor.special = [&](const std::string& rel) {
    // Its bytes are whatever the FIFO's writer or the device delivers when a loader opens
    // it: nothing here can read them, so nothing can show them harmless. A name the
    // folder's author made, as a link out is: a verdict on the folder, not an I/O error.
    FolderScanEntry entry{rel, {}};
    entry.report.verdict = FileVerdict::kCannotProveSafe;
    entry.report.reason = Error{ErrorCode::kUnsafeShardName, 0,
                                "not a regular file (a FIFO, socket or device), not read: a "
                                "loader opening it reads whatever it delivers",
                                "file '" + rel + "'"};
    entry.report.scan.error = entry.report.reason;
    report.files.push_back(std::move(entry));
  };
  report.error = folder::WalkFolderBounded(folder, {options.max_depth, options.max_entries},
                                           options.allow_external_symlinks, visitor);
  return report;
}

}  // namespace

FolderScanReport ScanFolderByContent(const std::string& folder,
                                     const FolderScanOptions& options) {
  return Scan(folder, options, /*list_others=*/true);
}

FolderScanReport ScanFolderForPickles(const std::string& folder,
                                      const FolderScanOptions& options) {
  return Scan(folder, options, /*list_others=*/false);
}

const FolderScanEntry* FirstFolderFailure(const FolderScanReport& report) {
  for (const FolderScanEntry& entry : report.files) {
    if (VerdictFailsFolder(entry.report.verdict)) return &entry;
  }
  return nullptr;
}

}  // namespace stguard
