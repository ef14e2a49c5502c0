// SPDX-License-Identifier: Apache-2.0
// `stguard convert --json`: one JSON result per conversion, built on the front door's
// envelope (stguard/verdict.h) as `check --json` is.
#ifndef STGUARD_CLI_CONVERT_JSON_H_
#define STGUARD_CLI_CONVERT_JSON_H_

#include <functional>

#include "commands.h"

namespace stguard::cli {

// ConvertWithJson runs `convert` (handed `args` without --json, to `convert`) for operands
// IN and OUT and prints one JSON object: the envelope of IN (its verdict decides whether
// anything is converted: an input that is not valid writes nothing), then "ok", "error"
// when the input or the conversion failed, "output": the paths written, and "tensors":
// how many tensors they hold (read back from the output). Returns the exit status.
int ConvertWithJson(Args args, const std::function<int(Args)>& convert);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_CONVERT_JSON_H_
