// SPDX-License-Identifier: Apache-2.0
// `stguard convert`'s one result, printed as text or as the JSON envelope.
#include "convert_result.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "output.h"
#include "stguard/json_escape.h"
#include "verdict_output.h"

namespace stguard::cli {
namespace {

// InputEnvelope starts IN's envelope: its path and the format the conversion found
// (ConvertReport::input: a folder is "folder"; a path that cannot be read is "unknown").
CheckResult InputEnvelope(const std::string& in, const PathFormat& format) {
  CheckResult input;
  input.file = in;
  input.is_folder = format.is_folder;
  if (!input.is_folder) input.format = format.format;
  return input;
}

// WrittenFiles lists what OUT holds after a conversion: OUT itself, or a folder's files
// (an output folder must be new or empty, so every file in it was written by this run).
std::vector<std::string> WrittenFiles(const std::string& out) {
  std::error_code ignored;
  if (!std::filesystem::is_directory(out, ignored)) return {out};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(out, ignored)) {
    if (entry.is_regular_file(ignored)) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void AppendTextArray(const std::vector<std::string>& texts, std::string* out) {
  *out += "[";
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) *out += ",";
    AppendJsonText(texts[i], out);
  }
  *out += "]";
}

void PrintJson(const ConvertResult& result) {
  std::string line = "{";
  AppendResultJson(result.input, &line);
  line += ",\"output\":";
  AppendTextArray(result.input.valid() ? WrittenFiles(result.out) : std::vector<std::string>{},
                  &line);
  line += ",\"tensors\":" + std::to_string(result.input.valid() ? result.tensors : 0) +
          ",\"notes\":";
  std::vector<std::string> notes = result.details;
  notes.insert(notes.end(), result.warnings.begin(), result.warnings.end());
  AppendTextArray(notes, &line);
  PrintLine(line + "}");
}

void PrintText(const ConvertResult& result) {
  for (const std::string& warning : result.warnings) PrintErrorLine(warning);
  if (!result.input.valid()) {
    std::fputs(result.failure_line.c_str(), stderr);
    return;
  }
  // When the file itself went to standard output, every line for a person goes to stderr.
  const auto print = result.summary_on_stderr ? PrintErrorLine : PrintLine;
  for (const std::string& detail : result.details) print(detail);
  print(result.summary);
}

}  // namespace

ConvertResult ConvertFailed(const std::string& in, const PathFormat& format,
                            const std::string& about, const Error& error, Verdict verdict) {
  ConvertResult result;
  result.input = InputEnvelope(in, format);
  result.input.verdict = verdict;
  // An error about OUT names OUT's folder when that is what is missing, never a
  // temporary file's name.
  result.input.error = about == in ? error : AboutOutput(about, error);
  // The verdict's own word: "refused:" for a refusal, as check says it.
  result.failure_line = "stguard convert: " + PrintableText(about) + ": " +
                        std::string(VerdictName(result.input.verdict)) + ": " +
                        ErrorText(about, result.input.error) + "\n";
  return result;
}

ConvertResult ConvertUnusable(const std::string& in, const PathFormat& format,
                              const std::string& message) {
  ConvertResult result;
  result.input = InputEnvelope(in, format);
  result.input.verdict = Verdict::kError;
  result.input.error =
      Error{ErrorCode::kInvalidArgument, 0, "the conversion cannot be done as asked", message};
  result.failure_line = "stguard convert: " + message + "\n";
  return result;
}

ConvertResult Converted(const std::string& in, const PathFormat& format, const std::string& out,
                        uint64_t tensors, std::string summary) {
  ConvertResult result;
  result.input = InputEnvelope(in, format);
  result.input.verdict = Verdict::kValid;
  result.out = out;
  result.tensors = tensors;
  result.summary = std::move(summary);
  return result;
}

int PrintConvertResult(const ConvertResult& result, bool json) {
  if (json) {
    PrintJson(result);
  } else {
    PrintText(result);
  }
  return result.input.exit_status();
}

}  // namespace stguard::cli
