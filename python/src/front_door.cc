// SPDX-License-Identifier: Apache-2.0
// The front door from Python (see front_door.h). Every verdict comes from the library:
// CheckPath for check, JudgePickleFile / ScanFolderForPickles and ResultForPickle for
// scan, LintPath for lint; the envelope's fields are the library's own JSON (EnvelopeJson;
// LintJson for lint), parsed, so Python shows exactly what `stguard ... --json` prints.
#include "front_door.h"

#include <pybind11/stl.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "converting.h"
#include "raise_error.h"
#include "stguard/file_verdict.h"
#include "stguard/folder_scan.h"
#include "stguard/lint_verdict.h"
#include "stguard/sniff.h"
#include "stguard/verdict.h"

namespace stguard::python {
namespace {

namespace py = pybind11;

// Text decodes bytes that should be UTF-8 (names from files, paths from os.fspath) without
// ever failing: a path's undecodable bytes round-trip as os.fsdecode makes them.
py::str Text(std::string_view text) {
  PyObject* object =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape");
  if (object == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(object);
}

bool IsDirectory(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

py::list KeyPaths(const PickleFileReport& report) {
  py::list paths;
  for (const std::vector<std::string>& path : report.key_paths) {
    py::list keys;
    for (const std::string& key : path) keys.append(Text(key));
    paths.append(std::move(keys));
  }
  return paths;
}

// ScanDetails is what the static scan found in a pickle-bearing file, as `stguard scan`
// lists it: its verdict word and sentence, globals, tensors, key paths.
py::dict ScanDetails(const PickleFileReport& report) {
  const TorchScanReport& scan = report.scan;
  py::list globals;
  for (const TorchGlobal& global : scan.globals) {
    globals.append(py::make_tuple(Text(global.module), Text(global.name), global.allowed,
                                  global.offset));
  }
  py::list tensors;
  for (const TorchTensor& tensor : scan.tensors) {
    py::tuple shape(tensor.shape.size());
    for (size_t d = 0; d < tensor.shape.size(); ++d) shape[d] = py::int_(tensor.shape[d]);
    py::object alias_of = py::none();
    if (tensor.alias_of) alias_of = Text(scan.tensors[*tensor.alias_of].name);
    tensors.append(py::make_tuple(Text(tensor.name), Text(DtypeName(tensor.dtype)), shape,
                                  tensor.contiguous, alias_of));
  }
  py::dict details;
  details["scan_verdict"] = Text(FileVerdictName(report.verdict));
  details["description"] = Text(DescribeVerdict(report));
  details["globals"] = globals;
  details["tensors"] = tensors;
  details["key_paths"] = KeyPaths(report);
  return details;
}

py::list Warnings(const std::vector<Warning>& warnings) {
  py::list out;
  for (const Warning& warning : warnings) {
    out.append(py::make_tuple(Text(WarningKindName(warning.kind)), Text(warning.file),
                              Text(warning.tensor), Text(warning.message)));
  }
  return out;
}

// EnvelopeDict returns the envelope's fields (the library's JSON, parsed) and what they
// rest on: warnings, the member of a folder the error is about, the counts, a pickle's scan,
// and each file of a folder the same way.
py::dict EnvelopeDict(const CheckResult& result) {
  const py::object loads = py::module_::import("json").attr("loads");
  py::dict out = loads(Text(EnvelopeJson(result)));
  out["member"] = Text(result.member);
  out["is_folder"] = result.is_folder;
  out["warnings"] = Warnings(result.warnings);
  py::dict summary;
  summary["tensors"] = result.summary.tensors;
  summary["data_bytes"] = result.summary.data_bytes;
  summary["header_bytes"] = result.summary.header_bytes;
  summary["shards"] = result.summary.shards;
  summary["index"] = Text(result.summary.index);
  out["summary"] = summary;
  out["scan"] = result.pickle ? py::object(ScanDetails(*result.pickle)) : py::object(py::none());
  py::list files;
  for (const CheckResult& file : result.files) files.append(EnvelopeDict(file));
  out["files"] = files;
  out["error"] =
      result.error.ok() ? py::object(py::none()) : MakeSafetensorError(result.error);
  return out;
}

TorchOptions ReadTorchOptions(const std::vector<std::string>& key_path,
                              const py::object& max_output_ratio) {
  TorchOptions options;
  options.key_path = key_path;
  if (!max_output_ratio.is_none()) options.max_output_ratio = max_output_ratio.cast<uint64_t>();
  return options;
}

py::dict CheckPathDict(const std::string& path, bool allow_external_symlinks,
                       bool require_aligned_data, const std::vector<std::string>& key_path,
                       const py::object& max_output_ratio) {
  CheckOptions options;
  options.allow_external_symlinks = allow_external_symlinks;
  options.require_aligned_data = require_aligned_data;
  options.torch = ReadTorchOptions(key_path, max_output_ratio);
  std::unique_ptr<CheckResult> result;
  {
    py::gil_scoped_release release;
    result = std::make_unique<CheckResult>(CheckPath(path, options));
  }
  return EnvelopeDict(*result);
}

// ScanFolder scans every pickle-bearing file under a folder; the folder's verdict is
// decided as `check DIR` decides it (DecideFolderVerdict: the worst verdict wins).
CheckResult ScanFolder(const std::string& path, const FolderScanOptions& options) {
  FolderScanReport report = ScanFolderForPickles(path, options);
  CheckResult result;
  result.file = path;
  result.is_folder = true;
  for (FolderScanEntry& entry : report.files) {
    result.files.push_back(ResultForPickle(entry.name, std::move(entry.report)));
  }
  DecideFolderVerdict(report.error, &result);
  return result;
}

py::dict Scan(const std::string& path, const std::vector<std::string>& key_path,
              const py::object& max_output_ratio, bool allow_external_symlinks) {
  const TorchOptions torch = ReadTorchOptions(key_path, max_output_ratio);
  std::unique_ptr<CheckResult> result;
  {
    py::gil_scoped_release release;
    if (IsDirectory(path)) {
      FolderScanOptions options;
      options.torch = torch;
      options.allow_external_symlinks = allow_external_symlinks;
      result = std::make_unique<CheckResult>(ScanFolder(path, options));
    } else {
      result = std::make_unique<CheckResult>(ResultForPickle(path, JudgePickleFile(path, torch)));
    }
  }
  return EnvelopeDict(*result);
}

// Lint gives `stguard lint --json`'s object (LintPath's LintJson, parsed: the envelope,
// family, counts and findings, as the command prints them) with what the envelope rests
// on (EnvelopeDict: the error, warnings, the member).
py::dict Lint(const std::string& path, const std::string& config_path,
              bool allow_external_symlinks) {
  LintOptions options;
  options.config_path = config_path;
  options.dir.allow_external_symlinks = allow_external_symlinks;
  std::unique_ptr<LintOutcome> outcome;
  {
    py::gil_scoped_release release;
    outcome = std::make_unique<LintOutcome>(LintPath(path, options));
  }
  py::dict out = EnvelopeDict(outcome->result);
  out["json"] = Text(LintJson(*outcome));
  return out;
}

// Sniff returns the format's name of the file at `path` ("safetensors", "pytorch-zip"...),
// "folder" for a directory; raises SafetensorError when it cannot be read.
py::str Sniff(const std::string& path) {
  if (IsDirectory(path)) return Text("folder");
  Result<Format> format = Error{};
  {
    py::gil_scoped_release release;
    format = SniffFile(path);
  }
  if (!format.ok()) ThrowSafetensorError(format.error());
  return Text(FormatName(*format));
}

// Sentence returns the library's sentence for the verdict named `word` ("valid"...), as
// the page shows it; error's for a word that names no verdict.
py::str Sentence(const std::string& word) {
  for (const Verdict verdict : {Verdict::kValid, Verdict::kInvalid, Verdict::kRefused}) {
    if (VerdictName(verdict) == word) return Text(VerdictSentence(verdict));
  }
  return Text(VerdictSentence(Verdict::kError));
}

// ConvertHint says what a file of `format` is and how to convert it, or "" when it is no
// format with a conversion to point to (the facts of stguard/formats.def).
std::string ConvertHint(Format format) {
  const FormatFacts& facts = FactsOf(format);
  if (facts.hint.empty() || !facts.convertible) return {};
  if (facts.pickle_bearing) {
    return std::string(facts.hint) +
           ": stguard.scan() says whether it is safe to load, and stguard.convert() "
           "converts it to safetensors without running it";
  }
  return std::string(facts.hint) + ": stguard.convert() converts it to safetensors";
}

}  // namespace

void ThrowOpenError(const std::string& path, const Error& error) {
  if (error.code == ErrorCode::kIoError || error.code == ErrorCode::kNotARegularFile ||
      error.code == ErrorCode::kOutOfMemory) {
    ThrowSafetensorError(error);
  }
  Result<Format> format = Error{};
  {
    py::gil_scoped_release release;
    format = SniffFile(path);
  }
  const std::string hint = format.ok() ? ConvertHint(*format) : std::string();
  if (hint.empty()) ThrowSafetensorError(error);
  ThrowSafetensorError(Error{ErrorCode::kNotSafetensors, 0, "not a safetensors file",
                             "'" + path + "' is " + std::string(FormatName(*format)) + ", " + hint,
                             {}});
}

void RegisterFrontDoor(py::module_& m) {
  m.attr("ENVELOPE_SCHEMA_VERSION") = kEnvelopeSchemaVersion;
  m.def("sniff", &Sniff, py::arg("path"),
        "The format's name of the file at `path`, by content ('folder' for a directory).");
  m.def("verdict_sentence", &Sentence, py::arg("verdict"),
        "The library's sentence for a verdict ('valid', 'invalid', 'refused', 'error').");
  m.def("check_path", &CheckPathDict, py::arg("path"), py::arg("allow_external_symlinks"),
        py::arg("require_aligned_data"), py::arg("key_path"), py::arg("max_output_ratio"),
        "The envelope (dict) of CheckPath for a file of any format, a folder or an index.");
  m.def("scan", &Scan, py::arg("path"), py::arg("key_path"), py::arg("max_output_ratio"),
        py::arg("allow_external_symlinks"),
        "The envelope (dict) of the static scan of a file, or of every pickle-bearing file "
        "under a folder.");
  m.def("lint", &Lint, py::arg("path"), py::arg("config_path"),
        py::arg("allow_external_symlinks"),
        "The envelope (dict) of lint's verdict, and under 'json' the object `stguard lint "
        "--json` prints.");
  RegisterConverting(m);
}

}  // namespace stguard::python
