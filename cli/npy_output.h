// SPDX-License-Identifier: Apache-2.0
// `check`, `inspect`, `convert` and `scan` for .npy and .npz files, detected by their magic (never by extension).
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
// IsNpzFile says whether `path` is a ZIP archive whose first record is named "*.npy" (or
// an empty one) and that holds no pickle: it is read as an .npz, which says clearly when
// it is not a valid one.
bool IsNpzFile(const std::string& path);
// CheckNpz validates the .npz at `path` whole (every member inflated, CRC-checked and
// validated), prints its line and returns the exit status.
int CheckNpz(const std::string& path, bool quiet, bool json);
// InspectNpz prints each array's name, version, descr, fortran order, shape and bytes.
int InspectNpz(const std::string& path, bool json);
// ScanNumpyFile reports a .npy or .npz for `scan`: an object array is a pickle that would
// run code (exit 1); plain arrays hold none (exit 0).
int ScanNumpyFile(const std::string& path, bool json);
// ConvertNpz runs `convert IN.npz OUT.safetensors`: one tensor per array, named by key.
int ConvertNpz(Args args);
// ConvertNpy runs `convert IN.npy OUT.safetensors [--name NAME]`; the tensor is named
// after IN's stem unless --name says otherwise.
int ConvertNpy(Args args);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_NPY_OUTPUT_H_
