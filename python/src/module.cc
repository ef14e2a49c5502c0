// SPDX-License-Identifier: Apache-2.0
// stguard._core: the compiled part of the Python package. It only opens, validates and
// writes, through the public library headers; the numpy and torch views, dtype tables and
// the safetensors-style API are pure Python in stguard/.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <sys/stat.h>

#include "checkpoint_lists.h"
#include "header_file.h"
#include "gguf_bindings.h"
#include "npy_bindings.h"
#include "raise_error.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/gguf.h"
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
  if (!storage.ok()) stguard::python::ThrowSafetensorError(storage.error());
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

bool IsFolderOrIndex(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return false;  // the file path reports the error
  if (S_ISDIR(info.st_mode)) return true;
  return S_ISREG(info.st_mode) && path.size() >= 5 && path.ends_with(".json");
}

// IsGgufFile says whether `path` is a file that begins with GGUF's magic.
bool IsGgufFile(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;  // the file path reports the error
  std::byte prefix[4];
  const size_t got = std::fread(prefix, 1, sizeof prefix, file);
  std::fclose(file);
  return stguard::gguf::LooksLikeGguf(std::span(prefix, got));
}

// Check validates a file (safetensors or GGUF), a folder or an index without keeping it
// open. Returns
// (error or None, files, tensors, header bytes, warnings [(kind, file, tensor, message)]).
py::tuple Check(const std::string& path, bool allow_external_symlinks) {
  stguard::Error error;
  size_t num_files = 0;
  size_t num_tensors = 0;
  uint64_t header_bytes = 0;
  std::vector<stguard::Warning> warnings;
  {
    py::gil_scoped_release release;
    if (IsFolderOrIndex(path)) {
      stguard::DirOptions options;
      options.allow_external_symlinks = allow_external_symlinks;
      const stguard::Result<stguard::CheckpointDir> dir =
          stguard::CheckpointDir::Open(path, options);
      if (!dir.ok()) {
        error = dir.error();
      } else {
        warnings.assign(dir->warnings().begin(), dir->warnings().end());
        // The folder around the weights (config.json, pickle files), as `stguard check`.
        stguard::ModelFolderReport folder = stguard::CheckModelFolder(dir->folder(), &*dir);
        error = folder.error;
        warnings.insert(warnings.end(), folder.warnings.begin(), folder.warnings.end());
        if (error.ok()) {
          num_files = dir->shards().size();
          num_tensors = dir->num_tensors();
          for (const stguard::ShardFile& shard : dir->shards()) {
            header_bytes += shard.checkpoint.header_len();
          }
        }
      }
    } else if (IsGgufFile(path)) {  // recognised by its magic, as `stguard check` does
      const stguard::Result<stguard::gguf::GgufFile> gguf = stguard::gguf::GgufFile::Open(path);
      if (!gguf.ok()) {
        error = gguf.error();
      } else {
        num_files = 1;
        num_tensors = gguf->tensors().size();
        header_bytes = gguf->data_offset();
      }
    } else {
      const stguard::Result<stguard::Checkpoint> checkpoint = stguard::Checkpoint::Open(path);
      if (!checkpoint.ok()) {
        error = checkpoint.error();
      } else {
        num_files = 1;
        num_tensors = checkpoint->num_tensors();
        header_bytes = checkpoint->header_len();
      }
    }
  }
  py::list warning_list;
  for (const stguard::Warning& warning : warnings) {
    warning_list.append(py::make_tuple(Utf8Str(stguard::WarningKindName(warning.kind)),
                                       py::str(warning.file), py::str(warning.tensor),
                                       py::str(warning.message)));
  }
  py::object error_object =
      error.ok() ? py::object(py::none()) : stguard::python::MakeSafetensorError(error);
  return py::make_tuple(error_object, num_files, num_tensors, header_bytes, warning_list);
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

  m.def("check", &Check, py::arg("path"), py::arg("allow_external_symlinks") = false,
        "(error or None, files, tensors, header bytes, warnings) for a file, folder or index.");
  m.def("write_file", &stguard::python::WriteFile, py::arg("path"), py::arg("tensors"),
        py::arg("metadata"), "Writes [(name, dtype, shape, buffer)] canonically and atomically.");
  m.def("serialize", &stguard::python::Serialize, py::arg("tensors"), py::arg("metadata"),
        "Returns the canonical file for [(name, dtype, shape, buffer)] as bytes.");
  stguard::python::RegisterHeaderFile(m);
  stguard::python::RegisterGguf(m);
  stguard::python::RegisterNumpyFiles(m);
}
