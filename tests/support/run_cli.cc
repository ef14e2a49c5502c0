// SPDX-License-Identifier: Apache-2.0
#include "support/run_cli.h"

#include <sys/wait.h>

#include <cstdlib>

#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::testing {

CliRun RunCli(const std::string& arguments, Streams streams) {
  const TempDir scratch;
  const std::string out = scratch.File("output");
  const std::string command = std::string(STGUARD_CLI_PATH) + " " + arguments + " >" +
                              ShellQuoted(out) +
                              (streams == Streams::kBoth ? " 2>&1" : " 2>/dev/null");
  const int status = std::system(command.c_str());
  CliRun run;
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.output = ReadFileBytes(out);
  return run;
}

std::string ShellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";  // end the quote, an escaped quote, reopen
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace stguard::testing
