// SPDX-License-Identifier: Apache-2.0
// stguard lint [--json] [--config PATH] [--allow-external-symlinks] [--jobs N]
// [--from FILE] [--sarif FILE] DIR|FILE...: argument parsing and printing only; the rules
// live in src/lint/ (stguard/lint.h), each input's result is composed by the library
// (LintInput, stguard/inputs.h).
#include <string>

#include "commands.h"
#include "many_inputs.h"
#include "stguard/inputs.h"
#include "stguard/lint.h"

namespace stguard::cli {

int RunLint(const CommandLine& line) {
  LintOptions options;
  options.dir.allow_external_symlinks = line.allow_external_symlinks;
  options.config_path = line.config;
  OutputOptions output;
  output.json = line.json;
  return RunManyInputs("lint", line, [&](const std::string& path) {
    return LintInput(path, options, output);
  });
}

}  // namespace stguard::cli
