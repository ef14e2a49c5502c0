// SPDX-License-Identifier: Apache-2.0
// stguard check [-q] [--json] [--canonical] [--aligned] FILE|DIR...: the front door's
// verdict (stguard/verdict.h) on each path, printed; --canonical and --aligned are part of
// that verdict (CheckOptions::require_canonical, ::require_aligned_data).
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "progress.h"
#include "stguard/verdict.h"
#include "stguard/writer.h"
#include "verdict_output.h"

namespace stguard::cli {

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

// PrintCheck prints one path's result and returns its exit status.
int PrintCheck(const CheckResult& result, bool quiet, bool json) {
  const int status = result.exit_status();
  if (quiet && result.valid()) return status;
  if (json) {
    std::string line = "{";
    AppendResultJson(result, &line);
    if (result.valid()) AppendSummaryJson(result, &line);
    AppendCanonicalJson(result, &line);
    line += ",";
    AppendWarningsJson(result.warnings, &line);
    PrintLine(line + "}");
    return status;
  }
  std::string line = ResultLine(result);
  if (result.valid() && result.canonical) line += "; " + DescribeCanonicalDiff(*result.canonical);
  PrintLine(line);
  if (!quiet) {
    for (const Warning& warning : result.warnings) PrintLine(WarningLine(result.file, warning));
  }
  return status;
}

}  // namespace

int RunCheck(const CommandLine& line) {
  const bool quiet = line.quiet;
  const bool json = line.json;
  CheckOptions options;
  options.require_aligned_data = line.aligned;
  options.require_canonical = line.canonical;
  options.allow_external_symlinks = line.allow_external_symlinks;
  // The exit status is the worst verdict's (stguard/verdict.h: refused, invalid, error,
  // valid), not the largest number: an unreadable path does not hide a refused one.
  Verdict worst = Verdict::kValid;
  for (const std::string& file : line.operands) {
    // A folder of many or large files takes a while: its bytes and rate show on a
    // terminal (progress.h), erased before the verdict is printed.
    ProgressBar progress(/*total=*/0, ShowProgress(json, quiet));
    options.progress = [&progress](uint64_t bytes) { progress.Add(bytes); };
    const CheckResult result = CheckPath(std::string(file), options);
    progress.Clear();
    PrintCheck(result, quiet, json);
    worst = WorseVerdict(worst, result.verdict);
  }
  return VerdictExitStatus(worst);
}

}  // namespace stguard::cli
