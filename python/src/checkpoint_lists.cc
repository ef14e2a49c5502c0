// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_lists.h"

#include <array>
#include <string_view>

#include "stguard/dtype.h"

namespace stguard::python {
namespace {

namespace py = pybind11;

py::str Utf8Str(std::string_view text) {
  // Every name and value reaching here was validated as UTF-8 by the reader.
  return py::str(text.data(), text.size());
}

// NewReference wraps a new reference from the C API, or raises the error it set.
py::object NewReference(PyObject* object) {
  if (object == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(object);
}

}  // namespace

// Built with the C API directly: a header can list hundreds of thousands of tensors.
py::list TensorList(const Checkpoint& checkpoint) {
  const uint64_t data_start = 8 + checkpoint.header_len();
  // One str per dtype, shared by every tensor of that dtype.
  std::array<py::object, kNumDtypes> dtype_names;
  for (const Dtype dtype : kAllDtypes) {
    dtype_names[static_cast<size_t>(dtype)] = Utf8Str(DtypeName(dtype));
  }
  py::list out(checkpoint.num_tensors());
  size_t i = 0;
  for (const TensorView& tensor : checkpoint.tensors()) {
    py::object shape = NewReference(PyTuple_New(static_cast<Py_ssize_t>(tensor.shape.size())));
    Py_ssize_t d = 0;
    for (uint64_t dim : tensor.shape) {
      PyTuple_SET_ITEM(shape.ptr(), d++,
                       NewReference(PyLong_FromUnsignedLongLong(dim)).release().ptr());
    }
    py::object name = NewReference(PyUnicode_DecodeUTF8(
        tensor.name.data(), static_cast<Py_ssize_t>(tensor.name.size()), nullptr));
    py::object offset = NewReference(PyLong_FromUnsignedLongLong(data_start + tensor.begin));
    py::object byte_len = NewReference(PyLong_FromUnsignedLongLong(tensor.byte_size()));
    PyObject* entry = PyTuple_Pack(5, name.ptr(), dtype_names[static_cast<size_t>(tensor.dtype)].ptr(),
                                   shape.ptr(), offset.ptr(), byte_len.ptr());
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i++), NewReference(entry).release().ptr());
  }
  return out;
}

py::object MetadataDict(const Checkpoint& checkpoint) {
  if (!checkpoint.has_metadata_object()) return py::none();
  py::dict out;
  for (const MetadataEntry& entry : checkpoint.metadata()) {
    out[Utf8Str(entry.key)] = Utf8Str(entry.value);
  }
  return out;
}

}  // namespace stguard::python
