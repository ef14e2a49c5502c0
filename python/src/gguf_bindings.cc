// SPDX-License-Identifier: Apache-2.0
// stguard._core.GgufFile and stguard._core.gguf_convert (gguf_bindings.h). The numpy side
// (views, dtypes, the dict API) is pure Python in stguard/gguf.py.
#include "gguf_bindings.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "raise_error.h"
#include "stguard/dtype.h"
#include "stguard/gguf.h"
#include "stguard/gguf_convert.h"
#include "stguard/mapped_file.h"

namespace py = pybind11;

namespace stguard::python {
namespace {

using gguf::Value;
using gguf::ValueType;

// GgufHandle is a validated GGUF file over a private copy-on-write mapping: arrays made
// from its buffer can be written without ever changing the file.
class GgufHandle {
 public:
  static std::unique_ptr<GgufHandle> Open(const std::string& path) {
    Result<std::unique_ptr<GgufHandle>> handle = Error{};
    {
      py::gil_scoped_release release;  // mapping and validation need no Python objects
      handle = OpenWithoutGil(path);
    }
    if (!handle.ok()) ThrowSafetensorError(handle.error());
    return std::move(*handle);
  }

  const gguf::GgufFile& file() const { return file_; }
  std::span<std::byte> memory() const { return mapping_->mutable_bytes(); }

  const gguf::TensorInfo& Find(const std::string& name) const {
    const gguf::TensorInfo* info = file_.FindTensor(name);
    if (info == nullptr) {
      ThrowSafetensorError(Error{ErrorCode::kInvalidArgument, 0, "no tensor of that name", "", name});
    }
    return *info;
  }

 private:
  GgufHandle(std::unique_ptr<MappedFile> mapping, gguf::GgufFile file)
      : mapping_(std::move(mapping)), file_(std::move(file)) {}

  static Result<std::unique_ptr<GgufHandle>> OpenWithoutGil(const std::string& path) {
    Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(path, MapMode::kCopyOnWrite);
    if (!mapping.ok()) return mapping.error();
    // Validation reads the header pages only; the data pages stay untouched on disk.
    Result<gguf::GgufFile> file =
        gguf::GgufFile::FromBytes(std::span<const std::byte>((*mapping)->mutable_bytes()));
    if (!file.ok()) return file.error();
    return std::unique_ptr<GgufHandle>(new GgufHandle(std::move(*mapping), std::move(*file)));
  }

