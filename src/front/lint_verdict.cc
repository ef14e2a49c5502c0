// SPDX-License-Identifier: Apache-2.0
// Lint's verdict in the front door's words (see stguard/lint_verdict.h).
#include "stguard/lint_verdict.h"

#include <string>
#include <utility>

namespace stguard {

CheckResult LintVerdict(CheckResult checked, const LintReport& report) {
  if (!report.error.ok()) {
    // Lint could not run (config.json or --config unreadable or not JSON): no verdict on
    // the model, whatever the code would mean for a file.
    checked.verdict = Verdict::kError;
    checked.error = report.error;
    checked.member = report.error.file;
    return checked;
  }
  if (report.num_errors() == 0) return checked;
  for (const LintFinding& finding : report.findings) {
    if (finding.severity != LintSeverity::kError) continue;
    checked.verdict = Verdict::kInvalid;
    checked.error = Error{ErrorCode::kLintError, 0, "lint found errors",
                          std::to_string(report.num_errors()) + " error" +
                              (report.num_errors() == 1 ? "" : "s") + ", the first: " +
                              finding.rule,
                          finding.tensor, finding.file};
    if (checked.is_folder) checked.member = finding.file;
    break;
  }
  return checked;
}

}  // namespace stguard
