// SPDX-License-Identifier: Apache-2.0
// check_many and scan_many: many paths judged on C++ threads with the GIL released, each
// result the JSON object the library composes (stguard/inputs.h), in input order.
#ifndef STGUARD_PYTHON_SRC_MANY_H_
#define STGUARD_PYTHON_SRC_MANY_H_

#include <pybind11/pybind11.h>

namespace stguard::python {

// RegisterMany adds _check_many_json and _scan_many_json to the module.
void RegisterMany(pybind11::module_& m);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_SRC_MANY_H_
