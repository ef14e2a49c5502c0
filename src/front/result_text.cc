// SPDX-License-Identifier: Apache-2.0
// The front door's result as text and as JSON, the same for check, inspect, lint and scan
// (stguard/inputs.h): every front end prints these, never a copy of its own.
#include "stguard/inputs.h"

#include <string>
#include <string_view>

#include "stguard/file_verdict.h"
#include "stguard/json_escape.h"

namespace stguard {
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

std::string ErrorText(std::string_view path, Error error) {
  // I/O errors name the path in their context ("x: No such file or directory"); the line
  // already begins with it.
  const std::string prefix = std::string(path) + ": ";
  if (!path.empty() && error.context.starts_with(prefix)) {
    error.context.erase(0, prefix.size());
  }
  return error.ToString();
}

std::string ResultLine(const CheckResult& result) {
  std::string line = PrintableText(result.file) + ": ";
  if (!result.valid()) return line + std::string(VerdictName(result.verdict)) + ": " + Why(result);
  std::string detail = result.summary.detail;
  if (!result.summary.index.empty()) detail += ", index " + result.summary.index;
  if (detail.empty() && result.is_folder) {
    detail = std::to_string(result.files.size()) + (result.files.size() == 1 ? " file" : " files");
  }
  // The verdict's word, as for every other verdict ("invalid: ...", "refused: ..."); a
  // remote file's skipped checks are part of it (VerdictLine: the page's wording too).
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

void AppendErrorJson(const Error& error, bool has_offset, std::string* out) {
  *out += "{\"code\":";
  AppendJsonString(ErrorCodeName(error.code), out);
  if (has_offset) *out += ",\"offset\":" + std::to_string(error.offset);
  *out += ",\"message\":";
  AppendJsonString(error.message, out);
  *out += ",\"context\":";
  AppendJsonText(error.context, out);
  *out += ",\"tensor\":";
  AppendJsonText(error.tensor, out);
  *out += "}";
}

void AppendResultJson(const CheckResult& result, std::string* out) {
  AppendEnvelopeJson(result, out);
  *out += std::string(",\"ok\":") + (result.valid() ? "true" : "false");
  if (!result.valid()) {
    *out += ",\"error\":";
    AppendErrorJson(result.error, ResultOffsetInFile(result), out);
  }
}

}  // namespace stguard
