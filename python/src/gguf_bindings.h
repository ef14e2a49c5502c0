// SPDX-License-Identifier: Apache-2.0
// The GGUF part of stguard._core: a validated GGUF file held in a private copy-on-write
// mapping (its bytes exposed through the buffer protocol, as Storage does), tensors
// dequantized into a caller's buffer, and whole-model conversion to safetensors.
#ifndef STGUARD_PYTHON_GGUF_BINDINGS_H_
#define STGUARD_PYTHON_GGUF_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace stguard::python {

// RegisterGguf adds GgufFile and gguf_convert to the module.
void RegisterGguf(pybind11::module_& m);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_GGUF_BINDINGS_H_
