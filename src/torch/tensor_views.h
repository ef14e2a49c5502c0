// SPDX-License-Identifier: Apache-2.0
// torch/tensor_views.h: from a torch pickle's value graph to named, bounds-checked tensor
// views of its storages.
#ifndef STGUARD_SRC_TORCH_TENSOR_VIEWS_H_
#define STGUARD_SRC_TORCH_TENSOR_VIEWS_H_

#include <vector>

#include "stguard/torch_checkpoint.h"
#include "torch/containers.h"

namespace stguard {

// SelectTensors picks the state dict (the root, or what options.key_path leads to), checks
// each tensor view against its storage, finds aliases and bounds the total output by
// options.max_output_ratio times input_size (the checkpoint's bytes). Appends to *tensors
// in the dict's order.
Error SelectTensors(const LoadedPickle& loaded, const TorchOptions& options,
                    uint64_t input_size, std::vector<TorchTensor>* tensors);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_TENSOR_VIEWS_H_
