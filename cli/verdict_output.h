// SPDX-License-Identifier: Apache-2.0
// Printing the front door's result (stguard/verdict.h) the same way for every command:
// one line of text, or one JSON object that starts with the envelope's fields.
#ifndef STGUARD_CLI_VERDICT_OUTPUT_H_
#define STGUARD_CLI_VERDICT_OUTPUT_H_

#include <string>

#include "stguard/inputs.h"
#include "stguard/verdict.h"

namespace stguard::cli {

// ResultLine, WarningLine and AppendResultJson are the library's (stguard/inputs.h): the
// lines and JSON are composed there, printed here.

// AppendValidEnvelope appends the fields of a valid file's envelope and "ok":true, for
// commands (inspect) that print only valid files.
void AppendValidEnvelope(const std::string& path, Format format, std::string* out,
                         bool is_folder = false);


// PrintResult prints a result whose command has nothing to add (text: its line and its
// warnings; JSON: the envelope, "ok", "error", "warnings") and returns its exit status.
// A valid result prints nothing with `quiet`.
int PrintResult(const CheckResult& result, bool quiet, bool json);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_VERDICT_OUTPUT_H_
