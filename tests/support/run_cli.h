// SPDX-License-Identifier: Apache-2.0
// Runs the stguard command-line tool from a test, as a user's shell would.
#ifndef STGUARD_TESTS_SUPPORT_RUN_CLI_H_
#define STGUARD_TESTS_SUPPORT_RUN_CLI_H_

#include <string>

namespace stguard::testing {

// CliRun is what one run of the tool left: its exit status (-1 when a signal ended it)
// and what it printed.
struct CliRun {
  int status = -1;
  std::string output;
};

// Streams says which of the tool's output streams CliRun::output holds.
enum class Streams {
  kBoth,        // standard output and standard error, interleaved as written
  kStdoutOnly,  // standard output; standard error is discarded
};

// RunCli runs `stguard ARGUMENTS` through the shell (so ARGUMENTS is shell text: quote
// paths with ShellQuoted) and returns its status and output.
CliRun RunCli(const std::string& arguments, Streams streams = Streams::kBoth);

// ShellQuoted returns `text` as one single-quoted shell word, whatever it holds.
std::string ShellQuoted(const std::string& text);

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_RUN_CLI_H_
