// SPDX-License-Identifier: Apache-2.0
// `scan` on one input, composed whole (stguard/inputs.h): the static report on a
// pickle-bearing file (format, verdict, globals, storages, tensors), an .npy or .npz
// file's "is there a pickle", or every pickle-bearing file of a folder.
#include "stguard/inputs.h"

#include <sys/stat.h>

#include <memory>
#include <span>
#include <string>
#include <utility>

#include "front/input_report.h"
#include "stguard/file_verdict.h"
#include "stguard/folder_scan.h"
#include "stguard/json_escape.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "stguard/npz.h"
#include "stguard/remote.h"
#include "stguard/sniff.h"

namespace stguard {
namespace {

std::string ScanShapeText(std::span<const uint64_t> shape, const char* separator) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += separator;
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

void AddReportText(const std::string& path, const PickleFileReport& verdict,
                   InputReport* out) {
  const TorchScanReport& report = verdict.scan;
  out->lines.push_back(PrintableText(path) + ": " + std::string(FormatName(verdict.format)) +
                       ": " + DescribeVerdict(verdict));
  for (const TorchGlobal& global : report.globals) {
    out->lines.push_back("  global " + PrintableText(global.module + "." + global.name) +
                         (global.allowed ? "  allowed" : "  REFUSED") + " (byte " +
                         std::to_string(global.offset) + ")");
  }
  for (const TorchStorage& storage : report.storages) {
    out->lines.push_back("  storage " + PrintableText(storage.key) + "  " +
                         std::string(DtypeName(storage.dtype)) + " x " +
                         std::to_string(storage.num_elements) + "  " +
                         PrintableText(storage.location));
  }
  for (const TorchTensor& tensor : report.tensors) {
    std::string line = "  tensor " + PrintableText(tensor.name) + "  " +
                       std::string(DtypeName(tensor.dtype)) + " " + ScanShapeText(tensor.shape, ", ");
    if (!tensor.contiguous) line += "  strided";
    if (tensor.alias_of) {
      line += "  alias of " + PrintableText(report.tensors[*tensor.alias_of].name);
    }
    out->lines.push_back(std::move(line));
  }
}

void AppendKeyPaths(const PickleFileReport& verdict, std::string* out) {
  *out += ",\"key_paths\":[";
  for (size_t k = 0; k < verdict.key_paths.size(); ++k) {
    if (k > 0) *out += ',';
    *out += '[';
    for (size_t j = 0; j < verdict.key_paths[k].size(); ++j) {
      if (j > 0) *out += ',';
      AppendJsonString(verdict.key_paths[k][j], out);
    }
    *out += ']';
  }
  *out += ']';
}

void AppendGlobalsAndStorages(const TorchScanReport& report, std::string* out) {
  *out += ",\"globals\":[";
  for (size_t k = 0; k < report.globals.size(); ++k) {
    const TorchGlobal& global = report.globals[k];
    *out += k > 0 ? ",{\"module\":" : "{\"module\":";
    AppendJsonString(global.module, out);
    *out += ",\"name\":";
    AppendJsonString(global.name, out);
    *out += std::string(",\"allowed\":") + (global.allowed ? "true" : "false");
    *out += ",\"offset\":" + std::to_string(global.offset) + "}";
  }
  *out += "],\"storages\":[";
  for (size_t k = 0; k < report.storages.size(); ++k) {
    const TorchStorage& storage = report.storages[k];
    *out += k > 0 ? ",{\"key\":" : "{\"key\":";
    AppendJsonString(storage.key, out);
    *out += ",\"dtype\":";
    AppendJsonString(DtypeName(storage.dtype), out);
    *out += ",\"elements\":" + std::to_string(storage.num_elements) + ",\"location\":";
    AppendJsonString(storage.location, out);
    *out += "}";
  }
  *out += "]";
}

void AppendTensors(const TorchScanReport& report, std::string* out) {
  *out += ",\"tensors\":[";
  for (size_t k = 0; k < report.tensors.size(); ++k) {
    const TorchTensor& tensor = report.tensors[k];
    *out += k > 0 ? ",{\"name\":" : "{\"name\":";
    AppendJsonString(tensor.name, out);
    *out += ",\"dtype\":";
    AppendJsonString(DtypeName(tensor.dtype), out);
    *out += ",\"shape\":" + ScanShapeText(tensor.shape, ",");
    *out += std::string(",\"contiguous\":") + (tensor.contiguous ? "true" : "false");
    if (tensor.alias_of) {
      *out += ",\"alias_of\":";
      AppendJsonString(report.tensors[*tensor.alias_of].name, out);
    }
    *out += "}";
  }
  *out += "]";
}

// ScanReportJson is the front door's envelope for the file (as `check --json` writes it), then
// the scan's own fields: the static scan's verdict and container, whether the file
// converts as it is (if not, scan_error says why, also when it is safe to load), the key
// paths a needs-key checkpoint offers, and the globals, storages and tensors it found.
std::string ScanReportJson(const CheckResult& result, const PickleFileReport& verdict) {
  std::string out = "{";
  AppendResultJson(result, &out);
  out += ",";
  AppendWarningsJson(result.warnings, &out);
  out += ",\"scan_verdict\":";
  AppendJsonString(FileVerdictName(verdict.verdict), &out);
  out += ",\"torch_format\":";
  AppendJsonString(TorchFormatName(verdict.scan.format), &out);
  out += std::string(",\"convertible\":") + (verdict.reason.ok() ? "true" : "false");
  if (!verdict.reason.ok()) {
    out += ",\"scan_error\":";
    AppendErrorJson(verdict.reason, ErrorHasOffset(verdict.reason.code), &out);
  }
  if (verdict.verdict == FileVerdict::kNeedsKey) AppendKeyPaths(verdict, &out);
  AppendGlobalsAndStorages(verdict.scan, &out);
  AppendTensors(verdict.scan, &out);
  return out + "}";
}

// AddPickleReport adds one pickle-bearing file's report. Its verdict is the scan's own
// (VerdictForPickle: clean and needs-key valid), or with require_convertible invalid for a
// safe file that would not convert as it is.
void AddPickleReport(const std::string& path, const PickleFileReport& verdict,
                     const ScanInputOptions& options, const OutputOptions& output,
                     InputReport* report) {
  CheckResult result = ResultForPickle(path, verdict);
  if (result.verdict == Verdict::kValid && options.require_convertible &&
      !verdict.reason.ok()) {
    result.verdict = Verdict::kInvalid;
    result.error = verdict.reason;
  }
  if (output.json) {
    report->lines.push_back(ScanReportJson(result, verdict));
  } else {
    AddReportText(path, verdict, report);
  }
  AddFinding(result, report);
  report->verdict = WorseVerdict(report->verdict, result.verdict);
}

// AddNumpyReport: an .npy or .npz file holds a pickle only as an object array, which is
// refused (it would run code); otherwise it is judged as check judges it.
void AddNumpyReport(const std::string& path, std::span<const std::byte> bytes, Format format,
                    const OutputOptions& output, InputReport* report) {
  const bool npz = format == Format::kNpz;
  const Error error = npz ? ParseNpz(bytes).error() : ParseNpy(bytes, bytes.size()).error();
  const bool runs_code = error.code == ErrorCode::kNpyObjectArray;
  CheckResult result;  // the front door's envelope, then scan's own field
  result.file = path;
  result.format = format;
  result.verdict = VerdictForError(error);
  result.error = error;
  if (output.json) {
    std::string out = "{";
    AppendResultJson(result, &out);
    out += std::string(",\"pickle\":") + (runs_code ? "true" : "false");
    report->lines.push_back(out + "}");
  } else {
    const std::string verdict =
        error.ok()  ? "no pickle: plain arrays, nothing to run"
        : runs_code ? "REFUSED: an object array is a pickle that would run code: " +
                          error.ToString()
                    : "INVALID: " + error.ToString();
    report->lines.push_back(PrintableText(path) + ": " + std::string(FormatName(format)) + ": " +
                            verdict);
  }
  AddFinding(result, report);
  report->verdict = WorseVerdict(report->verdict, result.verdict);
}

// ScanFile maps the file once: the sniff and then the static scan (or the npy/npz reader)
// read that one mapping.
void ScanFile(const std::string& path, const ScanInputOptions& options, const OutputOptions& output,
              InputReport* report) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) {  // reported as the scan reports a file it cannot read
    AddPickleReport(path, JudgePickleFile(path, options.torch), options, output, report);
    return;
  }
  const std::span<const std::byte> bytes = (*file)->bytes();
  if (const Format format = SniffFormat(bytes);
      format == Format::kNpy || format == Format::kNpz) {
    AddNumpyReport(path, bytes, format, output, report);
  } else {
    AddPickleReport(path, JudgePickleMapped(**file, options.torch), options, output, report);
  }
}

