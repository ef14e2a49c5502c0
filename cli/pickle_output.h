// SPDX-License-Identifier: Apache-2.0
// `stguard inspect` on a pickle-bearing file: the tensors the static scan found (names,
// dtypes, shapes, read from the pickle; nothing run).
#ifndef STGUARD_CLI_PICKLE_OUTPUT_H_
#define STGUARD_CLI_PICKLE_OUTPUT_H_

#include "stguard/verdict.h"

namespace stguard::cli {

// InspectPickle prints a valid pickle-bearing file's tensors (result.pickle is set).
int InspectPickle(const CheckResult& result, bool json);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_PICKLE_OUTPUT_H_
