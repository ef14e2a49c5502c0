// SPDX-License-Identifier: Apache-2.0
// The bindings behind stguard.npy (npy_bindings.cc).
#ifndef STGUARD_PYTHON_SRC_NPY_BINDINGS_H_
#define STGUARD_PYTHON_SRC_NPY_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace stguard::python {

// RegisterNumpyFiles adds NumpyMapping, open_npy and open_npz to the module.
void RegisterNumpyFiles(pybind11::module_& m);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_SRC_NPY_BINDINGS_H_
