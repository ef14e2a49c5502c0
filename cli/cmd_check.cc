// SPDX-License-Identifier: Apache-2.0
// stguard check [-q] [--json] [--canonical] [--aligned] [--jobs N] [--from FILE]
// [--sarif FILE] FILE|DIR...: the front door's verdict (stguard/verdict.h) on each path,
// composed by the library (CheckInput, stguard/inputs.h) and printed in input order;
// --canonical and --aligned are part of that verdict (CheckOptions::require_canonical,
// ::require_aligned_data).
#include <string>

#include "commands.h"
#include "many_inputs.h"
#include "progress.h"
#include "stguard/inputs.h"

namespace stguard::cli {

int RunCheck(const CommandLine& line) {
  CheckOptions options;
  options.require_aligned_data = line.aligned;
  options.require_canonical = line.canonical;
  options.allow_external_symlinks = line.allow_external_symlinks;
  OutputOptions output;
  output.json = line.json;
  output.quiet = line.quiet;
  // One folder of many or large files takes a while: its bytes and rate show on a terminal
  // (progress.h), erased before the verdict is printed. Over several inputs judged at once
  // there is no one bar to show.
  const bool one_input = line.operands.size() == 1 && line.from.empty();
  return RunManyInputs("check", line, [&](const std::string& path) {
    if (!one_input) return CheckInput(path, options, output);
    ProgressBar progress(/*total=*/0, ShowProgress(line.json, line.quiet));
    CheckOptions with_progress = options;
    with_progress.progress = [&progress](uint64_t bytes) { progress.Add(bytes); };
    InputReport report = CheckInput(path, with_progress, output);
    progress.Clear();
    return report;
  });
}

}  // namespace stguard::cli
