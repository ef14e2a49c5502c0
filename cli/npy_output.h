// SPDX-License-Identifier: Apache-2.0
// `check` and `inspect` for .npy files, detected by their magic (never by extension).
#ifndef STGUARD_CLI_NPY_OUTPUT_H_
#define STGUARD_CLI_NPY_OUTPUT_H_

#include <string>

#include "commands.h"

namespace stguard::cli {

// IsNpyFile says whether `path` is a readable file beginning with "\x93NUMPY".
bool IsNpyFile(const std::string& path);
// CheckNpy validates the .npy file at `path`, prints its line and returns the exit status.
int CheckNpy(const std::string& path, bool quiet, bool json);
// InspectNpy prints version, descr, fortran order, shape and bytes; returns the status.
int InspectNpy(const std::string& path, bool json);
// ConvertNpy runs `convert IN.npy OUT.safetensors [--name NAME]`; the tensor is named
// after IN's stem unless --name says otherwise.
int ConvertNpy(Args args);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_NPY_OUTPUT_H_
