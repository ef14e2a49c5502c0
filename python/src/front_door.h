// SPDX-License-Identifier: Apache-2.0
// The front door from Python: what a file is, its verdict as the envelope's fields (the
// library's CheckPath / JudgePickleFile / LintModel, never re-derived here), conversion of
// every format the library converts, and the error load_file raises for a file of another
// format.
#ifndef STGUARD_PYTHON_FRONT_DOOR_H_
#define STGUARD_PYTHON_FRONT_DOOR_H_

#include <pybind11/pybind11.h>

#include <string>

#include "stguard/error.h"

namespace stguard::python {

// RegisterFrontDoor adds sniff, check_path, scan, lint and the convert_* functions to the
// module (their Python API is stguard/_front_door.py).
void RegisterFrontDoor(pybind11::module_& m);

// ThrowOpenError raises the SafetensorError for a safetensors open of `path` that failed
// with `error`: when the file is of another format the sniffer knows (a PyTorch
// checkpoint, a GGUF or NumPy file), the error says so and names stguard.convert, instead
// of a header length read from bytes that were never one; otherwise `error` itself.
[[noreturn]] void ThrowOpenError(const std::string& path, const Error& error);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_FRONT_DOOR_H_
