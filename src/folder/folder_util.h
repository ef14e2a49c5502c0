// SPDX-License-Identifier: Apache-2.0
// Small POSIX helpers for checkpoint folders: joining and splitting paths, listing a
// folder, resolving symbolic links. The one containment checker for links (PlaceInFolder,
// PlaceUnderFolder, ContainInFolder in containment.cc, with the Hugging Face cache
// exception IsHubSnapshotLink in hub_snapshot.cc), shared by every reader of a folder:
// check, lint, scan, inspect and convert.
#ifndef STGUARD_SRC_FOLDER_FOLDER_UTIL_H_
#define STGUARD_SRC_FOLDER_FOLDER_UTIL_H_

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/error.h"

namespace stguard::folder {

inline bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// JoinPath returns folder + "/" + name, without doubling a trailing slash.
inline std::string JoinPath(const std::string& folder, std::string_view name) {
  std::string path = folder;
  if (path.empty() || path.back() != '/') path += '/';
  path += name;
  return path;
}

// SplitPath splits a file path into its folder ("." when there is none, "/" for the
// root) and its file name.
inline void SplitPath(const std::string& path, std::string* out_folder, std::string* out_name) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    *out_folder = ".";
    *out_name = path;
  } else {
    *out_folder = slash == 0 ? "/" : path.substr(0, slash);
    *out_name = path.substr(slash + 1);
  }
}

inline Error FolderIoError(const char* message, const std::string& path, int err) {
  return Error{ErrorCode::kIoError, 0, message, path + ": " + std::strerror(err)};
}

// ListFolder returns the names in `folder`, sorted by bytes, without "." and "..".
inline Result<std::vector<std::string>> ListFolder(const std::string& folder) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(folder.c_str()), ::closedir);
  if (dir == nullptr) return FolderIoError("cannot list folder", folder, errno);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (errno != 0) return FolderIoError("cannot list folder", folder, errno);
  std::sort(names.begin(), names.end());
  return names;
}

// RealPath resolves every symbolic link, "." and ".." in `path`. Returns false (errno
// set) when it cannot, e.g. for a dangling link.
inline bool RealPath(const std::string& path, std::string* out) {
  std::unique_ptr<char, void (*)(void*)> resolved(::realpath(path.c_str(), nullptr), ::free);
  if (resolved == nullptr) return false;
  *out = resolved.get();
  return true;
}

// Placement says where a name in a folder leads once symbolic links are resolved.
enum class Placement {
  kInside,       // a file directly in the folder (maybe through links that stay inside),
                 // or a hub cache snapshot's link to its blob (IsHubSnapshotLink)
  kOutside,      // resolves to a file in another folder
  kDangling,     // a link to nothing, or no such name (ENOENT, ENOTDIR)
  kLoop,         // a symbolic link loop (ELOOP)
  kNameTooLong,  // the name or the resolved path is too long for the system (ENAMETOOLONG)
  kUnreachable,  // anything else: permissions, I/O errors (errno set)
};

// IsHubSnapshotLink says whether `path` is a symbolic link as the Hugging Face hub cache
// writes them, the layout every from_pretrained and hf_hub_download produces: the link
// sits in .../models--NAME/snapshots/REV/ (or datasets--, spaces--; subfolders of REV
// too) and leads in one hop to a regular file directly in that same models--NAME/blobs/.
// Such a link is read as if it were in the folder, without allow_external_symlinks. A
// link to a link, to a folder, or anywhere else is not one (hub_snapshot.cc).
bool IsHubSnapshotLink(const std::string& path);

// PlaceInFolder resolves `path` (a name directly in the folder whose real path is
// `real_folder`) and confirms where it leads on descriptors (containment.cc): kInside
// only when the file it reaches is the file of that name directly in the folder, reached
// with no link on the way, or a hub cache snapshot's link to its blob. Loops, over-long
// names and dangling links are what a folder's author can make, so callers report them
// as verdicts on the folder; only kUnreachable is about this machine (errno set).
Placement PlaceInFolder(const std::string& real_folder, const std::string& path);

// PlaceUnderFolder is PlaceInFolder for the walk: kInside when `path` leads to a file
// anywhere below `real_root` (subfolders included).
Placement PlaceUnderFolder(const std::string& real_root, const std::string& path);

// ContainInFolder is the error for a name in `folder` whose link does not stay in it: a
// link out (one line naming the file and the flag that reads it), a loop or a name too
// long (kUnsafeShardName); none for a file inside or a missing one (the caller's open
// says so); kIoError when it cannot be resolved.
Error ContainInFolder(const std::string& folder, const std::string& name);

}  // namespace stguard::folder

#endif  // STGUARD_SRC_FOLDER_FOLDER_UTIL_H_
