// SPDX-License-Identifier: Apache-2.0
// WriteShardedFolder: the one sharding loop of every conversion that writes a folder of
// safetensors shards (a PyTorch index, a split GGUF model): the shards under one naming,
// model-0000N-of-0000M.safetensors, staged one writer at a time, then the index, then
// published together (write/output_folder.h).
#ifndef STGUARD_SRC_WRITE_SHARDED_OUTPUT_H_
#define STGUARD_SRC_WRITE_SHARDED_OUTPUT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stguard/error.h"
#include "stguard/writer.h"

namespace stguard {

// kSafetensorsIndexName is the index a sharded output folder holds.
inline constexpr char kSafetensorsIndexName[] = "model.safetensors.index.json";

// SafetensorsShardName is shard `index` (from 0) of `count`:
// model-0000N-of-0000M.safetensors, the name Hugging Face's sharding writes.
std::string SafetensorsShardName(size_t index, size_t count);

// ShardContent is what FillShard put in one shard: the tensor names it holds (for the
// index's weight map) and their data bytes (for its total_size).
struct ShardContent {
  std::vector<std::string> names;
  uint64_t data_bytes = 0;
};

// FillShard adds shard k's tensors and metadata to `writer`; what it needs while the
// shard is written (an open input) must outlive the call until the next one.
using FillShard = std::function<Error(size_t k, Writer* writer, ShardContent* content)>;

// WriteShardedFolder creates the output folder `out_dir` (OutputFolder::Create), writes
// `count` shards filled by `fill`, then the index, and publishes them, the index last.
// `stage_error`, when set, may reword an error raised while shard k streams (a checksum
// naming its input). *written gets the file names, index last; *total_size the data bytes.
[[nodiscard]] Error WriteShardedFolder(const std::string& out_dir, size_t count,
                                       const FillShard& fill,
                                       const std::function<Error(size_t k, Error)>& stage_error,
                                       std::vector<std::string>* written, uint64_t* total_size);

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_SHARDED_OUTPUT_H_
