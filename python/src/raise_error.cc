// SPDX-License-Identifier: Apache-2.0
// stguard.SafetensorError lives in pure Python (stguard/_error.py), so that it pickles and
// reads like any exception class; the core looks it up when it needs one.
#include "raise_error.h"

#include <string>

namespace stguard::python {

namespace py = pybind11;

py::object MakeSafetensorError(const Error& error) {
  py::object error_class = py::module_::import("stguard._error").attr("SafetensorError");
  py::object tensor = py::none();
  if (!error.tensor.empty()) {
    // Names come from files the reader validated, or from Python str objects: both UTF-8.
    // "replace" keeps an error path from ever failing on a byte that slipped through.
    tensor = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
        error.tensor.data(), static_cast<Py_ssize_t>(error.tensor.size()), "replace"));
  }
  const std::string text = error.ToString();
  py::object message = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
  return error_class(message, py::str(std::string(ErrorCodeName(error.code))),
                     py::int_(error.offset), tensor);
}

void ThrowSafetensorError(const Error& error) {
  py::object exception = MakeSafetensorError(error);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
  throw py::error_already_set();
}

}  // namespace stguard::python
