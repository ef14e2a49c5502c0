// SPDX-License-Identifier: Apache-2.0
// `inspect` and `convert` for .npy files (the front door, stguard/verdict.h, recognises
// them by content and validates them).
#ifndef STGUARD_CLI_NPY_OUTPUT_H_
#define STGUARD_CLI_NPY_OUTPUT_H_

#include <string>

#include "commands.h"

namespace stguard::cli {

// InspectNpy prints version, descr, fortran order, shape and bytes; returns the status.
int InspectNpy(const std::string& path, bool json);
// ConvertNpy runs `convert IN.npy OUT.safetensors [--name NAME]`; the tensor is named
// after IN's stem unless --name says otherwise.
int ConvertNpy(Args args);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_NPY_OUTPUT_H_
