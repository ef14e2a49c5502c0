// SPDX-License-Identifier: Apache-2.0
// IsHubSnapshotLink: the one exception to "links stay in the folder" (folder_util.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <string>
#include <string_view>

#include "folder/folder_util.h"

namespace stguard::folder {
namespace {

// HubRepoRoot finds, in the real path of a folder, the hub cache's repository folder
// (".../models--ORG--NAME", or datasets--, spaces--) whose snapshots/REV holds it.
// Returns false when the folder is not (inside) a snapshot.
bool HubRepoRoot(const std::string& real_folder, std::string* root) {
  constexpr std::string_view kSnapshots = "/snapshots/";
  size_t at = real_folder.rfind(kSnapshots);
  for (; at != std::string::npos && at > 0; at = real_folder.rfind(kSnapshots, at - 1)) {
    const size_t rev = at + kSnapshots.size();
    if (rev >= real_folder.size() || real_folder[rev] == '/') continue;  // no REV
    const size_t slash = real_folder.rfind('/', at - 1);
    if (slash == std::string::npos) return false;
    const std::string_view repo = std::string_view(real_folder).substr(slash + 1, at - slash - 1);
    for (std::string_view kind : {"models--", "datasets--", "spaces--"}) {
      if (repo.size() > kind.size() && repo.starts_with(kind)) {
        *root = real_folder.substr(0, at);
        return true;
      }
    }
  }
  return false;
}

// SameFile says whether two stat results describe one file.
bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

bool IsHubSnapshotLink(const std::string& path) {
  struct stat link;
  if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return false;
  std::string link_folder;
  std::string link_name;
  SplitPath(path, &link_folder, &link_name);
  std::string real_folder;
  std::string root;
  if (!RealPath(link_folder, &real_folder) || !HubRepoRoot(real_folder, &root)) return false;

  // Where the link leads once every link is resolved: a name directly in blobs/.
  std::string real_target;
  if (!RealPath(path, &real_target)) return false;
  std::string target_folder;
  std::string blob;
  SplitPath(real_target, &target_folder, &blob);
  const std::string blobs = root + "/blobs";
  if (target_folder != blobs) return false;

  // One hop: what the link names is itself no link (the hub writes blobs as files).
  std::array<char, PATH_MAX> text;
  const ssize_t size = ::readlink(path.c_str(), text.data(), text.size());
  if (size <= 0 || static_cast<size_t>(size) >= text.size()) return false;
  const std::string named(text.data(), static_cast<size_t>(size));
  const std::string hop = named.front() == '/' ? named : JoinPath(link_folder, named);
  struct stat first;
  if (::lstat(hop.c_str(), &first) != 0 || S_ISLNK(first.st_mode)) return false;

  // Confirmed on descriptors, not on strings: the blobs folder opened without following
  // a link, the blob a regular file in it (fstatat without following, so no read
  // permission is needed: an unreadable blob is an I/O error when read, not a link out),
  // and the very file the link and its one hop reach.
  const int fd = ::open(blobs.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat in_blobs;
  const bool found = ::fstatat(fd, blob.c_str(), &in_blobs, AT_SYMLINK_NOFOLLOW) == 0;
  ::close(fd);
  struct stat reached;
  return found && S_ISREG(in_blobs.st_mode) && ::stat(path.c_str(), &reached) == 0 &&
         SameFile(reached, in_blobs) && SameFile(first, in_blobs);
}

}  // namespace stguard::folder
