// SPDX-License-Identifier: Apache-2.0
// Conversions to safetensors from Python (see converting.h), over the library's crash-safe
// conversions: the same calls `stguard convert` makes. The GIL is released while converting.
#include "converting.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "raise_error.h"
#include "stguard/dtype.h"
#include "stguard/file_verdict.h"
#include "stguard/npy_convert.h"
#include "stguard/reader.h"
#include "stguard/torch_checkpoint.h"
#include "stguard/writer.h"

namespace stguard::python {
namespace {

namespace py = pybind11;

py::list DroppedList(const std::vector<TorchDroppedAlias>& dropped) {
  py::list out;
  for (const TorchDroppedAlias& alias : dropped) out.append(py::make_tuple(alias.dropped, alias.kept));
  return out;
}

// ConversionTarget reads a dtype argument: none, or BF16, F16 or F32.
std::optional<Dtype> ConversionTarget(const std::optional<std::string>& dtype_name) {
  if (!dtype_name) return std::nullopt;
  const std::optional<Dtype> target = ParseDtype(*dtype_name);
  if (!target || !IsConversionTarget(*target)) {
    ThrowSafetensorError(Error{ErrorCode::kInvalidArgument, 0, "dtype must be BF16, F16 or F32",
                               *dtype_name, {}});
  }
  return target;
}

// ConvertSafetensors rewrites the floating tensors of a safetensors file to `dtype_name`.
py::dict ConvertSafetensors(const std::string& in, const std::string& out,
                            const std::string& dtype_name) {
  const std::optional<Dtype> target = ConversionTarget(dtype_name);
  Error error;
  size_t num_tensors = 0;
  size_t num_converted = 0;
  {
    py::gil_scoped_release release;
    const Result<Checkpoint> checkpoint = Checkpoint::Open(in);
    if (!checkpoint.ok()) {
      error = checkpoint.error();
    } else {
      num_tensors = checkpoint->num_tensors();
      error = WriteConvertedFile(*checkpoint, *target, out, &num_converted);
    }
  }
  if (!error.ok()) ThrowSafetensorError(error);
  py::dict result;
  result["tensors"] = num_tensors;
  result["converted"] = num_converted;
  result["dropped"] = py::list();
  return result;
}

// ConvertTorchFile converts one PyTorch checkpoint as `stguard convert IN OUT` does.
py::dict ConvertTorchFile(const std::string& in, const std::string& out,
                          const std::vector<std::string>& key_path,
                          const std::optional<uint64_t>& max_output_ratio, bool drop_aliases,
                          const std::optional<std::string>& dtype) {
  TorchOptions options;
  options.key_path = key_path;
  if (max_output_ratio) options.max_output_ratio = *max_output_ratio;
  TorchConvertOptions convert_options;
  convert_options.drop_aliases = drop_aliases;
  convert_options.dtype = ConversionTarget(dtype);  // converted as it streams
  Error error;
  TorchFileReport report;
  std::vector<TorchDroppedAlias> dropped;
  {
    py::gil_scoped_release release;
    error = stguard::ConvertTorchFile(in, out, options, convert_options, &dropped, &report);
    if (error.code == ErrorCode::kNotAStateDict && key_path.empty()) {
      // As `stguard convert` says it: the keys that lead to the tensors.
      const PickleFileReport verdict = JudgePickleFile(in, options);
      if (verdict.verdict == FileVerdict::kNeedsKey && !verdict.key_paths.empty()) {
        error.context = DescribeVerdict(verdict);
      }
    }
  }
  if (!error.ok()) ThrowSafetensorError(error);
  py::dict result;
  result["tensors"] = report.num_tensors;
  result["converted"] = report.num_converted;
  result["dropped"] = DroppedList(dropped);
  return result;
}

// ConvertTorchFolder converts a folder of pytorch_model.bin shards into `out_dir`.
py::dict ConvertTorchFolder(const std::string& in_dir, const std::string& out_dir,
                            bool drop_aliases, bool allow_external_symlinks,
                            const std::optional<std::string>& dtype) {
  TorchConvertOptions options;
  options.drop_aliases = drop_aliases;
  options.allow_external_symlinks = allow_external_symlinks;
  options.dtype = ConversionTarget(dtype);
  TorchFolderReport report;
  Error error;
  {
    py::gil_scoped_release release;
    error = stguard::ConvertTorchFolder(in_dir, out_dir, options, &report);
  }
  if (!error.ok()) ThrowSafetensorError(error);
  py::dict result;
  result["tensors"] = report.num_tensors;
  result["converted"] = report.num_converted;
  result["dropped"] = DroppedList(report.dropped);
  result["written"] = report.written;
  return result;
}

// ConvertNpy writes one .npy array as a one-tensor safetensors file.
py::dict ConvertNpy(const std::string& in, const std::string& out, const std::string& name,
                    const std::optional<std::string>& dtype) {
  const std::optional<Dtype> target = ConversionTarget(dtype);
  Error error;
  size_t converted = 0;
  {
    py::gil_scoped_release release;
    error = NpyArrayToSafetensors(in, out, name, target, {}, &converted);
  }
  if (!error.ok()) ThrowSafetensorError(error);
  py::dict result;
  result["tensors"] = 1;
  result["converted"] = converted;
  result["dropped"] = py::list();
  return result;
}

// ConvertNpz writes every array of an .npz as one tensor named by its key.
py::dict ConvertNpz(const std::string& in, const std::string& out,
                    const std::optional<std::string>& dtype) {
  const std::optional<Dtype> target = ConversionTarget(dtype);
  Error error;
  size_t tensors = 0;
  size_t converted = 0;
  {
    py::gil_scoped_release release;
    error = NpzToSafetensors(in, out, target, &tensors, {}, &converted);
  }
  if (!error.ok()) ThrowSafetensorError(error);
  py::dict result;
  result["tensors"] = tensors;
  result["converted"] = converted;
  result["dropped"] = py::list();
  return result;
}

}  // namespace

void RegisterConverting(py::module_& m) {
  m.def("convert_safetensors", &ConvertSafetensors, py::arg("path"), py::arg("out"),
        py::arg("dtype"), "Rewrites floating tensors to dtype (BF16, F16, F32) into out.");
  m.def("convert_torch_file", &ConvertTorchFile, py::arg("path"), py::arg("out"),
        py::arg("key_path"), py::arg("max_output_ratio"), py::arg("drop_aliases"),
        py::arg("dtype") = py::none(),
        "Converts a PyTorch checkpoint to a safetensors file without running it.");
  m.def("convert_torch_folder", &ConvertTorchFolder, py::arg("path"), py::arg("out"),
        py::arg("drop_aliases"), py::arg("allow_external_symlinks"),
        py::arg("dtype") = py::none(),
        "Converts a folder of pytorch_model.bin shards into a folder (created as mkdir -p).");
  m.def("convert_npy", &ConvertNpy, py::arg("path"), py::arg("out"), py::arg("name"),
        py::arg("dtype") = py::none(),
        "Writes a .npy array as a one-tensor safetensors file.");
  m.def("convert_npz", &ConvertNpz, py::arg("path"), py::arg("out"),
        py::arg("dtype") = py::none(),
        "Writes every array of an .npz as one safetensors file, one tensor per key.");
}

}  // namespace stguard::python
