// SPDX-License-Identifier: Apache-2.0
// `inspect`, `convert` and `scan` for .npy and .npz files (the front door,
// stguard/verdict.h, recognises them by content and validates them).
#ifndef STGUARD_CLI_NPY_OUTPUT_H_
#define STGUARD_CLI_NPY_OUTPUT_H_

#include <string>

#include "commands.h"
#include "convert_result.h"

namespace stguard::cli {

// InspectNpy prints version, descr, fortran order, shape and bytes; returns the status.
int InspectNpy(const std::string& path, bool json);
// InspectNpz prints each array's name, version, descr, fortran order, shape and bytes.
int InspectNpz(const std::string& path, bool json);
// ScanNumpyFile reports a .npy (or, with `npz`, an .npz) for `scan`: an object array is a pickle that would
// run code (exit 1); plain arrays hold none (exit 0).
int ScanNumpyFile(const std::string& path, bool npz, bool json);
// ConvertNpz runs `convert IN.npz OUT.safetensors`: one tensor per array, named by key.
ConvertResult ConvertNpz(Args args);
// ConvertNpy runs `convert IN.npy OUT.safetensors [--name NAME]`; the tensor is named
// after IN's stem unless --name says otherwise.
ConvertResult ConvertNpy(Args args);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_NPY_OUTPUT_H_
