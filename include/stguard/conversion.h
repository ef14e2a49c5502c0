// SPDX-License-Identifier: Apache-2.0
// stguard/conversion.h: conversions of whole model folders that only the conversion layer
// (src/convert/, above the readers and the writer) can make.
//
// A SAFETENSORS MODEL FOLDER converts to another dtype as a folder: every shard CheckpointDir
// finds (stguard/checkpoint_dir.h: model.safetensors.index.json, a lone index, a single
// model.safetensors, or shards without an index) is rewritten under its own file name with
// WriteConverted (stguard/writer.h: floating tensors to the target, everything else and the
// metadata copied), and the index, when there was one, is rewritten under its own name
// with the same weight map and metadata.total_size the sum of the new tensors' byte sizes.
// Other files of the folder (config.json, tokenizer files) are not copied: the output is
// the weights.
// OUTPUT FOLDER: as ConvertTorchFolder's (stguard/torch_checkpoint.h): new or empty,
// created as `mkdir -p` does, every file staged through the folder's descriptor with
// O_EXCL and O_NOFOLLOW and renamed into place only once all are complete, the index last;
// on any failure nothing this call wrote or created is left. OUT must not be IN
// (CheckOutputIsNotInput).
// MEMORY: the folder's headers (CheckpointDir keeps them), the weight map's names for the
// new index, and the writer's fixed buffers; data is streamed shard by shard.
#ifndef STGUARD_CONVERSION_H_
#define STGUARD_CONVERSION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stguard/checkpoint_dir.h"
#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// SafetensorsFolderReport says what ConvertSafetensorsFolder wrote.
struct SafetensorsFolderReport {
  std::vector<std::string> written;  // file names in the output folder, index last
  size_t num_tensors = 0;
  size_t num_converted = 0;          // tensors whose dtype changed
  uint64_t total_size = 0;           // the data bytes written, every shard
};

// ConvertSafetensorsFolder converts the safetensors model folder (or index file) `in` into
// the folder `out_dir`, every floating tensor to `target` (F32, F16 or BF16, else
// kInvalidArgument). Errors are CheckpointDir::Open's for the input (a shard named in the
// context), kIoError for the output folder, WriteConverted's while streaming. `progress`,
// when set, is called with the bytes of each write, as Writer::set_progress's is.
[[nodiscard]] STGUARD_API Error ConvertSafetensorsFolder(
    const std::string& in, const std::string& out_dir, Dtype target, const DirOptions& options,
    const std::function<void(uint64_t bytes)>& progress, SafetensorsFolderReport* report);

}  // namespace stguard

#endif  // STGUARD_CONVERSION_H_
