// SPDX-License-Identifier: Apache-2.0
// stguard._core: the compiled part of the Python package. It only opens, validates and
// writes, through the public library headers; the numpy and torch views and the
// safetensors-style API are pure Python in stguard/, reading the library's dtype table
// through dtypes().
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <span>
#include <string>

#include "checkpoint_lists.h"
#include "front_door.h"
#include "gguf_bindings.h"
#include "header_file.h"
#include "http_transport.h"
#include "many.h"
#include "npy_bindings.h"
#include "raise_error.h"
#include "stguard/dtype.h"
#include "stguard/reader.h"
#include "storage.h"
#include "writing.h"

namespace py = pybind11;
using stguard::python::Storage;

namespace {

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

// DtypeRows is the library's dtype table (stguard/dtype.h), in enum order.
py::list DtypeRows() {
  py::list rows;
  for (const stguard::Dtype dtype : stguard::kAllDtypes) {
    rows.append(py::make_tuple(std::string(stguard::DtypeName(dtype)),
                               stguard::DtypeBits(dtype),
                               std::string(stguard::DtypeNumpyType(dtype)),
                               std::string(stguard::DtypeFrameworkName(dtype))));
  }
  return rows;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "stguard's compiled core: strict validation and canonical writing.";
  m.attr("__version__") = STGUARD_VERSION;
  // check/inspect of an http(s):// or hf:// input read by range requests (stguard/remote.h).
  stguard::cli::InstallHttpTransport(stguard::cli::kDefaultTimeoutSeconds);
  m.def("set_url_timeout", [](uint64_t seconds) { stguard::cli::InstallHttpTransport(seconds); },
        py::arg("seconds"),
        "Seconds a URL input may take to connect, or stall, before it is an error (default 30).");

  py::class_<Storage>(m, "Storage", py::buffer_protocol(), R"doc(
A validated checkpoint and the private memory holding it. Exposes every byte of the file
through the buffer protocol, writable (copy-on-write: writes never reach the file).)doc")
      .def_static("open", &OpenStorage, py::arg("path"),
                  "Maps `path` copy-on-write and validates it; raises SafetensorError.")
      .def_static("from_bytes", &StorageFromBytes, py::arg("data"),
                  "Copies `data` into private memory and validates it; raises SafetensorError.")
      .def("tensors", [](const Storage& s) { return stguard::python::TensorList(s.checkpoint()); },
           "[(name, dtype, shape, absolute offset, byte length)] in file order.")
      .def("metadata", [](const Storage& s) { return stguard::python::MetadataDict(s.checkpoint()); },
           "__metadata__ as a dict, or None when the header has none.")
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
  m.def("dtypes", &DtypeRows,
        "[(name, bits, numpy type, torch's name or '')] for every safetensors dtype.");
  stguard::python::RegisterHeaderFile(m);
  stguard::python::RegisterGguf(m);
  stguard::python::RegisterNumpyFiles(m);
  stguard::python::RegisterFrontDoor(m);
  stguard::python::RegisterMany(m);
}
