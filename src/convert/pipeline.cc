// SPDX-License-Identifier: Apache-2.0
// Convert: an adapter's tensor sources, through the dtype decorator, into the crash-safe
// writer.
#include "convert/pipeline.h"

#include <utility>

#include "data/conversion_target.h"
#include "stguard/writer.h"

namespace stguard {

Error CheckPlan(const ConversionPlan& plan) {
  return plan.dtype.has_value() ? CheckConversionTarget(*plan.dtype) : Error{};
}

Error Convert(TensorSources sources, const ConversionPlan& plan, const std::string& out_path,
              ConvertedFile* done) {
  if (Error error = CheckPlan(plan); !error.ok()) return error;
  Writer writer;
  size_t num_converted = 0;
  if (Error error = AddSources(writer, std::move(sources), plan.dtype, &num_converted);
      !error.ok()) {
    return error;
  }
  writer.set_progress(plan.progress);
  if (Error error = writer.WriteToFile(out_path); !error.ok()) return error;
  if (done != nullptr) *done = ConvertedFile{writer.num_tensors(), num_converted};
  return {};
}

}  // namespace stguard
