// SPDX-License-Identifier: Apache-2.0
// Writing tensors from Python through the library's canonical writer.
#ifndef STGUARD_PYTHON_WRITING_H_
#define STGUARD_PYTHON_WRITING_H_

#include <pybind11/pybind11.h>

#include <string>

namespace stguard::python {

// `tensors` is a list of (name: str, dtype: str, shape: tuple[int, ...], data) where data
// exports a C-contiguous buffer holding the little-endian element bytes; `metadata` is a
// dict of str to str or None. Every refusal of the writer (a tensor named __metadata__,
// duplicate names, a byte count that does not match dtype and shape, ...) raises
// SafetensorError before anything is written. The GIL is released while the bytes are
// written; the buffers stay exported (and alive) until the write is over.

// WriteFile writes the canonical file to `path` crash-safely (temporary file, fsync,
// rename): on any error the destination keeps its old content.
void WriteFile(const std::string& path, const pybind11::list& tensors,
               const pybind11::object& metadata);

// Serialize returns the canonical file as bytes.
pybind11::bytes Serialize(const pybind11::list& tensors, const pybind11::object& metadata);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_WRITING_H_
