// SPDX-License-Identifier: Apache-2.0
// The verdict of a failed conversion, decided here once so that the command line, the C
// API and Python print the same one (ConvertReport::verdict in stguard/conversion.h).
#include "convert/conversion_verdict.h"

#include <string>
#include <utility>

#include "stguard/file_verdict.h"
#include "stguard/formats.h"
#include "stguard/io_error.h"

namespace stguard {
namespace {

// PickleMember is the pickle-bearing file a failed conversion of `in` was reading, or ""
// when it was reading none: IN itself, or the member of a folder the error names
// (Error::file). A PyTorch folder's member is a pickle-bearing shard, as the conversion
// found; a safetensors folder's member is sniffed (one that is a pickle in disguise is
// judged as `check` judges it), on this failure path only.
std::string PickleMember(const std::string& in, const PathFormat& input, bool pickle_folder,
                         const Error& error) {
  if (!input.is_folder) return IsPickleBearing(input.format) ? in : "";
  if (error.file.empty() || error.code == ErrorCode::kMissingShard) return "";
  const std::string member = in + "/" + error.file;
  if (pickle_folder) return member;
  const Result<PathFormat> format = FormatOfPath(member);
  return format.ok() && !format->is_folder && IsPickleBearing(format->format) ? member : "";
}

// CannotProveSafe says whether the static scan of the pickle-bearing file `path` refuses
// it, as `check` does (names code, or cannot be proven safe), and gives its reason.
bool CannotProveSafe(const std::string& path, const ConvertOptions& options, Error* reason) {
  TorchOptions torch;
  torch.key_path = options.key_path;
  if (options.max_output_ratio) torch.max_output_ratio = *options.max_output_ratio;
  PickleFileReport judged = JudgePickleFile(path, torch);
  // Unreadable now: no verdict from it.
  if (IsIoError(judged.reason, OutOfMemoryIs::kIoError)) return false;
  if (judged.verdict != FileVerdict::kNamesCode &&
      judged.verdict != FileVerdict::kCannotProveSafe) {
    return false;
  }
  *reason = std::move(judged.reason);
  return true;
}

}  // namespace

Error DecideConversionVerdict(const std::string& in, const ConvertOptions& options,
                              bool pickle_folder, Error error, ConvertReport* report) {
  if (error.ok()) {
    report->verdict = Verdict::kValid;
    return error;
  }
  // No verdict on IN: the request, OUT, or reading IN at all.
  if (report->usage || report->about_output || IsIoError(error, OutOfMemoryIs::kIoError)) {
    report->verdict = Verdict::kError;
    return error;
  }
  if (ErrorVerdict(error.code) == Verdict::kRefused) {
    report->verdict = Verdict::kRefused;
    return error;
  }
  // A ZIP that is neither PyTorch's nor an npz: what loads it may run code stguard cannot
  // see, so it cannot be proven safe.
  if (!report->input.is_folder && report->input.format == Format::kZip) {
    report->verdict = Verdict::kRefused;
    return error;
  }
  // A pickle-bearing file is judged by its static scan, whatever the reader tripped on
  // first: a file keeps the converter's error; a folder takes the scan's, naming the shard.
  const std::string member = PickleMember(in, report->input, pickle_folder, error);
  Error reason;
  if (!member.empty() && CannotProveSafe(member, options, &reason)) {
    report->verdict = Verdict::kRefused;
    if (!report->input.is_folder) return error;
    reason.context = "file '" + error.file + "'" +
                     (reason.context.empty() ? "" : "; " + reason.context);
    reason.file = error.file;
    return reason;
  }
  report->verdict = Verdict::kInvalid;
  return error;
}

}  // namespace stguard
