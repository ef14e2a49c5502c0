// SPDX-License-Identifier: Apache-2.0
// CheckpointDir: finds the index or the shards of a folder, validates each shard strictly,
// and cross-checks the index against the shards (see stguard/checkpoint_dir.h).
#include "stguard/checkpoint_dir.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "base/out_of_memory.h"
#include "base/plain_name.h"
#include "base/duplicate_keys.h"
#include "folder/folder_util.h"
#include "folder/index_file.h"
#include "stguard/mapped_file.h"

namespace stguard {
namespace {

using folder::EndsWith;
using folder::FolderIoError;
using folder::JoinPath;
using folder::ListFolder;
using folder::RealPath;
using folder::SplitPath;

constexpr std::string_view kIndexSuffix = ".safetensors.index.json";
constexpr std::string_view kDefaultIndex = "model.safetensors.index.json";
constexpr std::string_view kDefaultSingle = "model.safetensors";
constexpr std::string_view kSafetensorsSuffix = ".safetensors";

std::string Quoted(std::string_view kind, std::string_view name) {
  return std::string(kind) + " '" + std::string(name) + "'";
}

Error IoError(const char* message, const std::string& path, int err) {
  return FolderIoError(message, path, err);
}

// InFile adds "<kind> 'name'" in front of an error's context, so that an error found
// inside a shard says which file its offset is in.
Error InFile(Error error, std::string_view kind, std::string_view name) {
  std::string context = Quoted(kind, name);
  if (!error.context.empty()) context += "; " + error.context;
  error.context = std::move(context);
  error.file = std::string(name);
  return error;
}

}  // namespace

std::string_view WarningKindName(WarningKind kind) {
  switch (kind) {
    case WarningKind::kTotalSizeMismatch:
      return "total-size-mismatch";
    case WarningKind::kUnlistedSafetensors:
      return "unlisted-safetensors";
    case WarningKind::kPickleFile:
      return "pickle-file";
    case WarningKind::kConfigDuplicateKey:
      return "config-duplicate-key";
    case WarningKind::kTieWordEmbeddingsNotBool:
      return "tie-word-embeddings-not-bool";
    case WarningKind::kLmHeadMissing:
      return "lm-head-missing";
  }
  return "unknown";
}

// CheckpointDirBuilder is the one place that fills a CheckpointDir's private fields.
class CheckpointDirBuilder {
 public:
  explicit CheckpointDirBuilder(const DirOptions& options) : options_(options) {}

  Result<CheckpointDir> Open(const std::string& path);

 private:
  // Where a shard was named, for errors about the shard as a whole.
  struct ShardSource {
    std::string name;
    uint64_t offset = 0;  // in the index: the first weight_map value naming it
    std::string tensor;   // the first tensor listed for it
  };

  Error OpenFolder(const std::string& folder);
  Error CheckFoundIndex(const std::string& name);
  Error OpenIndex(const std::string& index_path);
  Error OpenShards(const std::vector<ShardSource>& sources, bool check_inside_folder);
  Error CrossCheckIndex(const IndexFile& index);
  void IndexTensors();
  void WarnAboutUnlistedFiles();

