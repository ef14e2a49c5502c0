// SPDX-License-Identifier: Apache-2.0
// What the per-input functions (check_input.cc, scan_input.cc, lint_input.cc) share.
#ifndef STGUARD_SRC_FRONT_INPUT_REPORT_H_
#define STGUARD_SRC_FRONT_INPUT_REPORT_H_

#include "stguard/inputs.h"

namespace stguard {

// AddFinding appends `result` to report->findings when it is not valid, naming the file
// at fault (for a folder: the folder's path joined with the member's name, when one is).
void AddFinding(const CheckResult& result, InputReport* report);

}  // namespace stguard

#endif  // STGUARD_SRC_FRONT_INPUT_REPORT_H_