  // Declared before file_, so destroyed after it: the file's views point here.
  std::unique_ptr<MappedFile> mapping_;
  gguf::GgufFile file_;
};

py::str Utf8Str(std::string_view text) { return py::str(text.data(), text.size()); }

py::object ScalarObject(const Value& value) {
  if (auto u = value.AsUnsigned()) return py::int_(*u);
  if (auto s = value.AsSigned()) return py::int_(*s);
  if (auto d = value.AsDouble()) return py::float_(*d);
  if (auto b = value.AsBool()) return py::bool_(*b);
  if (auto text = value.AsString()) return Utf8Str(*text);  // validated UTF-8
  return py::none();
}

py::object ValueObject(const Value& value) {
  if (value.type != ValueType::kArray) return ScalarObject(value);
  py::list out;
  if (value.element_type == ValueType::kString) {
    value.StringElements([&out](uint64_t, std::string_view text) {
      out.append(Utf8Str(text));
      return true;
    });
  } else {
    for (uint64_t i = 0; i < value.count; ++i) out.append(ScalarObject(value.Element(i)));
  }
  return out;
}

py::dict Metadata(const GgufHandle& handle) {
  py::dict out;  // file order: dicts keep insertion order
  for (const gguf::MetadataEntry& entry : handle.file().metadata()) {
    out[Utf8Str(entry.key)] = ValueObject(entry.value);
  }
  return out;
}

py::tuple ToTuple(const std::vector<uint64_t>& values) {
  py::tuple out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = py::int_(values[i]);
  return out;
}

// TensorList returns (name, type name, type id, ne, shape, absolute offset, byte length,
// safetensors dtype name or None, block size, bytes per block) in file order.
py::list TensorList(const GgufHandle& handle) {
  py::list out;
  for (const gguf::TensorInfo& info : handle.file().tensors()) {
    const std::vector<uint64_t> ne(info.ne.begin(), info.ne.begin() + info.n_dims);
    py::object dtype = info.type->dtype ? py::object(Utf8Str(DtypeName(*info.type->dtype)))
                                        : py::object(py::none());
    out.append(py::make_tuple(Utf8Str(info.name), Utf8Str(info.type->name), info.type->id,
                              ToTuple(ne), ToTuple(info.shape()), info.absolute_offset,
                              info.byte_size, dtype, info.type->block_size,
                              info.type->type_size));
  }
  return out;
}

// DequantizeInto decodes tensor `name` to F32 into `out` (a writable C-contiguous buffer
// of exactly its elements), with the GIL released.
void DequantizeInto(const GgufHandle& handle, const std::string& name, const py::buffer& out) {
  const gguf::TensorInfo& info = handle.Find(name);
  Py_buffer view;
  if (PyObject_GetBuffer(out.ptr(), &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
    throw py::error_already_set();
  }
  Error error;
  if (static_cast<uint64_t>(view.len) != info.num_elements() * sizeof(float)) {
    error = Error{ErrorCode::kInvalidArgument, 0, "the output buffer is not the tensor's size",
                  "", std::string(info.name)};
  } else {
    py::gil_scoped_release release;
    error = DequantizeTensor(*info.type, info.data,
                             {static_cast<float*>(view.buf), static_cast<size_t>(info.num_elements())});
  }
  PyBuffer_Release(&view);
  if (!error.ok()) {
    error.offset = info.info_offset;
    error.tensor = std::string(info.name);
    ThrowSafetensorError(error);
  }
}

// Convert runs ConvertGguf with the GIL released. Returns (files written, tensors,
// dequantized tensors, data bytes, [(key, element type, count)] left out).
py::tuple Convert(const std::string& in, const std::string& out,
                  const std::optional<std::string>& dtype, bool all_metadata) {
  GgufConvertOptions options;
  options.all_metadata = all_metadata;
  if (dtype) {
    options.dtype = ParseDtype(*dtype);
    if (!options.dtype || !IsConversionTarget(*options.dtype)) {
      ThrowSafetensorError(Error{ErrorCode::kInvalidArgument, 0,
                                 "dtype must be 'F32', 'F16' or 'BF16'", *dtype});
    }
  }
  GgufConvertReport report;
  Error error;
  {
    py::gil_scoped_release release;
    error = ConvertGguf(in, out, options, &report);
  }
  if (!error.ok()) ThrowSafetensorError(error);
  py::list omitted;
  for (const GgufOmittedKey& key : report.omitted) {
    omitted.append(py::make_tuple(Utf8Str(key.key), Utf8Str(key.element_type), key.count));
  }
  return py::make_tuple(report.written, report.num_tensors, report.num_dequantized,
                        report.total_size, omitted);
}

}  // namespace

void RegisterGguf(py::module_& m) {
  py::class_<GgufHandle>(m, "GgufFile", py::buffer_protocol(), R"doc(
A validated GGUF file in a private copy-on-write mapping. Exposes every byte of the file
through the buffer protocol, writable (writes never reach the file).)doc")
      .def_static("open", &GgufHandle::Open, py::arg("path"),
                  "Maps `path` copy-on-write and validates it; raises SafetensorError.")
      .def_property_readonly("version", [](const GgufHandle& h) { return h.file().version(); })
      .def_property_readonly("alignment",
                             [](const GgufHandle& h) { return h.file().alignment(); })
      .def_property_readonly("data_offset",
                             [](const GgufHandle& h) { return h.file().data_offset(); })
      .def("metadata", &Metadata, "Every key/value pair as Python values, in file order.")
      .def("tensors", &TensorList,
           "[(name, type, type id, ne, shape, offset, bytes, dtype or None, block size, "
           "bytes per block)] in file order.")
      .def("dequantize_into", &DequantizeInto, py::arg("name"), py::arg("out"),
           "Decodes tensor `name` to float32 into `out` (its exact size), GIL released.")
      .def_buffer([](GgufHandle& h) {
        const std::span<std::byte> memory = h.memory();
        return py::buffer_info(memory.data(), 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(memory.size())}, {py::ssize_t{1}},
                               /*readonly=*/false);
      });
  m.def("gguf_convert", &Convert, py::arg("path"), py::arg("out"), py::arg("dtype") = py::none(),
        py::arg("all_metadata") = false,
        "Converts a GGUF file (or split model, into a folder) to safetensors, GIL released. "
        "Returns (files, tensors, dequantized, data bytes, [(key, element type, count)] left "
        "out).");
}

}  // namespace stguard::python
