// stguard: validate, inspect and rewrite safetensors files. All logic lives in the
// library; this file only picks the subcommand.
#include <cstdio>
#include <string_view>
#include <vector>

#include "commands.h"

namespace {

constexpr char kUsage[] =
    "usage: stguard <command> [options] FILE...\n"
    "\n"
    "commands:\n"
    "  check [-q] [--json] FILE...   validate safetensors files strictly\n"
    "  inspect [--json] FILE         show metadata, tensors and totals\n"
    "  json FILE                     check that FILE is exactly one valid JSON text\n"
    "\n"
    "exit status: 0 valid, 1 invalid, 2 usage or I/O error\n";

struct Command {
  std::string_view name;
  int (*run)(stguard::cli::Args);
};

constexpr Command kCommands[] = {
    {"check", stguard::cli::RunCheck},
    {"inspect", stguard::cli::RunInspect},
    {"json", stguard::cli::RunJson},
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? stguard::cli::kExitUsage : stguard::cli::kExitOk;
  }
  for (const Command& command : kCommands) {
    if (args[0] == command.name) {
      return command.run(stguard::cli::Args(args).subspan(1));
    }
  }
  std::fprintf(stderr, "stguard: unknown command '%.*s'\n\n%s", static_cast<int>(args[0].size()),
               args[0].data(), kUsage);
  return stguard::cli::kExitUsage;
}