  const DirOptions& options_;
  CheckpointDir dir_;
  std::string index_name_;  // the index's file name, for messages
};

Result<CheckpointDir> CheckpointDirBuilder::Open(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return IoError("cannot open", path, errno);
  Error error;
  if (S_ISDIR(info.st_mode)) {
    dir_.folder_ = path;
    error = OpenFolder(path);
  } else if (!S_ISREG(info.st_mode)) {
    return Error{ErrorCode::kNotARegularFile, 0, "not a regular file or folder", path};
  } else if (EndsWith(path, ".json")) {
    error = OpenIndex(path);
  } else {
    std::string name;
    SplitPath(path, &dir_.folder_, &name);
    // A file named directly is trusted as named: no folder containment check.
    error = OpenShards({ShardSource{name, 0, {}}}, /*check_inside_folder=*/false);
    if (error.ok()) dir_.shards_[0].path = path;
  }
  if (!error.ok()) return error;
  if (dir_.by_name_.empty() && !dir_.shards_.empty()) IndexTensors();
  return std::move(dir_);
}

Error CheckpointDirBuilder::OpenFolder(const std::string& folder) {
  Result<std::vector<std::string>> names = ListFolder(folder);
  if (!names.ok()) return names.error();
  std::vector<std::string> indexes;
  std::vector<std::string> files;
  bool has_default_index = false;
  bool has_default_single = false;
  for (const std::string& name : *names) {
    if (EndsWith(name, kIndexSuffix)) {
      indexes.push_back(name);
      has_default_index |= name == kDefaultIndex;
    } else if (EndsWith(name, kSafetensorsSuffix)) {
      files.push_back(name);
      has_default_single |= name == kDefaultSingle;
    }
  }
  if (has_default_index || indexes.size() == 1) {
    const std::string name = has_default_index ? std::string(kDefaultIndex) : indexes[0];
    if (Error error = CheckFoundIndex(name); !error.ok()) return error;
    return OpenIndex(JoinPath(folder, name));
  }
  if (indexes.size() > 1) {
    std::string all;
    for (const std::string& name : indexes) all += (all.empty() ? "" : ", ") + name;
    return Error{ErrorCode::kInvalidIndex, 0,
                 "the folder has several index files and none is model.safetensors.index.json;"
                 " name one",
                 all};
  }
  if (has_default_single) {
    return OpenShards({ShardSource{std::string(kDefaultSingle), 0, {}}}, true);
  }
  if (files.empty()) {
    return Error{ErrorCode::kNoSafetensorsInFolder, 0,
                 "the folder has no .safetensors file and no .safetensors.index.json", folder};
  }
  std::vector<ShardSource> sources;
  for (const std::string& name : files) sources.push_back(ShardSource{name, 0, {}});
  // No index: the only cross-check left is that no tensor is in two files.
  if (Error error = OpenShards(sources, true); !error.ok()) return error;
  IndexTensors();
  for (size_t i = 1; i < dir_.by_name_.size(); ++i) {
    const auto& previous = dir_.by_name_[i - 1];
    const auto& current = dir_.by_name_[i];
    const TensorView& tensor = dir_.TensorAt(current);
    if (dir_.TensorAt(previous).name == tensor.name) {
      return Error{ErrorCode::kTensorInTwoShards, tensor.header_offset,
                   "a tensor name is in two shard files",
                   Quoted("shard", dir_.shards_[current.shard].name) + "; also in " +
                       Quoted("shard", dir_.shards_[previous.shard].name),
                   std::string(tensor.name), dir_.shards_[current.shard].name};
    }
  }
  return Error{};
}

// CheckFoundIndex applies the shard rules to an index that the folder listing found (an
// index named on the command line is trusted as named): a regular file, not a FIFO that
// would block the open, and not a link out of the folder.
Error CheckpointDirBuilder::CheckFoundIndex(const std::string& name) {
  const std::string path = JoinPath(dir_.folder_, name);
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    // A link loop or a link to nothing is the folder author's doing: a verdict.
    if (errno == ELOOP || errno == ENOENT || errno == ENAMETOOLONG) {
      return Error{ErrorCode::kInvalidIndex, 0,
                   "the index is a symbolic link loop or a link to nothing",
                   Quoted("file", name), {}, name};
    }
    return IoError("cannot open index", path, errno);
  }
  if (!S_ISREG(info.st_mode)) {
    return Error{ErrorCode::kInvalidIndex, 0, "the index is not a regular file",
                 Quoted("file", name), {}, name};
  }
  if (options_.allow_external_symlinks) return Error{};
  std::string real_folder;
  if (!RealPath(dir_.folder_, &real_folder)) {
    return IoError("cannot resolve folder", dir_.folder_, errno);
  }
  switch (folder::PlaceInFolder(real_folder, path)) {
    case folder::Placement::kInside:
      return Error{};
    case folder::Placement::kUnreachable:
      return IoError("cannot resolve index", path, errno);
    default:  // out of the folder; a loop or dangling link was refused by stat above
      return Error{ErrorCode::kUnsafeShardName, 0,
                   "the index is a symbolic link that leads out of the folder "
                   "(--allow-external-symlinks reads it)",
                   Quoted("file", name), {}, name};
  }
}

