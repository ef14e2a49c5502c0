// SPDX-License-Identifier: Apache-2.0
// GgufSources: a GGUF file as the conversion pipeline's tensor sources (converting_sink.h):
// each tensor in its stored form, a plain dtype as is or a block type decoded to F32, read
// with pread a step at a time; a target dtype is applied by the one decorator (AddSource).
#ifndef STGUARD_SRC_WRITE_GGUF_SOURCES_H_
#define STGUARD_SRC_WRITE_GGUF_SOURCES_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "stguard/gguf.h"
#include "stguard/gguf_convert.h"
#include "stguard/mapped_file.h"
#include "write/converting_sink.h"

namespace stguard {

// GgufSourceSet holds the sources and the shapes their spans point into.
struct GgufSourceSet {
  TensorSources sources;
  std::deque<std::vector<uint64_t>> shapes;  // a deque: pushing keeps earlier spans valid
};

// GgufSources plans every tensor of `file` (a tensor that cannot be written stops
// everything before any output exists: GgufOutputDtype) and yields it, with __metadata__
// (arrays longer than kGgufMetadataArrayLimit left out unless options.all_metadata, listed
// in report->omitted). report's counts are added to: num_converted counts each tensor whose
// dtype changes, a decoded block type always. `file` and `data` (the same file, opened
// with MappedFile::OpenUnmapped) must outlive the sources' last read.
[[nodiscard]] Result<GgufSourceSet> GgufSources(const gguf::GgufFile& file,
                                                const MappedFile& data,
                                                const GgufConvertOptions& options,
                                                GgufConvertReport* report);

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_GGUF_SOURCES_H_
