// SPDX-License-Identifier: Apache-2.0
// ConvertTorchFolder: a sharded pytorch_model.bin checkpoint to sharded safetensors.
//
// Reading: the index and every shard are checked to stay inside the input folder, then
// opened and checked before anything is written. Writing (write/output_folder.h): the
// output folder is created if missing (or must be empty), every output file is staged as
// a temporary file reached through the folder's descriptor (no link followed), and all
// are renamed into place only once complete, the index last.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "base/plain_name.h"
#include "data/conversion_target.h"
#include "folder/folder_util.h"
#include "folder/index_file.h"
#include "stguard/mapped_file.h"
#include "stguard/torch_checkpoint.h"
#include "write/output_folder.h"
#include "write/sharded_output.h"

namespace stguard {
using folder::JoinPath;

namespace {

constexpr char kTorchIndexName[] = "pytorch_model.bin.index.json";
constexpr char kTorchSingleName[] = "pytorch_model.bin";
constexpr char kOutSingleName[] = "model.safetensors";

bool IsRegularFile(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// Contain refuses `name` in the input folder when it is a link that leaves it (unless
// allowed), a loop or a name too long: the folder layer's one containment checker.
Error Contain(const std::string& in_dir, const std::string& name, bool allow_external) {
  return allow_external ? Error{} : folder::ContainInFolder(in_dir, name);
}

// ShardError names the shard in an error from opening or checking it.
Error ShardError(Error error, const std::string& name) {
  error.context = "shard '" + name + "'" + (error.context.empty() ? "" : "; " + error.context);
  if (error.code == ErrorCode::kIoError) error.code = ErrorCode::kMissingShard;
  error.file = name;
  return error;
}

bool WasDropped(const std::vector<TorchDroppedAlias>& dropped, const std::string& name) {
  for (const TorchDroppedAlias& alias : dropped) {
    if (alias.dropped == name) return true;
  }
  return false;
}

Error ConvertSingleFile(const std::string& in_dir, const std::string& out_dir,
                        const TorchConvertOptions& convert_options, TorchFolderReport* report) {
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(JoinPath(in_dir, kTorchSingleName));
  if (!checkpoint.ok()) {
    Error error = checkpoint.error();
    error.file = kTorchSingleName;  // the member the error is about
    return error;
  }
  Writer writer;
  std::vector<TorchDroppedAlias> dropped;
  if (Error error = AddTorchTensors(*checkpoint, convert_options, &writer, &dropped,
                                    &report->num_converted);
      !error.ok()) {
    return error;
  }
  writer.set_progress(convert_options.progress);
  OutputFolder out;
  if (Error error = out.Create(out_dir); !error.ok()) return error;
  if (Error error = out.Stage(kOutSingleName, writer); !error.ok()) return error;
  if (Error error = out.Publish(); !error.ok()) return error;
  report->written.push_back(kOutSingleName);
  report->num_tensors = writer.num_tensors();
  for (const TorchTensor& tensor : checkpoint->tensors()) {
    if (WasDropped(dropped, tensor.name)) continue;
    report->total_size +=
        ConvertedByteLen(tensor.dtype, tensor.byte_len, convert_options.dtype);
  }
  report->dropped = std::move(dropped);
  return {};
}

// TorchIndex is what the input index says: the shards in order of first use and the
// tensors it assigns to each.
struct TorchIndex {
  std::vector<std::string> shard_names;
  std::map<std::string, std::set<std::string>> assigned;
};

// ReadTorchIndex parses pytorch_model.bin.index.json; every shard must be a plain name.
Error ReadTorchIndex(const std::string& index_path, TorchIndex* out) {
  Result<std::unique_ptr<MappedFile>> index_file = MappedFile::Open(index_path);
  if (!index_file.ok()) return index_file.error();
  const std::span<const std::byte> index_bytes = (*index_file)->bytes();
  const std::string_view text(reinterpret_cast<const char*>(index_bytes.data()),
                              index_bytes.size());
  IndexFile index;
  if (Error error = ParseIndexFile(text, Options{}, &index); !error.ok()) {
    error.context = "file '" + std::string(kTorchIndexName) + "'" +
                    (error.context.empty() ? "" : "; " + error.context);
    return error;
  }
  for (const IndexEntry& entry : index.weight_map) {
    const std::string shard(entry.shard);
    if (const char* problem = PlainNameProblem(shard); problem != nullptr) {
      return Error{ErrorCode::kUnsafeShardName, entry.value_offset,
                   problem, "file '" + std::string(kTorchIndexName) + "', shard '" + shard + "'"};
    }
    if (out->assigned.find(shard) == out->assigned.end()) out->shard_names.push_back(shard);
    out->assigned[shard].insert(std::string(entry.tensor));
  }
  return {};
}

// OpenShards opens and checks every shard the index names, before anything is written:
// each must stay in the folder and hold exactly the tensors the index assigns to it.
Error OpenShards(const std::string& in_dir, bool allow_external, const TorchIndex& index,
                 std::vector<TorchCheckpoint>* shards) {
  for (const std::string& name : index.shard_names) {
    if (Error error = Contain(in_dir, name, allow_external); !error.ok()) return error;
    Result<TorchCheckpoint> shard = TorchCheckpoint::Open(JoinPath(in_dir, name));
    if (!shard.ok()) return ShardError(shard.error(), name);
    std::set<std::string> present;
    for (const TorchTensor& tensor : shard->tensors()) present.insert(tensor.name);
    if (present != index.assigned.at(name)) {
      return Error{ErrorCode::kShardMismatch, 0,
                   "the shard's tensors differ from those the index assigns to it", name};
    }
    shards->push_back(std::move(shard).value());
  }
  return {};
}

// WriteShards writes one safetensors shard per input shard and the index last
// (WriteShardedFolder), published together.
Error WriteShards(const std::string& out_dir, const std::vector<TorchCheckpoint>& shards,
                  const std::vector<std::string>& shard_names,
                  const TorchConvertOptions& convert_options, TorchFolderReport* report) {
  const FillShard fill = [&](size_t k, Writer* writer, ShardContent* content) -> Error {
    std::vector<TorchDroppedAlias> dropped;
    if (Error error = AddTorchTensors(shards[k], convert_options, writer, &dropped,
                                      &report->num_converted);
        !error.ok()) {
      return error;
    }
    writer->set_progress(convert_options.progress);
    for (const TorchTensor& tensor : shards[k].tensors()) {
      if (WasDropped(dropped, tensor.name)) continue;
      content->names.push_back(tensor.name);
      content->data_bytes +=
          ConvertedByteLen(tensor.dtype, tensor.byte_len, convert_options.dtype);
      ++report->num_tensors;
    }
    report->dropped.insert(report->dropped.end(), dropped.begin(), dropped.end());
    return {};
  };
  // A storage failing its CRC-32 surfaces while streaming: name the shard.
  const auto stage_error = [&](size_t k, Error error) {
    return error.code == ErrorCode::kZipChecksum ? ShardError(error, shard_names[k]) : error;
  };
  return WriteShardedFolder(out_dir, shards.size(), fill, stage_error, &report->written,
                            &report->total_size);
}

}  // namespace

Error ConvertTorchFolder(const std::string& in_dir, const std::string& out_dir,
                         const TorchConvertOptions& convert_options, TorchFolderReport* report) {
  const bool allow_external = convert_options.allow_external_symlinks;
  const std::string index_path = JoinPath(in_dir, kTorchIndexName);
  if (Error error = Contain(in_dir, kTorchIndexName, allow_external); !error.ok()) return error;
  if (!IsRegularFile(index_path)) {
    if (Error error = Contain(in_dir, kTorchSingleName, allow_external); !error.ok()) {
      return error;
    }
    if (!IsRegularFile(JoinPath(in_dir, kTorchSingleName))) {
      return Error{ErrorCode::kMissingShard, 0, "no pytorch_model.bin.index.json or pytorch_model.bin",
                   in_dir};
    }
    return ConvertSingleFile(in_dir, out_dir, convert_options, report);
  }
  TorchIndex index;
  if (Error error = ReadTorchIndex(index_path, &index); !error.ok()) return error;
  std::vector<TorchCheckpoint> shards;
  if (Error error = OpenShards(in_dir, allow_external, index, &shards); !error.ok()) return error;
  return WriteShards(out_dir, shards, index.shard_names, convert_options, report);
}

}  // namespace stguard
