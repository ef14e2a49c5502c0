// SPDX-License-Identifier: Apache-2.0
// CheckPath: a file or a folder (CheckFile, CheckFolder), then what the options require
// beyond the format's rules (CheckOptions::require_canonical), so that the verdict says
// everything that was asked and every front end prints the same one.
#include <string>
#include <utility>

#include "stguard/verdict.h"
#include "stguard/writer.h"

namespace stguard {
namespace {

// RequireCanonical compares a valid safetensors file's header with its canonical form
// (the data needs no comparison: an identical header fixes every offset). A file that
// differs is invalid, at the first differing byte. A flag that does not apply to what
// was found is a usage error (verdict error), never ignored.
void RequireCanonical(CheckResult* result) {
  if (result->verdict == Verdict::kError) return;
  if (result->is_folder || result->format != Format::kSafetensors) {
    CheckResult usage =
        UsageError(result->file, result->format, "--canonical", "safetensors files");
    if (result->is_folder) {
      usage.is_folder = true;
      usage.error.context = "--canonical applies to single safetensors files, not a folder";
    }
    *result = std::move(usage);
    return;
  }
  if (!result->valid() || result->checkpoint == nullptr) return;
  const Result<CanonicalDiff> compared = CompareToCanonical(*result->checkpoint);
  if (!compared.ok()) {
    // A valid file whose canonical header would pass the header cap has no canonical
    // form: not canonical. Running out of memory is no verdict.
    const Error& why = compared.error();
    result->verdict = VerdictForError(why) == Verdict::kError ? Verdict::kError
                                                                : Verdict::kInvalid;
    result->error = why;
    if (result->verdict == Verdict::kInvalid) {
      result->error = Error{ErrorCode::kNotCanonical, 0, "the file is not in canonical form",
                            "no canonical form exists: " + why.ToString()};
    }
    return;
  }
  result->canonical = *compared;
  if (compared->canonical) return;
  result->verdict = Verdict::kInvalid;
  result->error = Error{ErrorCode::kNotCanonical, compared->offset,
                        "the file is not in canonical form", DescribeCanonicalDiff(*compared)};
}

}  // namespace

CheckResult CheckPath(const std::string& path, const CheckOptions& options) {
  if (!options.require_canonical) {
    return IsFolderPath(path) ? CheckFolder(path, options) : CheckFile(path, options);
  }
  CheckOptions with_reader = options;
  with_reader.keep_reader = true;  // the header the comparison reads, not read twice
  CheckResult result =
      IsFolderPath(path) ? CheckFolder(path, with_reader) : CheckFile(path, with_reader);
  RequireCanonical(&result);
  if (!options.keep_reader) {
    result.checkpoint.reset();
    result.checkpoint_dir.reset();
  }
  return result;
}

}  // namespace stguard
