// SPDX-License-Identifier: Apache-2.0
// stguard check [-q] [--json] [--canonical] [--aligned] FILE|DIR...: the front door's
// verdict (stguard/verdict.h) on each path, printed; --canonical adds the comparison of a
// safetensors file with its canonical form.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "progress.h"
#include "stguard/reader.h"
#include "stguard/verdict.h"
#include "stguard/writer.h"
#include "verdict_output.h"

namespace stguard::cli {

namespace {

// Canonical is the --canonical comparison of a valid safetensors file.
struct Canonical {
  std::optional<CanonicalDiff> diff;
  // no_form: a valid file whose canonical rewrite cannot exist (its canonical header would
  // pass the 100,000,000-byte cap), so it is not canonical.
  Error no_form;
  bool failed() const { return (diff && !diff->canonical) || !no_form.ok(); }
};

// CompareCanonical compares a valid safetensors file with its canonical form. Running out
// of memory turns the result into an error (no verdict).
Canonical CompareCanonical(const Options& options, CheckResult* result) {
  Canonical canonical;
  const Result<Checkpoint> checkpoint = Checkpoint::Open(result->file, options);
  Result<CanonicalDiff> compared =
      checkpoint.ok() ? CompareToCanonical(*checkpoint) : Result<CanonicalDiff>(checkpoint.error());
  if (compared.ok()) {
    canonical.diff = *compared;
  } else if (VerdictForError(compared.error()) == Verdict::kError) {
    result->error = compared.error();
    result->verdict = Verdict::kError;
  } else {
    canonical.no_form = compared.error();
  }
  return canonical;
}

void AppendSummaryJson(const CheckResult& result, std::string* out) {
  *out += ",\"tensors\":" + std::to_string(result.summary.tensors);
  if (!result.is_folder) {
    // A pickle has no header to count.
    if (!result.pickle) *out += ",\"header_bytes\":" + std::to_string(result.summary.header_bytes);
    return;
  }
  *out += ",\"shards\":" + std::to_string(result.summary.shards) +
          ",\"data_bytes\":" + std::to_string(result.summary.data_bytes) + ",\"index\":";
  if (result.summary.index.empty()) {
    *out += "null";
  } else {
    AppendJsonText(result.summary.index, out);
  }
}

void AppendCanonicalJson(const Canonical& canonical, std::string* out) {
  if (!canonical.no_form.ok()) {
    *out += ",\"canonical\":false,\"canonical_reason\":\"no-canonical-form\",\"canonical_error\":";
    AppendErrorJson(canonical.no_form, out);
  } else if (canonical.diff) {
    *out += std::string(",\"canonical\":") + (canonical.diff->canonical ? "true" : "false");
    if (!canonical.diff->canonical) {
      *out += ",\"canonical_reason\":\"" +
              std::string(CanonicalDiffReasonName(canonical.diff->reason)) +
              "\",\"first_difference\":" + std::to_string(canonical.diff->offset) +
              ",\"reason_offset\":" + std::to_string(canonical.diff->reason_offset);
    }
  }
}

// PrintCheck prints one path's result and returns its exit status.
int PrintCheck(const CheckResult& result, const Canonical& canonical, bool quiet, bool json) {
  const int status = std::max(result.exit_status(), canonical.failed() ? kExitInvalid : kExitOk);
  if (quiet && status == kExitOk) return status;
  if (json) {
    std::string line = "{";
    AppendResultJson(result, &line);
    if (result.valid()) {
      AppendSummaryJson(result, &line);
      AppendCanonicalJson(canonical, &line);
    }
    line += ",";
    AppendWarningsJson(result.warnings, &line);
    PrintLine(line + "}");
    return status;
  }
  std::string line = ResultLine(result);
  if (!canonical.no_form.ok()) {
    line += "; not canonical: no canonical form exists: " + canonical.no_form.ToString();
  } else if (canonical.diff) {
    line += "; " + DescribeCanonicalDiff(*canonical.diff);
  }
  PrintLine(line);
  if (!quiet) {
    for (const Warning& warning : result.warnings) PrintLine(WarningLine(result.file, warning));
  }
  return status;
}

}  // namespace

int RunCheck(const CommandLine& line) {
  const bool quiet = line.quiet;
  const bool json = line.json;
  const bool canonical = line.canonical;
  CheckOptions options;
  options.require_aligned_data = line.aligned;
  options.allow_external_symlinks = line.allow_external_symlinks;
  int status = kExitOk;
  for (const std::string& file : line.operands) {
    // A folder of many or large files takes a while: its bytes and rate show on a
    // terminal (progress.h), erased before the verdict is printed.
    ProgressBar progress(/*total=*/0, ShowProgress(json, quiet));
    options.progress = [&progress](uint64_t bytes) { progress.Add(bytes); };
    CheckResult result = CheckPath(std::string(file), options);
    progress.Clear();
    Canonical comparison;
    if (canonical && result.verdict != Verdict::kError) {
      if (result.is_folder || result.format != Format::kSafetensors) {
        // A flag that does not apply to what was found is a usage error, never ignored.
        const bool folder = result.is_folder;
        result = UsageError(result.file, result.format, "--canonical", "safetensors files");
        if (folder) {
          result.is_folder = true;
          result.error.context = "--canonical applies to single safetensors files, not a folder";
        }
      } else if (result.valid()) {
        Options reader;
        reader.require_aligned_data = options.require_aligned_data;
        comparison = CompareCanonical(reader, &result);
      }
    }
    status = std::max(status, PrintCheck(result, comparison, quiet, json));
  }
  return status;
}

}  // namespace stguard::cli
