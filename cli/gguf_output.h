// SPDX-License-Identifier: Apache-2.0
// The GGUF side of `stguard inspect`: the front door (stguard/verdict.h) recognises and
// validates the file; its contents are printed here.
#ifndef STGUARD_CLI_GGUF_OUTPUT_H_
#define STGUARD_CLI_GGUF_OUTPUT_H_

#include <string>

#include "stguard/gguf.h"

#include "commands.h"

namespace stguard::cli {

// InspectGguf prints a checked GGUF file's version, alignment, metadata and tensors (text,
// or JSON with every array complete), from what its check read. Returns the exit status.
int InspectGguf(const std::string& path, const gguf::GgufFile& file, bool json);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_GGUF_OUTPUT_H_
