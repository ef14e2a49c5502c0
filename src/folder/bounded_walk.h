// SPDX-License-Identifier: Apache-2.0
// WalkFolderBounded: the one walk over a folder and its subfolders, bounded in names and
// depth, that never follows a link into a folder or out of the folder. It knows no
// format: each regular file it may read is handed to the caller (torch/folder_scan.cc
// sniffs and judges them), and each link it will not read is reported.
#ifndef STGUARD_SRC_FOLDER_BOUNDED_WALK_H_
#define STGUARD_SRC_FOLDER_BOUNDED_WALK_H_

#include <cstddef>
#include <functional>
#include <string>

#include "stguard/error.h"

namespace stguard::folder {

struct WalkBounds {
  size_t max_depth = 0;    // subfolder levels below the root (0: the root only)
  size_t max_entries = 0;  // names listed over the whole walk
};

struct WalkVisitor {
  // A regular file to read: directly there, through a link that stays below the root,
  // through a hub cache snapshot's link to its blob, or through any link when allowed.
  // `relative` is '/'-separated from the root; `path` opens it.
  std::function<void(const std::string& relative, const std::string& path)> file;
  // A link that leads out of the root (to a file or, `to_folder`, a folder): not read.
  std::function<void(const std::string& relative, bool to_folder)> link_out;
  // A FIFO, socket or device, there or through a link that stays below the root: never
  // opened (a FIFO would block the walk), but a loader that opens it by name reads whatever
  // it delivers, so the caller cannot call it harmless.
  std::function<void(const std::string& relative)> special;
};

// WalkFolderBounded visits `root` in byte order of names, depth first. Dangling links are
// skipped (nothing a loader reads); FIFOs, sockets and devices go to `special`.
// Returns kIoError when a folder cannot be listed and kFolderTooLarge past a bound (a
// verdict: an unbounded walk would let a folder's author hide a file past its end); what
// was visited until then stays visited.
Error WalkFolderBounded(const std::string& root, const WalkBounds& bounds,
                        bool allow_external_symlinks, const WalkVisitor& visitor);

}  // namespace stguard::folder

#endif  // STGUARD_SRC_FOLDER_BOUNDED_WALK_H_
