// SPDX-License-Identifier: Apache-2.0
// The GGUF side of `stguard inspect` and `stguard convert`: the front door
// (stguard/verdict.h) recognises and validates the file; its contents are printed or
// converted (stguard/gguf_convert.h) here.
#ifndef STGUARD_CLI_GGUF_OUTPUT_H_
#define STGUARD_CLI_GGUF_OUTPUT_H_

#include <string>

#include "commands.h"
#include "convert_result.h"

namespace stguard::cli {

// InspectGgufFile prints a GGUF file's version, alignment, metadata and tensors (text, or
// JSON with every array complete). Returns the exit status: 0 valid, 1 invalid, 2 I/O error.
int InspectGgufFile(const std::string& path, bool json);

// ConvertGgufCommand runs `convert IN.gguf OUT.safetensors [--dtype F32|F16|BF16]
// [--all-metadata]` (OUT a folder for the first part of a split model). Metadata arrays
// left out are noted on stderr. Returns 0, 1 (IN cannot be converted) or 2 (I/O, usage).
// ConvertGgufCommand converts a GGUF model (IN, args[0]) to safetensors and returns the
// outcome for PrintConvertResult.
ConvertResult ConvertGgufCommand(Args args);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_GGUF_OUTPUT_H_
