// SPDX-License-Identifier: Apache-2.0
// Header-only checkpoints for lint tests: the canonical header of named, shaped tensors,
// written with the data buffer left as a hole (ftruncate), so a 16 GB Llama-3-8B shard
// costs a few kilobytes of disk and no time.
#ifndef STGUARD_TESTS_SUPPORT_SPARSE_CHECKPOINT_H_
#define STGUARD_TESTS_SUPPORT_SPARSE_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/error.h"

namespace stguard::testing {

// ShapedTensor is a tensor without data: its bytes are zeros.
struct ShapedTensor {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<uint64_t> shape;
};

// WriteSparseCheckpoint writes a valid canonical checkpoint of `tensors` and `metadata` to
// `path`, its data a hole of zeros. Returns the writer's error, or an ok Error.
Error WriteSparseCheckpoint(const std::string& path, const std::vector<ShapedTensor>& tensors,
                            const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_SPARSE_CHECKPOINT_H_
