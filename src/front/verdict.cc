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

std::string_view VerdictSentence(Verdict verdict) {
  switch (verdict) {
    case Verdict::kValid:
      return "Every rule of the format holds, and loading it runs no code of the file's "
             "choosing.";
    case Verdict::kInvalid: return "Malformed: a rule of the format does not hold.";
    case Verdict::kRefused:
      return "Refused: loading this file would run code of the file's choosing, or it cannot "
             "be proven safe. Do not load it.";
    case Verdict::kError: break;
  }
  return "No verdict: the file could not be read.";
}

std::string VerdictLine(const CheckResult& result) {
  std::string line(VerdictName(result.verdict));
  for (size_t i = 0; i < result.unchecked.size(); ++i) {
    line += (i == 0 ? " (remote: " : ", ") + result.unchecked[i];
  }
  if (!result.unchecked.empty()) line += " not read)";
  return line;
}

int VerdictExitStatus(Verdict verdict) {
  switch (verdict) {
    case Verdict::kValid: return 0;
    case Verdict::kInvalid: case Verdict::kRefused: return 1;
    case Verdict::kError: break;
  }
  return 2;
}

int VerdictRank(Verdict verdict) {
  switch (verdict) {
    case Verdict::kRefused: return 3;
    case Verdict::kInvalid: return 2;
    case Verdict::kError: return 1;
    case Verdict::kValid: break;
  }
  return 0;
}

Verdict WorseVerdict(Verdict first, Verdict second) {
  return VerdictRank(second) > VerdictRank(first) ? second : first;
}

Verdict VerdictForError(const Error& error) { return ErrorVerdict(error.code); }

Verdict VerdictForPickle(const PickleFileReport& report) {
  if (ErrorVerdict(report.reason.code) == Verdict::kError) return Verdict::kError;
  // needs-key is as safe as clean: only the choice of tensors is left to the user.
  return VerdictFailsFolder(report.verdict) ? Verdict::kRefused : Verdict::kValid;
}

bool ResultOffsetInFile(const CheckResult& result) {
  if (result.verdict == Verdict::kValid) return false;
  // A folder's own error has no file to point into unless it names a member.
  return ErrorHasOffset(result.error.code) && (!result.is_folder || !result.member.empty());
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
