// SPDX-License-Identifier: Apache-2.0
// Lint's verdict in the front door's words, and lint on one path composed whole (see
// stguard/lint_verdict.h).
#include "stguard/lint_verdict.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "front/check_remote.h"
#include "stguard/formats.h"
#include "stguard/lint.h"
#include "stguard/plural.h"
#include "stguard/remote.h"

namespace stguard {
namespace {

// kLinted is what lint reads: safetensors files, model folders and sharded indexes.
constexpr FormatSet kLinted = FormatBit(Format::kSafetensors) | kFolderInput;

// LintRemoteRepo lints a whole hf:// repo on the folder its check laid out (config.json
// and the shards' headers, as read by range requests), naming the repo, not that folder.
LintOutcome LintRemoteRepo(const std::string& url, const CheckOptions& check,
                           const LintOptions& options) {
  std::optional<LintReport> report;
  CheckResult checked = CheckRemoteRepoInput(
      url, check, [&](const std::string& folder, const CheckResult& folder_checked) {
        if (!folder_checked.valid()) return;
        report = LintModel(folder, options);
        for (LintFinding& finding : report->findings) {
          NameTheRepo(folder, url, &finding.message);
        }
        NameTheRepo(folder, url, &report->error.context);
      });
  LintOutcome outcome;
  if (!checked.valid() || !report) {
    outcome.result = std::move(checked);
    return outcome;
  }
  outcome.report = std::move(*report);
  outcome.linted = outcome.report.error.ok();
  outcome.result = LintVerdict(std::move(checked), outcome.report);
  return outcome;
}

// LintKept lints the checkpoint the check kept (a folder's or one file's headers and a
// folder's config.json, taken out of *checked), read again only when lint's reader options
// differ from the check's or the check kept none.
LintReport LintKept(const std::string& path, CheckResult* checked, const LintOptions& options) {
  const std::shared_ptr<const CheckpointDir> folder = std::move(checked->checkpoint_dir);
  const std::shared_ptr<const Checkpoint> file = std::move(checked->checkpoint);
  const std::shared_ptr<const MappedFile> config = std::move(checked->config);
  const Options& reader = options.dir.reader;
  const bool as_checked = reader.max_header_len == Options{}.max_header_len &&
                          reader.require_aligned_data == CheckOptions{}.require_aligned_data;
  // config.json as the folder check read it: its rules and lint's read one mapping.
  if (as_checked && folder != nullptr) return LintModel(*folder, config.get(), options);
  // A URL has no folder to find config.json in: LintModel(path) says so.
  if (as_checked && file != nullptr && !IsRemoteInput(path)) {
    return LintModel(path, *file, options);
  }
  return LintModel(path, options);
}

}  // namespace

CheckResult LintVerdict(CheckResult checked, const LintReport& report) {
  if (!report.error.ok()) {
    // Lint could not run (config.json or --config unreadable or not JSON): no verdict on
    // the model, whatever the code would mean for a file.
    checked.verdict = Verdict::kError;
    checked.error = report.error;
    checked.member = report.error.file;
    return checked;
  }
  if (report.num_errors() == 0) return checked;
  for (const LintFinding& finding : report.findings) {
    if (finding.severity != LintSeverity::kError) continue;
    checked.verdict = Verdict::kInvalid;
    checked.error = Error{ErrorCode::kLintError, 0, "lint found errors",
                          Plural(report.num_errors(), "error") + ", the first: " + finding.rule,
                          finding.tensor, finding.file};
    if (checked.is_folder) checked.member = finding.file;
    break;
  }
  return checked;
}

LintOutcome LintChecked(const std::string& path, CheckResult checked,
                        const LintOptions& options) {
  LintOutcome outcome;
  // A valid file of a format lint does not read, as the check's sniff told it, is a usage
  // error: not a finding that check rejects it, nor a second read.
  if (checked.valid() && !checked.is_folder) {
    const Result<PathFormat> found = FormatOfPath(path, checked.format);
    if (found.ok() && (found->set() & kLinted) == 0) {
      const Format format = checked.format;
      checked = UsageError(path, format, "lint", "safetensors files and model folders");
      checked.error.context =
          "lint reads " + FormatSetNames(kLinted) + ", not " + FormatSetNames(found->set());
    }
  }
  if (!checked.valid()) {
    outcome.result = std::move(checked);
    return outcome;
  }
  outcome.report = LintKept(path, &checked, options);
  outcome.linted = outcome.report.error.ok();
  outcome.result = LintVerdict(std::move(checked), outcome.report);
  return outcome;
}

LintOutcome LintPath(const std::string& path, const LintOptions& options) {
  CheckOptions check;
  check.allow_external_symlinks = options.dir.allow_external_symlinks;
  check.keep_reader = true;  // the headers check validated: lint reads none a second time
  if (IsRemoteRepoInput(path)) return LintRemoteRepo(path, check, options);
  if (IsRemoteInput(path)) {
    // A single file's URL has no config.json beside it to lint against.
    LintOutcome outcome;
    outcome.result = UsageError(path, Format::kUnknown, "lint", "model folders");
    outcome.result.error.context =
        "lint of a URL reads a whole repo (hf://ORG/NAME[@REV]), whose config.json it "
        "lints against; check reads a single file's URL";
    return outcome;
  }
  return LintChecked(path, CheckPath(path, check), options);
}

}  // namespace stguard
