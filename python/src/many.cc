// SPDX-License-Identifier: Apache-2.0
#include "many.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "stguard/inputs.h"

namespace py = pybind11;

namespace stguard::python {
namespace {

// RunJson judges `paths` on `workers` threads (None: one per core) without the GIL and
// returns, per path, the JSON objects the library wrote for it.
template <typename Judge>
std::vector<std::vector<std::string>> RunJson(const std::vector<std::string>& paths,
                                              std::optional<unsigned> workers,
                                              const Judge& judge) {
  if (workers && (*workers == 0 || *workers > kMaxJobs)) {
    throw py::value_error("workers must be 1 to " + std::to_string(kMaxJobs) + " (or None)");
  }
  std::vector<std::vector<std::string>> out(paths.size());
  py::gil_scoped_release release;  // the threads touch no Python object
  RunInputs(paths, workers.value_or(0), judge, [&](size_t index, InputReport& report) {
    out[index] = std::move(report.lines);
  });
  return out;
}

}  // namespace

void RegisterMany(py::module_& m) {
  m.def(
      "_check_many_json",
      [](const std::vector<std::string>& paths, std::optional<unsigned> workers,
         bool allow_external_symlinks, bool require_aligned_data) {
        CheckOptions options;
        options.allow_external_symlinks = allow_external_symlinks;
        options.require_aligned_data = require_aligned_data;
        OutputOptions json;
        json.json = true;
        return RunJson(paths, workers, [&](const std::string& path) {
          return CheckInput(path, options, json);
        });
      },
      py::arg("paths"), py::arg("workers"), py::arg("allow_external_symlinks"),
      py::arg("require_aligned_data"),
      "check --json on each path, on C++ threads without the GIL: per path, its JSON lines.");
  m.def(
      "_scan_many_json",
      [](const std::vector<std::string>& paths, std::optional<unsigned> workers,
         const std::vector<std::string>& key, std::optional<uint64_t> max_output_ratio,
         bool allow_external_symlinks) {
        ScanInputOptions options;
        options.torch.key_path = key;
        if (max_output_ratio) options.torch.max_output_ratio = *max_output_ratio;
        options.allow_external_symlinks = allow_external_symlinks;
        OutputOptions json;
        json.json = true;
        return RunJson(paths, workers, [&](const std::string& path) {
          return ScanInput(path, options, json);
        });
      },
      py::arg("paths"), py::arg("workers"), py::arg("key"), py::arg("max_output_ratio"),
      py::arg("allow_external_symlinks"),
      "scan --json on each path, on C++ threads without the GIL: per path, its JSON lines.");
}

}  // namespace stguard::python
