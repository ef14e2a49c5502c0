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

#include "stguard/export.h"
#include "stguard/lint.h"
#include "stguard/verdict.h"

namespace stguard {

// LintVerdict turns check's valid result into lint's, as described above.
STGUARD_API CheckResult LintVerdict(CheckResult checked, const LintReport& report);

}  // namespace stguard

#endif  // STGUARD_LINT_VERDICT_H_
