// SPDX-License-Identifier: Apache-2.0
// stguard scan FILE|DIR [--json] [--key NAME]... [--max-output-ratio N]
//                       [--allow-external-symlinks] [--require-convertible]: the static
// report on PyTorch checkpoints (format, verdict, globals, tensors, storages, first
// refusal). A folder is walked with its subfolders and every pickle-bearing file in it is
// scanned, recognised by content whatever its name (ScanFolderForPickles). Exit 0 when
// every file is safe to load (clean or needs-key), 1 when one names code or cannot be
// proven safe, 2 on usage or I/O errors; with --require-convertible, 1 also when a file
// would not convert as it is. Over several files the worst verdict decides (refused,
// invalid, error, valid: stguard/verdict.h).
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

// PrintReport prints one file's report and folds its verdict into *worst (WorseVerdict):
// the scan's own (VerdictForPickle: clean and needs-key valid), or with
// --require-convertible invalid for a safe file that would not convert as it is.
void PrintReport(const std::string& path, const PickleFileReport& report,
                 const ScanOutput& output, Verdict* worst) {
  if (output.json) {
    PrintReportJson(path, report);
  } else {
    PrintReportText(path, report);
  }
  Verdict verdict = IsIoError(report.reason) ? Verdict::kError : VerdictForPickle(report);
  if (verdict == Verdict::kValid && output.require_convertible && !report.reason.ok()) {
    verdict = Verdict::kInvalid;
  }
  *worst = WorseVerdict(*worst, verdict);
}

// ScanFolder walks a folder and reports every pickle-bearing file in it.
void ScanFolder(const std::string& path, const FolderScanOptions& options,
                const ScanOutput& output, Verdict* worst) {
  const bool json = output.json;
  const FolderScanReport report = ScanFolderForPickles(path, options);
  for (const FolderScanEntry& entry : report.files) {
    PrintReport((path.ends_with('/') ? path : path + "/") + entry.name, entry.report, output,
                worst);
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
    *worst = WorseVerdict(*worst, result.verdict);
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
              Verdict* worst) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) {  // reported as the scan reports a file it cannot read
    PrintReport(path, JudgePickleFile(path, options), output, worst);
    return;
  }
  const std::span<const std::byte> bytes = (*file)->bytes();
  if (const Format format = SniffFormat(bytes);
      format == Format::kNpy || format == Format::kNpz) {  // npy_output.cc
    // ScanNumpyFile gives an exit status; 1 is as bad as a refusal's for the total.
    const int status = ScanNumpyFile(path, bytes, format == Format::kNpz, output.json);
    *worst = WorseVerdict(*worst, status == kExitOk        ? Verdict::kValid
                                  : status == kExitInvalid ? Verdict::kInvalid
                                                           : Verdict::kError);
  } else {
    PrintReport(path, JudgePickleMapped(**file, options), output, worst);
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
  // The exit status is the worst verdict's (stguard/verdict.h), not the largest number:
  // a file that cannot be read does not hide one that would run code.
  Verdict worst = Verdict::kValid;
  for (const std::string& path : paths) {
    struct stat info;
    if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      ScanFolder(path, folder_options, output, &worst);
    } else {
      ScanFile(path, options, output, &worst);
    }
  }
  return VerdictExitStatus(worst);
}

}  // namespace stguard::cli
