// SPDX-License-Identifier: Apache-2.0
#include "arguments.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "output.h"
#include "stguard/sniff.h"

namespace stguard::cli {
namespace {

// Suggestion is " (did you mean --json?)" for the option of `command` nearest to `arg`
// within kSuggestionDistance edits, or empty.
std::string Suggestion(const CommandRow& command, std::string_view arg) {
  const std::string_view name = arg.substr(0, arg.find('='));
  std::string_view best;
  size_t best_distance = kSuggestionDistance + 1;
  for (const OptionRow& option : OptionRows()) {
    if (option.command != command.name) continue;
    const size_t distance = EditDistance(name, option.name);
    if (distance < best_distance) {
      best = option.name;
      best_distance = distance;
    }
  }
  if (best.empty()) return "";
  return " (did you mean " + std::string(best) + "?)";
}

// ValueFits says whether `value` is one `option` takes.
bool ValueFits(const OptionRow& option, std::string_view value) {
  switch (option.kind) {
    case ValueKind::kFlag: return true;
    case ValueKind::kText: return !value.empty();
    case ValueKind::kCount: return ParseCount(value).has_value();
    case ValueKind::kChoice: {
      std::string_view choices = option.argument;
      while (!choices.empty()) {
        const size_t bar = std::min(choices.find('|'), choices.size());
        if (choices.substr(0, bar) == value) return true;
        choices.remove_prefix(std::min(bar + 1, choices.size()));
      }
      return false;
    }
  }
  return false;
}

// BadValue says what is wrong with `value` for `option`.
std::string BadValue(const OptionRow& option, std::string_view value) {
  const std::string name(option.name);
  if (value.empty()) return "option '" + name + "' needs a value";
  switch (option.kind) {
    case ValueKind::kCount:
      return name + " takes a count, not '" + PrintableText(value) + "'";
    case ValueKind::kChoice:
      return name + " must be one of " + std::string(option.argument) + ", not '" +
             PrintableText(value) + "'";
    default: return "option '" + name + "' needs a value";
  }
}

// ReadOption reads the option at args[*i] (moving *i past its value); a usage error's
// status when it is not one of `command`'s or its value does not fit.
std::optional<int> ReadOption(const CommandRow& command, Args args, size_t* i,
                              CommandLine* line) {
  const std::string_view arg = args[*i];
  const size_t equals = arg.starts_with("--") ? arg.find('=') : std::string_view::npos;
  const OptionRow* option = FindOption(command.name, arg.substr(0, equals));
  if (option == nullptr) {
    return UsageError(command,
                      "unknown option '" + PrintableText(arg) + "'" + Suggestion(command, arg));
  }
  std::string_view value;
  if (option->kind == ValueKind::kFlag) {
    if (equals != std::string_view::npos) {
      return UsageError(command, "option '" + std::string(option->name) + "' takes no value");
    }
  } else if (equals != std::string_view::npos) {
    value = arg.substr(equals + 1);
  } else if (*i + 1 < args.size()) {
    value = args[++*i];
  }
  if (!ValueFits(*option, value)) return UsageError(command, BadValue(*option, value));
  option->set(*line, value);
  line->given.push_back(option->name);
  return std::nullopt;
}

// OperandsFit checks the operands' count and where "-" may be.
std::optional<int> OperandsFit(const CommandRow& command, const CommandLine& line) {
  const size_t count = line.operands.size();
  // --from lists the inputs: operands may then be none.
  const bool listed = !line.from.empty();
  if ((count < command.min_operands && !listed) || count > command.max_operands) {
    const std::string expected =
        command.operands.empty() ? std::string("no operand") : std::string(command.operands);
    return UsageError(command, "takes " + expected + ", given " + std::to_string(count) +
                                   " operand" + (count == 1 ? "" : "s"));
  }
  for (size_t i = 0; i < count; ++i) {
    const bool is_out = command.last_is_out && i + 1 == count;
    if (line.operands[i] == "-" && !is_out) return UsageError(command, kStdinRefusal);
  }
  return std::nullopt;
}

}  // namespace

int UsageError(const CommandRow& command, std::string_view what) {
  std::string message = "stguard ";
  message.append(command.name).append(": ").append(what).append("\nusage: ");
  message.append(Synopsis(command))
      .append("\n'stguard help ")
      .append(command.name)
      .append("' explains every option\n");
  std::fputs(message.c_str(), stderr);
  return kExitUsage;
}

std::optional<int> ParseCommandLine(const CommandRow& command, Args args, CommandLine* line) {
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      line->operands.emplace_back(arg);
    } else if (arg == "--") {
      options_done = true;
    } else if (arg == "-h" || arg == "--help") {  // the full help, from the command table
      std::fputs(CommandHelp(command).c_str(), stdout);
      return kExitOk;
    } else if (std::optional<int> stop = ReadOption(command, args, &i, line)) {
      return stop;
    }
  }
  return OperandsFit(command, *line);
}

FormatSet FormatOf(const std::string& path, std::optional<Format> sniffed) {
  const Result<PathFormat> found = FormatOfPath(path, sniffed);
  return found.ok() ? found->set() : 0;
}

std::string InapplicableOption(const CommandRow& command, const CommandLine& line,
                               FormatSet found, std::string_view path) {
  if (found == 0) return "";
  for (const std::string_view name : line.given) {
    const OptionRow* option = FindOption(command.name, name);
    if (option == nullptr || (option->formats & found) != 0) continue;
    return std::string(name) + " applies to " + FormatSetNames(option->formats) + ", not to " +
           FormatSetNames(found) + " (" + PrintableText(path) + ")";
  }
  return "";
}

std::optional<uint64_t> ParseCount(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  // One row of the dynamic programme at a time: names are short.
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace stguard::cli
