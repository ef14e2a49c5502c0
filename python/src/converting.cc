// SPDX-License-Identifier: Apache-2.0
// Conversions to safetensors from Python (see converting.h): every function is one call of
// the library's ConvertPath (stguard/conversion.h), the same call `stguard convert` makes,
// so every format converts, counts, refuses options and decides verdicts alike. The GIL is released while converting.
#include "converting.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "raise_error.h"
#include "stguard/conversion.h"
#include "stguard/dtype.h"
#include "stguard/formats.h"
#include "stguard/verdict.h"

namespace stguard::python {
namespace {

namespace py = pybind11;

// ParseTarget reads a dtype argument: none, or a dtype name (the library refuses one that
// is no conversion target, before anything is written).
std::optional<Dtype> ParseTarget(const std::optional<std::string>& dtype_name) {
  if (!dtype_name) return std::nullopt;
  const std::optional<Dtype> target = ParseDtype(*dtype_name);
  if (!target) {
    ThrowSafetensorError(Error{ErrorCode::kInvalidArgument, 0, "dtype must be BF16, F16 or F32",
                               *dtype_name, {}});
  }
  return target;
}

// Raise raises the conversion's failure as stguard.SafetensorError with the verdict the
// library decided (.verdict: "refused", "invalid" or "error") and the folder's member at
// fault (.member, "" for IN itself). A checkpoint whose tensors sit under a key reads as
// the command line's sentence naming the keys.
[[noreturn]] void Raise(const Error& error, const ConvertReport& report) {
  py::object exception = MakeSafetensorError(error);
  if (report.needs_key) {
    exception = py::module_::import("stguard._error")
                    .attr("SafetensorError")(PrintableText(error.context),
                                             std::string(ErrorCodeName(error.code)),
                                             error.offset, py::none());
  }
  exception.attr("verdict") = std::string(VerdictName(report.verdict));
  exception.attr("member") = error.file;
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
  throw py::error_already_set();
}

// Run makes the one library call and returns what it wrote: format (IN's, "folder" for a
// folder), tensors, converted (tensors whose dtype changed), dropped (dropped, kept)
// pairs, written (a folder's file names).
py::dict Run(const std::string& in, const std::string& out, const ConvertOptions& options) {
  ConvertReport report;
  Error error;
  {
    py::gil_scoped_release release;
    error = ConvertPath(in, out, options, &report);
  }
  if (!error.ok()) Raise(error, report);
  py::list dropped;
  for (const TorchDroppedAlias& alias : report.dropped) {
    dropped.append(py::make_tuple(alias.dropped, alias.kept));
  }
  py::dict result;
  result["format"] =
      report.input.is_folder ? std::string("folder") : std::string(FormatName(report.input.format));
  result["tensors"] = report.num_tensors;
  result["converted"] = report.num_converted;
  result["dropped"] = dropped;
  result["written"] = report.written.size() > 1 || report.input.is_folder
                          ? report.written
                          : std::vector<std::string>{};
  return result;
}

py::dict Convert(const std::string& in, const std::string& out,
                 const std::optional<std::string>& dtype, const std::vector<std::string>& key_path,
                 const std::optional<uint64_t>& max_output_ratio, bool drop_aliases,
                 bool allow_external_symlinks, const std::string& name, bool all_metadata) {
  ConvertOptions options;
  options.dtype = ParseTarget(dtype);
  options.key_path = key_path;
  options.max_output_ratio = max_output_ratio;
  options.drop_aliases = drop_aliases;
  options.allow_external_symlinks = allow_external_symlinks;
  options.name = name;
  options.all_metadata = all_metadata;
  return Run(in, out, options);
}

}  // namespace

void RegisterConverting(py::module_& m) {
  m.def("convert", &Convert, py::arg("path"), py::arg("out"), py::arg("dtype") = py::none(),
        py::arg("key_path") = std::vector<std::string>{},
        py::arg("max_output_ratio") = py::none(), py::arg("drop_aliases") = false,
        py::arg("allow_external_symlinks") = false, py::arg("name") = std::string(),
        py::arg("all_metadata") = false,
        "Converts any file or folder stguard reads to safetensors (ConvertPath).");
}

}  // namespace stguard::python
