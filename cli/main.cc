// SPDX-License-Identifier: Apache-2.0
// stguard: validate, inspect and rewrite safetensors files. All logic lives in the
// library; this file only picks the subcommand from the command table, and prints the
// help, the man page and the completion script that are written from that table.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arguments.h"
#include "command_table.h"
#include "commands.h"
#include "docs.h"
#include "http_transport.h"
#include "stguard/error.h"
#include "stguard/writer.h"
#include "stguard/version.h"

namespace {

// CommandSuggestion is " (did you mean check?)" for the command nearest to `name`, or empty.
std::string CommandSuggestion(std::string_view name) {
  std::string_view best;
  size_t best_distance = stguard::cli::kSuggestionDistance + 1;
  for (const stguard::cli::CommandRow& command : stguard::cli::CommandRows()) {
    const size_t distance = stguard::cli::EditDistance(name, command.name);
    if (distance < best_distance) {
      best = command.name;
      best_distance = distance;
    }
  }
  return best.empty() ? "" : " (did you mean " + std::string(best) + "?)";
}

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
    // The whole command line is read before the command looks at any input.
    stguard::cli::CommandLine line;
    if (std::optional<int> stop = stguard::cli::ParseCommandLine(
            *command, stguard::cli::Args(args).subspan(1), &line)) {
      return *stop;
    }
    // URL inputs read through libcurl (when built with it), with the line's --timeout.
    stguard::cli::InstallHttpTransport(
        line.timeout_seconds.value_or(stguard::cli::kDefaultTimeoutSeconds));
    return command->run(line);
  }
  std::fprintf(stderr, "stguard: unknown command '%s'%s\n\n%s",
               stguard::PrintableText(args[0]).c_str(), CommandSuggestion(args[0]).c_str(),
               usage.c_str());
  return stguard::cli::kExitUsage;
}

// FinishStandardOutput flushes standard output and returns the exit status. A verdict that
// never reached standard output (a full disk, a closed descriptor) must not read as success
// to a script that redirected it (`check --json x > report.json && ...`): status 0 becomes
// 2, an I/O error. 1 and 2 already say the run did not pass, and a refusal stays 1.
int FinishStandardOutput(int status) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout)) return status;
  const std::string why = flushed || errno == 0 ? "" : std::string(": ") + std::strerror(errno);
  std::fprintf(stderr, "stguard: IoError: the standard output could not be written%s\n",
               why.c_str());
  return status == stguard::cli::kExitOk ? stguard::cli::kExitUsage : status;
}

}  // namespace

namespace stguard::cli {

int RunVersion(const CommandLine&) {
  std::printf("stguard %s\n", VersionString());  // the linked library's version
  return kExitOk;
}

int RunHelp(const CommandLine& line) {
  if (line.operands.empty()) {
    std::fputs(TopLevelHelp().c_str(), stdout);
    return kExitOk;
  }
  const CommandRow* command = FindCommand(line.operands[0]);
  if (command == nullptr) {
    return UsageError(*FindCommand("help"), "unknown command '" +
                                                PrintableText(line.operands[0]) + "'" +
                                                CommandSuggestion(line.operands[0]));
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
    return FinishStandardOutput(Run(std::vector<std::string_view>(argv + 1, argv + argc)));
  } catch (const std::bad_alloc&) {
    // The library returns kOutOfMemory rather than throwing; this catches the CLI's own
    // allocations. Running out of memory says nothing about the file: status 2.
    std::fputs("stguard: out of memory\n", stderr);
    return stguard::cli::kExitUsage;
  }
}
