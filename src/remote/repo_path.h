// SPDX-License-Identifier: Apache-2.0
// IsRepoFilePath: the one rule for a path inside a Hugging Face repo, whether the user typed
// it (hf://ORG/NAME/PATH) or a repo listing sent it: it must not leave .../resolve/REV/.
#ifndef STGUARD_SRC_REMOTE_REPO_PATH_H_
#define STGUARD_SRC_REMOTE_REPO_PATH_H_

#include <algorithm>
#include <string_view>

namespace stguard::remote {

// IsRepoFilePath says whether `path` is a relative '/'-separated path with no empty, "."
// or ".." segment.
inline bool IsRepoFilePath(std::string_view path) {
  if (path.empty()) return false;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, slash - start);
    if (segment.empty() || segment == "." || segment == "..") return false;
    start = slash + 1;
  }
  return true;
}

}  // namespace stguard::remote

#endif  // STGUARD_SRC_REMOTE_REPO_PATH_H_
