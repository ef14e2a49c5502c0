// SPDX-License-Identifier: Apache-2.0
// stguard/folder_scan.h: find the weight files under a folder by content: every
// pickle-bearing file, judged (stguard/file_verdict.h), and (ScanFolderByContent) every
// GGUF, npy and npz file, listed for its own validator. `scan DIR` uses
// ScanFolderForPickles, `check DIR` ScanFolderByContent.
//
// THE WALK (the folder layer's bounded walk). The folder and its subfolders, to
// FolderScanOptions::max_depth levels (Meta ships original/consolidated.00.pth; trainers
// write checkpoint-500/...). Every regular file is sniffed (stguard/sniff.h), whatever its name; the pickle-bearing ones
// are scanned statically, nothing run. Names are visited in byte order, so reports are
// stable.
// - Symbolic links are never followed into folders (no loops, no walking out). A link to
//   a file is read only when it resolves inside the folder, when it is a Hugging Face
//   cache snapshot's one-hop link to a regular file in its own blobs/ (the hub's layout:
//   models--NAME/snapshots/REV/x -> ../../blobs/HASH), or with allow_external_symlinks;
//   any other link out of the folder, to a file or a folder, is reported, unread (format
//   kUnknown: it was never sniffed), as cannot-prove-safe with kUnsafeShardName (a loader
//   would follow it). Dangling links, FIFOs, sockets and devices are not files a loader
//   reads as a checkpoint: skipped. A file that cannot be opened or sniffed is reported
//   with its I/O error (format kUnknown): check makes that the folder's error, not a
//   refusal.
// - Bounds: at most max_entries names over the whole walk and max_depth levels; past
//   either, the walk stops with kFolderTooLarge, a verdict on the folder (an unbounded
//   walk would let a folder's author hide a file past the point where it stops).
#ifndef STGUARD_FOLDER_SCAN_H_
#define STGUARD_FOLDER_SCAN_H_

#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/file_verdict.h"
#include "stguard/sniff.h"
#include "stguard/torch_checkpoint.h"

namespace stguard {

inline constexpr size_t kDefaultFolderScanDepth = 8;
inline constexpr size_t kDefaultFolderScanEntries = 100000;

struct FolderScanOptions {
  // max_depth: subfolder levels walked below the folder (0: the folder only).
  size_t max_depth = kDefaultFolderScanDepth;
  // max_entries: names (files, folders, links) listed over the whole walk.
  size_t max_entries = kDefaultFolderScanEntries;
  // Read files through symbolic links that resolve out of the folder.
  bool allow_external_symlinks = false;
  // How each file's state dict is selected (--key) and its output bounded.
  TorchOptions torch;
  // known_heads: files whose first bytes the caller has already read, by name as in
  // FolderScanEntry::name (CheckFolder: the safetensors shards it validated, each with
  // Checkpoint::head, and config.json, read whole for the folder's rules). Such a file's
  // sniff starts from those bytes and reads only what lies past them, so no byte of it is
  // read twice. The spans outlive the scan.
  std::map<std::string, std::span<const std::byte>, std::less<>> known_heads;
};

// FolderScanEntry is one pickle-bearing file (or a link out of the folder, unread).
struct FolderScanEntry {
  std::string name;  // relative to the folder, '/'-separated: "original/consolidated.00.pth"
  PickleFileReport report;
};

// FolderScanOther is a file of another format the walk recognised by content and that
// has its own validator: GGUF, npy and npz (stguard/verdict.h's CheckFolder checks them).
struct FolderScanOther {
  std::string name;  // as FolderScanEntry::name
  Format format = Format::kUnknown;
};

struct FolderScanReport {
  std::vector<FolderScanEntry> files;  // in walk order
  std::vector<FolderScanOther> others;  // in walk order
  // error: kIoError when a folder cannot be listed, kFolderTooLarge past a bound; the
  // files found until then are kept.
  Error error;
};

// ScanFolderByContent walks `folder` as described above: pickle-bearing files (and links
// out, unreadable files) in `files`, GGUF, npy and npz files in `others`.
STGUARD_API FolderScanReport ScanFolderByContent(const std::string& folder,
                                                 const FolderScanOptions& options = {});

// ScanFolderForPickles is ScanFolderByContent for pickle-bearing files only (`others` stays empty).
STGUARD_API FolderScanReport ScanFolderForPickles(const std::string& folder,
                                                  const FolderScanOptions& options = {});

// FirstFolderFailure returns the first entry whose verdict makes the folder invalid
// (VerdictFailsFolder), or nullptr.
STGUARD_API const FolderScanEntry* FirstFolderFailure(const FolderScanReport& report);

}  // namespace stguard

#endif  // STGUARD_FOLDER_SCAN_H_
