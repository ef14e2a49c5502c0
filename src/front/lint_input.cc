// SPDX-License-Identifier: Apache-2.0
// `lint` on one input as the CLI prints it (stguard/inputs.h): LintPath's result
// (stguard/lint_verdict.h: check first, then the lint rules of src/lint/) as the one JSON
// object every front end forwards (LintJson), or as text lines.
#include "stguard/inputs.h"

#include <optional>
#include <string>
#include <vector>

#include "front/input_report.h"
#include "stguard/json_escape.h"
#include "stguard/lint_verdict.h"
#include "stguard/plural.h"

namespace stguard {
namespace {

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

// AddLintResultText writes the text of a result lint adds nothing to (check did not pass),
// with its warnings.
void AddLintResultText(const CheckResult& result, InputReport* report) {
  report->lines.push_back(ResultLine(result));
  for (const Warning& warning : result.warnings) {
    report->lines.push_back(WarningLine(result.file, warning));
  }
}

}  // namespace

std::string LintJson(const LintOutcome& outcome) {
  std::string line = "{";
  AppendResultJson(outcome.result, &line);
  if (!outcome.linted) {
    // Check did not pass, or lint could not run: the result and check's warnings.
    line += ",";
    AppendWarningsJson(outcome.result.warnings, &line);
    return line + "}";
  }
  const LintReport& lint = outcome.report;
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

InputReport LintInput(const std::string& path, const LintOptions& options,
                      const OutputOptions& output) {
  InputReport report;
  const LintOutcome outcome = LintPath(path, options);
  const CheckResult& result = outcome.result;
  const LintReport& lint = outcome.report;
  report.verdict = result.verdict;
  AddFinding(result, &report);
  if (output.json) {
    report.lines.push_back(LintJson(outcome));
    return report;
  }
  if (!lint.error.ok()) {
    report.errors.push_back("stguard lint: " + PrintableText(path) + ": " +
                            std::string(VerdictName(result.verdict)) + ": " +
                            ErrorText(path, lint.error));
    return report;
  }
  if (!outcome.linted) {
    AddLintResultText(result, &report);
    return report;
  }
  for (const LintFinding& finding : lint.findings) {
    report.lines.push_back(FindingLine(path, finding));
  }
  report.lines.push_back(
      PrintableText(path) + ": " + (result.valid() ? "ok" : "failed") + " (" +
      (lint.family.empty() ? std::string("no family") : "family " + lint.family) + ", " +
      Plural(lint.num_tensors, "tensor") + " in " + Plural(lint.num_shards, "shard") + ", " +
      Plural(lint.num_errors(), "error") + ", " + Plural(lint.num_warnings(), "warning") + ")");
  return report;
}

}  // namespace stguard
