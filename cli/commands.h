// SPDX-License-Identifier: Apache-2.0
// The stguard subcommands. Each is given its command line already read against the
// command table (command_table.h, arguments.h) and returns the process exit status:
// 0 valid, 1 invalid or refused, 2 usage, I/O or environment error.
#ifndef STGUARD_CLI_COMMANDS_H_
#define STGUARD_CLI_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/dtype.h"

namespace stguard::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;

using Args = std::span<const std::string_view>;

// CommandLine is what one invocation asked for: a field per option of every command,
// each set by its row of the option table (command_table.cc), and the operands in order.
struct CommandLine {
  bool quiet = false;                      // -q, --quiet
  bool json = false;                       // --json
  bool canonical = false;                  // --canonical
  bool aligned = false;                    // --aligned
  bool allow_external_symlinks = false;    // --allow-external-symlinks
  bool require_convertible = false;        // --require-convertible (scan)
  bool stats = false;                      // --stats
  bool drop_aliases = false;               // --drop-aliases
  bool all_metadata = false;               // --all-metadata
  std::optional<Dtype> dtype;              // --dtype
  std::vector<std::string> keys;           // --key, in order
  std::optional<uint64_t> max_output_ratio;  // --max-output-ratio
  std::string name;                        // --name
  std::string config;                      // --config
  std::optional<uint64_t> timeout_seconds;  // --timeout (URL inputs)
  std::optional<uint64_t> jobs;            // --jobs (check, scan, lint)
  std::string from;                        // --from: a file listing inputs, "-" stdin
  std::string sarif;                       // --sarif: the SARIF log to write
  std::vector<std::string_view> given;     // the options given (long names), in order
  std::vector<std::string> operands;       // the operands, in order
};

int RunCheck(const CommandLine& line);    // cmd_check.cc
int RunInspect(const CommandLine& line);  // cmd_inspect.cc
int RunJson(const CommandLine& line);     // cmd_json.cc
int RunCanon(const CommandLine& line);    // cmd_canon.cc
int RunConvert(const CommandLine& line);  // cmd_convert.cc
int RunLint(const CommandLine& line);     // cmd_lint.cc
int RunScan(const CommandLine& line);     // cmd_scan.cc
int RunVersion(const CommandLine& line);  // main.cc: the linked library's version
int RunHelp(const CommandLine& line);     // main.cc: the help of stguard or of one command

// cmd_stats.cc: `inspect --stats [--json] FILE|DIR`, dispatched from RunInspect.
int RunInspectStats(const CommandLine& line);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_COMMANDS_H_
