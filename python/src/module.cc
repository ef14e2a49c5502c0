// SPDX-License-Identifier: Apache-2.0
// stguard._core: the compiled part of the Python package. It only opens, validates and
// writes, through the public library headers; the numpy and torch views, dtype tables and
// the safetensors-style API are pure Python in stguard/.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <memory>
#include <span>
#include <string>

#include "front_door.h"
#include "raise_error.h"
#include "stguard/dtype.h"
#include "stguard/reader.h"
#include "storage.h"
#include "writing.h"

namespace py = pybind11;
using stguard::python::Storage;

namespace {

py::str Utf8Str(std::string_view text) {
  // Every name and value reaching here was validated as UTF-8 by the reader.
  return py::str(text.data(), text.size());
}

std::unique_ptr<Storage> OpenStorage(const std::string& path) {
  stguard::Result<std::unique_ptr<Storage>> storage = stguard::Error{};
  {
    py::gil_scoped_release release;  // mapping and validation need no Python objects
    storage = Storage::OpenFile(path);
  }
  if (!storage.ok()) stguard::python::ThrowOpenError(path, storage.error());
  return std::move(*storage);
}

std::unique_ptr<Storage> StorageFromBytes(const py::buffer& data) {
  Py_buffer view;
  if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
  stguard::Result<std::unique_ptr<Storage>> storage = stguard::Error{};
  {
    py::gil_scoped_release release;
    storage = Storage::CopyBytes(std::span<const std::byte>(
        static_cast<const std::byte*>(view.buf), static_cast<size_t>(view.len)));
  }
  PyBuffer_Release(&view);
  if (!storage.ok()) stguard::python::ThrowSafetensorError(storage.error());
  return std::move(*storage);
}

// NewReference wraps a new reference from the C API, or raises the error it set.
py::object NewReference(PyObject* object) {
  if (object == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(object);
}

// TensorList returns (name, dtype, shape, absolute offset, byte length) in file order.
// Built with the C API directly: a header can list hundreds of thousands of tensors.
py::list TensorList(const Storage& storage) {
  const stguard::Checkpoint& checkpoint = storage.checkpoint();
  const uint64_t data_start = 8 + checkpoint.header_len();
  // One str per dtype, shared by every tensor of that dtype.
  std::array<py::object, stguard::kNumDtypes> dtype_names;
  for (const stguard::Dtype dtype : stguard::kAllDtypes) {
    dtype_names[static_cast<size_t>(dtype)] = Utf8Str(stguard::DtypeName(dtype));
  }
  py::list out(checkpoint.num_tensors());
  size_t i = 0;
  for (const stguard::TensorView& tensor : checkpoint.tensors()) {
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

py::object Metadata(const Storage& storage) {
  const stguard::Checkpoint& checkpoint = storage.checkpoint();
  if (!checkpoint.has_metadata_object()) return py::none();
  py::dict out;
  for (const stguard::MetadataEntry& entry : checkpoint.metadata()) {
    out[Utf8Str(entry.key)] = Utf8Str(entry.value);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "stguard's compiled core: strict validation and canonical writing.";
  m.attr("__version__") = STGUARD_VERSION;

  py::class_<Storage>(m, "Storage", py::buffer_protocol(), R"doc(
A validated checkpoint and the private memory holding it. Exposes every byte of the file
through the buffer protocol, writable (copy-on-write: writes never reach the file).)doc")
      .def_static("open", &OpenStorage, py::arg("path"),
                  "Maps `path` copy-on-write and validates it; raises SafetensorError.")
      .def_static("from_bytes", &StorageFromBytes, py::arg("data"),
                  "Copies `data` into private memory and validates it; raises SafetensorError.")
      .def("tensors", &TensorList,
           "[(name, dtype, shape, absolute offset, byte length)] in file order.")
      .def("metadata", &Metadata, "__metadata__ as a dict, or None when the header has none.")
      .def_property_readonly("header_len",
                             [](const Storage& s) { return s.checkpoint().header_len(); })
      .def_property_readonly("size", [](const Storage& s) { return s.memory().size(); })
      .def_buffer([](Storage& s) {
        return py::buffer_info(s.memory().data(), 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(s.memory().size())}, {1},
                               /*readonly=*/false);
      });

  m.def("write_file", &stguard::python::WriteFile, py::arg("path"), py::arg("tensors"),
        py::arg("metadata"), "Writes [(name, dtype, shape, buffer)] canonically and atomically.");
  m.def("serialize", &stguard::python::Serialize, py::arg("tensors"), py::arg("metadata"),
        "Returns the canonical file for [(name, dtype, shape, buffer)] as bytes.");
  stguard::python::RegisterFrontDoor(m);
}
