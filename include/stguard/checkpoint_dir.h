// SPDX-License-Identifier: Apache-2.0
// stguard/checkpoint_dir.h: a checkpoint folder or a sharded index as one logical
// checkpoint, and the model-folder checks around it.
//
// A real checkpoint is a folder: config.json, then either model.safetensors or shards
// model-00001-of-0000N.safetensors and model.safetensors.index.json, which maps every
// tensor name to its shard file. CheckpointDir::Open takes any of:
// - a folder. It uses, in this order: model.safetensors.index.json; else the folder's
//   only *.safetensors.index.json (several are an error: name one); else
//   model.safetensors; else every *.safetensors file in the folder, as shards without an
//   index (none at all is kNoSafetensorsInFolder). An index found this way must be a regular file
//   (kInvalidIndex) that does not link out of the folder (kUnsafeShardName), as shards.
// - an index file (a path ending in ".json"); the shards are beside it.
// - a single .safetensors file (one shard, no index).
//
// INDEX POLICY (see src/index_file.h for the JSON rules): one JSON text, no repeated key
// in any object, top level {"metadata": {...}, "weight_map": {...}} with nothing else,
// weight_map of string -> string, metadata.total_size a non-negative integer if present.
// SHARD NAMES must be plain file names in the index's folder: not empty, not "." , no '/'
// or '\', no "..", no NUL or other control character -> kUnsafeShardName. A shard whose
// real path (symbolic links resolved) is not directly in the folder's real path is
// refused too (kUnsafeShardName), unless DirOptions::allow_external_symlinks: otherwise
// a downloaded folder could make stguard read any file on the machine. (The Hugging
// Face cache links snapshots/<rev>/<file> to ../../blobs/<hash>: pass the option there.)
// A shard that does not exist is kMissingShard. Every shard must be a valid checkpoint
// under the reader's strict rules; its error is passed on with the shard named.
// CROSS-CHECKS, in this order, first failure wins:
//   1. no tensor name is in two shard files                   -> kTensorInTwoShards
//   2. every weight_map tensor is in the shard it names        -> kShardMismatch
//   3. every tensor of every shard is listed in weight_map     -> kShardMismatch
// WARNINGS (the checkpoint is still valid): metadata.total_size differs from the sum of
// the tensors' byte sizes (writers in the wild differ: some count padding, some count
// another dtype); a *.safetensors file in the folder that the index does not name.
//
// ERRORS name the file their offset refers to in Error::context ("file 'x.json'" or
// "shard 'model-00002-of-00003.safetensors'"), and the tensor in Error::tensor. Offsets are
// byte offsets in that file.
//
// RESOURCES: the index is read once (capped at Options::max_header_len bytes); each shard
// is validated as Checkpoint::Open does (its header copied with pread) and stays mapped
// for its data, or, with DirOptions::headers_only, as Checkpoint::OpenHeader does, keeping
// no mapping at all. Symbolic-link loops and names too long for the file system are
// verdicts (kUnsafeShardName), as are links out of the folder. Memory is
// O(index size + headers). Lookups are binary searches over all tensor names. The folder
// must not change while it is being opened: the symbolic-link check and the open are
// separate steps.
#ifndef STGUARD_CHECKPOINT_DIR_H_
#define STGUARD_CHECKPOINT_DIR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/options.h"
#include "stguard/reader.h"

namespace stguard {

class MappedFile;

// DirOptions tunes CheckpointDir::Open. The defaults are the strict rules.
struct STGUARD_API DirOptions {
  // Limits for every shard's header, for the index and for config.json.
  Options reader;
  // Accept shards that are symbolic links resolving outside the folder.
  bool allow_external_symlinks = false;
  // Validate the shards with Checkpoint::OpenHeader: no shard stays mapped, so a folder
  // of any number of shards can be checked (one mapping each would run into the
  // per-process limit, vm.max_map_count, at about 65,000), but every TensorView::data is
  // empty; read data by opening ShardFile::path.
  bool headers_only = false;
};

// WarningKind names each thing worth reporting that does not make the checkpoint invalid.
enum class WarningKind : uint8_t {
  kTotalSizeMismatch,          // metadata.total_size != the sum of tensor byte sizes
  kUnlistedSafetensors,        // a *.safetensors file that the index does not name
  kPickleFile,                 // a file whose loading can run code: pickles (*.bin, *.pt,
                               // *.pth, *.pth.tar, *.ckpt, *.pkl, *.pickle, *.joblib, *.pt2,
                               // gzip-wrapped ones), Keras *.h5/*.keras, *.npy/*.npz with
                               // object arrays
  kConfigDuplicateKey,         // config.json repeats a key (Python keeps the last)
  kTieWordEmbeddingsNotBool,   // config.json's tie_word_embeddings is not true or false
  kLmHeadMissing,              // tie_word_embeddings is false, yet no lm_head.weight
};

// WarningKindName returns "total-size-mismatch", "unlisted-safetensors", "pickle-file",
// "config-duplicate-key", "tie-word-embeddings-not-bool" or "lm-head-missing".
STGUARD_API std::string_view WarningKindName(WarningKind kind);

// Warning is one finding. `file` is a name inside the folder; `tensor` may be empty.
struct STGUARD_API Warning {
  WarningKind kind = WarningKind::kTotalSizeMismatch;
  std::string file;
  std::string tensor;
  std::string message;
};

// ShardFile is one validated shard.
struct STGUARD_API ShardFile {
  std::string name;  // the file name inside the folder
  std::string path;  // folder + "/" + name (as opened)
  Checkpoint checkpoint;
};

// CheckpointDir is a validated logical checkpoint made of one or more shard files. It is
// movable, not copyable; TensorView pointers stay valid across moves.
class STGUARD_API CheckpointDir {
 public:
  // Open validates the folder, index or file at `path` (see the top of this file) and
  // returns the logical checkpoint or the first error. A path that cannot be reached is
  // kIoError or kNotARegularFile, as for Checkpoint::Open.
  static Result<CheckpointDir> Open(const std::string& path, const DirOptions& options = {});

