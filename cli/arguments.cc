// SPDX-License-Identifier: Apache-2.0
#include "arguments.h"

#include <cstdio>

#include "command_table.h"
#include "output.h"

namespace stguard::cli {
namespace {

int UsageError(const CommandSyntax& syntax, const std::string& what) {
  const std::string message =
      "stguard " + std::string(syntax.command) + ": " + what + "\n" + syntax.usage;
  std::fputs(message.c_str(), stderr);
  return kExitUsage;
}

}  // namespace

std::optional<int> ParseArguments(Args args, const CommandSyntax& syntax,
                                  std::vector<std::string_view>* operands) {
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (options_done || !IsOption(arg)) {
      operands->push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {  // the full help, from the command table
      const CommandRow* command = FindCommand(syntax.command);
      std::fputs(command != nullptr ? CommandHelp(*command).c_str() : syntax.usage, stdout);
      return kExitOk;
    }
    bool known = false;
    for (const Flag& flag : syntax.flags) {
      if (arg == flag.name) {
        *flag.value = true;
        known = true;
      }
    }
    for (const ValueOption& option : syntax.values) {
      std::optional<std::string_view> value;
      if (arg == option.name) {
        if (i + 1 < args.size()) value = args[++i];
      } else if (arg.starts_with(option.name) && arg.substr(option.name.size()).starts_with('=')) {
        value = arg.substr(option.name.size() + 1);
      } else {
        continue;
      }
      if (!value || value->empty()) {
        return UsageError(syntax, "option '" + std::string(option.name) + "' needs a value");
      }
      if (option.values != nullptr) {
        option.values->emplace_back(*value);
      } else {
        *option.value = std::string(*value);
      }
      known = true;
      break;
    }
    if (!known) return UsageError(syntax, "unknown option '" + PrintableText(arg) + "'");
  }
  return std::nullopt;
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

}  // namespace stguard::cli
