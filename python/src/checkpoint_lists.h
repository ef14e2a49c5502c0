// SPDX-License-Identifier: Apache-2.0
// A validated checkpoint's tensor list and metadata as Python objects, for every kind of
// handle the package opens (a mapped Storage, a header-only file read with pread).
#ifndef STGUARD_PYTHON_CHECKPOINT_LISTS_H_
#define STGUARD_PYTHON_CHECKPOINT_LISTS_H_

#include <pybind11/pybind11.h>

#include "stguard/reader.h"

namespace stguard::python {

// TensorList returns [(name, dtype, shape, absolute offset, byte length)] in file order.
pybind11::list TensorList(const Checkpoint& checkpoint);

// MetadataDict returns __metadata__ as a dict, or None when the header has none.
pybind11::object MetadataDict(const Checkpoint& checkpoint);

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_CHECKPOINT_LISTS_H_
