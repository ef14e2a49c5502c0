// SPDX-License-Identifier: Apache-2.0
// The GGUF side of `stguard inspect`: the front door (stguard/verdict.h) recognises and
// validates the file; its contents are printed here.
#ifndef STGUARD_CLI_GGUF_OUTPUT_H_
#define STGUARD_CLI_GGUF_OUTPUT_H_

#include <string>

namespace stguard::cli {

// InspectGgufFile prints a GGUF file's version, alignment, metadata and tensors (text, or
// JSON with every array complete). Returns the exit status: 0 valid, 1 invalid, 2 I/O error.
int InspectGgufFile(const std::string& path, bool json);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_GGUF_OUTPUT_H_
