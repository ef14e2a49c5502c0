// SPDX-License-Identifier: Apache-2.0
// The one table of stguard's commands and options: one row per command, one row per
// option (its name, argument, help text and the input formats it applies to). The
// top-level help, each command's --help, README's command block, the man page stguard(1)
// and the bash completion script are all printed from it (the last two by the build:
// `stguard --man` and `stguard --bash-completion`, see docs.h). Tests keep README equal
// to it, check that every command accepts the options its rows name, and that the man
// page and the completion name every command and option.
//
// ADDING A COMMAND: a CommandRow in kCommandRows, an OptionRow per option, its Run
// function (commands.h), and the README block the test prints when they differ.
#ifndef STGUARD_CLI_COMMAND_TABLE_H_
#define STGUARD_CLI_COMMAND_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "commands.h"
#include "stguard/formats.h"

namespace stguard::cli {

// The formats a command or an option reads are a FormatSet (stguard/formats.h): built
// from the facts of stguard/formats.def (FormatsWith, FormatsOfKind), kFolderInput for a
// model folder or a sharded index. Help names them with FormatSetNames.

// kAnyNumber is a CommandRow's max_operands when it takes any number of them.
inline constexpr size_t kAnyNumber = SIZE_MAX;

// CommandRow is one subcommand ("stguard NAME ...").
struct CommandRow {
  std::string_view name;      // "check"
  std::string_view operands;  // the operands after the options: "FILE|DIR..."
  std::string_view summary;   // one line: what it does
  std::string_view details;   // the operands explained, for --help and the man page
  FormatSet formats;          // what it reads
  size_t min_operands;        // how many operands it needs
  size_t max_operands;        // at most (kAnyNumber: no bound)
  bool last_is_out;           // the last operand is OUT, where "-" is standard output;
                              // "-" anywhere else is refused (no input is read from stdin)
  int (*run)(const CommandLine& line);
};

// ValueKind is what an option takes.
enum class ValueKind : uint8_t {
  kFlag,    // nothing: "--json"
  kText,    // any non-empty text: "--key NAME"
  kCount,   // a decimal count, 0 to 2^64 - 1: "--max-output-ratio N"
  kChoice,  // one of the values its `argument` lists, "|"-separated: "--dtype BF16|F16|F32"
};

// OptionRow is one option of one command.
struct OptionRow {
  std::string_view command;     // the CommandRow it belongs to
  std::string_view name;        // "--json"
  std::string_view short_name;  // "-q", or empty
  std::string_view argument;    // "NAME" for "--key NAME" (the choices for kChoice); empty
                                // for a flag
  ValueKind kind;
  bool repeatable;              // may be given several times, each value kept
  std::string_view help;        // one line
  FormatSet formats;            // the inputs it applies to
  // set records the option in the command line; `value` has been checked against `kind`.
  void (*set)(CommandLine& line, std::string_view value);
};

std::span<const CommandRow> CommandRows();
std::span<const OptionRow> OptionRows();

// FindCommand returns the row named `name`, or nullptr.
const CommandRow* FindCommand(std::string_view name);

// OptionSpelling is how help shows an option: "-q, --quiet", "--key NAME".
std::string OptionSpelling(const OptionRow& option);

// kOptionsEveryCommandTakes are -h/--help and "--" (end of options): the argument walker
// (arguments.h) gives them to every command, so they are listed once, here.
struct CommonOption {
  std::string_view spelling;
  std::string_view help;
};
inline constexpr CommonOption kOptionsEveryCommandTakes[] = {
    {"-h, --help", "show this help and exit"},
    {"--", "end the options: every argument after it is an operand"},
};

// FindOption returns `command`'s row for the option spelled `name` (long or short), or
// nullptr.
const OptionRow* FindOption(std::string_view command, std::string_view name);

// ExitStatusRow is what one exit status means, for every help and the man page.
struct ExitStatusRow {
  int status;
  std::string_view meaning;  // short, for the help's one line
  std::string_view details;  // for the man page
};
inline constexpr ExitStatusRow kExitStatuses[] = {
    {kExitOk, "valid", "every input is valid (and every output was written); for scan, "
     "every file is clean or needs-key: safe to load"},
    {kExitInvalid, "invalid or refused",
     "an input is invalid, or refused (loading it would run code, or it cannot be proven "
     "safe); for scan, a file names code or cannot be proven safe (with "
     "--require-convertible, also one that would not convert as it is)"},
    {kExitUsage, "usage, I/O or environment error",
     "a usage error (an unknown option, an option that does not apply to the input's "
     "format), an I/O error, or the environment (out of memory, a file size limit). Given "
     "several inputs, check and scan exit with the worst verdict's status (refused, "
     "invalid, error, valid): an input that cannot be read does not hide a refused one"},
};

// ExitStatusHelp is the help's line: "exit status: 0 valid, 1 invalid or refused, ...".
std::string ExitStatusHelp();

// kDashHelp says what "-" means where it is written, for every help and the man page.
inline constexpr std::string_view kDashHelp =
    "- as OUT is standard output (not a terminal), for every output that is one file; a\n"
    "folder output refuses it. - as an input is refused: standard input is not supported.\n"
    "Options may come before or after the operands; '--' ends them.";

// Synopsis is a command's one-line usage from its rows:
// "stguard check [-q] [--json] ... FILE|DIR...".
std::string Synopsis(const CommandRow& command);

// CommandBlock is every command's synopsis, summary and options, as README's "Command
// line" block shows them.
std::string CommandBlock();

// TopLevelHelp is `stguard --help`: the usage line, CommandBlock and the exit statuses.
std::string TopLevelHelp();

// CommandHelp is `stguard COMMAND --help` and `stguard help COMMAND`: the synopsis, what
// the command does and reads, its operands, every option explained and the exit statuses.
std::string CommandHelp(const CommandRow& command);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_COMMAND_TABLE_H_
