// SPDX-License-Identifier: Apache-2.0
// ConvertSafetensorsFolder: a safetensors model folder rewritten to another dtype, shard by
// shard under the same names, with its index rewritten for the new sizes.
#include "stguard/conversion.h"

#include <map>
#include <utility>

#include "convert/checkpoint_sources.h"
#include "data/conversion_target.h"
#include "stguard/writer.h"
#include "write/output_folder.h"

namespace stguard {
namespace {

// IndexName is the file name of the index `dir` read (the text after the last '/').
std::string IndexName(const CheckpointDir& dir) {
  const std::string& path = dir.index_path();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Error ConvertSafetensorsFolder(const std::string& in, const std::string& out_dir, Dtype target,
                               const DirOptions& options,
                               const std::function<void(uint64_t bytes)>& progress,
                               SafetensorsFolderReport* report) {
  if (Error error = CheckConversionTarget(target); !error.ok()) return error;
  if (Error error = CheckOutputIsNotInput(in, out_dir); !error.ok()) return error;
  Result<CheckpointDir> dir = CheckpointDir::Open(in, options);
  if (!dir.ok()) return dir.error();
  OutputFolder folder;
  if (Error error = folder.Create(out_dir); !error.ok()) return error;
  SafetensorsFolderReport done;
  std::map<std::string, std::string> weight_map;
  for (const ShardFile& shard : dir->shards()) {
    // Each shard through the pipeline as streamed sources (CheckpointSources).
    CheckpointSources sources(shard.checkpoint);
    ConvertedFile converted;
    const Error error = folder.StageStream(shard.name, [&](ByteSink& file) {
      return ConvertToSink(sources, ConversionPlan{target, progress}, file, &converted);
    });
    if (!error.ok()) return error;
    done.written.push_back(shard.name);
    done.num_converted += converted.num_converted;
    for (const TensorView& tensor : shard.checkpoint.tensors()) {
      done.total_size += ConvertedByteLen(tensor.dtype, tensor.byte_size(), target);
      if (dir->has_index()) weight_map.emplace(std::string(tensor.name), shard.name);
    }
    done.num_tensors += shard.checkpoint.num_tensors();
  }
  if (dir->has_index()) {
    const std::string name = IndexName(*dir);
    if (Error error = folder.StageText(name, SafetensorsIndexJson(weight_map, done.total_size));
        !error.ok()) {
      return error;
    }
    done.written.push_back(name);
  }
  if (Error error = folder.Publish(); !error.ok()) return error;
  if (report != nullptr) *report = std::move(done);
  return {};
}

}  // namespace stguard
