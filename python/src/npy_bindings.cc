// SPDX-License-Identifier: Apache-2.0
// The compiled side of stguard.npy: .npy and .npz files validated by the library and
// handed to Python as a writable copy-on-write mapping (stored data is viewed in place)
// plus, for deflated .npz members, their inflated bytes. numpy arrays are made in
// python/stguard/npy.py.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "npy_bindings.h"
#include "raise_error.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "stguard/npz.h"

namespace py = pybind11;

namespace stguard::python {
namespace {

// NumpyMapping keeps a file's private, writable mapping alive for the arrays viewing it.
class NumpyMapping {
 public:
  explicit NumpyMapping(std::unique_ptr<MappedFile> file) : file_(std::move(file)) {}
  std::span<std::byte> memory() const { return file_->mutable_bytes(); }
  std::span<const std::byte> bytes() const { return file_->bytes(); }

 private:
  std::unique_ptr<MappedFile> file_;
};

std::unique_ptr<NumpyMapping> MapCopyOnWrite(const std::string& path) {
  Result<std::unique_ptr<MappedFile>> file = Error{};
  {
    py::gil_scoped_release release;
    file = MappedFile::Open(path, MapMode::kCopyOnWrite);
  }
  if (!file.ok()) ThrowSafetensorError(file.error());
  return std::make_unique<NumpyMapping>(std::move(*file));
}

py::tuple Describe(const NpyArrayInfo& info) {
  return py::make_tuple(info.descr, info.fortran_order, py::cast(info.shape), info.data_len);
}

// OpenNpy returns (mapping, (descr, fortran_order, shape, bytes), data offset).
py::tuple OpenNpy(const std::string& path) {
  std::unique_ptr<NumpyMapping> mapping = MapCopyOnWrite(path);
  Result<NpyArrayInfo> info = Error{};
  {
    py::gil_scoped_release release;
    info = ParseNpy(mapping->bytes(), mapping->bytes().size());
  }
  if (!info.ok()) ThrowSafetensorError(info.error());
  const uint64_t offset = info->data_offset;
  const py::tuple described = Describe(*info);
  return py::make_tuple(py::cast(std::move(mapping)), described, offset);
}

// InflateMember returns a deflated member's array bytes as a bytearray (writable).
py::bytearray InflateMember(const NumpyMapping& mapping, const NpzMember& member) {
  py::bytearray out(nullptr, static_cast<py::ssize_t>(member.array.data_len));
  char* into = PyByteArray_AsString(out.ptr());
  size_t at = 0;
  Error error;
  {
    py::gil_scoped_release release;
    error = StreamNpzMember(mapping.bytes(), member, member.array.data_offset,
                            [&](std::span<const std::byte> chunk) {
                              std::memcpy(into + at, chunk.data(), chunk.size());
                              at += chunk.size();
                              return Error{};
                            });
  }
  if (!error.ok()) ThrowSafetensorError(error);
  return out;
}

// OpenNpz returns (mapping, [(key, (descr, fortran_order, shape, bytes), data offset in
// the mapping or None, inflated bytearray or None)]).
py::tuple OpenNpz(const std::string& path) {
  std::unique_ptr<NumpyMapping> mapping = MapCopyOnWrite(path);
  Result<NpzInfo> info = Error{};
  {
    py::gil_scoped_release release;
    // Deflated members are inflated once, below: their stream ends and CRC-32s are
    // checked there, and no array is returned before every member has passed.
    info = ParseNpz(mapping->bytes(), NpzDepth::kHeaders);
  }
  if (!info.ok()) ThrowSafetensorError(info.error());
  py::list members;
  for (const NpzMember& member : info->members) {
    py::object offset = py::none(), inflated = py::none();
    if (member.compressed) {
      inflated = InflateMember(*mapping, member);
    } else {
      offset = py::int_(member.data_offset + member.array.data_offset);
    }
    members.append(py::make_tuple(member.key, Describe(member.array), offset, inflated));
  }
  return py::make_tuple(py::cast(std::move(mapping)), members);
}

}  // namespace

void RegisterNumpyFiles(py::module_& m) {
  py::class_<NumpyMapping>(m, "NumpyMapping", py::buffer_protocol(),
                           "A validated .npy/.npz file's private, writable mapping.")
      .def_buffer([](NumpyMapping& mapping) {
        return py::buffer_info(mapping.memory().data(), 1,
                               py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(mapping.memory().size())}, {1},
                               /*readonly=*/false);
      });
  m.def("open_npy", &OpenNpy, py::arg("path"),
        "(mapping, (descr, fortran_order, shape, bytes), data offset) for a valid .npy.");
  m.def("open_npz", &OpenNpz, py::arg("path"),
        "(mapping, [(key, (descr, fortran_order, shape, bytes), offset or None, "
        "inflated bytearray or None)]) for a valid .npz.");
}

}  // namespace stguard::python
