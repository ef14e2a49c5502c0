// SPDX-License-Identifier: Apache-2.0
// Conversions to safetensors from Python: convert, one call of the library's ConvertPath
// for every format and option. It raises SafetensorError (with the library's .verdict and
// .member) on any refusal, and then nothing is written.
#ifndef STGUARD_PYTHON_CONVERTING_H_
#define STGUARD_PYTHON_CONVERTING_H_

#include <pybind11/pybind11.h>

namespace stguard::python {

// RegisterConverting adds convert to the module.
void RegisterConverting(pybind11::module_& m);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_CONVERTING_H_
