// SPDX-License-Identifier: Apache-2.0
// The bash completion script, written from the command table.
#include <string>
#include <string_view>

#include "command_table.h"
#include "docs.h"

namespace stguard::cli {
namespace {

// Choices turns the values a kChoice option lists ("BF16|F16|F32") into words for
// compgen ("BF16 F16 F32"); other options have none.
std::string Choices(const OptionRow& option) {
  if (option.kind != ValueKind::kChoice) return {};
  std::string words(option.argument);
  for (char& c : words) {
    if (c == '|') c = ' ';
  }
  return words;
}

// AppendValueCases appends a `case` arm for each option that takes a value: its choices,
// file names for a PATH, and nothing to complete otherwise (a name or a number).
void AppendValueCases(std::string* script) {
  for (const OptionRow& option : OptionRows()) {
    if (option.argument.empty()) continue;
    script->append("    \"").append(option.command).append(" ").append(option.name);
    script->append("\")\n      ");
    const std::string choices = Choices(option);
    if (!choices.empty()) {
      script->append("COMPREPLY=($(compgen -W \"").append(choices).append("\" -- \"$cur\"))");
    } else if (option.argument == "PATH") {
      script->append("COMPREPLY=($(compgen -f -- \"$cur\"))");
    } else {
      script->append("COMPREPLY=()");
    }
    script->append("\n      return;;\n");
  }
}

std::string OptionWords(std::string_view command) {
  std::string words;
  for (const OptionRow& option : OptionRows()) {
    if (option.command != command) continue;
    if (!option.short_name.empty()) words.append(option.short_name).append(" ");
    words.append(option.name).append(" ");
  }
  return words + "-h --help --";
}

}  // namespace

std::string BashCompletion() {
  std::string commands;
  for (const CommandRow& command : CommandRows()) {
    if (!commands.empty()) commands += ' ';
    commands += command.name;
  }
  std::string script =
      "# bash completion for stguard, generated from its command table "
      "(cli/command_table.cc).\n"
      "_stguard() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]}\n"
      "  local commands=\"";
  script.append(commands).append("\"\n");
  script +=
      "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$commands --help --version\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  local command=${COMP_WORDS[1]} prev=${COMP_WORDS[COMP_CWORD-1]} i\n"
      "  # After \"--\" every word is an operand: a file.\n"
      "  for ((i = 2; i < COMP_CWORD; i++)); do\n"
      "    if [[ ${COMP_WORDS[i]} == -- ]]; then\n"
      "      COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "      return\n"
      "    fi\n"
      "  done\n"
      "  case \"$command $prev\" in\n";
  AppendValueCases(&script);
  script += "  esac\n  if [[ $cur == -* ]]; then\n    case $command in\n";
  for (const CommandRow& command : CommandRows()) {
    script.append("      ").append(command.name).append(") COMPREPLY=($(compgen -W \"");
    script.append(OptionWords(command.name)).append("\" -- \"$cur\"));;\n");
  }
  script +=
      "    esac\n"
      "    return\n"
      "  fi\n"
      "  if [[ $command == help ]]; then  # its operand is a command\n"
      "    COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "}\n"
      "complete -o filenames -o bashdefault -F _stguard stguard\n";
  return script;
}

}  // namespace stguard::cli
