// SPDX-License-Identifier: Apache-2.0
// The one command-line parser: every command's arguments are read against its rows of
// the command table (command_table.h), whole, before any input is opened. Options and
// operands may come in any order; "--" ends the options.
#ifndef STGUARD_CLI_ARGUMENTS_H_
#define STGUARD_CLI_ARGUMENTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "command_table.h"
#include "commands.h"
#include "stguard/sniff.h"

namespace stguard::cli {

// ParseCommandLine reads `args` (what follows the command's name) into *line. Each option
// is found in `command`'s rows by its long or short name, its value given as
// "--opt VALUE" or "--opt=VALUE" and checked against the row's kind (a count, one of the
// choices); "--" ends the options; "-" alone is an operand. The operand count is checked,
// and "-" is refused anywhere but OUT (standard input is not supported). It returns the
// exit status when the command must stop now: 0 after printing the command's help to
// stdout for -h/--help; kExitUsage after printing what was wrong (an unknown option, shown
// escaped since it may hold anything, with the nearest option's name when one is within
// two edits) and the synopsis to stderr. Otherwise nullopt.
std::optional<int> ParseCommandLine(const CommandRow& command, Args args, CommandLine* line);

// UsageError prints "stguard COMMAND: WHAT", the command's synopsis and where its help is,
// to stderr, and returns kExitUsage.
int UsageError(const CommandRow& command, std::string_view what);

// FormatOf is what `path` is (the library's FormatOfPath, stguard/formats.h), as a set to
// match the command table's against: 0 when it cannot be read or is of no kind the table
// names (the command's reader says why). `sniffed`, when given, is what a check already
// sniffed of the file: it is not read again.
FormatSet FormatOf(const std::string& path, std::optional<Format> sniffed = std::nullopt);

// InapplicableOption is the sentence for the first option given on `line` that does not
// apply to `found` (one format): "--name applies to .npy, not to GGUF (x.gguf)"; empty
// when every option applies or `found` is 0.
std::string InapplicableOption(const CommandRow& command, const CommandLine& line,
                               FormatSet found, std::string_view path);

// ParseCount reads an option's decimal count: digits only (no sign, space or suffix),
// at most 2^64 - 1; nullopt otherwise.
std::optional<uint64_t> ParseCount(std::string_view text);

// EditDistance is the Levenshtein distance between `a` and `b` (for "did you mean").
size_t EditDistance(std::string_view a, std::string_view b);

// kSuggestionDistance is how many edits away a name may be and still be suggested.
inline constexpr size_t kSuggestionDistance = 2;

// kStdinRefusal is what "-" as an input is told.
inline constexpr std::string_view kStdinRefusal =
    "standard input is not supported: give a path";

}  // namespace stguard::cli

#endif  // STGUARD_CLI_ARGUMENTS_H_
