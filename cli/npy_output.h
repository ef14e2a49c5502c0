// SPDX-License-Identifier: Apache-2.0
// `inspect` and `scan` for .npy and .npz files (the front door,
// stguard/verdict.h, recognises them by content and validates them).
#ifndef STGUARD_CLI_NPY_OUTPUT_H_
#define STGUARD_CLI_NPY_OUTPUT_H_

#include <cstddef>
#include <span>
#include <string>

#include "stguard/npy.h"
#include "stguard/npz.h"

#include "commands.h"

namespace stguard::cli {

// InspectNpy prints a checked .npy's version, descr, fortran order, shape and bytes, from
// what its check read; returns the status.
int InspectNpy(const std::string& path, const NpyArrayInfo& info, bool json);
// InspectNpz prints each array's name, version, descr, fortran order, shape and bytes,
// from what its check read (each deflated member is inflated once, by the check).
int InspectNpz(const std::string& path, const NpzInfo& info, bool json);
}  // namespace stguard::cli

#endif  // STGUARD_CLI_NPY_OUTPUT_H_
