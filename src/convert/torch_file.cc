// SPDX-License-Identifier: Apache-2.0
// ConvertTorchFile: one PyTorch checkpoint through the conversion pipeline.
#include <utility>

#include "convert/pipeline.h"
#include "stguard/torch_checkpoint.h"
#include "torch/torch_sources.h"

namespace stguard {

Error ConvertTorchFile(const std::string& in_path, const std::string& out_path,
                       const TorchOptions& options, const TorchConvertOptions& convert_options,
                       std::vector<TorchDroppedAlias>* dropped, TorchFileReport* report) {
  const ConversionPlan plan{convert_options.dtype, convert_options.progress};
  if (Error e = CheckPlan(plan); !e.ok()) return e;
  if (Error e = CheckOutputIsNotInput(in_path, out_path); !e.ok()) return e;
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(in_path, options);
  if (!checkpoint.ok()) return checkpoint.error();
  ConvertedFile done;
  if (Error e = Convert(TorchSources(*checkpoint, convert_options.drop_aliases, dropped), plan,
                        out_path, &done);
      !e.ok()) {
    return e;
  }
  if (report != nullptr) *report = TorchFileReport{done.num_tensors, done.num_converted};
  return {};
}

}  // namespace stguard
