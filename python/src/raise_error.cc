// SPDX-License-Identifier: Apache-2.0
// stguard.SafetensorError lives in pure Python (stguard/_error.py), so that it pickles and
// reads like any exception class; the core looks it up when it needs one.
#include "raise_error.h"

#include <string>

#include "stguard/verdict.h"

namespace stguard::python {

namespace py = pybind11;

namespace {

// MessageText is the command's text for `error`, with " at byte N" only when
// `show_offset`.
std::string MessageText(const Error& error, bool show_offset) {
  std::string text = error.ToString();
  if (show_offset) return text;
  const std::string at = std::string(ErrorCodeName(error.code)) + " at byte " +
                         std::to_string(error.offset) + ":";
  if (text.starts_with(at)) text.replace(0, at.size(), std::string(ErrorCodeName(error.code)) + ":");
  return text;
}

// MakeError builds the exception; its text shows the offset only when `show_offset`.
py::object MakeError(const Error& error, bool show_offset) {
  py::object error_class = py::module_::import("stguard._error").attr("SafetensorError");
  py::object tensor = py::none();
  if (!error.tensor.empty()) {
    // Names come from files the reader validated, or from Python str objects: both UTF-8.
    // "replace" keeps an error path from ever failing on a byte that slipped through.
    tensor = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
        error.tensor.data(), static_cast<Py_ssize_t>(error.tensor.size()), "replace"));
  }
  const std::string text = MessageText(error, show_offset);
  py::object message = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
  return error_class(message, py::str(std::string(ErrorCodeName(error.code))),
                     py::int_(error.offset), tensor);
}

[[noreturn]] void Raise(const py::object& exception) {
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
  throw py::error_already_set();
}

}  // namespace

py::object MakeSafetensorError(const Error& error) {
  // A missing file or a refused argument has no byte at fault (ErrorHasOffset).
  return MakeError(error, ErrorHasOffset(error.code));
}

void ThrowSafetensorError(const Error& error) { Raise(MakeSafetensorError(error)); }

void ThrowWriteError(const Error& error) { Raise(MakeError(error, /*show_offset=*/false)); }

}  // namespace stguard::python
