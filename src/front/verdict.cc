// SPDX-License-Identifier: Apache-2.0
// The verdict words, the exit status rule and the mapping from errors to verdicts (see
// stguard/verdict.h).
#include "stguard/verdict.h"

namespace stguard {

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kValid: return "valid";
    case Verdict::kInvalid: return "invalid";
    case Verdict::kRefused: return "refused";
    case Verdict::kError: break;
  }
  return "error";
}

int VerdictExitStatus(Verdict verdict) {
  switch (verdict) {
    case Verdict::kValid: return 0;
    case Verdict::kInvalid: case Verdict::kRefused: return 1;
    case Verdict::kError: break;
  }
  return 2;
}

namespace {

// IsNoVerdict: the error is about reaching the file, the request, or this machine's
// memory, never about the file's contents.
bool IsNoVerdict(ErrorCode code) {
  return code == ErrorCode::kIoError || code == ErrorCode::kNotARegularFile ||
         code == ErrorCode::kOutOfMemory || code == ErrorCode::kInvalidArgument;
}

}  // namespace

Verdict VerdictForError(const Error& error) {
  switch (error.code) {
    case ErrorCode::kOk: return Verdict::kValid;
    // Loading the file would run code it chose.
    case ErrorCode::kPickleGlobalRefused:
    case ErrorCode::kPickleOpcodeRefused:
    case ErrorCode::kNpyObjectArray:
      return Verdict::kRefused;
    default: break;
  }
  return IsNoVerdict(error.code) ? Verdict::kError : Verdict::kInvalid;
}

Verdict VerdictForPickle(const PickleFileReport& report) {
  if (IsNoVerdict(report.reason.code)) return Verdict::kError;
  // needs-key is as safe as clean: only the choice of tensors is left to the user.
  return VerdictFailsFolder(report.verdict) ? Verdict::kRefused : Verdict::kValid;
}

bool ErrorOffsetInFile(const Error& error) {
  if (error.ok() || IsNoVerdict(error.code)) return false;
  // Verdicts on a folder as a whole, on a model's meaning (lint), or on a file as a whole
  // (another format than the one asked for): no byte of any file is at fault.
  return error.code != ErrorCode::kFolderTooLarge && error.code != ErrorCode::kMissingShard &&
         error.code != ErrorCode::kNoSafetensorsInFolder &&
         error.code != ErrorCode::kLintError && error.code != ErrorCode::kNotSafetensors;
}

bool ResultOffsetInFile(const CheckResult& result) {
  if (result.verdict == Verdict::kValid) return false;
  // A folder's own error has no file to point into unless it names a member.
  return ErrorOffsetInFile(result.error) && (!result.is_folder || !result.member.empty());
}

CheckResult UsageError(const std::string& path, Format format, std::string_view flag,
                       std::string_view applies_to) {
  CheckResult result;
  result.file = path;
  result.format = format;
  result.verdict = Verdict::kError;
  result.error = Error{ErrorCode::kInvalidArgument, 0,
                       "an option does not apply to the format found",
                       std::string(flag) + " applies to " + std::string(applies_to) +
                           ", not " + std::string(FormatName(format))};
  return result;
}

}  // namespace stguard
