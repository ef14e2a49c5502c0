// SPDX-License-Identifier: Apache-2.0
// stguard/lint_verdict.h: lint's verdict, in the front door's words (stguard/verdict.h),
// for `stguard lint`, the C API and Python alike.
//
// Lint runs check first (CheckPath): a path check does not find valid keeps check's
// result, and LintModel does not run. On a valid path, lint's findings decide: any error
// finding makes the result invalid with kLintError, naming the first error's rule and
// tensor (and, in a folder, its file as `member`); warnings leave it valid. When lint
// could not run (LintReport::error: a config it cannot read), the result is error (exit
// 2) with that error, whatever its code.
#ifndef STGUARD_LINT_VERDICT_H_
#define STGUARD_LINT_VERDICT_H_

#include <string>

#include "stguard/export.h"
#include "stguard/lint.h"
#include "stguard/verdict.h"

namespace stguard {

// LintVerdict turns check's valid result into lint's, as described above.
STGUARD_API CheckResult LintVerdict(CheckResult checked, const LintReport& report);

// LintOutcome is lint's whole result on one path, for every front end alike.
struct LintOutcome {
  CheckResult result;  // the envelope: check's when not valid, else LintVerdict's
  LintReport report;   // lint's findings and counts (empty when lint did not run)
  bool linted = false;  // LintModel ran to its end: the findings are the result's fields
};

// LintPath is `stguard lint PATH`: CheckPath (with options.dir's allow_external_symlinks),
// then LintChecked.
STGUARD_API LintOutcome LintPath(const std::string& path, const LintOptions& options);

// LintChecked lints a path CheckPath already judged (`checked`; the page checks a folder
// once for both): a result that is not valid stays check's and lint does not run; a valid
// file of a format lint does not read (GGUF, .npy, PyTorch) is a usage error (verdict
// error, kInvalidArgument); otherwise LintModel, and LintVerdict over its report.
STGUARD_API LintOutcome LintChecked(const std::string& path, CheckResult checked,
                                    const LintOptions& options);

// LintJson is the one JSON object `stguard lint --json` prints, which Python and the page
// forward as they get it: the envelope, "ok" and "error" (stguard/inputs.h's
// AppendResultJson), then, when lint ran, "family" (null when none), "tensors", "shards",
// "errors", "warnings" and "findings" (each {"severity","rule","file","tensor","expected",
// "found","transposed","message"}, a shape an array of numbers); when it did not, check's
// "warnings" list.
STGUARD_API std::string LintJson(const LintOutcome& outcome);

}  // namespace stguard

#endif  // STGUARD_LINT_VERDICT_H_
