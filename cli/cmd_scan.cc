// SPDX-License-Identifier: Apache-2.0
// stguard scan FILE|DIR [--json] [--key NAME]... [--max-output-ratio N]: the static report on PyTorch checkpoints
// (format, globals with verdicts, tensors, storages, first refusal). A folder is scanned
// file by file (*.bin, *.pt, *.pth, *.ckpt, *.pkl, *.pickle). Exit 0 when every file would
// convert cleanly, 1 when anything is refused, 2 on usage or I/O errors.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "arguments.h"
#include "commands.h"
#include "output.h"
#include "stguard/json_escape.h"
#include "stguard/torch_checkpoint.h"

namespace stguard::cli {
namespace {

constexpr char kScanUsage[] =
    "usage: stguard scan [--json] [--key NAME]... [--max-output-ratio N] FILE|DIR...\n"
    "  --key NAME            select root[NAME] as the state dict; repeat for deeper levels\n"
    "  --max-output-ratio N  refuse views asking for more than N x the file's size in\n"
    "                        output bytes (default 4; 0: no bound)\n";

constexpr std::string_view kScanSuffixes[] = {".bin", ".pt", ".pth", ".ckpt", ".pkl",
                                              ".pickle"};

void PrintReportText(const std::string& path, const TorchScanReport& report) {
  std::string head = PrintableText(path) + ": " + std::string(TorchFormatName(report.format));
  head += report.error.ok() ? ": ok" : ": refused: " + report.error.ToString();
  PrintLine(head);
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

void PrintReportJson(const std::string& path, const TorchScanReport& report) {
  std::string out = "{\"file\":";
  AppendJsonString(path, &out);
  out += ",\"format\":";
  AppendJsonString(TorchFormatName(report.format), &out);
  out += ",\"ok\":";
  out += report.error.ok() ? "true" : "false";
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
  if (!report.error.ok()) {
    out += ",\"error\":";
    AppendErrorJson(report.error, &out);
  }
  PrintLine(out + "}");
}

std::string Lowercase(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

}  // namespace

int RunScan(Args args) {
  bool json = false;
  TorchOptions options;
  const Flag flags[] = {{"--json", &json}};
  std::string max_output_ratio;
  const ValueOption values[] = {{.name = "--key", .values = &options.key_path},
                                {.name = "--max-output-ratio", .value = &max_output_ratio}};
  std::vector<std::string_view> operands;
  if (auto stop = ParseArguments(args, {"scan", kScanUsage, flags, values}, &operands)) {
    return *stop;
  }
  if (!max_output_ratio.empty()) {
    const std::optional<uint64_t> ratio = ParseCount(max_output_ratio);
    if (!ratio) {
      std::fprintf(stderr, "stguard scan: --max-output-ratio takes a count, not '%s'\n%s",
                   PrintableText(max_output_ratio).c_str(), kScanUsage);
      return kExitUsage;
    }
    options.max_output_ratio = *ratio;
  }
  const std::vector<std::string> paths(operands.begin(), operands.end());
  if (paths.empty()) {
    std::fputs(kScanUsage, stderr);
    return kExitUsage;
  }
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    struct stat info;
    if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      std::error_code ec;
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        const std::string name = entry.path().filename().string();
        const std::string lower = Lowercase(name);
        for (std::string_view suffix : kScanSuffixes) {
          if (lower.size() >= suffix.size() &&
              lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0 &&
              entry.is_regular_file(ec)) {
            found.push_back(entry.path().string());
            break;
          }
        }
      }
      if (ec) {
        std::fprintf(stderr, "stguard scan: cannot list '%s'\n", PrintableText(path).c_str());
        return kExitUsage;
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(path);
    }
  }
  int status = kExitOk;
  for (const std::string& file : files) {
    const TorchScanReport report = ScanTorchFile(file, options);
    if (json) {
      PrintReportJson(file, report);
    } else {
      PrintReportText(file, report);
    }
    if (IsIoError(report.error)) {
      status = kExitUsage;
    } else if (!report.error.ok() && status == kExitOk) {
      status = kExitInvalid;
    }
  }
  return status;
}

}  // namespace stguard::cli
