// SPDX-License-Identifier: Apache-2.0
// stguard lint [--json] [--config PATH] [--allow-external-symlinks] DIR|FILE: argument
// parsing and printing only; the rules live in src/lint/ (stguard/lint.h).
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <utility>

#include "arguments.h"
#include "command_table.h"
#include "commands.h"
#include "output.h"
#include "stguard/json_escape.h"
#include "stguard/lint.h"
#include "stguard/lint_verdict.h"
#include "stguard/verdict.h"
#include "verdict_output.h"

namespace stguard::cli {
namespace {

void AppendShapeOrText(const std::optional<std::vector<uint64_t>>& shape,
                       const std::string& text, std::string* out) {
  if (shape.has_value()) {
    *out += ShapeText(std::span<const uint64_t>(*shape), ",");
  } else {
    AppendJsonString(text, out);
  }
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
  AppendShapeOrText(finding.expected_shape, finding.expected, out);
  *out += ",\"found\":";
  AppendShapeOrText(finding.found_shape, finding.found, out);
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

std::string Count(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace

int RunLint(const CommandLine& command_line) {
  const bool json = command_line.json;
  LintOptions options;
  options.dir.allow_external_symlinks = command_line.allow_external_symlinks;
  options.config_path = command_line.config;
  const std::string& path = command_line.operands[0];

  // Lint runs check first, through the same front door as `check`: a folder check refuses
  // (a malicious pickle beside valid weights) is never "ok" here.
  CheckOptions check;
  check.allow_external_symlinks = options.dir.allow_external_symlinks;
  CheckResult verdict = CheckPath(path, check);
  if (!verdict.valid()) return PrintResult(verdict, /*quiet=*/false, json);
  // A valid file of a format lint does not read (GGUF, .npy, PyTorch), as the check's
  // sniff told it, is a usage error: not a finding that check rejects it, nor a second read.
  const CommandRow& command = *FindCommand("lint");
  if (const FormatSet found = verdict.is_folder ? kFolderInput : FormatOf(path, verdict.format);
      found != 0 && (found & command.formats) == 0) {
    // With --json, the usage error is an envelope too (verdict error, InvalidArgument).
    if (json) {
      const CheckResult usage =
          stguard::UsageError(path, verdict.format, "lint", FormatSetNames(command.formats));
      PrintResult(usage, /*quiet=*/false, /*json=*/true);
    }
    return UsageError(command, "lint reads " + FormatSetNames(command.formats) + ", not " +
                                   FormatSetNames(found) + " (" + PrintableText(path) + ")");
  }

  const LintReport report = LintModel(path, options);
  // The verdict is the library's: check's, then lint's findings, or error when lint
  // could not run (printed as any other result, with the whole envelope).
  const CheckResult result = LintVerdict(std::move(verdict), report);
  if (!report.error.ok()) {
    if (json) return PrintResult(result, /*quiet=*/false, json);
    PrintFileError("lint", path, report.error);
    return result.exit_status();
  }
  const int status = result.exit_status();
  if (json) {
    std::string line = "{";
    AppendResultJson(result, &line);
    line += ",\"family\":";
    if (report.family.empty()) {
      line += "null";
    } else {
      AppendJsonString(report.family, &line);
    }
    line += ",\"tensors\":" + std::to_string(report.num_tensors) +
            ",\"shards\":" + std::to_string(report.num_shards) +
            ",\"errors\":" + std::to_string(report.num_errors()) +
            ",\"warnings\":" + std::to_string(report.num_warnings()) + ",\"findings\":[";
    for (size_t i = 0; i < report.findings.size(); ++i) {
      if (i > 0) line += ",";
      AppendFindingJson(report.findings[i], &line);
    }
    PrintLine(line + "]}");
    return status;
  }
  for (const LintFinding& finding : report.findings) PrintLine(FindingLine(path, finding));
  PrintLine(PrintableText(path) + ": " + (status == kExitOk ? "ok" : "failed") + " (" +
            (report.family.empty() ? std::string("no family") : "family " + report.family) + ", " +
            std::to_string(report.num_tensors) + " tensors in " +
            std::to_string(report.num_shards) + (report.num_shards == 1 ? " shard" : " shards") +
            ", " + Count(report.num_errors(), "error") + ", " +
            Count(report.num_warnings(), "warning") + ")");
  return status;
}

}  // namespace stguard::cli
