// SPDX-License-Identifier: Apache-2.0
// PlaceInFolder, PlaceUnderFolder and ContainInFolder: the one containment checker for
// links in a folder (folder_util.h). A path's real path is found by realpath, then
// confirmed on descriptors: the folder opened, each component below it opened with
// O_NOFOLLOW (so no link hides on the way), and the last one's fstatat, without
// following, is the very file the path reaches.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "folder/folder_util.h"

namespace stguard::folder {
namespace {

// Fd closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  void Reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// ReachedBelow says whether `path`, which `stat` reaches as `reached`, is the file at
// `relative` (components without links, '/'-separated) below the folder `real_root`,
// walking the components on descriptors. A component that is a link (ELOOP under
// O_NOFOLLOW) or a different file makes it false.
bool ReachedBelow(const std::string& real_root, std::string_view relative,
                  const struct stat& reached) {
  Fd dir(::open(real_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return false;
  size_t begin = 0;
  for (size_t slash = relative.find('/'); slash != std::string_view::npos;
       slash = relative.find('/', begin)) {
    const std::string part(relative.substr(begin, slash - begin));
    dir.Reset(::openat(dir.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.get() < 0) return false;
    begin = slash + 1;
  }
  // fstatat without following: no read permission is needed (an unreadable file is an
  // I/O error when read, not a link out), and a link here is not the file itself.
  struct stat found;
  const std::string last(relative.substr(begin));
  return ::fstatat(dir.get(), last.c_str(), &found, AT_SYMLINK_NOFOLLOW) == 0 &&
         !S_ISLNK(found.st_mode) && found.st_dev == reached.st_dev &&
         found.st_ino == reached.st_ino;
}

// Place resolves `path` and says whether it stays in `real_root`: directly in it
// (`direct`), or anywhere below it.
Placement Place(const std::string& real_root, const std::string& path, bool direct) {
  std::string real_path;
  if (!RealPath(path, &real_path)) {
    if (errno == ENOENT || errno == ENOTDIR) return Placement::kDangling;
    if (errno == ELOOP) return Placement::kLoop;
    if (errno == ENAMETOOLONG) return Placement::kNameTooLong;
    return Placement::kUnreachable;
  }
  const std::string prefix = real_root == "/" ? "/" : real_root + "/";
  const bool below = real_path.size() > prefix.size() && real_path.starts_with(prefix);
  const std::string_view relative = std::string_view(real_path).substr(below ? prefix.size() : 0);
  struct stat reached;
  if (below && (!direct || relative.find('/') == std::string_view::npos)) {
    if (::stat(path.c_str(), &reached) != 0) return Placement::kUnreachable;
    if (ReachedBelow(real_root, relative, reached)) return Placement::kInside;
  }
  return IsHubSnapshotLink(path) ? Placement::kInside : Placement::kOutside;
}

}  // namespace

Placement PlaceInFolder(const std::string& real_folder, const std::string& path) {
  return Place(real_folder, path, /*direct=*/true);
}

Placement PlaceUnderFolder(const std::string& real_root, const std::string& path) {
  return Place(real_root, path, /*direct=*/false);
}

Error ContainInFolder(const std::string& folder, const std::string& name) {
  const std::string path = JoinPath(folder, name);
  std::string real_folder;
  if (!RealPath(folder, &real_folder)) return FolderIoError("cannot resolve folder", folder, errno);
  const std::string context = "file '" + name + "'";
  switch (PlaceInFolder(real_folder, path)) {
    case Placement::kInside:
    case Placement::kDangling:  // the caller's open or stat reports a missing file
      return Error{};
    case Placement::kOutside:
      return Error{ErrorCode::kUnsafeShardName, 0,
                   "a symbolic link out of the folder, not read (--allow-external-symlinks "
                   "reads it)",
                   context, {}, name};
    case Placement::kLoop:
      return Error{ErrorCode::kUnsafeShardName, 0, "a symbolic link loop", context, {}, name};
    case Placement::kNameTooLong:
      return Error{ErrorCode::kUnsafeShardName, 0,
                   "a symbolic link to a path too long for the system", context, {}, name};
    case Placement::kUnreachable:
      break;
  }
  return FolderIoError("cannot resolve", path, errno);
}

}  // namespace stguard::folder
