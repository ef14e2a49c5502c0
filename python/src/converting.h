// SPDX-License-Identifier: Apache-2.0
// Conversions to safetensors from Python, one function per source format the library
// converts (stguard/_front_door.py picks one by the sniffed format). Each raises
// SafetensorError on any refusal, and then nothing is written.
#ifndef STGUARD_PYTHON_CONVERTING_H_
#define STGUARD_PYTHON_CONVERTING_H_

#include <pybind11/pybind11.h>

namespace stguard::python {

// RegisterConverting adds convert_safetensors, convert_torch_file, convert_torch_folder
// and convert_npy to the module.
void RegisterConverting(pybind11::module_& m);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_CONVERTING_H_
