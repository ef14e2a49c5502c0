// SPDX-License-Identifier: Apache-2.0
// What one `stguard convert` came to, whatever the input's format: every converter returns
// a ConvertResult and one function prints it, as text for a person or as the front door's
// JSON envelope (stguard/verdict.h), so the two modes give the same verdict and the same
// exit status for every outcome.
#ifndef STGUARD_CLI_CONVERT_RESULT_H_
#define STGUARD_CLI_CONVERT_RESULT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "stguard/error.h"
#include "stguard/formats.h"
#include "stguard/verdict.h"

namespace stguard::cli {

// ConvertResult is one conversion's outcome.
struct ConvertResult {
  // input: IN's envelope: its path and format, the verdict, and when not valid the error
  // that decided it (the envelope's code, message, offset, tensor).
  CheckResult input;
  // failure_line: what text mode prints on stderr when not valid ("stguard convert: ...").
  std::string failure_line;
  // out: OUT as given; tensors: how many tensors the output holds.
  std::string out;
  uint64_t tensors = 0;
  // details: lines for a person about what was written (a dropped alias), printed on
  // stdout before the summary (on stderr with it when the file went to standard output);
  // warnings: notes printed on stderr (a metadata key left out). Both are the "notes" of
  // the JSON result.
  std::vector<std::string> details;
  std::vector<std::string> warnings;
  // summary: the closing line of text mode ("OUT: 3 tensors ..."), on stderr when the file
  // itself went to standard output.
  std::string summary;
  bool summary_on_stderr = false;
};

// Each result's envelope names IN with `format`, what the conversion found IN to be
// (ConvertReport::input, stguard/conversion.h): IN is not read again to fill it.

// ConvertFailed is the result of a conversion of IN that failed with `error`, which is
// about `about` (IN, or OUT for a write), with the verdict the library decided
// (ConvertReport::verdict).
ConvertResult ConvertFailed(const std::string& in, const PathFormat& format,
                            const std::string& about, const Error& error, Verdict verdict);

// ConvertUnusable is the result of a request that cannot be carried out as asked (a flag
// that does not apply to IN's format, an unknown --dtype): verdict error, kInvalidArgument,
// never a verdict on IN. `message` is the sentence.
ConvertResult ConvertUnusable(const std::string& in, const PathFormat& format,
                              const std::string& message);

// Converted is the result of a conversion of IN that wrote `tensors` tensors to OUT.
ConvertResult Converted(const std::string& in, const PathFormat& format, const std::string& out,
                        uint64_t tensors, std::string summary);

// PrintConvertResult prints `result` (text, or with `json` one JSON object on stdout: the
// envelope, "ok", "error" when not valid, "output": the files written, "tensors" and
// "notes") and returns its exit status: 0 valid, 1 invalid or refused, 2 error.
int PrintConvertResult(const ConvertResult& result, bool json);

}  // namespace stguard::cli

#endif  // STGUARD_CLI_CONVERT_RESULT_H_
