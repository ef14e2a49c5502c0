// SPDX-License-Identifier: Apache-2.0
// Conversions to safetensors from Python: convert, one call of the library's ConvertPath
// for every format, and the rows stguard/_front_door.py's table names (the same call with
// a format's options). Each raises SafetensorError on any refusal, and then nothing is
// written.
#ifndef STGUARD_PYTHON_CONVERTING_H_
#define STGUARD_PYTHON_CONVERTING_H_

#include <pybind11/pybind11.h>

namespace stguard::python {

// RegisterConverting adds convert, convert_safetensors, convert_torch_file,
// convert_torch_folder, convert_npy and convert_npz to the module.
void RegisterConverting(pybind11::module_& m);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_CONVERTING_H_
