// SPDX-License-Identifier: Apache-2.0
// The conversion pipeline: a format's adapter yields tensor sources (TensorSources,
// write/converting_sink.h, or StreamedSources below); Convert writes them as one
// safetensors file, every tensor converted by the one dtype rule (ChangesDtype), through
// the crash-safe writer, with the plan's progress.
#ifndef STGUARD_SRC_CONVERT_PIPELINE_H_
#define STGUARD_SRC_CONVERT_PIPELINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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

// StreamedSources is the yield of an adapter whose entries cannot be listed as
// TensorSources: a safetensors file's. A hostile header makes its entries numerous
// (millions of one-byte names, a shape of millions of dimensions, in N header bytes), and
// every command keeps peak memory beyond the header under 2N
// (tests/memory/test_hostile_memory.py). TensorSources, and the Writer Convert fills from
// them, copy each name, shape and metadata entry, several times a short entry's header
// text. StreamedSources instead streams the file from the reader's own entries: the
// header in pieces, then each tensor's bytes in canonical order, those that change dtype
// (ChangesDtype) converted through AddSource's decorator (ConvertingSink).
class StreamedSources {
 public:
  virtual ~StreamedSources() = default;
  // WriteTo writes the whole file to `sink`, tensors converted to `target`, and fills
  // *done. An error found before the first byte (a header past the cap) writes nothing.
  [[nodiscard]] virtual Error WriteTo(Dtype target, ByteSink& sink, ConvertedFile* done) = 0;
};

// Convert writes streamed sources under the same rules: the plan checked first (it needs a
// dtype: a streamed input is already safetensors), crash-safely to `out_path`, progress
// reported as bytes are written. ConvertToSink writes the same bytes to `sink` (standard
// output, a folder's staged file). The adapter must outlive the call.
[[nodiscard]] Error Convert(StreamedSources& sources, const ConversionPlan& plan,
                            const std::string& out_path, ConvertedFile* done);
[[nodiscard]] Error ConvertToSink(StreamedSources& sources, const ConversionPlan& plan,
                                  ByteSink& sink, ConvertedFile* done);

}  // namespace stguard

#endif  // STGUARD_SRC_CONVERT_PIPELINE_H_
