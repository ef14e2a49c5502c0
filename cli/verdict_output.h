// SPDX-License-Identifier: Apache-2.0
// Printing the front door's result (stguard/verdict.h) the same way for every command:
// one line of text, or one JSON object that starts with the envelope's fields.
#ifndef STGUARD_CLI_VERDICT_OUTPUT_H_
#define STGUARD_CLI_VERDICT_OUTPUT_H_

#include <string>

#include "stguard/verdict.h"

namespace stguard::cli {

// ResultLine renders "PATH: valid: DETAIL" or "PATH: VERDICT: WHY", where WHY is the error
// (for a pickle-bearing file, what its verdict means: "names code: ...").
std::string ResultLine(const CheckResult& result);

// WarningLine renders "PATH: warning: KIND: FILE[ (tensor 'T')]: MESSAGE".
std::string WarningLine(const std::string& path, const Warning& warning);

// AppendResultJson appends the envelope's fields, then "ok", and when not valid the
// "error" object (code, offset, message, context, tensor), with no braces.
void AppendResultJson(const CheckResult& result, std::string* out);

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
