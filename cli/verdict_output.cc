// SPDX-License-Identifier: Apache-2.0
// The front door's result, printed the same way by check, inspect, lint and scan.
#include "verdict_output.h"

#include <string>

#include "output.h"
#include "stguard/inputs.h"

namespace stguard::cli {

void AppendValidEnvelope(const std::string& path, Format format, std::string* out,
                         bool is_folder) {
  CheckResult result;
  result.file = path;
  result.format = format;
  result.is_folder = is_folder;
  result.verdict = Verdict::kValid;
  AppendResultJson(result, out);
}

int PrintResult(const CheckResult& result, bool quiet, bool json) {
  const int status = result.exit_status();
  if (quiet && result.valid()) return status;
  if (json) {
    std::string line = "{";
    AppendResultJson(result, &line);
    line += ",";
    AppendWarningsJson(result.warnings, &line);
    PrintLine(line + "}");
    return status;
  }
  PrintLine(ResultLine(result));
  if (!quiet) {
    for (const Warning& warning : result.warnings) PrintLine(WarningLine(result.file, warning));
  }
  return status;
}

}  // namespace stguard::cli
