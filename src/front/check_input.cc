// SPDX-License-Identifier: Apache-2.0
// `check` on one input, composed whole (stguard/inputs.h): CheckPath's verdict, then its
// JSON object or its text lines.
#include "stguard/inputs.h"

#include <string>
#include <utility>

#include "front/input_report.h"
#include "stguard/json_escape.h"
#include "stguard/writer.h"

namespace stguard {
namespace {

void AppendSummaryJson(const CheckResult& result, std::string* out) {
  *out += ",\"tensors\":" + std::to_string(result.summary.tensors);
  if (!result.is_folder) {
    // A pickle has no header to count.
    if (!result.pickle) *out += ",\"header_bytes\":" + std::to_string(result.summary.header_bytes);
    return;
  }
  *out += ",\"shards\":" + std::to_string(result.summary.shards) +
          ",\"data_bytes\":" + std::to_string(result.summary.data_bytes) + ",\"index\":";
  if (result.summary.index.empty()) {
    *out += "null";
  } else {
    AppendJsonText(result.summary.index, out);
  }
}

// AppendCanonicalJson adds check --canonical's comparison, when one was made.
void AppendCanonicalJson(const CheckResult& result, std::string* out) {
  if (!result.canonical) {
    // A valid file whose canonical header would pass the header cap: no comparison.
    if (result.error.code == ErrorCode::kNotCanonical) {
      *out += ",\"canonical\":false,\"canonical_reason\":\"no-canonical-form\"";
    }
    return;
  }
  const CanonicalDiff& diff = *result.canonical;
  *out += std::string(",\"canonical\":") + (diff.canonical ? "true" : "false");
  if (!diff.canonical) {
    *out += ",\"canonical_reason\":\"" + std::string(CanonicalDiffReasonName(diff.reason)) +
            "\",\"first_difference\":" + std::to_string(diff.offset) +
            ",\"reason_offset\":" + std::to_string(diff.reason_offset);
  }
}

}  // namespace

void AddFinding(const CheckResult& result, InputReport* report) {
  if (result.valid()) return;
  std::string file = result.file;
  if (result.is_folder && !result.member.empty()) {
    // An index names its folder's files: they sit beside it.
    if (file.ends_with(".json")) {
      const size_t slash = file.rfind('/');
      file.resize(slash == std::string::npos ? 0 : slash);
    }
    file += (file.empty() || file.ends_with('/') ? "" : "/") + result.member;
  }
  report->findings.push_back({std::move(file), result.verdict, result.error,
                              ResultOffsetInFile(result)});
}

InputReport CheckInput(const std::string& path, const CheckOptions& options,
                       const OutputOptions& output) {
  const CheckResult result = CheckPath(path, options);
  InputReport report;
  report.verdict = result.verdict;
  AddFinding(result, &report);
  if (output.quiet && result.valid()) return report;
  if (output.json) {
    std::string line = "{";
    AppendResultJson(result, &line);
    if (result.valid()) AppendSummaryJson(result, &line);
    AppendCanonicalJson(result, &line);
    line += ",";
    AppendWarningsJson(result.warnings, &line);
    report.lines.push_back(line + "}");
    return report;
  }
  std::string line = ResultLine(result);
  if (result.valid() && result.canonical) line += "; " + DescribeCanonicalDiff(*result.canonical);
  report.lines.push_back(std::move(line));
  if (!output.quiet) {
    for (const Warning& warning : result.warnings) {
      report.lines.push_back(WarningLine(result.file, warning));
    }
  }
  return report;
}

}  // namespace stguard
