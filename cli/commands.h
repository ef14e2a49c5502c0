// SPDX-License-Identifier: Apache-2.0
// The stguard subcommands. Each takes its own arguments (after the subcommand name) and
// returns the process exit status: 0 success, 1 invalid input, 2 usage or I/O error.
#ifndef STGUARD_CLI_COMMANDS_H_
#define STGUARD_CLI_COMMANDS_H_

#include <span>
#include <string_view>

namespace stguard::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;

using Args = std::span<const std::string_view>;

int RunCheck(Args args);
int RunInspect(Args args);
int RunJson(Args args);
int RunCanon(Args args);  // cmd_canon.cc
int RunConvert(Args args);  // cmd_convert.cc
int RunLint(Args args);     // cmd_lint.cc
int RunScan(Args args);     // cmd_scan.cc
int RunVersion(Args args);  // main.cc: the linked library's version

// cmd_stats.cc: `inspect --stats [--json] FILE|DIR`, dispatched from RunInspect.
int RunInspectStats(Args args);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_COMMANDS_H_
