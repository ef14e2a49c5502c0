// SPDX-License-Identifier: Apache-2.0
// stguard: validate, inspect and rewrite safetensors files. All logic lives in the
// library; this file only picks the subcommand from the command table.
#include <cstdio>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "command_table.h"
#include "commands.h"
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
  for (const stguard::cli::CommandRow& command : stguard::cli::CommandRows()) {
    if (args[0] == command.name) {
      return command.run(stguard::cli::Args(args).subspan(1));
    }
  }
  std::fprintf(stderr, "stguard: unknown command '%s'\n\n%s",
               stguard::PrintableText(args[0]).c_str(), usage.c_str());
  return stguard::cli::kExitUsage;
}

}  // namespace

namespace stguard::cli {

int RunVersion(Args /*args*/) {
  std::printf("stguard %s\n", VersionString());  // the linked library's version
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
