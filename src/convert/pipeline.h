// SPDX-License-Identifier: Apache-2.0
// The conversion pipeline: a format's adapter yields tensor sources (TensorSources,
// write/converting_sink.h); Convert writes them as one safetensors file, every tensor
// through the one dtype decorator (AddSource), through the crash-safe writer.
#ifndef STGUARD_SRC_CONVERT_PIPELINE_H_
#define STGUARD_SRC_CONVERT_PIPELINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/error.h"
#include "write/converting_sink.h"

namespace stguard {

// ConversionPlan is what the caller asks of a conversion, whatever the input's format.
struct ConversionPlan {
  std::optional<Dtype> dtype;  // F32, F16 or BF16: floating tensors are rewritten to it
  std::function<void(uint64_t bytes)> progress;  // called as Writer::set_progress's is
};

// ConvertedFile is what Convert wrote.
struct ConvertedFile {
  size_t num_tensors = 0;
  size_t num_converted = 0;  // tensors whose dtype changed (ChangesDtype)
};

// CheckPlan refuses a plan no input converts under (a target dtype conversion does not
// write: CheckConversionTarget), so that adapters refuse it before opening anything.
[[nodiscard]] Error CheckPlan(const ConversionPlan& plan);

// Convert checks the plan (CheckPlan) before anything is written, then
// writes `sources` crash-safely to `out_path` (the writer's temporary file, renamed into
// place once complete). The producers run while writing: an error they return (a CRC-32
// mismatch, a truncated input) leaves no output. `sources` must outlive the call.
[[nodiscard]] Error Convert(TensorSources sources, const ConversionPlan& plan,
                            const std::string& out_path, ConvertedFile* done);

}  // namespace stguard

#endif  // STGUARD_SRC_CONVERT_PIPELINE_H_
