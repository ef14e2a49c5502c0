// SPDX-License-Identifier: Apache-2.0
// WriteShardedFolder: shards staged one writer at a time, the index last.
#include "write/sharded_output.h"

#include <cstdio>
#include <map>
#include <utility>

#include "write/output_folder.h"

namespace stguard {

std::string SafetensorsShardName(size_t index, size_t count) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", index + 1, count);
  return name;
}

Error WriteShardedFolder(const std::string& out_dir, size_t count, const FillShard& fill,
                         const std::function<Error(size_t k, Error)>& stage_error,
                         std::vector<std::string>* written, uint64_t* total_size) {
  OutputFolder out;
  if (Error error = out.Create(out_dir); !error.ok()) return error;
  std::map<std::string, std::string> weight_map;
  std::vector<std::string> names;
  uint64_t total = 0;
  for (size_t k = 0; k < count; ++k) {
    // One writer at a time: its tensors' names and producers are freed once staged.
    Writer writer;
    ShardContent content;
    if (Error error = fill(k, &writer, &content); !error.ok()) return error;
    const std::string name = SafetensorsShardName(k, count);
    if (Error error = out.Stage(name, writer); !error.ok()) {
      return stage_error ? stage_error(k, std::move(error)) : error;
    }
    for (std::string& tensor : content.names) weight_map[std::move(tensor)] = name;
    total += content.data_bytes;
    names.push_back(name);
  }
  if (Error error = out.StageText(kSafetensorsIndexName, SafetensorsIndexJson(weight_map, total));
      !error.ok()) {
    return error;
  }
  if (Error error = out.Publish(); !error.ok()) return error;
  names.push_back(kSafetensorsIndexName);
  *written = std::move(names);
  *total_size = total;
  return {};
}

}  // namespace stguard
