// SPDX-License-Identifier: Apache-2.0
// check, scan and lint over many inputs: the operands and --from's lines, judged by the
// library's per-input function on --jobs threads (stguard/inputs.h RunInputs), printed in
// input order, a summary on standard error, --sarif written.
#ifndef STGUARD_CLI_MANY_INPUTS_H_
#define STGUARD_CLI_MANY_INPUTS_H_

#include <functional>
#include <string>

#include "commands.h"
#include "stguard/inputs.h"

namespace stguard::cli {

// RunManyInputs prints each input's lines (standard output) and errors (standard error) as
// soon as it and every earlier input are judged; with two inputs or more, the summary
// ("10,010 files: ...; 1.4 s") on standard error; with --sarif, the SARIF log. Returns the
// worst verdict's exit status, or 2 when --from cannot be read or the log not written.
int RunManyInputs(std::string_view command, const CommandLine& line,
                  const std::function<InputReport(const std::string& input)>& judge);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_MANY_INPUTS_H_
