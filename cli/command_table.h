// SPDX-License-Identifier: Apache-2.0
// The one table of stguard's commands and options: one row per command, one row per
// option (its name, argument, help text and the input formats it applies to). The
// top-level help and README's command block are printed from it (a test keeps README
// equal to it, and checks that every command accepts the options its rows name), so that
// per-command help, a man page and shell completion can be generated from it too.
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
  std::string_view name;      // "check", or "--version" for the one option-like command
  std::string_view operands;  // the operands after the options: "FILE|DIR..."
  std::string_view summary;   // one line: what it does
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

}  // namespace stguard::cli

#endif  // STGUARD_CLI_COMMAND_TABLE_H_
