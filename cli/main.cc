// SPDX-License-Identifier: Apache-2.0
// stguard: validate, inspect and rewrite safetensors files. All logic lives in the
// library; this file only picks the subcommand.
#include <cstdio>
#include <new>
#include <string_view>
#include <vector>

#include "commands.h"
#include "stguard/error.h"
#include "stguard/writer.h"
#include "stguard/version.h"

namespace {

constexpr char kUsage[] =
    "usage: stguard <command> [options] FILE...\n"
    "\n"
    "commands:\n"
    "  check [-q] [--json] [--canonical] [--aligned] FILE...\n"
    "                                validate safetensors files strictly; --canonical\n"
    "                                also requires each to be byte-identical to canon,\n"
    "                                --aligned every tensor aligned to its element size\n"
    "  check [-q] [--json] [--allow-external-symlinks] DIR|INDEX.json\n"
    "                                validate a checkpoint folder or sharded index: shards,\n"
    "                                cross-checks, config.json, pickle files\n"
    "  inspect [--json] FILE         show metadata, tensors and totals\n"
    "  inspect --stats [--json] FILE|DIR\n"
    "                                scan the data: min, max, mean, NaN/+inf/-inf counts\n"
    "  json FILE                     check that FILE is exactly one valid JSON text\n"
    "  canon IN OUT                  rewrite IN in canonical form to OUT (may be IN)\n"
    "  convert IN OUT --dtype BF16|F16|F32\n"
    "                                convert F64/F32/F16/BF16 tensors, write canonically\n"
    "  convert IN.bin|.pt|.pth|.ckpt OUT [--key NAME] [--drop-aliases]\n"
    "                                PyTorch checkpoint to safetensors, without running it\n"
    "  convert DIR OUTDIR            sharded pytorch_model.bin folder to safetensors shards\n"
    "  scan [--json] [--key NAME] FILE|DIR\n"
    "                                static report on PyTorch checkpoints: globals,\n"
    "                                tensors, storages, first refusal\n"
    "  lint [--json] [--config PATH] DIR|FILE\n"
    "                                compare a model folder with its config.json and the\n"
    "                                format page's contracts (family tables, int4 pairs)\n"
    "  --version                     print the library's version\n"
    "\n"
    "\n"
    "OUT may be - for standard output (not a terminal). '--' ends the options.\n"
    "exit status: 0 valid, 1 invalid, 2 usage, I/O error or out of memory\n";

struct Command {
  std::string_view name;
  int (*run)(stguard::cli::Args);
};

constexpr Command kCommands[] = {
    {"check", stguard::cli::RunCheck},
    {"inspect", stguard::cli::RunInspect},
    {"json", stguard::cli::RunJson},
    {"canon", stguard::cli::RunCanon},
    {"convert", stguard::cli::RunConvert},
    {"scan", stguard::cli::RunScan},
    {"lint", stguard::cli::RunLint},
};

int Run(const std::vector<std::string_view>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? stguard::cli::kExitUsage : stguard::cli::kExitOk;
  }
  if (args[0] == "--version") {
    std::printf("stguard %s\n", stguard::VersionString());  // the linked library's version
    return stguard::cli::kExitOk;
  }
  for (const Command& command : kCommands) {
    if (args[0] == command.name) {
      return command.run(stguard::cli::Args(args).subspan(1));
    }
  }
  std::fprintf(stderr, "stguard: unknown command '%s'\n\n%s",
               stguard::PrintableText(args[0]).c_str(), kUsage);
  return stguard::cli::kExitUsage;
}

}  // namespace

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
