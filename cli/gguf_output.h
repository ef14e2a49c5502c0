// SPDX-License-Identifier: Apache-2.0
// The GGUF side of `stguard inspect` and `stguard convert`: the front door
// (stguard/verdict.h) recognises and validates the file; its contents are printed or
// converted (stguard/gguf_convert.h) here.
#ifndef STGUARD_CLI_GGUF_OUTPUT_H_
#define STGUARD_CLI_GGUF_OUTPUT_H_

#include <optional>
#include <string>

#include "stguard/dtype.h"
#include "stguard/gguf.h"

#include "commands.h"
#include "convert_result.h"

namespace stguard::cli {

// InspectGguf prints a checked GGUF file's version, alignment, metadata and tensors (text,
// or JSON with every array complete), from what its check read. Returns the exit status.
int InspectGguf(const std::string& path, const gguf::GgufFile& file, bool json);

// ConvertGgufFile converts a GGUF model IN to OUT (a folder for the first part of a split
// model), floating and dequantized tensors to `dtype` when given, metadata arrays longer
// than 1024 elements kept with `all_metadata` (else noted as left out), and returns the
// outcome for PrintConvertResult.
ConvertResult ConvertGgufFile(const std::string& in, const std::string& out,
                              std::optional<Dtype> dtype, bool all_metadata);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_GGUF_OUTPUT_H_