Error CheckpointDirBuilder::OpenIndex(const std::string& index_path) {
  SplitPath(index_path, &dir_.folder_, &index_name_);
  dir_.index_path_ = index_path;
  Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(index_path);
  if (!mapping.ok()) return mapping.error();
  const std::span<const std::byte> bytes = (*mapping)->bytes();
  const uint64_t cap = std::min(options_.reader.max_header_len, kMaxHeaderLen);
  if (bytes.size() > cap) {
    return InFile(Error{ErrorCode::kInvalidIndex, 0, "the index file is larger than the cap",
                        std::to_string(bytes.size()) + " > " + std::to_string(cap) + " bytes"},
                  "file", index_name_);
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  IndexFile index;
  if (Error error = ParseIndexFile(text, options_.reader, &index); !error.ok()) {
    return InFile(std::move(error), "file", index_name_);
  }
  if (index.has_total_size) dir_.index_total_size_ = index.total_size;

  // Shard names first, in file order, so the first bad name in the file is the one shown.
  for (const IndexEntry& entry : index.weight_map) {
    if (const char* problem = PlainNameProblem(entry.shard); problem != nullptr) {
      return Error{ErrorCode::kUnsafeShardName, entry.value_offset, problem,
                   Quoted("file", index_name_) + ", " + Quoted("shard", entry.shard),
                   std::string(entry.tensor), index_name_};
    }
  }
  // Each distinct shard once, in name order, remembering where it was first named.
  std::vector<uint32_t> order(index.weight_map.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&index](uint32_t a, uint32_t b) {
    return index.weight_map[a].shard < index.weight_map[b].shard;
  });
  std::vector<ShardSource> sources;
  for (uint32_t i : order) {
    const IndexEntry& entry = index.weight_map[i];
    if (!sources.empty() && sources.back().name == entry.shard) continue;
    sources.push_back(ShardSource{std::string(entry.shard), entry.value_offset,
                                  std::string(entry.tensor)});
  }
  if (Error error = OpenShards(sources, true); !error.ok()) return error;
  IndexTensors();
  if (Error error = CrossCheckIndex(index); !error.ok()) return error;

  if (index.has_total_size && index.total_size != dir_.total_bytes_) {
    dir_.warnings_.push_back(Warning{
        WarningKind::kTotalSizeMismatch, index_name_, {},
        "metadata.total_size is " + std::to_string(index.total_size) +
            " but the tensors hold " + std::to_string(dir_.total_bytes_) + " bytes"});
  }
  WarnAboutUnlistedFiles();
  return Error{};
}

