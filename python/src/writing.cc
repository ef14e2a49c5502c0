// SPDX-License-Identifier: Apache-2.0
#include "writing.h"

#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "raise_error.h"
#include "stguard/dtype.h"
#include "stguard/writer.h"

namespace stguard::python {
namespace {

namespace py = pybind11;

[[noreturn]] void ThrowInvalidArgument(const char* message, std::string context = {},
                                       std::string tensor = {}) {
  ThrowWriteError(
      Error{ErrorCode::kInvalidArgument, 0, message, std::move(context), std::move(tensor)});
}

// Utf8Of returns the UTF-8 bytes of a Python str. They live as long as the str object.
std::string_view Utf8Of(const py::handle& object, const char* what) {
  if (!PyUnicode_Check(object.ptr())) ThrowInvalidArgument(what, "expected a str");
  Py_ssize_t len = 0;
  const char* text = PyUnicode_AsUTF8AndSize(object.ptr(), &len);
  if (text == nullptr) {  // a lone surrogate cannot be encoded
    PyErr_Clear();
    ThrowInvalidArgument(what, "not valid UTF-8 (a lone surrogate)");
  }
  return {text, static_cast<size_t>(len)};
}

// ExportedBuffer holds one exported buffer until it is destroyed, with the GIL held.
struct ExportedBuffer {
  Py_buffer view{};
  bool held = false;
  ExportedBuffer() = default;
  ExportedBuffer(const ExportedBuffer&) = delete;
  ExportedBuffer& operator=(const ExportedBuffer&) = delete;
  ~ExportedBuffer() {
    if (held) PyBuffer_Release(&view);
  }
};

// PreparedWrite is a Writer with every tensor and metadata entry added, plus the Python
// objects whose memory the writer reads. Destroy it with the GIL held.
struct PreparedWrite {
  Writer writer;
  std::vector<std::unique_ptr<ExportedBuffer>> buffers;
  std::vector<py::object> keep_alive;  // the name and metadata str objects
};

void Prepare(const py::list& tensors, const py::object& metadata, PreparedWrite& out) {
  out.keep_alive.push_back(tensors);
  for (const py::handle entry : tensors) {
    const py::tuple fields = py::reinterpret_borrow<py::tuple>(entry);
    if (fields.size() != 4) ThrowInvalidArgument("internal: bad tensor entry");
    const std::string_view name = Utf8Of(fields[0], "tensor name");
    const std::string_view dtype_name = Utf8Of(fields[1], "dtype name");
    const std::optional<Dtype> dtype = ParseDtype(dtype_name);
    if (!dtype) ThrowInvalidArgument("unknown dtype", std::string(dtype_name), std::string(name));
    std::vector<uint64_t> shape;
    for (const py::handle dim : py::reinterpret_borrow<py::tuple>(fields[2])) {
      shape.push_back(dim.cast<uint64_t>());
    }
    auto buffer = std::make_unique<ExportedBuffer>();
    if (PyObject_GetBuffer(fields[3].ptr(), &buffer->view, PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      ThrowInvalidArgument("tensor data is not a contiguous buffer", {}, std::string(name));
    }
    buffer->held = true;
    const std::span<const std::byte> data(static_cast<const std::byte*>(buffer->view.buf),
                                          static_cast<size_t>(buffer->view.len));
    out.buffers.push_back(std::move(buffer));
    const Error added = out.writer.AddTensor(name, *dtype, shape, data);
    if (!added.ok()) ThrowWriteError(added);
  }
  if (metadata.is_none()) return;
  if (!PyDict_Check(metadata.ptr())) ThrowInvalidArgument("metadata must be a dict of str to str");
  out.keep_alive.push_back(metadata);
  for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(metadata)) {
    const std::string_view key_text = Utf8Of(key, "metadata key");
    const std::string_view value_text = Utf8Of(value, "metadata value");
    const Error added = out.writer.AddMetadata(key_text, value_text);
    if (!added.ok()) ThrowWriteError(added);
  }
}

// MemorySink writes into a fixed block of memory and refuses to go past it.
class MemorySink : public ByteSink {
 public:
  explicit MemorySink(std::span<std::byte> memory) : memory_(memory) {}
  Error Write(std::span<const std::byte> bytes) override {
    if (bytes.size() > memory_.size() - used_) {
      return Error{ErrorCode::kInvalidArgument, used_, "more bytes than the file size"};
    }
    if (!bytes.empty()) std::memcpy(memory_.data() + used_, bytes.data(), bytes.size());
    used_ += bytes.size();
    return {};
  }
  size_t used() const { return used_; }

 private:
  std::span<std::byte> memory_;
  size_t used_ = 0;
};

}  // namespace

void WriteFile(const std::string& path, const py::list& tensors, const py::object& metadata) {
  PreparedWrite prepared;
  Prepare(tensors, metadata, prepared);
  Error written;
  {
    py::gil_scoped_release release;
    written = prepared.writer.WriteToFile(path);
  }
  if (!written.ok()) ThrowWriteError(written);
}

py::bytes Serialize(const py::list& tensors, const py::object& metadata) {
  PreparedWrite prepared;
  Prepare(tensors, metadata, prepared);
  const Result<uint64_t> file_size = prepared.writer.FileSize();
  if (!file_size.ok()) ThrowWriteError(file_size.error());
  if (*file_size > static_cast<uint64_t>(PY_SSIZE_T_MAX)) {
    ThrowSafetensorError(Error{ErrorCode::kOutOfMemory, 0, "file too large for bytes"});
  }
  // Write straight into the bytes object: no second copy of a large checkpoint.
  py::object result = py::reinterpret_steal<py::object>(
      PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(*file_size)));
  if (!result) throw py::error_already_set();
  MemorySink sink(std::span<std::byte>(reinterpret_cast<std::byte*>(PyBytes_AS_STRING(result.ptr())),
                                       static_cast<size_t>(*file_size)));
  Error written;
  {
    py::gil_scoped_release release;
    written = prepared.writer.WriteTo(sink);
  }
  if (!written.ok()) ThrowWriteError(written);
  if (sink.used() != *file_size) {
    ThrowWriteError(Error{ErrorCode::kInvalidArgument, sink.used(), "fewer bytes than the file size"});
  }
  return py::reinterpret_steal<py::bytes>(result.release());
}

}  // namespace stguard::python
