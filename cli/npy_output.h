// SPDX-License-Identifier: Apache-2.0
// `inspect`, `convert` and `scan` for .npy and .npz files (the front door,
// stguard/verdict.h, recognises them by content and validates them).
#ifndef STGUARD_CLI_NPY_OUTPUT_H_
#define STGUARD_CLI_NPY_OUTPUT_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "stguard/dtype.h"
#include "stguard/npy.h"
#include "stguard/npz.h"

#include "commands.h"
#include "convert_result.h"

namespace stguard::cli {

// InspectNpy prints a checked .npy's version, descr, fortran order, shape and bytes, from
// what its check read; returns the status.
int InspectNpy(const std::string& path, const NpyArrayInfo& info, bool json);
// InspectNpz prints each array's name, version, descr, fortran order, shape and bytes,
// from what its check read (each deflated member is inflated once, by the check).
int InspectNpz(const std::string& path, const NpzInfo& info, bool json);
// ConvertNpz converts IN.npz to OUT: one tensor per array, named by its key, floating
// arrays to `dtype` when given. Progress shows on a terminal unless `json`.
ConvertResult ConvertNpz(const std::string& in, const std::string& out,
                         std::optional<Dtype> dtype, bool json);
// ConvertNpy converts IN.npy to OUT: one tensor named `name` (empty: IN's file name
// without .npy), a floating array to `dtype` when given; progress as ConvertNpz's.
ConvertResult ConvertNpy(const std::string& in, const std::string& out, std::string name,
                         std::optional<Dtype> dtype, bool json);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_NPY_OUTPUT_H_
