// SPDX-License-Identifier: Apache-2.0
// `stguard inspect` on a PyTorch checkpoint or pickle: the scan's tensors as a table or JSON.
#include "pickle_output.h"

#include <algorithm>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "stguard/dtype.h"
#include "stguard/file_verdict.h"
#include "verdict_output.h"

namespace stguard::cli {
namespace {

void PrintText(const CheckResult& result, const PickleFileReport& report) {
  PrintLine("file: " + PrintableText(result.file));
  PrintLine("format: " + std::string(FormatName(result.format)));
  PrintLine("scan: " + DescribeVerdict(report));
  const std::vector<std::string> headings = {"name", "dtype", "shape", "bytes"};
  std::vector<std::vector<std::string>> rows;
  rows.reserve(report.scan.tensors.size());
  uint64_t bytes = 0;
  for (const TorchTensor& tensor : report.scan.tensors) {
    rows.push_back({PrintableText(tensor.name), std::string(DtypeName(tensor.dtype)),
                    ShapeText(tensor.shape), std::to_string(tensor.byte_len)});
    bytes += tensor.byte_len;
  }
  const std::vector<size_t> widths = ColumnWidths(headings, rows);
  PrintLine("tensors (pickle order):");
  PrintLine(FormatRow(headings, widths));
  for (const std::vector<std::string>& row : rows) PrintLine(FormatRow(row, widths));
  PrintLine("totals: " + std::to_string(rows.size()) + " tensors, " + std::to_string(bytes) +
            " data bytes");
}

void PrintJson(const CheckResult& result, const PickleFileReport& report) {
  JsonStreamOut stream;
  std::string& out = stream.text();
  out = "{";
  AppendResultJson(result, &out);
  out += ",\"scan_verdict\":";
  AppendJsonString(FileVerdictName(report.verdict), &out);
  out += ",\"tensors\":[";
  uint64_t bytes = 0;
  for (size_t i = 0; i < report.scan.tensors.size(); ++i) {
    const TorchTensor& tensor = report.scan.tensors[i];
    out += i == 0 ? "{\"name\":" : ",{\"name\":";
    AppendJsonText(tensor.name, &out);
    out += ",\"dtype\":";
    AppendJsonString(DtypeName(tensor.dtype), &out);
    out += ",\"shape\":" + ShapeText(tensor.shape, ",") +
           ",\"bytes\":" + std::to_string(tensor.byte_len) + "}";
    bytes += tensor.byte_len;
    stream.Flush();
  }
  out += "],\"totals\":{\"tensors\":" + std::to_string(report.scan.tensors.size()) +
         ",\"bytes\":" + std::to_string(bytes) + "}}\n";
  stream.Flush(/*force=*/true);
}

}  // namespace

int InspectPickle(const CheckResult& result, bool json) {
  if (json) {
    PrintJson(result, *result.pickle);
  } else {
    PrintText(result, *result.pickle);
  }
  return kExitOk;
}

}  // namespace stguard::cli
