// SPDX-License-Identifier: Apache-2.0
// HeaderFile: a checkpoint validated without mapping it, for safe_open's "pread" backend.
// It holds only the header (names, dtypes, shapes, offsets); the tensors' bytes are read
// later with pread into fresh buffers, so a file on a network file system, or one that
// another process truncates, never faults a mapping (a shrunken file is an IoError).
#ifndef STGUARD_PYTHON_HEADER_FILE_H_
#define STGUARD_PYTHON_HEADER_FILE_H_

#include <pybind11/pybind11.h>

namespace stguard::python {

// RegisterHeaderFile adds the class _core.HeaderFile to the module.
void RegisterHeaderFile(pybind11::module_& module);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_HEADER_FILE_H_
