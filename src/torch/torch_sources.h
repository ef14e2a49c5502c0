// SPDX-License-Identifier: Apache-2.0
// The PyTorch adapter of the conversion pipeline: a checkpoint's tensors as tensor sources.
#ifndef STGUARD_SRC_TORCH_TORCH_SOURCES_H_
#define STGUARD_SRC_TORCH_TORCH_SOURCES_H_

#include <vector>

#include "stguard/torch_checkpoint.h"
#include "write/converting_sink.h"

namespace stguard {

// TorchSources yields the checkpoint's tensors, in order, each streamed by
// TorchCheckpoint::StreamTensor (a strided gather, CRC-32 checked), and the metadata
// {"format": "pt"}. With `drop_aliases`, a tensor aliasing an earlier one (tied weights) is
// left out and named in *dropped with the name it aliases. `checkpoint` must outlive the
// sources.
TensorSources TorchSources(const TorchCheckpoint& checkpoint, bool drop_aliases,
                           std::vector<TorchDroppedAlias>* dropped);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_TORCH_SOURCES_H_
