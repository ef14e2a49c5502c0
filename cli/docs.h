// SPDX-License-Identifier: Apache-2.0
// The man page and the bash completion script, printed from the command table (one fact in
// one place: adding a row adds it to both). The build runs `stguard --man` and
// `stguard --bash-completion` (cmake/cli_docs.cmake) and installs their output; these two
// options are for the build and are not listed in the help.
#ifndef STGUARD_CLI_DOCS_H_
#define STGUARD_CLI_DOCS_H_

#include <string>

namespace stguard::cli {

// ManPage is stguard(1) in roff (man(7) macros): every command with its synopsis, what it
// does and reads, its operands and every option explained.
std::string ManPage();

// BashCompletion is a bash script that completes stguard's commands, each command's
// options, the values of options that take one of a few words (--dtype BF16|F16|F32), and
// file names elsewhere.
std::string BashCompletion();

}  // namespace stguard::cli

#endif  // STGUARD_CLI_DOCS_H_