  CheckpointDir(CheckpointDir&&) noexcept;
  CheckpointDir& operator=(CheckpointDir&&) noexcept;
  CheckpointDir(const CheckpointDir&) = delete;
  CheckpointDir& operator=(const CheckpointDir&) = delete;
  ~CheckpointDir();

  // folder is the directory holding the shards ("." for a bare file name).
  const std::string& folder() const { return folder_; }
  // index_path is the index file that was read, or empty when there is none.
  const std::string& index_path() const { return index_path_; }
  bool has_index() const { return !index_path_.empty(); }
  // index_total_size is metadata.total_size from the index, when it has one.
  std::optional<uint64_t> index_total_size() const { return index_total_size_; }

  // shards lists the shard files in ascending byte order of their names.
  std::span<const ShardFile> shards() const { return shards_; }
  size_t num_tensors() const { return by_name_.size(); }
  // total_bytes is the sum of every tensor's byte size.
  uint64_t total_bytes() const { return total_bytes_; }

  // Find returns the tensor named `name` in whichever shard holds it, or nullptr; when
  // found and `out_shard` is not null, *out_shard is the shard's index in shards().
  const TensorView* Find(std::string_view name, size_t* out_shard = nullptr) const;

  // warnings lists what is worth reporting but does not make the checkpoint invalid.
  std::span<const Warning> warnings() const { return warnings_; }

 private:
  CheckpointDir();
  friend class CheckpointDirBuilder;

  // NamedTensor is one entry of the name index: 8 bytes, since a folder's headers can hold
  // millions of tensors. The name is looked up in the shard's own TensorView.
  struct NamedTensor {
    uint32_t shard;
    uint32_t index;  // in shards_[shard].checkpoint.tensors()
  };
  const TensorView& TensorAt(const NamedTensor& entry) const {
    return shards_[entry.shard].checkpoint.tensors()[entry.index];
  }

  std::string folder_;
  std::string index_path_;
  std::optional<uint64_t> index_total_size_;
  std::vector<ShardFile> shards_;
  std::vector<NamedTensor> by_name_;  // sorted by name bytes
  uint64_t total_bytes_ = 0;
  std::vector<Warning> warnings_;
};

// ModelFolderReport is what CheckModelFolder found.
struct STGUARD_API ModelFolderReport {
  // error is kInvalidConfig when config.json exists but is not one JSON object (the
  // offset is in config.json), kUnsafeShardName when config.json or a *.safetensors file
  // is a symbolic link out of the folder, the file's own error (with "file 'NAME'" in
  // the context) when a *.safetensors file is invalid, kIoError when a file cannot be
  // read; ok otherwise.
  Error error;
  std::vector<Warning> warnings;
  // config: config.json as it was read for the rules (mapped), null when it is absent or
  // was not read; kept so that what comes next (lint) reads none of it again.
  std::shared_ptr<const MappedFile> config;
};

// CheckModelFolder looks at the files around the weights in `folder`:
// - config.json, when present, must be one valid JSON text holding an object (else an
//   error); a key repeated in any object of it is a warning.
// - When config.json says "tie_word_embeddings": false, `weights` (if given) should have
//   a tensor named lm_head.weight (else a warning). When it says true, or does not say,
//   lm_head.weight may be absent: the output layer reuses the input embeddings.
// - Files whose loading can run code are flagged (any case): pickle formats *.bin, *.pt,
//   *.pth, *.pth.tar, *.ckpt, *.pkl, *.pickle, *.joblib, *.pt2 and these wrapped in gzip
//   (*.gz, *.gzip); Keras *.h5 and *.keras (Lambda layers hold marshalled code); *.npy
//   whose dtype has object fields, and *.npz with such a member or a member that cannot
//   be looked into (compressed): "may contain pickles".
// - Every *.safetensors file in the folder must be a valid checkpoint under the strict
//   rules, whether or not `weights` uses it: loaders look for model.safetensors before
//   an index, so a folder with both loads a file the index never names. Files that
//   `weights` already validated (its shards, in this folder) are not read again; the
//   others are opened one at a time with Checkpoint::OpenHeader.
// - Containment: config.json and every *.safetensors file read here must not be a
//   symbolic link that resolves out of the folder (kUnsafeShardName), unless
//   `allow_external_symlinks`, as for shards; a link loop or a name the file system
//   refuses is kUnsafeShardName too. What the folder's author controls is a verdict on
//   the folder, never an I/O error.
// Only `folder` itself is listed, not its subfolders. Warnings come in a fixed order:
// config findings, then files by name.
STGUARD_API ModelFolderReport CheckModelFolder(const std::string& folder,
                                               const CheckpointDir* weights,
                                               const Options& options = {},
                                               bool allow_external_symlinks = false);

}  // namespace stguard

#endif  // STGUARD_CHECKPOINT_DIR_H_
