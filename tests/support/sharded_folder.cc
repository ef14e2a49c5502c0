// SPDX-License-Identifier: Apache-2.0
#include "support/sharded_folder.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "stguard/json_escape.h"

namespace stguard::testing {

std::string ShardName(int i, int n) {
  char name[64];
  std::snprintf(name, sizeof(name), "model-%05d-of-%05d.safetensors", i, n);
  return name;
}

TestTensor ShardTensor(const std::string& name, Dtype dtype, uint64_t count) {
  const uint64_t size = count * DtypeBits(dtype) / 8;
  std::string data;
  for (uint64_t i = 0; i < size; ++i) data.push_back(static_cast<char>(name.size() * 31 + i));
  return TestTensor{name, dtype, {count}, data};
}

void WriteShard(const TempDir& dir, const std::string& name,
                const std::vector<TestTensor>& tensors) {
  TensorSet set;
  set.tensors = tensors;
  Result<std::string> bytes = WriteSet(set);
  ASSERT_TRUE(bytes.ok()) << bytes.error().ToString();
  ASSERT_TRUE(WriteFileBytes(dir.File(name), *bytes));
}

std::string IndexJson(const std::vector<std::pair<std::string, std::string>>& entries,
                      std::optional<uint64_t> total_size) {
  std::string out = "{\n  \"metadata\": {";
  if (total_size) out += "\n    \"total_size\": " + std::to_string(*total_size) + "\n  ";
  out += "},\n  \"weight_map\": {";
  for (size_t i = 0; i < entries.size(); ++i) {
    out += i == 0 ? "\n    " : ",\n    ";
    AppendJsonString(entries[i].first, &out);
    out += ": ";
    AppendJsonString(entries[i].second, &out);
  }
  return out + "\n  }\n}\n";
}

ShardedFolder WriteShardedFolder(const TempDir& dir, int num_shards, int num_tensors) {
  const Dtype dtypes[] = {Dtype::kF32, Dtype::kBF16, Dtype::kI64, Dtype::kU8, Dtype::kF16};
  std::vector<std::vector<TestTensor>> shards(num_shards);
  ShardedFolder folder;
  for (int t = 0; t < num_tensors; ++t) {
    const std::string name = "model.layers." + std::to_string(t) + ".weight";
    const int s = t % num_shards;
    shards[s].push_back(ShardTensor(name, dtypes[t % 5], 3 + t));
    folder.total_bytes += shards[s].back().data.size();
    folder.entries.emplace_back(name, ShardName(s + 1, num_shards));
  }
  for (int s = 0; s < num_shards; ++s) WriteShard(dir, ShardName(s + 1, num_shards), shards[s]);
  EXPECT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"),
                             IndexJson(folder.entries, folder.total_bytes)));
  return folder;
}

}  // namespace stguard::testing
