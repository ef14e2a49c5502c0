// SPDX-License-Identifier: Apache-2.0
// Convert: an adapter's tensor sources, through the dtype decorator, into the crash-safe
// writer.
#include "convert/pipeline.h"

#include <memory>
#include <utility>

#include "base/out_of_memory.h"
#include "data/conversion_target.h"
#include "stguard/writer.h"
#include "write/atomic_file.h"
#include "write/progress_sink.h"

namespace stguard {
namespace {

// CheckStreamedPlan is CheckPlan for streamed sources, which are converted only to a dtype.
Error CheckStreamedPlan(const ConversionPlan& plan) {
  if (!plan.dtype) {
    return Error{ErrorCode::kInvalidArgument, 0, "a safetensors input converts only to a dtype"};
  }
  return CheckPlan(plan);
}

}  // namespace

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

Error ConvertToSink(StreamedSources& sources, const ConversionPlan& plan, ByteSink& sink,
                    ConvertedFile* done) {
  if (Error error = CheckStreamedPlan(plan); !error.ok()) return error;
  ProgressSink counted(sink, plan.progress);
  ConvertedFile written;
  if (Error error = sources.WriteTo(*plan.dtype, counted, &written); !error.ok()) return error;
  if (done != nullptr) *done = written;
  return {};
}

Error Convert(StreamedSources& sources, const ConversionPlan& plan, const std::string& out_path,
              ConvertedFile* done) {
  if (Error error = CheckStreamedPlan(plan); !error.ok()) return error;
  return CatchOutOfMemory("out of memory while writing", [&]() -> Error {
    Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(out_path);
    if (!file.ok()) return file.error();
    if (Error error = ConvertToSink(sources, plan, **file, done); !error.ok()) {
      (*file)->Abort();
      return error;
    }
    return (*file)->Commit();
  });
}

}  // namespace stguard
