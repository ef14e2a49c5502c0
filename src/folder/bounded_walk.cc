// SPDX-License-Identifier: Apache-2.0
// WalkFolderBounded (bounded_walk.h).
#include "folder/bounded_walk.h"

#include <sys/stat.h>

#include <cerrno>
#include <string>
#include <vector>

#include "folder/folder_util.h"

namespace stguard::folder {
namespace {

class BoundedWalk {
 public:
  BoundedWalk(const std::string& root, const WalkBounds& bounds, bool allow_external,
              const WalkVisitor& visitor)
      : root_(root), bounds_(bounds), allow_external_(allow_external), visitor_(visitor) {}

  Error Run() {
    if (!RealPath(root_, &real_root_)) return FolderIoError("cannot resolve folder", root_, errno);
    return Walk("", 0);
  }

 private:
  // Walk lists `relative` (a folder under the root, "" for the root) at `depth`.
  Error Walk(const std::string& relative, size_t depth) {
    const std::string dir = relative.empty() ? root_ : JoinPath(root_, relative);
    Result<std::vector<std::string>> names = ListFolder(dir);
    if (!names.ok()) return names.error();
    for (const std::string& name : *names) {
      if (++num_entries_ > bounds_.max_entries) {
        return Error{ErrorCode::kFolderTooLarge, 0,
                     "the folder holds more names than the walk reads",
                     std::to_string(bounds_.max_entries) + " names; at '" + dir + "'"};
      }
      const std::string rel = relative.empty() ? name : relative + "/" + name;
      const std::string path = JoinPath(dir, name);
      struct stat info;
      if (::lstat(path.c_str(), &info) != 0) continue;  // removed meanwhile
      if (S_ISDIR(info.st_mode)) {
        if (depth >= bounds_.max_depth) {
          return Error{ErrorCode::kFolderTooLarge, 0,
                       "the folder nests deeper than the walk reads",
                       std::to_string(bounds_.max_depth) + " levels; at '" + rel + "'"};
        }
        if (Error error = Walk(rel, depth + 1); !error.ok()) return error;
      } else if (S_ISLNK(info.st_mode)) {
        VisitLink(rel, path);
      } else if (S_ISREG(info.st_mode)) {
        visitor_.file(rel, path);
      } else {
        visitor_.special(rel);
      }
    }
    return {};
  }

  // VisitLink reads a link to a file that stays below the root, or a hub cache
  // snapshot's link to its blob (PlaceUnderFolder); any other link out, to a file or a
  // folder, is reported unread (a loader would follow it). Links are never walked into.
  void VisitLink(const std::string& rel, const std::string& path) {
    struct stat target;
    if (::stat(path.c_str(), &target) != 0) return;  // dangling: nothing a loader reads
    if (allow_external_ || PlaceUnderFolder(real_root_, path) == Placement::kInside) {
      if (S_ISREG(target.st_mode)) {
        visitor_.file(rel, path);
      } else if (!S_ISDIR(target.st_mode)) {
        visitor_.special(rel);
      }
      return;
    }
    visitor_.link_out(rel, S_ISDIR(target.st_mode));
  }

  std::string root_;
  std::string real_root_;
  const WalkBounds& bounds_;
  bool allow_external_;
  const WalkVisitor& visitor_;
  size_t num_entries_ = 0;
};

}  // namespace

Error WalkFolderBounded(const std::string& root, const WalkBounds& bounds,
                        bool allow_external_symlinks, const WalkVisitor& visitor) {
  return BoundedWalk(root, bounds, allow_external_symlinks, visitor).Run();
}

}  // namespace stguard::folder
