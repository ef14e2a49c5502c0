// SPDX-License-Identifier: Apache-2.0
// One argument walker for every subcommand, so that they all treat "--", -h/--help,
// unknown options and options with values the same way.
#ifndef STGUARD_CLI_ARGUMENTS_H_
#define STGUARD_CLI_ARGUMENTS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"

namespace stguard::cli {

// Flag is an option without a value ("--json"): present sets *value to true.
struct Flag {
  std::string_view name;
  bool* value;
};

// ValueOption is an option with a value, given as "--key VALUE" or "--key=VALUE". The
// value may not be empty. With `value`, given twice, the last one wins; with `values`, the
// option may be repeated and each value is appended.
struct ValueOption {
  std::string_view name;
  std::string* value = nullptr;
  std::vector<std::string>* values = nullptr;
};

// CommandSyntax is what a subcommand accepts.
struct CommandSyntax {
  std::string_view command;                  // for messages: "stguard COMMAND: ..."
  const char* usage;                         // printed for -h/--help and after errors
  std::span<const Flag> flags = {};
  std::span<const ValueOption> values = {};
};

// ParseArguments walks `args`: options and operands may come in any order; "--" ends the
// options (a file named "-x" is then an operand); "-" alone is an operand. It returns
// the exit status when the command must stop now: 0 after printing the usage to stdout
// for -h/--help; kExitUsage after printing what was wrong (an unknown option, shown
// escaped since it may hold anything, or a value option without its value) and the usage
// to stderr. Otherwise it returns nullopt with the operands in *operands, in order.
std::optional<int> ParseArguments(Args args, const CommandSyntax& syntax,
                                  std::vector<std::string_view>* operands);

// ParseCount reads an option's decimal count: digits only (no sign, space or suffix),
// at most 2^64 - 1; nullopt otherwise.
std::optional<uint64_t> ParseCount(std::string_view text);

// IsOption says whether a command-line argument is an option: "-" alone is a file name
// (standard output where a command takes OUT), and everything after "--" is a file name.
inline bool IsOption(std::string_view arg) { return arg.size() > 1 && arg[0] == '-'; }

}  // namespace stguard::cli

#endif  // STGUARD_CLI_ARGUMENTS_H_
