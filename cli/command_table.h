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

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "commands.h"

namespace stguard::cli {

// Format is one kind of input a command reads; Formats is a set of them.
enum Format : uint8_t {
  kSafetensors = 1 << 0,  // a .safetensors file
  kFolder = 1 << 1,       // a checkpoint folder or a *.safetensors.index.json
  kTorch = 1 << 2,        // a PyTorch checkpoint (.bin .pt .pth .ckpt) or a folder of them
  kJsonText = 1 << 3,     // any JSON text
  kGguf = 1 << 4,         // a GGUF file (llama.cpp), told by its magic
  kNpy = 1 << 5,          // a NumPy .npy file, told by its magic
};
using Formats = uint8_t;

// CommandRow is one subcommand ("stguard NAME ...").
struct CommandRow {
  std::string_view name;      // "check"
  std::string_view operands;  // the operands after the options: "FILE|DIR..."
  std::string_view summary;   // one line: what it does
  std::string_view details;   // the operands explained, for --help and the man page
  Formats formats;            // what it reads
  int (*run)(Args args);      // given the arguments after NAME
};

// OptionRow is one option of one command.
struct OptionRow {
  std::string_view command;     // the CommandRow it belongs to
  std::string_view name;        // "--json"
  std::string_view short_name;  // "-q", or empty
  std::string_view argument;    // "NAME" for "--key NAME"; empty for a flag
  bool repeatable;              // may be given several times, each value kept
  std::string_view help;        // one line
  Formats formats;              // the inputs it applies to
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

// kExitStatusHelp says what the exit statuses mean, for every help and the man page.
inline constexpr std::string_view kExitStatusHelp =
    "exit status: 0 valid, 1 invalid, 2 usage, I/O error or out of memory";

// FormatNames lists a set of formats for people: "safetensors, folder".
std::string FormatNames(Formats formats);

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
