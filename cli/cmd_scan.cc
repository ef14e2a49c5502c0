// SPDX-License-Identifier: Apache-2.0
// stguard scan FILE|DIR [--json] [--key NAME]... [--max-output-ratio N]
//                       [--allow-external-symlinks] [--require-convertible]: the static
// report on PyTorch checkpoints (format, verdict, globals, tensors, storages, first
// refusal). A folder is walked with its subfolders and every pickle-bearing file in it is
// scanned, recognised by content whatever its name (ScanFolderForPickles). Exit 0 when
// every file is safe to load (clean or needs-key), 1 when one names code or cannot be
// proven safe, 2 on usage or I/O errors; with --require-convertible, 1 also when a file
// would not convert as it is.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "commands.h"
#include "npy_output.h"
#include "output.h"
#include "stguard/file_verdict.h"
#include "stguard/folder_scan.h"
#include "stguard/json_escape.h"
#include "stguard/mapped_file.h"
#include "stguard/sniff.h"
#include "stguard/torch_checkpoint.h"
#include "stguard/verdict.h"
#include "verdict_output.h"

namespace stguard::cli {
namespace {

void PrintReportText(const std::string& path, const PickleFileReport& verdict) {
  const TorchScanReport& report = verdict.scan;
  PrintLine(PrintableText(path) + ": " + std::string(FormatName(verdict.format)) + ": " +
            DescribeVerdict(verdict));
  for (const TorchGlobal& global : report.globals) {
    PrintLine("  global " + PrintableText(global.module + "." + global.name) +
              (global.allowed ? "  allowed" : "  REFUSED") + " (byte " +
              std::to_string(global.offset) + ")");
  }
  for (const TorchStorage& storage : report.storages) {
    PrintLine("  storage " + PrintableText(storage.key) + "  " +
              std::string(DtypeName(storage.dtype)) + " x " +
              std::to_string(storage.num_elements) + "  " + PrintableText(storage.location));
  }
  for (const TorchTensor& tensor : report.tensors) {
    std::string line = "  tensor " + PrintableText(tensor.name) + "  " +
                       std::string(DtypeName(tensor.dtype)) + " " + ShapeText(tensor.shape);
    if (!tensor.contiguous) line += "  strided";
    if (tensor.alias_of) line += "  alias of " + PrintableText(report.tensors[*tensor.alias_of].name);
    PrintLine(line);
  }
}

// PrintReportJson prints the front door's envelope for the file (as `check --json` does),
// then the scan's own fields: the static scan's verdict and container, the key paths a
// needs-key checkpoint offers, and the globals, storages and tensors it found.
void PrintReportJson(const std::string& path, const PickleFileReport& verdict) {
  const TorchScanReport& report = verdict.scan;
  const CheckResult result = ResultForPickle(path, verdict);
  std::string out = "{";
  AppendResultJson(result, &out);
  out += ",";
  AppendWarningsJson(result.warnings, &out);
  out += ",\"scan_verdict\":";
  AppendJsonString(FileVerdictName(verdict.verdict), &out);
  out += ",\"torch_format\":";
  AppendJsonString(TorchFormatName(report.format), &out);
  // Whether the file converts as it is; if not, scan_error says why, also when it is
  // safe to load (a needs-key checkpoint, a bare pickle without tensors): what
  // --require-convertible exits 1 on.
  out += ",\"convertible\":";
  out += verdict.reason.ok() ? "true" : "false";
  if (!verdict.reason.ok()) {
    out += ",\"scan_error\":";
    AppendErrorJson(verdict.reason, &out);
  }
  if (verdict.verdict == FileVerdict::kNeedsKey) {
    out += ",\"key_paths\":[";
    for (size_t k = 0; k < verdict.key_paths.size(); ++k) {
      if (k > 0) out += ',';
      out += '[';
      for (size_t j = 0; j < verdict.key_paths[k].size(); ++j) {
        if (j > 0) out += ',';
        AppendJsonString(verdict.key_paths[k][j], &out);
      }
      out += ']';
    }
    out += ']';
  }
  out += ",\"globals\":[";
  for (size_t k = 0; k < report.globals.size(); ++k) {
    const TorchGlobal& global = report.globals[k];
    if (k > 0) out += ',';
    out += "{\"module\":";
    AppendJsonString(global.module, &out);
    out += ",\"name\":";
    AppendJsonString(global.name, &out);
    out += ",\"allowed\":";
    out += global.allowed ? "true" : "false";
    out += ",\"offset\":" + std::to_string(global.offset) + "}";
  }
  out += "],\"storages\":[";
  for (size_t k = 0; k < report.storages.size(); ++k) {
    const TorchStorage& storage = report.storages[k];
    if (k > 0) out += ',';
    out += "{\"key\":";
    AppendJsonString(storage.key, &out);
    out += ",\"dtype\":";
    AppendJsonString(DtypeName(storage.dtype), &out);
    out += ",\"elements\":" + std::to_string(storage.num_elements) + ",\"location\":";
    AppendJsonString(storage.location, &out);
    out += "}";
  }
  out += "],\"tensors\":[";
  for (size_t k = 0; k < report.tensors.size(); ++k) {
    const TorchTensor& tensor = report.tensors[k];
    if (k > 0) out += ',';
    out += "{\"name\":";
    AppendJsonString(tensor.name, &out);
    out += ",\"dtype\":";
    AppendJsonString(DtypeName(tensor.dtype), &out);
    out += ",\"shape\":" + ShapeText(tensor.shape, ",");
    out += ",\"contiguous\":";
    out += tensor.contiguous ? "true" : "false";
    if (tensor.alias_of) {
      out += ",\"alias_of\":";
      AppendJsonString(report.tensors[*tensor.alias_of].name, &out);
    }
    out += "}";
  }
  out += "]";
  PrintLine(out + "}");
}

// ScanOutput is how reports are printed and what fails the scan.
struct ScanOutput {
  bool json = false;
  bool require_convertible = false;  // exit 1 on a safe file that would not convert
};

// PrintReport prints one file's report and folds its outcome into *status: the
// verdict's own exit status (clean and needs-key 0), or with --require-convertible 1 for
// any file that would not convert as it is.
void PrintReport(const std::string& path, const PickleFileReport& report,
                 const ScanOutput& output, int* status) {
  if (output.json) {
    PrintReportJson(path, report);
  } else {
    PrintReportText(path, report);
  }
  if (IsIoError(report.reason)) {
    *status = kExitUsage;
  } else if ((VerdictFailsFolder(report.verdict) ||
              (output.require_convertible && !report.reason.ok())) &&
             *status == kExitOk) {
    *status = kExitInvalid;
  }
}

// ScanFolder walks a folder and reports every pickle-bearing file in it.
void ScanFolder(const std::string& path, const FolderScanOptions& options,
                const ScanOutput& output, int* status) {
  const bool json = output.json;
  const FolderScanReport report = ScanFolderForPickles(path, options);
  for (const FolderScanEntry& entry : report.files) {
    PrintReport((path.ends_with('/') ? path : path + "/") + entry.name, entry.report, output,
                status);
  }
  if (!report.error.ok()) {
    CheckResult result;  // the walk's own error (a bound, an unreadable folder)
    result.file = path;
    result.is_folder = true;
    result.verdict = VerdictForError(report.error);
    result.error = report.error;
    if (json) {
      std::string line = "{";
      AppendResultJson(result, &line);
      PrintLine(line + "}");
    } else {
      PrintFileError("scan", path, report.error);
    }
    *status = std::max(*status, result.exit_status());
  } else if (report.files.empty()) {
    // Silence would read as "scanned and fine" or as "did not run": say what was found.
    constexpr char kNone[] = "no pickle-bearing files (subfolders included)";
    if (json) {
      std::string line = "{";
      AppendValidEnvelope(path, Format::kUnknown, &line, /*is_folder=*/true);
      line += ",\"pickle_files\":0,\"note\":";
      AppendJsonString(kNone, &line);
      PrintLine(line + "}");
    } else {
      PrintLine(PrintableText(path) + ": " + kNone);
    }
  }
}

// ScanFile maps the file once: the sniff and then the static scan (or the npy/npz reader)
// read that one mapping.
void ScanFile(const std::string& path, const TorchOptions& options, const ScanOutput& output,
              int* status) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) {  // reported as the scan reports a file it cannot read
    PrintReport(path, JudgePickleFile(path, options), output, status);
    return;
  }
  const std::span<const std::byte> bytes = (*file)->bytes();
  if (const Format format = SniffFormat(bytes);
      format == Format::kNpy || format == Format::kNpz) {  // npy_output.cc
    *status = std::max(*status, ScanNumpyFile(path, bytes, format == Format::kNpz, output.json));
  } else {
    PrintReport(path, JudgePickleMapped(**file, options), output, status);
  }
}

}  // namespace

int RunScan(const CommandLine& line) {
  ScanOutput output;
  output.json = line.json;
  output.require_convertible = line.require_convertible;
  TorchOptions options;
  options.key_path = line.keys;
  if (line.max_output_ratio) options.max_output_ratio = *line.max_output_ratio;
  const bool allow_external_symlinks = line.allow_external_symlinks;
  const std::vector<std::string>& paths = line.operands;
  FolderScanOptions folder_options;
  folder_options.torch = options;
  folder_options.allow_external_symlinks = allow_external_symlinks;
  int status = kExitOk;
  for (const std::string& path : paths) {
    struct stat info;
    if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      ScanFolder(path, folder_options, output, &status);
    } else {
      ScanFile(path, options, output, &status);
    }
  }
  return status;
}

}  // namespace stguard::cli