Error CheckpointDirBuilder::OpenShards(const std::vector<ShardSource>& sources,
                                       bool check_inside_folder) {
  std::string real_folder;
  if (check_inside_folder && !options_.allow_external_symlinks &&
      !RealPath(dir_.folder_, &real_folder)) {
    return IoError("cannot resolve folder", dir_.folder_, errno);
  }
  // Where an index names the shard, errors about the whole shard point there.
  auto about_shard = [this](const ShardSource& source, ErrorCode code, const char* message) {
    std::string context = index_name_.empty()
                              ? Quoted("shard", source.name)
                              : Quoted("file", index_name_) + ", " + Quoted("shard", source.name);
    return Error{code, source.offset, message, std::move(context), source.tensor,
                 index_name_.empty() ? source.name : index_name_};
  };
  dir_.shards_.reserve(sources.size());
  for (const ShardSource& source : sources) {
    const std::string path = JoinPath(dir_.folder_, source.name);
    struct stat info;
    if (::lstat(path.c_str(), &info) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) {
        return about_shard(source, ErrorCode::kMissingShard, "shard file does not exist");
      }
      if (errno == ENAMETOOLONG) {
        return about_shard(source, ErrorCode::kUnsafeShardName,
                           "shard name is too long for the file system");
      }
      return IoError("cannot open shard", path, errno);
    }
    if (check_inside_folder && !options_.allow_external_symlinks) {
      switch (folder::PlaceInFolder(real_folder, path)) {
        case folder::Placement::kInside:
          break;
        case folder::Placement::kOutside:
          return about_shard(source, ErrorCode::kUnsafeShardName,
                             "shard is a symbolic link that leads out of the folder "
                             "(--allow-external-symlinks reads it)");
        case folder::Placement::kDangling:
          return about_shard(source, ErrorCode::kMissingShard,
                             "shard is a symbolic link to nothing");
        case folder::Placement::kLoop:
          return about_shard(source, ErrorCode::kUnsafeShardName,
                             "shard is a symbolic link loop");
        case folder::Placement::kNameTooLong:
          return about_shard(source, ErrorCode::kUnsafeShardName,
                             "shard is a symbolic link to a path too long for the system");
        case folder::Placement::kUnreachable:
          return IoError("cannot resolve shard", path, errno);
      }
    }
    // Checked before opening: open(2) on a FIFO would wait for a writer forever.
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
      return about_shard(source, ErrorCode::kMissingShard,
                         "shard is not a regular file (a folder, device or FIFO)");
    }
    Result<Checkpoint> checkpoint = options_.headers_only
                                        ? Checkpoint::OpenHeader(path, options_.reader)
                                        : Checkpoint::Open(path, options_.reader);
    if (!checkpoint.ok()) return InFile(checkpoint.error(), "shard", source.name);
    dir_.shards_.push_back(ShardFile{source.name, path, std::move(*checkpoint)});
  }
  return Error{};
}

void CheckpointDirBuilder::IndexTensors() {
  dir_.by_name_.clear();
  dir_.total_bytes_ = 0;
  size_t count = 0;
  for (const ShardFile& shard : dir_.shards_) count += shard.checkpoint.num_tensors();
  dir_.by_name_.reserve(count);
  for (uint32_t s = 0; s < dir_.shards_.size(); ++s) {
    const std::span<const TensorView> tensors = dir_.shards_[s].checkpoint.tensors();
    for (uint32_t t = 0; t < tensors.size(); ++t) {
      const TensorView& tensor = tensors[t];
      dir_.by_name_.push_back(CheckpointDir::NamedTensor{s, t});
      // Each shard's bytes are in a file, so the sum over files cannot wrap in practice;
      // saturate rather than wrap if it ever could.
      const uint64_t size = tensor.byte_size();
      dir_.total_bytes_ = size > UINT64_MAX - dir_.total_bytes_ ? UINT64_MAX
                                                                : dir_.total_bytes_ + size;
    }
  }
  const CheckpointDir& dir = dir_;
  std::sort(dir_.by_name_.begin(), dir_.by_name_.end(),
            [&dir](const CheckpointDir::NamedTensor& a, const CheckpointDir::NamedTensor& b) {
              const std::string_view a_name = dir.TensorAt(a).name;
              const std::string_view b_name = dir.TensorAt(b).name;
              return a_name != b_name ? a_name < b_name : a.shard < b.shard;
            });
}