// ScanFolder walks a folder and reports every pickle-bearing file in it; a folder with
// none says so (silence would read as "scanned and fine" or as "did not run").
void ScanFolder(const std::string& path, const ScanInputOptions& options,
                const OutputOptions& output, InputReport* report) {
  FolderScanOptions folder_options;
  folder_options.torch = options.torch;
  folder_options.allow_external_symlinks = options.allow_external_symlinks;
  const FolderScanReport scanned = ScanFolderForPickles(path, folder_options);
  for (const FolderScanEntry& entry : scanned.files) {
    AddPickleReport((path.ends_with('/') ? path : path + "/") + entry.name, entry.report,
                    options, output, report);
  }
  CheckResult result;
  result.file = path;
  result.is_folder = true;
  result.verdict = Verdict::kValid;
  if (!scanned.error.ok()) {  // the walk's own error (a bound, an unreadable folder)
    result.verdict = VerdictForError(scanned.error);
    result.error = scanned.error;
    if (output.json) {
      std::string line = "{";
      AppendResultJson(result, &line);
      report->lines.push_back(line + "}");
    } else {
      report->errors.push_back("stguard scan: " + PrintableText(path) + ": " +
                               std::string(VerdictName(result.verdict)) + ": " +
                               ErrorText(path, scanned.error));
    }
    AddFinding(result, report);
    report->verdict = WorseVerdict(report->verdict, result.verdict);
  } else if (scanned.files.empty()) {
    constexpr char kNone[] = "no pickle-bearing files (subfolders included)";
    if (output.json) {
      std::string line = "{";
      AppendResultJson(result, &line);
      line += ",\"pickle_files\":0,\"note\":";
      AppendJsonString(kNone, &line);
      report->lines.push_back(line + "}");
    } else {
      report->lines.push_back(PrintableText(path) + ": " + kNone);
    }
  }
}

