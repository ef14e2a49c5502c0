// SPDX-License-Identifier: Apache-2.0
// `lint` on one input, composed whole (stguard/inputs.h): check first, through the same
// front door as `check` (a folder that check refuses is never "ok" here), then the lint
// rules (src/lint/) and their findings as JSON or text.
#include "stguard/inputs.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "front/input_report.h"
#include "stguard/formats.h"
#include "stguard/json_escape.h"
#include "stguard/lint.h"
#include "stguard/lint_verdict.h"
#include "stguard/remote.h"

namespace stguard {
namespace {

// kLinted is what lint reads: safetensors files, model folders and sharded indexes.
constexpr FormatSet kLinted = FormatBit(Format::kSafetensors) | kFolderInput;

void AppendLintShapeOrText(const std::optional<std::vector<uint64_t>>& shape,
                       const std::string& text, std::string* out) {
  if (!shape.has_value()) {
    AppendJsonString(text, out);
    return;
  }
  *out += "[";
  for (size_t i = 0; i < shape->size(); ++i) {
    if (i > 0) *out += ",";
    *out += std::to_string((*shape)[i]);
  }
  *out += "]";
}

void AppendFindingJson(const LintFinding& finding, std::string* out) {
  *out += "{\"severity\":";
  AppendJsonString(LintSeverityName(finding.severity), out);
  *out += ",\"rule\":";
  AppendJsonString(finding.rule, out);
  *out += ",\"file\":";
  AppendJsonString(finding.file, out);
  *out += ",\"tensor\":";
  AppendJsonString(finding.tensor, out);
  // A shape is an array of numbers; any other expectation ("BF16", "absent") a string.
  *out += ",\"expected\":";
  AppendLintShapeOrText(finding.expected_shape, finding.expected, out);
  *out += ",\"found\":";
  AppendLintShapeOrText(finding.found_shape, finding.found, out);
  *out += std::string(",\"transposed\":") + (finding.transposed ? "true" : "false");
  *out += ",\"message\":";
  AppendJsonString(finding.message, out);
  *out += "}";
}

// FindingLine renders "PATH: error: wrong-shape: tensor 'x': expected [a, b], found [b, a]
// (transposed): message".
std::string FindingLine(const std::string& path, const LintFinding& finding) {
  std::string line = PrintableText(path) + ": " + std::string(LintSeverityName(finding.severity)) +
                     ": " + finding.rule + ":";
  if (!finding.file.empty()) line += " file '" + PrintableText(finding.file) + "'";
  if (!finding.tensor.empty()) line += " tensor '" + PrintableText(finding.tensor) + "'";
  if (!finding.expected.empty()) line += " expected " + PrintableText(finding.expected);
  if (!finding.found.empty()) {
    line += (finding.expected.empty() ? " found " : ", found ") + PrintableText(finding.found);
  }
  if (finding.transposed) line += " (transposed)";
  return line + ": " + PrintableText(finding.message);
}

std::string Counted(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string LintReportJson(const CheckResult& result, const LintReport& lint) {
  std::string line = "{";
  AppendResultJson(result, &line);
  line += ",\"family\":";
  if (lint.family.empty()) {
    line += "null";
  } else {
    AppendJsonString(lint.family, &line);
  }
  line += ",\"tensors\":" + std::to_string(lint.num_tensors) +
          ",\"shards\":" + std::to_string(lint.num_shards) +
          ",\"errors\":" + std::to_string(lint.num_errors()) +
          ",\"warnings\":" + std::to_string(lint.num_warnings()) + ",\"findings\":[";
  for (size_t i = 0; i < lint.findings.size(); ++i) {
    if (i > 0) line += ",";
    AppendFindingJson(lint.findings[i], &line);
  }
  return line + "]}";
}

// AddLintResultOnly writes a result lint adds nothing to (check did not pass, or lint could
// not run), with its warnings.
void AddLintResultOnly(const CheckResult& result, const OutputOptions& output,
                   InputReport* report) {
  if (output.json) {
    std::string line = "{";
    AppendResultJson(result, &line);
    line += ",";
    AppendWarningsJson(result.warnings, &line);
    report->lines.push_back(line + "}");
    return;
  }
  report->lines.push_back(ResultLine(result));
  for (const Warning& warning : result.warnings) {
    report->lines.push_back(WarningLine(result.file, warning));
  }
}

// LintKept lints the checkpoint the check kept (a folder's or one file's headers, taken
// out of *result), read again only when lint's reader options differ from the check's.
LintReport LintKept(const std::string& path, CheckResult* result, const LintOptions& options) {
  const std::shared_ptr<const CheckpointDir> folder = std::move(result->checkpoint_dir);
  const std::shared_ptr<const Checkpoint> file = std::move(result->checkpoint);
  const Options& reader = options.dir.reader;
  const bool as_checked = reader.max_header_len == Options{}.max_header_len &&
                          reader.require_aligned_data == CheckOptions{}.require_aligned_data;
  if (as_checked && folder != nullptr) return LintModel(*folder, options);
  // A URL has no folder to find config.json in: LintModel(path) says so.
  if (as_checked && file != nullptr && !IsRemoteInput(path)) {
    return LintModel(path, *file, options);
  }
  return LintModel(path, options);
}

}  // namespace

InputReport LintInput(const std::string& path, const LintOptions& options,
                      const OutputOptions& output) {
  InputReport report;
  CheckOptions check;
  check.allow_external_symlinks = options.dir.allow_external_symlinks;
  check.keep_reader = true;  // the headers check validated: lint reads none a second time
  CheckResult result = CheckPath(path, check);
  // A valid file of a format lint does not read (GGUF, .npy, PyTorch), as the check's
  // sniff told it, is a usage error: not a finding that check rejects it, nor a second read.
  if (result.valid() && !result.is_folder) {
    const Result<PathFormat> found = FormatOfPath(path, result.format);
    if (found.ok() && (found->set() & kLinted) == 0) {
      result = UsageError(path, result.format, "lint", "safetensors files and model folders");
      result.error.context = "lint reads " + FormatSetNames(kLinted) + ", not " +
                             FormatSetNames(found->set());
    }
  }
  if (!result.valid()) {
    report.verdict = result.verdict;
    AddFinding(result, &report);
    AddLintResultOnly(result, output, &report);
    return report;
  }
  const LintReport lint = LintKept(path, &result, options);
  // The verdict is the library's: check's, then lint's findings, or error when lint
  // could not run.
  result = LintVerdict(std::move(result), lint);
  report.verdict = result.verdict;
  AddFinding(result, &report);
  if (!lint.error.ok()) {
    if (output.json) {
      AddLintResultOnly(result, output, &report);
    } else {
      report.errors.push_back("stguard lint: " + PrintableText(path) + ": " +
                              std::string(VerdictName(result.verdict)) + ": " +
                              ErrorText(path, lint.error));
    }
    return report;
  }
  if (output.json) {
    report.lines.push_back(LintReportJson(result, lint));
    return report;
  }
  for (const LintFinding& finding : lint.findings) {
    report.lines.push_back(FindingLine(path, finding));
  }
  report.lines.push_back(
      PrintableText(path) + ": " + (result.valid() ? "ok" : "failed") + " (" +
      (lint.family.empty() ? std::string("no family") : "family " + lint.family) + ", " +
      std::to_string(lint.num_tensors) + " tensors in " + std::to_string(lint.num_shards) +
      (lint.num_shards == 1 ? " shard" : " shards") + ", " + Counted(lint.num_errors(), "error") +
      ", " + Counted(lint.num_warnings(), "warning") + ")");
  return report;
}

}  // namespace stguard