Error CheckpointDirBuilder::CrossCheckIndex(const IndexFile& index) {
  const std::vector<ShardFile>& shards = dir_.shards_;
  const auto& by_name = dir_.by_name_;
  const CheckpointDir& dir = dir_;
  // 1. No tensor in two shard files. by_name is sorted by (name, shard): repeats are
  // adjacent.
  for (size_t i = 1; i < by_name.size(); ++i) {
    const TensorView& tensor = dir.TensorAt(by_name[i]);
    if (tensor.name == dir.TensorAt(by_name[i - 1]).name) {
      return Error{ErrorCode::kTensorInTwoShards, tensor.header_offset,
                   "a tensor name is in two shard files",
                   Quoted("shard", shards[by_name[i].shard].name) + "; also in " +
                       Quoted("shard", shards[by_name[i - 1].shard].name),
                   std::string(tensor.name), shards[by_name[i].shard].name};
    }
  }
  // 2. Every weight_map entry is in the shard it names.
  for (const IndexEntry& entry : index.weight_map) {
    const auto it = std::lower_bound(
        by_name.begin(), by_name.end(), entry.tensor,
        [&dir](const CheckpointDir::NamedTensor& a, std::string_view name) {
          return dir.TensorAt(a).name < name;
        });
    const std::string where = Quoted("file", index_name_) + ", " + Quoted("shard", entry.shard);
    if (it == by_name.end() || dir.TensorAt(*it).name != entry.tensor) {
      return Error{ErrorCode::kShardMismatch, entry.key_offset,
                   "tensor listed in the index is not in its shard (nor in any other)", where,
                   std::string(entry.tensor), index_name_};
    }
    if (shards[it->shard].name != entry.shard) {
      return Error{ErrorCode::kShardMismatch, entry.key_offset,
                   "tensor listed in the index for one shard is in another",
                   where + "; found in " + Quoted("shard", shards[it->shard].name),
                   std::string(entry.tensor), index_name_};
    }
  }
  // 3. Every tensor of every shard is listed. (Listed for another shard was caught by 2.)
  std::vector<uint32_t> listed;
  SortKeysFindDuplicate(
      index.weight_map.size(), [&index](size_t i) { return index.weight_map[i].tensor; },
      &listed);  // no repeats: ValidateJsonUniqueKeys rejected them
  for (const ShardFile& shard : shards) {
    for (const TensorView& tensor : shard.checkpoint.tensors()) {
      const auto it = std::lower_bound(
          listed.begin(), listed.end(), tensor.name, [&index](uint32_t i, std::string_view name) {
            return index.weight_map[i].tensor < name;
          });
      if (it == listed.end() || index.weight_map[*it].tensor != tensor.name) {
        return Error{ErrorCode::kShardMismatch, tensor.header_offset,
                     "tensor in a shard is not listed in the index's weight_map",
                     Quoted("shard", shard.name) + "; index " + Quoted("file", index_name_),
                     std::string(tensor.name), shard.name};
      }
    }
  }
  return Error{};
}

void CheckpointDirBuilder::WarnAboutUnlistedFiles() {
  Result<std::vector<std::string>> names = ListFolder(dir_.folder_);
  if (!names.ok()) return;  // the shards were readable; a listing failure is not an error
  for (const std::string& name : *names) {
    if (!EndsWith(name, kSafetensorsSuffix)) continue;
    // shards_ is sorted by name (see OpenIndex).
    const auto it = std::lower_bound(
        dir_.shards_.begin(), dir_.shards_.end(), name,
        [](const ShardFile& shard, const std::string& key) { return shard.name < key; });
    const bool listed = it != dir_.shards_.end() && it->name == name;
    if (!listed) {
      dir_.warnings_.push_back(Warning{WarningKind::kUnlistedSafetensors, name, {},
                                       "a .safetensors file in the folder is not named by " +
                                           index_name_ + "; it is not part of this checkpoint"});
    }
  }
}

CheckpointDir::CheckpointDir() = default;
CheckpointDir::CheckpointDir(CheckpointDir&&) noexcept = default;
CheckpointDir& CheckpointDir::operator=(CheckpointDir&&) noexcept = default;
CheckpointDir::~CheckpointDir() = default;

Result<CheckpointDir> CheckpointDir::Open(const std::string& path, const DirOptions& options) {
  return CatchOutOfMemory("out of memory while opening the checkpoint",
                          [&]() -> Result<CheckpointDir> {
    CheckpointDirBuilder builder(options);
    return builder.Open(path);
  });
}

const TensorView* CheckpointDir::Find(std::string_view name, size_t* out_shard) const {
  const auto it = std::lower_bound(
      by_name_.begin(), by_name_.end(), name,
      [this](const NamedTensor& a, std::string_view key) { return TensorAt(a).name < key; });
  if (it == by_name_.end() || TensorAt(*it).name != name) return nullptr;
  if (out_shard != nullptr) *out_shard = it->shard;
  return &TensorAt(*it);
}

}  // namespace stguard
