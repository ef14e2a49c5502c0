// SPDX-License-Identifier: Apache-2.0
// Sharded safetensors folders for tests: shards written by the canonical writer, named as
// transformers names them, and their index.
#ifndef STGUARD_TESTS_SUPPORT_SHARDED_FOLDER_H_
#define STGUARD_TESTS_SUPPORT_SHARDED_FOLDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stguard/dtype.h"
#include "support/temp_dir.h"
#include "support/tensor_set.h"

namespace stguard::testing {

// ShardName returns "model-0000I-of-0000N.safetensors".
std::string ShardName(int i, int n);

// ShardTensor makes a small tensor whose bytes depend on its name.
TestTensor ShardTensor(const std::string& name, Dtype dtype = Dtype::kF32, uint64_t count = 2);

// WriteShard writes `tensors` as the safetensors file `name` in `dir`, or fails the test.
void WriteShard(const TempDir& dir, const std::string& name,
                const std::vector<TestTensor>& tensors);

// IndexJson writes an index with `entries` (tensor, shard) in order, in the layout
// transformers uses (indented), with total_size when it is given.
std::string IndexJson(const std::vector<std::pair<std::string, std::string>>& entries,
                      std::optional<uint64_t> total_size = std::nullopt);

// ShardedFolder is what WriteShardedFolder wrote: the (tensor, shard) list and the data
// bytes of every tensor.
struct ShardedFolder {
  std::vector<std::pair<std::string, std::string>> entries;
  uint64_t total_bytes = 0;
};

// WriteShardedFolder writes a folder of `num_shards` shards holding `num_tensors` tensors
// of assorted dtypes round-robin, and its index.
ShardedFolder WriteShardedFolder(const TempDir& dir, int num_shards, int num_tensors = 9);

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_SHARDED_FOLDER_H_
