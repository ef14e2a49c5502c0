// SPDX-License-Identifier: Apache-2.0
#include "header_file.h"

#include <memory>
#include <string>
#include <utility>

#include "checkpoint_lists.h"
#include "raise_error.h"
#include "stguard/reader.h"

namespace stguard::python {
namespace {

namespace py = pybind11;

struct HeaderFile {
  Checkpoint checkpoint;
};

std::unique_ptr<HeaderFile> OpenHeaderFile(const std::string& path) {
  Result<Checkpoint> checkpoint = Error{};
  {
    py::gil_scoped_release release;  // reading and validating need no Python objects
    checkpoint = Checkpoint::OpenHeader(path);
  }
  if (!checkpoint.ok()) ThrowSafetensorError(checkpoint.error());
  return std::make_unique<HeaderFile>(HeaderFile{std::move(*checkpoint)});
}

}  // namespace

void RegisterHeaderFile(py::module_& module) {
  py::class_<HeaderFile>(module, "HeaderFile", R"doc(
A checkpoint's validated header, read with pread: no mapping and no descriptor is kept.)doc")
      .def_static("open", &OpenHeaderFile, py::arg("path"),
                  "Reads and validates the header of `path`; raises SafetensorError.")
      .def("tensors", [](const HeaderFile& file) { return TensorList(file.checkpoint); },
           "[(name, dtype, shape, absolute offset, byte length)] in file order.")
      .def("metadata", [](const HeaderFile& file) { return MetadataDict(file.checkpoint); },
           "__metadata__ as a dict, or None when the header has none.")
      .def_property_readonly("size",
                             [](const HeaderFile& file) { return file.checkpoint.file_size(); });
}

}  // namespace stguard::python
