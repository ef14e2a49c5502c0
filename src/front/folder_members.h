// SPDX-License-Identifier: Apache-2.0
// CheckFolderWith: CheckFolder with the walk over the folder's files given by the caller,
// so that a folder known only by a listing (a whole hf:// repo) is judged by the same
// rules as a local one.
#ifndef STGUARD_SRC_FRONT_FOLDER_MEMBERS_H_
#define STGUARD_SRC_FRONT_FOLDER_MEMBERS_H_

#include <functional>
#include <string>
#include <vector>

#include "stguard/checkpoint_dir.h"
#include "stguard/verdict.h"

namespace stguard {

// FolderMembers is every file of a folder recognised by content and judged: pickle-bearing
// files first, then GGUF, npy and npz files (each in walk order), and the walk's error.
struct FolderMembers {
  std::vector<CheckResult> files;
  Error error;
};

// MemberCheck examines the files under `folder` (CheckFolder's walk: ScanFolderByContent,
// each file judged by its reader); `checkpoint` is the folder's safetensors checkpoint when
// it opened (its shards' heads are already read), else null; `config` is config.json as
// the folder's rules read it, else null.
using MemberCheck = std::function<FolderMembers(
    const std::string& folder, const CheckpointDir* checkpoint, const MappedFile* config)>;

// CheckFolderWith is CheckFolder (stguard/verdict.h) with the members given by `members`:
// the checkpoint, the index and config.json are read from `path`, the verdict is decided
// over them and the members alike.
CheckResult CheckFolderWith(const std::string& path, const CheckOptions& options,
                            const MemberCheck& members);

}  // namespace stguard

#endif  // STGUARD_SRC_FRONT_FOLDER_MEMBERS_H_