// AddResultOnly reports a result the scan adds nothing to: an input that could not be
// read (verdict error), or a file no pickle can be in.
void AddResultOnly(const CheckResult& result, const OutputOptions& output,
                   InputReport* report) {
  if (output.json) {
    std::string line = "{";
    AppendResultJson(result, &line);
    report->lines.push_back(line + ",\"pickle\":false}");
  } else if (result.verdict == Verdict::kError) {
    report->errors.push_back("stguard scan: " + PrintableText(result.file) + ": error: " +
                             ErrorText(result.file, result.error));
  } else {
    report->lines.push_back(PrintableText(result.file) + ": " +
                            std::string(FormatName(result.format)) + ": " +
                            (result.valid() ? "no pickle: nothing to run"
                                            : std::string(VerdictName(result.verdict)) + ": " +
                                                  ErrorText(result.file, result.error)));
  }
  AddFinding(result, report);
  report->verdict = WorseVerdict(report->verdict, result.verdict);
}

// ScanRemote scans a URL (a file, or a whole hf:// repo) from what check reads of it by
// range requests (CheckPath): the same static scan of each pickle-bearing file.
void ScanRemote(const std::string& url, const ScanInputOptions& options,
                const OutputOptions& output, InputReport* report) {
  CheckOptions check;
  check.torch = options.torch;
  const CheckResult result = CheckPath(url, check);
  if (result.pickle) {
    AddPickleReport(url, *result.pickle, options, output, report);
    return;
  }
  if (!result.is_folder || result.verdict == Verdict::kError) {
    AddResultOnly(result, output, report);
    return;
  }
  size_t pickles = 0;
  for (const CheckResult& file : result.files) {
    if (!file.pickle) continue;
    AddPickleReport(url + "/" + file.file, *file.pickle, options, output, report);
    ++pickles;
  }
  if (pickles == 0) {
    constexpr char kNone[] = "no pickle-bearing files (subfolders included)";
    CheckResult folder;
    folder.file = url;
    folder.is_folder = true;
    folder.verdict = Verdict::kValid;
    if (output.json) {
      std::string line = "{";
      AppendResultJson(folder, &line);
      line += ",\"pickle_files\":0,\"note\":";
      AppendJsonString(kNone, &line);
      report->lines.push_back(line + "}");
    } else {
      report->lines.push_back(PrintableText(url) + ": " + kNone);
    }
  }
}

}  // namespace

InputReport ScanInput(const std::string& path, const ScanInputOptions& options,
                      const OutputOptions& output) {
  InputReport report;
  struct stat info;
  if (IsRemoteInput(path)) {
    ScanRemote(path, options, output, &report);
  } else if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    ScanFolder(path, options, output, &report);
  } else {
    ScanFile(path, options, output, &report);
  }
  return report;
}

}  // namespace stguard
