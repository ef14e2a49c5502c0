// SPDX-License-Identifier: Apache-2.0
// The safetensors adapter: a validated checkpoint's tensors as the pipeline's streamed
// sources (convert/pipeline.h).
#ifndef STGUARD_SRC_CONVERT_CHECKPOINT_SOURCES_H_
#define STGUARD_SRC_CONVERT_CHECKPOINT_SOURCES_H_

#include "convert/pipeline.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard {

// CheckpointSources streams `checkpoint` from its own parsed entries (WriteConverted: the
// canonical header in pieces, the data read with Checkpoint::ReadData tensor by tensor,
// those that change dtype (ChangesDtype) converted as they pass by the pipeline's one
// decorator, ConvertingSink), so memory does not grow with the header's entries. The
// checkpoint must outlive it. It reads the checkpoint opened before the output's
// crash-safe rename, so OUT may be IN (as `canon IN IN`).
class CheckpointSources final : public StreamedSources {
 public:
  explicit CheckpointSources(const Checkpoint& checkpoint) : checkpoint_(checkpoint) {}
  [[nodiscard]] Error WriteTo(Dtype target, ByteSink& sink, ConvertedFile* done) override {
    size_t converted = 0;
    if (Error error = WriteConverted(checkpoint_, target, sink, &converted); !error.ok()) {
      return error;
    }
    *done = ConvertedFile{checkpoint_.num_tensors(), converted};
    return {};
  }

 private:
  const Checkpoint& checkpoint_;
};

}  // namespace stguard

#endif  // STGUARD_SRC_CONVERT_CHECKPOINT_SOURCES_H_
