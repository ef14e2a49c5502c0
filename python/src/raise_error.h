// SPDX-License-Identifier: Apache-2.0
// Turning a stguard::Error into the Python exception stguard.SafetensorError.
#ifndef STGUARD_PYTHON_RAISE_ERROR_H_
#define STGUARD_PYTHON_RAISE_ERROR_H_

#include <pybind11/pybind11.h>

#include "stguard/error.h"

namespace stguard::python {

// MakeSafetensorError builds (does not raise) a stguard.SafetensorError whose message is
// the CLI's text for `error` (Error::ToString, the offset shown only when it points into
// a file: ErrorHasOffset) and whose .code, .offset and .tensor are the error's code
// name, absolute byte offset and tensor name (None when there is none).
pybind11::object MakeSafetensorError(const Error& error);

// ThrowSafetensorError raises MakeSafetensorError(error) as a C++ exception that pybind11
// hands to Python unchanged. Call it with the GIL held.
[[noreturn]] void ThrowSafetensorError(const Error& error);

// ThrowWriteError raises a refused or failed write: as ThrowSafetensorError, but its text
// never shows an offset (a write refused before its first byte points into no file).
[[noreturn]] void ThrowWriteError(const Error& error);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_RAISE_ERROR_H_
