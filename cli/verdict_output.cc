// SPDX-License-Identifier: Apache-2.0
// The front door's result, printed the same way by check, inspect, lint and scan.
#include "verdict_output.h"

#include <string>

#include "output.h"
#include "stguard/file_verdict.h"

namespace stguard::cli {
namespace {

// Why explains a result that is not valid: the pickle scan's own sentence for a
// pickle-bearing file (a folder's member included), else the error.
std::string Why(const CheckResult& result) {
  const CheckResult* about = &result;
  if (result.is_folder && !result.member.empty()) {
    for (const CheckResult& file : result.files) {
      if (file.file == result.member) about = &file;
    }
  }
  if (about->pickle && about->verdict != Verdict::kError) {
    const std::string sentence = DescribeVerdict(*about->pickle);
    return about == &result ? sentence : "file '" + PrintableText(about->file) + "': " + sentence;
  }
  return ErrorText(result.file, result.error);
}

}  // namespace

std::string ResultLine(const CheckResult& result) {
  std::string line = PrintableText(result.file) + ": ";
  if (!result.valid()) return line + std::string(VerdictName(result.verdict)) + ": " + Why(result);
  std::string detail = result.summary.detail;
  if (!result.summary.index.empty()) detail += ", index " + result.summary.index;
  if (detail.empty() && result.is_folder) {
    detail = Plural(result.files.size(), "file");
  }
  // The verdict's word, as for every other verdict ("invalid: ...", "refused: ..."); a
  // remote file's skipped checks are part of it (the library's wording, as on the page).
  return line + PrintableText(VerdictLine(result)) +
         (detail.empty() ? "" : ": " + PrintableText(detail));
}

std::string WarningLine(const std::string& path, const Warning& warning) {
  std::string line = PrintableText(path) + ": warning: " +
                     std::string(WarningKindName(warning.kind)) + ": " +
                     PrintableText(warning.file);
  if (!warning.tensor.empty()) line += " (tensor '" + PrintableText(warning.tensor) + "')";
  return line + ": " + PrintableText(warning.message);
}

void AppendResultJson(const CheckResult& result, std::string* out) {
  AppendEnvelopeJson(result, out);
  *out += std::string(",\"ok\":") + (result.valid() ? "true" : "false");
  if (!result.valid()) {
    *out += ",\"error\":";
    AppendErrorJson(result.error, ResultOffsetInFile(result), out);
  }
}

void AppendValidEnvelope(const std::string& path, Format format, std::string* out,
                         bool is_folder) {
  CheckResult result;
  result.file = path;
  result.format = format;
  result.is_folder = is_folder;
  result.verdict = Verdict::kValid;
  AppendResultJson(result, out);
}

int PrintResult(const CheckResult& result, bool quiet, bool json) {
  const int status = result.exit_status();
  if (quiet && result.valid()) return status;
  if (json) {
    std::string line = "{";
    AppendResultJson(result, &line);
    line += ",";
    AppendWarningsJson(result.warnings, &line);
    PrintLine(line + "}");
    return status;
  }
  PrintLine(ResultLine(result));
  if (!quiet) {
    for (const Warning& warning : result.warnings) PrintLine(WarningLine(result.file, warning));
  }
  return status;
}

}  // namespace stguard::cli
