// SPDX-License-Identifier: Apache-2.0
// ConvertTorchFolder: a sharded pytorch_model.bin checkpoint to sharded safetensors.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "folder/folder_util.h"
#include "folder/index_file.h"
#include "stguard/json_escape.h"
#include "stguard/mapped_file.h"
#include "stguard/torch_checkpoint.h"
#include "write/atomic_file.h"

namespace stguard {
using folder::JoinPath;

namespace {

constexpr char kTorchIndexName[] = "pytorch_model.bin.index.json";
constexpr char kTorchSingleName[] = "pytorch_model.bin";

bool IsPlainFileName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

bool IsRegularFile(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::string ShardName(size_t index, size_t count) {
  char name[64];
  std::snprintf(name, sizeof(name), "model-%05zu-of-%05zu.safetensors", index + 1, count);
  return name;
}

Error WriteText(const std::string& path, const std::string& text) {
  Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
  if (!file.ok()) return file.error();
  if (Error error = (*file)->Write(std::as_bytes(std::span(text.data(), text.size())));
      !error.ok()) {
    return error;
  }
  return (*file)->Commit();
}

}  // namespace

Error ConvertTorchFolder(const std::string& in_dir, const std::string& out_dir,
                         const TorchConvertOptions& convert_options, TorchFolderReport* report) {
  const std::string index_path = JoinPath(in_dir, kTorchIndexName);
  std::vector<std::string> shard_names;                 // input shards, first-use order
  std::map<std::string, std::set<std::string>> assigned;  // shard -> tensor names
  if (!IsRegularFile(index_path)) {
    const std::string single = JoinPath(in_dir, kTorchSingleName);
    if (!IsRegularFile(single)) {
      return Error{ErrorCode::kMissingShard, 0, "no pytorch_model.bin.index.json or pytorch_model.bin",
                   in_dir};
    }
    std::vector<TorchDroppedAlias> dropped;
    const std::string out = JoinPath(out_dir, "model.safetensors");
    Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(single);
    if (!checkpoint.ok()) return checkpoint.error();
    Writer writer;
    if (Error error = AddTorchTensors(*checkpoint, convert_options, &writer, &dropped);
        !error.ok()) {
      return error;
    }
    if (Error error = writer.WriteToFile(out); !error.ok()) return error;
    report->written.push_back("model.safetensors");
    report->num_tensors = writer.num_tensors();
    report->dropped = std::move(dropped);
    return {};
  }

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
    if (!IsPlainFileName(shard)) {
      return Error{ErrorCode::kUnsafeShardName, entry.value_offset,
                   "shard name is not a plain file name", shard};
    }
    if (assigned.find(shard) == assigned.end()) shard_names.push_back(shard);
    assigned[shard].insert(std::string(entry.tensor));
  }

  // Open and check every shard before writing anything.
  std::vector<TorchCheckpoint> shards;
  for (const std::string& name : shard_names) {
    Result<TorchCheckpoint> shard = TorchCheckpoint::Open(JoinPath(in_dir, name));
    if (!shard.ok()) {
      Error error = shard.error();
      error.context = "shard '" + name + "'" + (error.context.empty() ? "" : "; " + error.context);
      if (error.code == ErrorCode::kIoError) error.code = ErrorCode::kMissingShard;
      return error;
    }
    std::set<std::string> present;
    for (const TorchTensor& tensor : shard->tensors()) present.insert(tensor.name);
    if (present != assigned[name]) {
      return Error{ErrorCode::kShardMismatch, 0,
                   "the shard's tensors differ from those the index assigns to it", name};
    }
    shards.push_back(std::move(shard).value());
  }

  std::vector<std::string> written;
  auto undo = [&](Error error) {
    for (const std::string& name : written) ::unlink(JoinPath(out_dir, name).c_str());
    return error;
  };
  std::map<std::string, std::string> weight_map;
  uint64_t total_size = 0;
  for (size_t k = 0; k < shards.size(); ++k) {
    const std::string out_name = ShardName(k, shards.size());
    Writer writer;
    std::vector<TorchDroppedAlias> dropped;
    if (Error error = AddTorchTensors(shards[k], convert_options, &writer, &dropped);
        !error.ok()) {
      return undo(error);
    }
    if (Error error = writer.WriteToFile(JoinPath(out_dir, out_name)); !error.ok()) {
      return undo(error);
    }
    written.push_back(out_name);
    for (const TorchTensor& tensor : shards[k].tensors()) {
      bool was_dropped = false;
      for (const TorchDroppedAlias& alias : dropped) was_dropped |= alias.dropped == tensor.name;
      if (was_dropped) continue;
      weight_map[tensor.name] = out_name;
      total_size += tensor.byte_len;
      ++report->num_tensors;
    }
    report->dropped.insert(report->dropped.end(), dropped.begin(), dropped.end());
  }
  std::string json = "{\"metadata\":{\"total_size\":" + std::to_string(total_size) +
                     "},\"weight_map\":{";
  bool first = true;
  for (const auto& [tensor, shard] : weight_map) {
    if (!first) json += ',';
    first = false;
    AppendJsonString(tensor, &json);
    json += ':';
    AppendJsonString(shard, &json);
  }
  json += "}}\n";
  if (Error error = WriteText(JoinPath(out_dir, "model.safetensors.index.json"), json);
      !error.ok()) {
    return undo(error);
  }
  written.push_back("model.safetensors.index.json");
  report->written = std::move(written);
  report->total_size = total_size;
  return {};
}

}  // namespace stguard
