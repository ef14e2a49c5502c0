// SPDX-License-Identifier: Apache-2.0
// stguard: validate, inspect and rewrite safetensors files. All logic lives in the
// library; this file only picks the subcommand from the command table, and prints the
// help, the man page and the completion script that are written from that table.
#include <cstdio>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "arguments.h"
#include "command_table.h"
#include "commands.h"
#include "docs.h"
#include "stguard/error.h"
#include "stguard/writer.h"
#include "stguard/version.h"

namespace {

int Run(const std::vector<std::string_view>& args) {
  const std::string usage = stguard::cli::TopLevelHelp();
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::fputs(usage.c_str(), args.empty() ? stderr : stdout);
    return args.empty() ? stguard::cli::kExitUsage : stguard::cli::kExitOk;
  }
  // For the build (cmake/cli_docs.cmake), hence not in the help: the man page and the
  // bash completion script, written from the command table.
  if (args.size() == 1 && (args[0] == "--man" || args[0] == "--bash-completion")) {
    const std::string text =
        args[0] == "--man" ? stguard::cli::ManPage() : stguard::cli::BashCompletion();
    std::fputs(text.c_str(), stdout);
    return std::fflush(stdout) == 0 ? stguard::cli::kExitOk : stguard::cli::kExitUsage;
  }
  const std::string_view name = args[0] == "--version" ? "version" : args[0];
  if (const stguard::cli::CommandRow* command = stguard::cli::FindCommand(name)) {
    return command->run(stguard::cli::Args(args).subspan(1));
  }
  std::fprintf(stderr, "stguard: unknown command '%s'\n\n%s",
               stguard::PrintableText(args[0]).c_str(), usage.c_str());
  return stguard::cli::kExitUsage;
}

}  // namespace

namespace stguard::cli {

int RunVersion(Args args) {
  std::vector<std::string_view> operands;
  if (auto stop = ParseArguments(args, {"version", "usage: stguard version\n"}, &operands)) {
    return *stop;
  }
  if (!operands.empty()) {
    std::fputs("stguard version: takes no operand\nusage: stguard version\n", stderr);
    return kExitUsage;
  }
  std::printf("stguard %s\n", VersionString());  // the linked library's version
  return kExitOk;
}

int RunHelp(Args args) {
  constexpr char kUsage[] = "usage: stguard help [COMMAND]\n";
  std::vector<std::string_view> operands;
  if (auto stop = ParseArguments(args, {"help", kUsage}, &operands)) return *stop;
  if (operands.empty()) {
    std::fputs(TopLevelHelp().c_str(), stdout);
    return kExitOk;
  }
  const CommandRow* command = operands.size() == 1 ? FindCommand(operands[0]) : nullptr;
  if (command == nullptr) {
    std::fprintf(stderr, "stguard help: %s\n%s",
                 operands.size() == 1
                     ? ("unknown command '" + PrintableText(operands[0]) + "'").c_str()
                     : "takes one command",
                 kUsage);
    return kExitUsage;
  }
  std::fputs(CommandHelp(*command).c_str(), stdout);
  return kExitOk;
}

}  // namespace stguard::cli

int main(int argc, char** argv) {
  // Interrupted writes remove their temporary files, and a write past `ulimit -f` is
  // reported instead of killing the process silently (see stguard/writer.h).
  stguard::RemoveTemporaryFilesOnSignals();
  try {
    return Run(std::vector<std::string_view>(argv + 1, argv + argc));
  } catch (const std::bad_alloc&) {
    // The library returns kOutOfMemory rather than throwing; this catches the CLI's own
    // allocations. Running out of memory says nothing about the file: status 2.
    std::fputs("stguard: out of memory\n", stderr);
    return stguard::cli::kExitUsage;
  }
}
