// SPDX-License-Identifier: Apache-2.0
// torch/tensor_views.h: from a torch pickle's value graph to named, bounds-checked tensor
// views of its storages.
#ifndef STGUARD_SRC_TORCH_TENSOR_VIEWS_H_
#define STGUARD_SRC_TORCH_TENSOR_VIEWS_H_

#include <vector>

#include "stguard/torch_checkpoint.h"
#include "torch/containers.h"

namespace stguard {

// SelectTensors picks the state dict (the root or root[options.key]), checks each tensor
// view against its storage and finds aliases. Appends to *tensors in the dict's order.
Error SelectTensors(const LoadedPickle& loaded, const TorchOptions& options,
                    std::vector<TorchTensor>* tensors);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_TENSOR_VIEWS_H_
